"""status: where the memory stands and what to do next (seed §9)."""

from __future__ import annotations

from dataclasses import dataclass

from elfmem.index import queries
from elfmem.rhythms import staging
from elfmem.rhythms.core import Core
from elfmem.rhythms.result import Result

BACKLOG_FACTOR = 3
"""An inbox this many times its threshold is a backlog: health says so, and doctor fails."""


def inbox_backlog(inbox: int, threshold: int) -> str:
    """A warning when the inbox is far past its threshold, naming what to run; else ""."""
    if inbox < BACKLOG_FACTOR * max(1, threshold):
        return ""
    return (
        f"Inbox at {inbox}/{threshold}, far past its threshold: captures wait there unconsolidated;"
        " run `elfmem dream` (without an LLM it drains the whole inbox)."
    )


@dataclass(frozen=True)
class StatusResult(Result):
    session: str
    """``active`` when a session is open, else ``none``."""
    session_hours: float
    """Wall-clock hours since the open session began; 0 without one."""
    inbox: int
    """Blocks waiting in the inbox."""
    inbox_threshold: int
    """Inbox size at which a dream is due (``memory.inbox_threshold``)."""
    active: int
    """Active blocks."""
    archived: int
    """Archived blocks."""
    staged_pairs: int
    """Pairs of active blocks recalled together, not yet in enough sessions to become edges."""
    active_hours: float
    """The memory's clock: hours spent in sessions so far, which is what decay counts."""
    health: str
    """``good``, ``empty`` (nothing remembered), ``backlog`` (the inbox is at least three times
    its threshold) or ``degraded`` (memory files do not parse)."""
    suggestion: str
    """The next thing to do, in one line."""
    should_dream: bool
    """True when ``inbox`` has reached ``inbox_threshold``."""

    @property
    def summary(self) -> str:
        return (
            f"Session: {self.session} ({self.session_hours:.1f}h) | Inbox: {self.inbox}/"
            f"{self.inbox_threshold} | Active: {self.active} blocks | Health: {self.health}\n"
            f"Hebbian staging: {self.staged_pairs} pairs building toward co_retrieval edges.\n"
            f"Suggestion: {self.suggestion}"
        )


def _empty_suggestion(core: Core) -> str:
    """An empty checkout is new memory, unless another branch holds it (an empty clone)."""
    branch = core.store.memory_elsewhere()
    if branch is not None:
        return (
            f"This checkout holds no memory, but branch {branch} does: run `git switch {branch}`."
        )
    return 'Nothing remembered yet: `elfmem remember "…" --cue "…"`.'


def status(core: Core) -> StatusResult:
    core.sync()
    counts = queries.counts(core.db())
    inbox, active = counts.get("inbox", 0), counts.get("active", 0)
    threshold = core.config.memory.inbox_threshold
    staged = staging.staged_on(core.ledger, core.db(), queries.ids_with_status(core.db(), "active"))
    open_session = core.ledger.open_session
    hours = 0.0
    if open_session is not None:
        hours = (core.clock.time() - open_session[1]) / 3600
    errors = len(core.last_sync.errors) if core.last_sync else 0
    if errors:
        health, suggestion = (
            "degraded",
            f"{errors} memory file(s) do not parse: run `elfmem index check`.",
        )
    elif inbox_backlog(inbox, threshold):
        health, suggestion = "backlog", inbox_backlog(inbox, threshold)
    elif inbox >= threshold:
        health, suggestion = "good", f"Inbox at {inbox}/{threshold}: run `elfmem dream`."
    elif active == 0 and inbox == 0:
        health, suggestion = "empty", _empty_suggestion(core)
    else:
        health, suggestion = "good", "Memory healthy. No action required."
    advice = core.store.pull_advice()  # a pull that stopped on memory files comes first
    if advice is not None:
        suggestion = advice[0].upper() + advice[1:].rstrip(".") + "."
    return StatusResult(
        session="active" if open_session else "none",
        session_hours=round(hours, 2),
        inbox=inbox,
        inbox_threshold=threshold,
        active=active,
        archived=counts.get("archived", 0),
        staged_pairs=staged // 2,
        active_hours=round(core.ledger.now_hours(), 3),
        health=health,
        suggestion=suggestion,
        should_dream=inbox >= threshold,
    )
