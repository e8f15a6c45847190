"""``visualise``: the memory as one self-contained HTML page a person can open and explore.

The page carries its data, styles and script inline (no network, no CDN), so it works from a file
on disk, offline, forever. It is written to ``<gitdir>/elfmem/`` by default: a view of the memory,
never part of it, so it is never committed and never pushed.

It draws every kind of edge the memory has, because the learned ones are where it adapts:
declared relations (in the files), and from the ledger dream's similarity links, co-retrieval
pairs that graduated, ``related`` links and outcome edges; the page toggles each kind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elfmem.block.text import shorten
from elfmem.errors import InvalidInput
from elfmem.index import queries
from elfmem.index.queries import BlockRow, is_identity
from elfmem.rhythms.adaptive import all_learned_edges
from elfmem.rhythms.core import LIVE, STATUSES, Core
from elfmem.rhythms.results import Result

PAGE_FILE = Path(__file__).with_name("visualise_page.html")
DATA_SLOT = "/*ELFMEM_GRAPH_DATA*/"
DEFAULT_NAME = "graph.html"
PRIOR_CONFIDENCE = 0.5
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
FAMILIES = ("declared", "similar", "co-retrieval", "related", "outcome")
"""Edge kinds the page draws, each with its own style and toggle: declared relations from the
files, then the ledger's learned edges by relation."""
_LEARNED = {"similar": "similar", "co_retrieval": "co-retrieval", "related": "related"}


@dataclass(frozen=True)
class VisualiseResult(Result):
    """Where the page was written and how much of the memory it shows."""

    path: str
    nodes: int
    """Blocks drawn: inbox and active ones (archived too when asked), at most ``max_nodes``."""
    edges: int
    """Edges drawn between those blocks, of every kind, each counted once."""
    omitted: int = 0
    """Blocks left out by ``max_nodes``."""
    edge_kinds: dict[str, int] | None = None
    """Edges drawn per kind: declared, similar, co-retrieval, related, outcome."""

    @property
    def summary(self) -> str:
        left = f" ({self.omitted} less-connected blocks left out)" if self.omitted else ""
        noun = "edge" if self.edges == 1 else "edges"
        kinds = ", ".join(f"{n} {k}" for k, n in (self.edge_kinds or {}).items() if n)
        detail = f" ({kinds})" if kinds else ""
        return f"Wrote {self.path}: {self.nodes} blocks, {self.edges} {noun}{detail}{left}."


@dataclass(frozen=True)
class Graph:
    """The nodes and edges the page draws, already trimmed to ``max_nodes``."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    omitted: int

    def kinds(self) -> dict[str, int]:
        """Edges per kind, every kind present (zero when none)."""
        counts = dict.fromkeys(FAMILIES, 0)
        for edge in self.edges:
            counts[edge["family"]] += 1
        return counts


def node_confidence(core: Core, ids: Iterable[str]) -> dict[str, float]:
    """Each block's confidence (the Beta posterior from the ledger), which sizes its node."""
    return {i: core.ledger.folded(i).confidence for i in ids}


def _title(content: str) -> str:
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    return shorten(first.lstrip("#").strip(), 80)


def _edges(core: Core, rows: dict[str, BlockRow]) -> list[dict[str, Any]]:
    """Declared relations among ``rows``, each once, pointing from the block that declares it."""
    seen: set[tuple[str, str, str]] = set()
    for own, pairs in queries.neighbours(core.db(), rows).items():
        for kind, other in pairs:
            if other not in rows:
                continue
            forward = (kind, other) in rows[own].relations
            seen.add((own, kind, other) if forward else (other, kind, own))
    return [
        {"source": s, "kind": k, "target": t, "family": "declared", "weight": 1.0}
        for s, k, t in sorted(seen)
    ]


def learned(core: Core, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The ledger's live edges among ``ids``, each pair once (both ends record it), undirected.

    Graduated co-retrieval pairs count as the ledger's retrieval does (``all_learned_edges``);
    a relation this page has no style for is drawn as an outcome edge, what the ledger keeps
    besides the three named ones.
    """
    wanted = set(ids)
    best: dict[tuple[str, str, str], float] = {}
    for own in sorted(wanted):
        for (other, relation), weight in all_learned_edges(core.ledger.folded(own)).items():
            if other in wanted and other != own:
                a, b = (own, other) if own < other else (other, own)
                best[a, b, relation] = max(best.get((a, b, relation), 0.0), weight)
    return [
        {
            "source": a,
            "kind": relation,
            "target": b,
            "family": _LEARNED.get(relation, "outcome"),
            "weight": round(weight, 4),
        }
        for (a, b, relation), weight in sorted(best.items())
    ]


def _keep(rows: Sequence[BlockRow], degree: dict[str, int], max_nodes: int) -> list[BlockRow]:
    """Identity first, then the most connected, then the oldest: what best shows the shape."""
    ranked = sorted(rows, key=lambda r: (not is_identity(r), -degree.get(r.id, 0), r.created, r.id))
    return ranked[:max_nodes]


def collect(core: Core, include_archived: bool = False, max_nodes: int = 100) -> Graph:
    """Read blocks and their declared relations from the index and trim to ``max_nodes``."""
    if max_nodes < 1:
        raise InvalidInput(
            f"max_nodes must be at least 1, not {max_nodes}.",
            "Pass max_nodes (CLI: --max-nodes) of 1 or more.",
        )
    core.sync()
    statuses = STATUSES if include_archived else LIVE
    every = {r.id: r for s in statuses for r in queries.list_blocks(core.db(), status=s)}
    degree: dict[str, int] = {}
    for edge in _edges(core, every):
        for end in (edge["source"], edge["target"]):
            degree[end] = degree.get(end, 0) + 1
    kept = {r.id: r for r in _keep(list(every.values()), degree, max_nodes)}
    edges = _edges(core, kept) + learned(core, kept)
    confidence = node_confidence(core, kept)
    nodes = [
        {
            "id": r.id,
            "title": _title(r.content),
            "content": r.content,
            "cue": r.cue,
            "tags": list(r.tags),
            "status": r.status,
            "cls": r.cls,
            "tier": r.tier,
            "pinned": r.pinned,
            "created": r.created,
            "confidence": confidence.get(r.id, PRIOR_CONFIDENCE),
            "identity": is_identity(r),
            "degree": degree.get(r.id, 0),
        }
        for r in sorted(kept.values(), key=lambda r: (r.created, r.id))
    ]
    return Graph(nodes, edges, len(every) - len(kept))


def page_json(data: object) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` survive."""
    return json.dumps(data, ensure_ascii=True, sort_keys=True).translate(_JSON_ESCAPES)


def render(graph: Graph, agent: str) -> str:
    """The whole page as one string: the template with the graph embedded as inert JSON."""
    template = PAGE_FILE.read_text(encoding="utf-8")
    data = {"agent": agent, "nodes": graph.nodes, "edges": graph.edges, "omitted": graph.omitted}
    return template.replace(DATA_SLOT, page_json(data), 1)


def visualise(
    core: Core, out: Path | None = None, include_archived: bool = False, max_nodes: int = 100
) -> VisualiseResult:
    """Write the graph page (default ``<gitdir>/elfmem/graph.html``) and say where it went."""
    graph = collect(core, include_archived, max_nodes)
    path = Path(out) if out is not None else core.store.state_dir / DEFAULT_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(graph, core.agent), encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(
            f"Cannot write the graph page to {path}: {exc.strerror or exc}.",
            "Pass a writable file path with -o, e.g. `elfmem visualise -o /tmp/graph.html`.",
        ) from exc
    return VisualiseResult(
        str(path), len(graph.nodes), len(graph.edges), graph.omitted, graph.kinds()
    )
