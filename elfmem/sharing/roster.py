"""The peer roster: who this memory is, and the peers it trusts, in one committed JSON file.

``.elfmem/peers.json`` travels with the memory (clones and bundles of it know the same peers);
each change is one commit through the store's writer, so ``elfmem undo`` takes it back. Trust set
here is a prior: the trust a peer has *now* also moves with the outcomes of the blocks imported
from it (``folded_trust``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from elfmem.errors import InvalidInput, NotFound
from elfmem.store import MemoryView
from elfmem.store.ledger import PRIOR, distinct_events
from elfmem.store.tree import blob_at

ROSTER_PATH = ".elfmem/peers.json"
FORMAT = "elfmem-peers/1"
DEFAULT_TRUST = 0.5
PRIOR_WEIGHT = 4.0
"""The trust set by hand counts as this many outcomes; imported blocks' outcomes move it."""
IMPORT_ORIGIN = "import"
"""The ``origin`` of the outcome event an import records: carried-over evidence, not a
judgement of the peer by this memory, so it never moves trust."""


@dataclass(frozen=True)
class Peer:
    name: str
    id: str
    remote: str = ""
    trust: float = DEFAULT_TRUST
    """The trust set by hand (the prior), 0..1."""
    added: str = ""


@dataclass(frozen=True)
class Roster:
    self_id: str = ""
    peers: tuple[Peer, ...] = field(default_factory=tuple)

    def find(self, who: str) -> Peer:
        """A peer by name or id; a clear error naming the known ones."""
        for peer in self.peers:
            if who in (peer.name, peer.id):
                return peer
        known = ", ".join(p.name for p in self.peers) or "none"
        raise NotFound(
            f"No peer is called or has id {who!r} (known: {known}).",
            "Add it with `elfmem peer add NAME --id did:key:… --remote URL`.",
        )

    def by_id(self, peer_id: str) -> Peer | None:
        return next((p for p in self.peers if p.id == peer_id), None)

    def with_peer(self, peer: Peer) -> Roster:
        kept = tuple(p for p in self.peers if p.name != peer.name)
        return replace(self, peers=tuple(sorted((*kept, peer), key=lambda p: p.name)))

    def without(self, name: str) -> Roster:
        return replace(self, peers=tuple(p for p in self.peers if p.name != name))

    def encode(self) -> bytes:
        data = {
            "format": FORMAT,
            "self": {"id": self.self_id},
            "peers": [asdict(p) for p in self.peers],
        }
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def decode(data: bytes | None) -> Roster:
    if not data:
        return Roster()
    try:
        raw: Any = json.loads(data)
        if raw.get("format") != FORMAT:
            raise ValueError(f"format {raw.get('format')!r}")
        peers = tuple(
            Peer(
                str(p["name"]),
                str(p["id"]),
                str(p.get("remote", "")),
                float(p.get("trust", DEFAULT_TRUST)),
                str(p.get("added", "")),
            )
            for p in raw.get("peers", [])
        )
        return Roster(str((raw.get("self") or {}).get("id", "")), peers)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InvalidInput(
            f"{ROSTER_PATH} cannot be read ({exc}).",
            f"Fix the file by hand or restore it with `git checkout HEAD -- {ROSTER_PATH}`.",
        ) from exc


def read(view: MemoryView) -> Roster:
    """The roster as ``view``'s commit holds it."""
    tree = view.commit.tree if view.commit is not None else None
    blob = blob_at(view.repo, tree, ROSTER_PATH)
    return decode(blob.data if blob is not None else None)


def check_trust(value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidInput(f"Trust must be between 0 and 1, got {value!r}.", "e.g. --trust 0.5")
    return float(value)


@dataclass(frozen=True)
class TrustFold:
    trust: float
    """The folded trust: (W·prior + Σ w·s) / (W + Σ w) over outcomes of imported blocks."""
    outcomes: int
    evidence: float
    """Σ w over those outcomes."""


def folded_trust(prior: float, notes: Iterable[Iterable[str]]) -> TrustFold:
    """Trust after the outcomes recorded on the blocks imported from a peer (one ledger note per
    block). The import's own carried-over evidence (``origin: import``) and undone events do not
    count: trust judges what the peer's knowledge did here."""
    good = total = 0.0
    count = 0
    for lines in notes:
        events, _ = distinct_events(lines)
        undone = {e["of"] for e in events if e["kind"] == "undo"}
        for e in events:
            if e["kind"] != "outcome" or e.get("origin") == IMPORT_ORIGIN:
                continue
            if isinstance(e.get("commit"), str) and e["commit"] in undone:
                continue
            weight = float(e.get("weight", 1.0))
            good += weight * float(e["signal"])
            total += weight
            count += 1
    trust = (PRIOR_WEIGHT * prior + good) / (PRIOR_WEIGHT + total)
    return TrustFold(trust, count, total)


def scaled_evidence(alpha: float, beta: float, trust: float) -> tuple[float, float]:
    """An exported block's evidence (α, β above the prior) discounted by trust: the (signal,
    weight) of the one outcome an import records, or (0.5, 0) when there is none."""
    good, bad = max(0.0, alpha - PRIOR), max(0.0, beta - PRIOR)
    weight = (good + bad) * trust
    if weight <= 0:
        return 0.5, 0.0
    return good / (good + bad), weight
