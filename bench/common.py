"""What the harnesses share: where the data sets are, the BM25 anchor's tokens, nDCG@10, a
percentile, the synthetic notes of the scale harnesses, ``--quick`` and a small SVG line plot.

Every harness imports this as ``common`` (a script's own folder is first on ``sys.path``), so a
number a harness prints is computed the same way wherever two of them print it.
"""

from __future__ import annotations

import argparse
import math
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

SHARED = Path(__file__).resolve().parents[2] / "shared/bench"
"""The data sets that are not in the repository (shared/bench beside the checkout)."""
LOCOMO = SHARED / "locomo-dev.json"

STOP = set(
    "a an and are as at be by for from has have i in is it of on or that the this to was "
    "were will with you your what when where who why how did do does".split()
)
"""The small stop-word list of the BM25 anchor (rank-bm25 Okapi) in every retrieval harness."""


def tokens(text: str) -> list[str]:
    """The BM25 anchor's tokens: lower-cased ``[a-z0-9]+`` runs less ``STOP``."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


def ndcg10(ranked: Sequence[object], gold: set[str] | set[int]) -> float:
    """Binary nDCG@10, the ideal DCG over min(#relevant, 10) places (BEIR's)."""
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return dcg / idcg


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile by the nearest rank below (p95 of 100 samples is the 96th smallest)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


WORDS = (
    "postgres redis cache pool shard tenant queue worker deploy rollback latency index vector "
    "backup restore schema migration token session cookie header proxy gateway kafka topic "
    "partition replica leader follower timeout retry backoff jitter quota limit budget alert "
    "metric trace span log rotate archive compress encrypt sign verify audit"
).split()
"""The vocabulary of the synthetic notes that fill the recall and dream scale harnesses."""


def sentence(rng: random.Random, i: int, block_bytes: int = 0) -> str:
    """Synthetic note ``i``: twelve words and a port, padded to about ``block_bytes``."""
    text = (
        f"Note {i}: "
        + " ".join(rng.choice(WORDS) for _ in range(12))
        + f" on port {8000 + i % 997}"
    )
    parts = [text]
    size = len(text)
    while size < block_bytes:  # more sentences, a paragraph break every eight
        more = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
        parts.append(("\n\n" if len(parts) % 8 == 0 else " ") + more)
        size += len(more) + 1
    return "".join(parts) if block_bytes else text


def parse(parser: argparse.ArgumentParser, quick: dict[str, object]) -> argparse.Namespace:
    """Add ``--quick`` (the preset ``quick``: a run of under a minute) and parse the command line.

    The preset overrides the options it names, so ``--quick`` is always the same run."""
    shown = " ".join(
        f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}") for k, v in quick.items()
    )
    parser.add_argument("--quick", action="store_true", help=f"under a minute: {shown}")
    args = parser.parse_args()
    if args.quick:
        for key, value in quick.items():
            setattr(args, key, value)
    return args


def svg_lines(
    series: dict[str, list[tuple[float, float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_x: bool = False,
    y_min: float = 0.0,
) -> str:
    """A line plot as a small SVG document: one polyline and a legend entry per series; the y axis
    starts at ``y_min`` (0 unless a caller says otherwise)."""
    width, height, left, bottom, top, right = 640, 360, 60, 50, 36, 170
    points = [p for line in series.values() for p in line]
    xs = [math.log10(x) if log_x else x for x, _ in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(y_min, *(y for _, y in points)), max(y for _, y in points) * 1.05
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)

    def at(x: float, y: float) -> tuple[float, float]:
        u = math.log10(x) if log_x else x
        px = left + (u - x0) / (x1 - x0) * (width - left - right)
        return px, height - bottom - (y - y0) / (y1 - y0) * (height - bottom - top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    out += _axes(at, sorted({x for x, _ in points}), (y0, y1), (width - right, height - bottom))
    out.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
    )
    out.append(
        f'<text x="14" y="{(height - bottom + top) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(height - bottom + top) / 2})">{escape(y_label)}</text>'
    )
    colours = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f")
    for n, (name, line) in enumerate(series.items()):
        colour = colours[n % len(colours)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in (at(x, y) for x, y in line))
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>'
            for px, py in (at(x, y) for x, y in line)
        ]
        ly = top + 16 * n + 8
        out.append(
            f'<line x1="{width - right + 12}" y1="{ly}" x2="{width - right + 32}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{width - right + 38}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _axes(
    place: Callable[[float, float], tuple[float, float]],
    x_ticks: list[float],
    y_span: tuple[float, float],
    corner: tuple[float, float],
) -> list[str]:
    """The two axes, a tick label at every measured x, six grid lines on y."""
    (ox, oy), (ex, _) = place(x_ticks[0], y_span[0]), corner
    _, oy_top = place(x_ticks[0], y_span[1])
    out = [
        f'<line x1="{ox:.1f}" y1="{oy:.1f}" x2="{ex:.1f}" y2="{oy:.1f}" stroke="black"/>',
        f'<line x1="{ox:.1f}" y1="{oy:.1f}" x2="{ox:.1f}" y2="{oy_top:.1f}" stroke="black"/>',
    ]
    for x in x_ticks:
        px, _ = place(x, y_span[0])
        out.append(f'<text x="{px:.1f}" y="{oy + 16:.1f}" text-anchor="middle">{x:,g}</text>')
    for k in range(6):
        y = y_span[0] + (y_span[1] - y_span[0]) * k / 5
        _, py = place(x_ticks[0], y)
        out.append(f'<text x="{ox - 6:.1f}" y="{py + 4:.1f}" text-anchor="end">{y:.3g}</text>')
        out.append(f'<line x1="{ox:.1f}" y1="{py:.1f}" x2="{ex:.1f}" y2="{py:.1f}" stroke="#ddd"/>')
    return out
