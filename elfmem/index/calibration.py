"""Every cosine threshold of elfmem, moved to the configured embedding model's own scale.

The thresholds (the look-alike cut 0.90 and revision cut 0.80 of dream, the relevance gate of
recall, the near-twin cut of diversity, the ``similar`` edge threshold, the bearing cut of
principle review) are stated on one reference scale: the PCA-256 distillation elfmem shipped
first, on which they were chosen. Models differ in where unrelated texts land: that one puts
unrelated statements at cosine 0.19 (median), the embedded model without PCA at 0.74, because
every vector shares one mean direction; a threshold copied from one to the other would let
everything through the gate and link unrelated blocks as look-alikes.

So each model is calibrated from its own cosines between the probe statements below (every pair
about a different subject). Their highest cosine ``a`` is the closest two unrelated statements
come; a threshold keeps its place between that and identity: ``c`` on the reference scale
(``REFERENCE_ANCHOR``, the reference model's ``a``) becomes ``a + (1 − a) · (c − REFERENCE_ANCHOR)
/ (1 − REFERENCE_ANCHOR)`` (``Cuts.scaled``). The look-alike cuts never fall below 0.90 and 0.80.
On LoCoMo this keeps each cut at about the same share of a conversation's turn pairs for both
models (docs/decisions/0005-embedded-model.md).

The probe vectors go through the embedding cache like any text, so an endpoint model is asked
for them once; the anchor and cuts are stored in the same cache, keyed by the model identity and
the probe set, and kept per process.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass

import numpy as np

from elfmem.index.embcache import EmbeddingCache, VectorModel, default_cache_path, embed_cached
from elfmem.index.embcache import text_hash as _text_hash

LOOKALIKE_FLOOR = 0.90
REVISION_FLOOR = 0.80
REFERENCE_ANCHOR = 0.5226
"""The highest probe-pair cosine of the reference model (the PCA-256 distillation,
``static:minilm-l6-m2v-256-f16:e79551e309c0``), on whose scale every threshold is stated."""

PROBES = (
    "The staging database listens on port 5433 behind the office VPN.",
    "Maria prefers green tea without sugar in the afternoon.",
    "Our sourdough starter needs feeding every twelve hours.",
    "The quarterly tax filing is due on the fifteenth of April.",
    "Use two spaces, not tabs, in the YAML files of the deploy repo.",
    "The cat is allergic to chicken-based food.",
    "Flights to Lisbon are cheapest when booked on a Tuesday.",
    "The printer on the third floor jams with recycled paper.",
    "Kubernetes pods in the batch namespace get evicted above 6 GB of memory.",
    "Grandma's birthday party is at the lake house this year.",
    "The violin needs new strings before the December concert.",
    "Customer refunds above 500 euros need a manager's approval.",
    "The tomato seedlings go outside once nights stay above ten degrees.",
    "Jonas speaks Portuguese and is learning Japanese.",
    "The legacy billing service still runs on Python 2.7.",
    "Our team's retrospective happens every second Friday.",
    "The bike's rear brake squeaks when it rains.",
    "Passwords for the lab machines rotate every ninety days.",
    "The library closes early on public holidays.",
    "Chess club meets in room 204 after school.",
    "The API rate limit for free accounts is 60 requests per minute.",
    "Aunt Rosa's lasagne recipe uses nutmeg in the béchamel.",
    "The solar panels produce most power between eleven and two.",
    "Frontend builds fail when the Node version is older than 18.",
    "The dentist appointment was moved to Thursday morning.",
    "Wind turbines on the ridge are serviced every spring.",
    "Log files older than thirty days are compressed and moved to cold storage.",
    "The novel's second chapter is set in a lighthouse.",
    "Priya is vegetarian and avoids mushrooms.",
    "The office coffee machine descales itself every Monday.",
    "Marathon training peaks three weeks before the race.",
    "Invoices are numbered by year and then by a running counter.",
    "The guest Wi-Fi password is printed on the fridge.",
    "Monkeys at the zoo are fed at ten and at four.",
    "The mobile app stores drafts locally until the user signs in.",
    "Snow chains are required on the mountain pass from November.",
    "Our cloud bill doubled after the video transcoding launch.",
    "The choir rehearses Bach's motets on Wednesday evenings.",
    "Leo's football boots are size 38.",
    "Backups of the wiki run nightly at 02:00 UTC.",
    "The museum's Egyptian wing reopens after renovation in May.",
    "Error budgets reset at the start of every calendar month.",
    "The neighbour's dog barks whenever the mail arrives.",
    "Basil should be watered in the morning, not at night.",
    "The contract with the cleaning company ends in September.",
    "GPU nodes are reserved for the research team on weekends.",
    "Hiking boots should be broken in before a long trek.",
    "The school bus leaves the corner stop at 7:40.",
)
"""Short statements each about its own subject: every pair of them is unrelated."""


@dataclass(frozen=True, slots=True)
class Cuts:
    """A model's look-alike cuts, and its anchor: the highest cosine of two unrelated probes."""

    lookalike: float
    revision: float
    unrelated: float

    def scaled(self, cosine: float) -> float:
        """``cosine``, stated on the reference scale, at the same place on this model's."""
        return _scaled(cosine, self.unrelated)


def _scaled(cosine: float, anchor: float) -> float:
    share = (cosine - REFERENCE_ANCHOR) / (1.0 - REFERENCE_ANCHOR)
    return round(anchor + (1.0 - anchor) * share, 4)


DEFAULT_CUTS = Cuts(LOOKALIKE_FLOOR, REVISION_FLOOR, REFERENCE_ANCHOR)
_KNOWN: dict[str, Cuts] = {}
_LOCK = threading.Lock()


def probe_key() -> str:
    """Names the probe set and the rule, so changing either recalibrates every model."""
    parts = [*PROBES, f"anchor=max ref={REFERENCE_ANCHOR}"]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def cuts_from_cosines(cosines: np.ndarray) -> Cuts:
    """The cuts for a model whose unrelated pairs have these cosines."""
    anchor = round(float(cosines.max()), 4) if len(cosines) else REFERENCE_ANCHOR
    lookalike = max(LOOKALIKE_FLOOR, _scaled(LOOKALIKE_FLOOR, anchor))
    revision = max(REVISION_FLOOR, _scaled(REVISION_FLOOR, anchor))
    return Cuts(lookalike, revision, anchor)


def unrelated_cosines(vectors: np.ndarray) -> np.ndarray:
    sims = vectors @ vectors.T
    upper: np.ndarray = sims[np.triu_indices(len(vectors), k=1)]
    return upper


def model_cuts(model: VectorModel, cache: EmbeddingCache | None = None) -> Cuts:
    """The cuts for ``model``: from this process's memo, the cache, or its probe vectors."""
    key = f"{model.identity}|{probe_key()}"
    with _LOCK:
        known = _KNOWN.get(key)
    if known is not None:
        return known
    store = EmbeddingCache(default_cache_path()) if cache is None else cache
    try:
        cuts = _stored(store, key) or _calibrate(model, store, key)
    finally:
        if cache is None:
            store.close()
    with _LOCK:
        _KNOWN[key] = cuts
    return cuts


def _stored(store: EmbeddingCache, key: str) -> Cuts | None:
    raw = store.get_note(key)
    if raw is None:
        return None
    try:
        fields = json.loads(raw)
        return Cuts(
            float(fields["lookalike"]), float(fields["revision"]), float(fields["unrelated"])
        )
    except (ValueError, KeyError, TypeError):
        return None


def _calibrate(model: VectorModel, store: EmbeddingCache, key: str) -> Cuts:
    texts = {_text_hash(t): t for t in PROBES}
    found, _ = embed_cached(model, texts, store)
    vectors = np.stack([found[h] for h in texts]).astype(np.float32)
    cuts = cuts_from_cosines(unrelated_cosines(vectors))
    store.put_note(key, json.dumps(asdict(cuts)))
    return cuts
