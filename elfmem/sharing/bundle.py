"""The exchange bundle format: JSON Lines, a header line, then one block a line (docs/exchange.md).

Readable with any JSON tool and diffable line by line. The header names the format and its
version, who exported it (a peer id), what share level it holds, how many blocks follow and the
SHA-256 of the block lines, so a truncated or edited file is refused before anything is written.
Pure: no I/O beyond the bytes given.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from elfmem.block.model import Block, Relation
from elfmem.block.render import validate_block
from elfmem.errors import BlockFormatError, InvalidInput

FORMAT = "elfmem-bundle"
VERSION = 1
SHARES = ("public", "peer", "all")


@dataclass(frozen=True)
class Record:
    """One block in a bundle, with where it came from and what its ledger says."""

    block: Block
    status: str
    ledger: dict[str, float]
    """``alpha``, ``beta`` (Jeffreys prior included), ``confidence`` and ``outcomes``."""
    provenance: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    """The block's raw ledger lines: only in ``--share all`` bundles, for a self-merge."""


@dataclass(frozen=True)
class Bundle:
    header: dict[str, Any]
    records: list[Record]

    @property
    def author(self) -> str:
        return str(self.header.get("from", ""))

    @property
    def digest(self) -> str:
        return str(self.header.get("sha256", ""))


def _line(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def record_dict(record: Record) -> dict[str, Any]:
    b = record.block
    data: dict[str, Any] = {
        "id": b.id,
        "cls": b.cls,
        "tags": list(b.tags),
        "content": b.content,
        "cue": b.cue,
        "created": b.created,
        "pinned": b.pinned,
        "relations": [[r.kind, r.target] for r in b.relations],
        "fields": [list(f) for f in b.fields],
        "extra": [list(e) for e in b.extra],
        "status": record.status,
        "ledger": record.ledger,
        "provenance": record.provenance,
    }
    if record.events:
        data["events"] = record.events
    return data


def encode(header: Mapping[str, Any], records: Sequence[Record]) -> bytes:
    """The bundle's bytes; the header gets ``format``, ``version``, ``blocks`` and ``sha256``."""
    body = "".join(_line(record_dict(r)) + "\n" for r in records)
    head = {
        **header,
        "format": FORMAT,
        "version": VERSION,
        "blocks": len(records),
        "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
    }
    return (_line(head) + "\n" + body).encode("utf-8")


def _bad(why: str) -> InvalidInput:
    return InvalidInput(
        f"This is not a usable elfmem bundle: {why}. Nothing was imported.",
        "Ask for a fresh export (`elfmem export --share peer -o FILE`) and import that file "
        "unchanged.",
    )


def _pairs(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value
    ):
        raise _bad(f"{what} must be a list of [key, value] pairs")
    return tuple((p[0], p[1]) for p in value)


def _record(data: Any, n: int) -> Record:
    if not isinstance(data, dict):
        raise _bad(f"line {n} is not an object")
    try:
        tags = data.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise _bad(f"line {n}: tags must be a list of strings")
        block = Block(
            id=str(data["id"]),
            content=str(data["content"]),
            cls=str(data.get("cls", "knowledge")),
            tags=tuple(tags),
            pinned=data.get("pinned") is True,
            created=str(data.get("created", "")),
            cue=str(data.get("cue", "")),
            relations=tuple(Relation(k, t) for k, t in _pairs(data.get("relations", []), "rels")),
            fields=_pairs(data.get("fields", []), "fields"),
            extra=_pairs(data.get("extra", []), "extra"),
        )
        validate_block(block)
    except KeyError as exc:
        raise _bad(f"line {n} has no {exc.args[0]!r}") from exc
    except BlockFormatError as exc:
        raise _bad(f"line {n}: {exc.message}") from exc
    except InvalidInput as exc:
        if exc.message.startswith("This is not"):
            raise
        raise _bad(f"line {n}: {exc.message}") from exc
    ledger = data.get("ledger") or {}
    if not isinstance(ledger, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in ledger.values()
    ):
        raise _bad(f"line {n}: ledger must hold numbers")
    status = data.get("status", "active")
    if status not in ("active", "inbox"):
        raise _bad(f"line {n}: status {status!r}")
    events = data.get("events") or []
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise _bad(f"line {n}: events must be ledger lines")
    provenance = data.get("provenance") or {}
    return Record(
        block,
        status,
        {k: float(v) for k, v in ledger.items()},
        {str(k): str(v) for k, v in provenance.items()} if isinstance(provenance, dict) else {},
        list(events),
    )


def decode(data: bytes) -> Bundle:
    """A bundle from its bytes, or ``InvalidInput`` naming what is wrong (nothing partial)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad("it is not UTF-8 text") from exc
    head_line, _, body = text.partition("\n")
    try:
        header = json.loads(head_line)
    except ValueError as exc:
        raise _bad("its first line is not a JSON header") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _bad(f"its header does not say format {FORMAT!r}")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise InvalidInput(
            f"This bundle is format version {version!r}; this elfmem reads up to {VERSION}.",
            "Upgrade elfmem (`pip install -U elfmem`), then import it again.",
        )
    if hashlib.sha256(body.encode("utf-8")).hexdigest() != header.get("sha256"):
        raise _bad("its blocks do not match the header's sha256 (changed or cut short)")
    lines = [line for line in body.split("\n") if line.strip()]
    if len(lines) != header.get("blocks"):
        raise _bad(f"the header counts {header.get('blocks')} blocks, the file has {len(lines)}")
    records = []
    for n, line in enumerate(lines, start=2):
        try:
            records.append(_record(json.loads(line), n))
        except ValueError as exc:
            raise _bad(f"line {n} is not JSON") from exc
    ids = [r.block.id for r in records]
    if len(set(ids)) != len(ids):
        raise _bad("a block id appears twice")
    return Bundle(header, records)
