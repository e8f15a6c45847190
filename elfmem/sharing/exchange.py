"""``export`` and ``import``: blocks with their provenance and folded ledger, as a bundle file.

A block's share level is its ``share:`` frontmatter key, or a ``share/<level>`` tag, else
``peer``; blocks written by peers (``peer/*``) are not passed on unless marked. ``--share
public`` takes public blocks, ``peer`` public and peer ones, ``all`` every block that is not
private (inbox and peer-written ones too) with its raw ledger lines, for a self-merge. Private
never leaves. An import is one commit (``elfmem undo`` takes it back) and skips ids this memory
holds already, so importing a bundle twice adds nothing the second time.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from elfmem.block.model import Block
from elfmem.block.secrets import block_fields
from elfmem.block.secrets import check as check_secrets
from elfmem.errors import InvalidInput, NotFound
from elfmem.index import queries
from elfmem.rhythms.core import Core
from elfmem.sharing import bundle, peers
from elfmem.sharing.bundle import Record
from elfmem.sharing.intake import Incoming, birth, commit_incoming
from elfmem.sharing.results import ExportResult, ImportResult
from elfmem.sharing.roster import IMPORT_ORIGIN, scaled_evidence
from elfmem.store import anchor_for_block
from elfmem.store.ledger import NEUTRAL_BAND, decode

LEVELS = ("public", "peer", "private")
DEFAULT_LEVEL = "peer"
_PROVENANCE_KEYS = ("from", "claimed-from", "via", "signature")


def share_level(block: Block) -> str:
    """``public``, ``peer`` or ``private``: the ``share:`` key, a ``share/`` tag, or the default
    (``peer``; ``private`` for a block a peer wrote, so nobody's words are passed on unasked)."""
    for key, value in block.extra:
        if key == "share" and value in LEVELS:
            return value
    for tag in block.tags:
        if tag.startswith("share/") and tag.removeprefix("share/") in LEVELS:
            return tag.removeprefix("share/")
    if any(tag.startswith("peer/") for tag in block.tags):
        return "private"
    return DEFAULT_LEVEL


def _wanted(level: str, share: str, block: Block) -> bool:
    if level == "private":
        explicit = any(k == "share" for k, _ in block.extra) or "share/private" in block.tags
        return share == "all" and not explicit  # a peer's block, passed on only in "all"
    return share != "public" or level == "public"


def export(
    core: Core, share: str, path: Path, min_confidence: float = 0.0, overwrite: bool = True
) -> ExportResult:
    if share not in bundle.SHARES:
        raise InvalidInput(f"Unknown share level {share!r}.", "Use --share public, peer or all.")
    if not (math.isfinite(min_confidence) and 0.0 <= min_confidence <= 1.0):
        raise InvalidInput("--min-confidence must be between 0 and 1.", "e.g. 0.6")
    me = peers.init(core).id
    core.sync()
    statuses = ("active", "inbox") if share == "all" else ("active",)
    rows = [r for s in statuses for r in queries.list_blocks(core.db(), status=s)]
    folded = core.ledger.folded_many(r.id for r in rows)
    records, private, weak = [], 0, 0
    for row in rows:
        block = row.to_block()
        if not _wanted(share_level(block), share, block):
            private += 1
            continue
        state = folded[row.id]
        if state.confidence < min_confidence:
            weak += 1
            continue
        ledger = {
            "alpha": state.alpha,
            "beta": state.beta,
            "confidence": state.confidence,
            "outcomes": float(state.outcomes),
        }
        events = core.ledger.lines(anchor_for_block(row.id)) if share == "all" else []
        provenance = {"author": me, "agent": core.agent}
        records.append(Record(block, row.status, ledger, provenance, sorted(set(events))))
    header = {"share": share, "from": me, "agent": core.agent, "min_confidence": min_confidence}
    data = bundle.encode(header, records)
    _write_atomically(path, data, overwrite)
    digest = bundle.decode(data).digest
    return ExportResult(str(path), share, len(records), private, weak, digest)


def _write_atomically(path: Path, data: bytes, overwrite: bool = True) -> None:
    """Whole or not at all; without ``overwrite`` the file appears by a hard link, which fails
    rather than replace a file that appeared since it was checked."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    except FileExistsError as exc:
        raise InvalidInput(
            f"{path} already exists; it was left as it was.",
            "Pass overwrite: true to replace it, or choose another file name.",
        ) from exc
    except OSError as exc:
        raise InvalidInput(
            f"Cannot write {path}: {exc.strerror}.", "Choose a writable path with -o."
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _read(path: Path) -> bundle.Bundle:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotFound(f"No bundle at {path}.", "Check the path given to `elfmem import`.") from exc
    except OSError as exc:
        raise InvalidInput(f"Cannot read {path}: {exc.strerror}.", "Check the file.") from exc
    found = bundle.decode(data)
    for record in found.records:  # refused before any write, naming the block
        check_secrets(block_fields(record.block, f"bundle block {record.block.id} "))
    return found


def import_bundle(
    core: Core, path: Path, from_peer: str | None = None, self_merge: bool = False
) -> ImportResult:
    """Import a bundle from a peer (quarantined, confidence scaled by its trust) or from this
    same memory elsewhere (``self_merge``: trust 1.0, tags and statuses as they were)."""
    if bool(from_peer) == self_merge:
        raise InvalidInput(
            "Say where the bundle comes from: --from PEER or --self-merge (one of them).",
            "e.g. `elfmem import bundle.jsonl --from bob`.",
        )
    found = _read(path)
    roster = peers.load(core)
    trailers = [("Elfmem-Import", found.digest[:16])]
    if self_merge:
        if found.author and roster.self_id and found.author != roster.self_id:
            raise InvalidInput(
                f"This bundle was exported by {found.author}, not by this memory "
                f"({roster.self_id}).",
                "Import it from the peer that wrote it: `elfmem import FILE --from NAME`.",
            )
        items = [_self_item(r) for r in found.records]
        source, trust = "self", 1.0
    else:
        assert from_peer is not None
        peer = roster.find(from_peer)
        if found.author != peer.id:
            raise InvalidInput(
                f"This bundle was exported by {found.author or 'an unnamed memory'}, not by "
                f"{peer.name} ({peer.id}).",
                "Import it with --from naming the peer whose id the bundle carries "
                "(`elfmem peer list`).",
            )
        trust = peers.trust_of(core, peer)
        items = [_peer_item(r, peer.name, peer.id, found.digest) for r in found.records]
        source = peer.name
        trailers.append(("Elfmem-Peer", peer.id))
    ledgers = {r.block.id: r.ledger for r in found.records}

    def events_for(block: Block, commit_id: str) -> list[str]:
        lines = [birth(core, block, commit_id)]
        if self_merge and any(i.events for i in items if i.block.id == block.id):
            return lines
        led = ledgers[block.id]
        signal, weight = scaled_evidence(led.get("alpha", 0.5), led.get("beta", 0.5), trust)
        if weight > 0:
            lines.append(
                core.event(
                    "outcome",
                    block.id,
                    signal=signal,
                    weight=weight,
                    band=NEUTRAL_BAND,
                    origin=IMPORT_ORIGIN,
                    source=source,
                    commit=commit_id,
                )
            )
        return lines

    subject = f"import: {len(items)} block(s) from {source}"
    commit, fresh = commit_incoming(core, items, "import", subject, trailers, events_for)
    return ImportResult(str(path), source, trust, fresh, len(items) - len(fresh), commit)


def _self_item(record: Record) -> Incoming:
    events = [line for line in record.events if decode(line) is not None]
    return Incoming(record.block, record.status, events)


def _peer_item(record: Record, name: str, peer_id: str, digest: str) -> Incoming:
    block = record.block
    extra = tuple(kv for kv in block.extra if kv[0] not in _PROVENANCE_KEYS)
    extra += (("from", block_author(record, peer_id)), ("via", f"bundle:{digest[:16]}"))
    tags = tuple(dict.fromkeys((*block.tags, f"peer/{name}")))
    return Incoming(block.with_changes(tags=tags, extra=extra), "active")


def block_author(record: Record, peer_id: str) -> str:
    """Who wrote the block: the peer, or whoever the peer had it from (its ``from`` key)."""
    return next((v for k, v in record.block.extra if k == "from"), peer_id)
