"""Sessions: the decay clock only advances while an agent is working.

A session is two ledger lines on the clock anchor (start, then end); active time is the union of
all recorded intervals, so clones' clocks merge by union and a fortnight away costs nothing.
"""

from __future__ import annotations

import secrets

from elfmem.rhythms.core import Core
from elfmem.store.notes import clock_anchor


def begin(core: Core) -> str:
    session_id = secrets.token_hex(6)
    now = core.clock.time()
    core.store.spool.append(
        clock_anchor(), core.event("session", None, id=session_id, start=now, end=None)
    )
    core.ledger.open_session = (session_id, now)
    return session_id


def end(core: Core) -> None:
    """Close the open session: its interval joins the clock, and the spool is flushed."""
    if core.ledger.open_session is None:
        return
    session_id, started = core.ledger.open_session
    line = core.event("session", None, id=session_id, start=started, end=core.clock.time())
    core.store.spool.append(clock_anchor(), line)
    core.ledger.open_session = None
    core.store.flush_spool()
