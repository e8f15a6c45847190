"""The five scoring signals, put on one scale over the candidate set and weighted by the frame.

Raw signals live on different scales (a normalised RRF score spans 0.9–1.0 over a top ten, recency
of a permanent block sits at 0.9999), so each is min-max normalised over the candidates before the
frame's weights apply. A signal that carries no information must not move the ranking:
the range divides by ``max(max − min, floor)``, so when every candidate has the same value the
signal is 0 for all of them, and when values differ by less than the floor the differences shrink
in proportion instead of being blown up to a full unit.

Floors, in each signal's raw units (``SIGNAL_FLOORS``), are the smallest spread treated as a
real difference; they are first choices, to be tuned on the dev benchmark:

- similarity 0.05: less than one rank at the top of a fused list (second in both rankings
  scores 11/12 ≈ 0.92 of the top with k = 10), or 0.05 of cosine.
- confidence 0.10: under half of what one full outcome does to a fresh block (0.5 → 0.75).
- recency 0.05: about five active hours for a standard block (1 − e^(−0.01·5) ≈ 0.049); the
  constitution's permanent λ keeps its spread far below this, so recency never reorders it.
- centrality 0.20: about one solid edge (weighted degree 0.5 gives 0.5 / 2.5 = 0.2).
- reinforcement 0.30: about three uses (ln 4 / ln 51 ≈ 0.35); one stray retrieval should not
  count as much as a record of use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from elfmem.errors import InvalidInput

FloatArray = npt.NDArray[np.float64]

SIGNALS: tuple[str, ...] = ("similarity", "confidence", "recency", "centrality", "reinforcement")

SIGNAL_FLOORS: Mapping[str, float] = {
    "similarity": 0.05,
    "confidence": 0.10,
    "recency": 0.05,
    "centrality": 0.20,
    "reinforcement": 0.30,
}

REINFORCEMENT_SATURATION = 50
"""Uses at which the reinforcement signal reaches 1.0; more uses add nothing."""

CENTRALITY_HALF = 2.0
"""Weighted degree at which the centrality signal reaches 0.5."""


def _as_vector(values: npt.ArrayLike, what: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise InvalidInput(
            f"{what} must be a one-dimensional array, got shape {array.shape}",
            "Pass one value per candidate block.",
        )
    if not np.all(np.isfinite(array)):
        raise InvalidInput(
            f"{what} contains NaN or infinite values",
            "Check the index state that produced them; `elfmem index rebuild` repairs it.",
        )
    return array


def normalise_over_candidates(values: npt.ArrayLike, floor: float) -> FloatArray:
    """(v − min) / max(max − min, floor): 0 for the weakest candidate, at most 1 for the best."""
    if not floor > 0:
        raise InvalidInput(
            f"a normalisation floor must be > 0, got {floor!r}", "Use SIGNAL_FLOORS."
        )
    array = _as_vector(values, "signal values")
    if array.size == 0:
        return array
    low = float(array.min())
    spread = max(float(array.max()) - low, floor)
    return np.asarray((array - low) / spread, dtype=np.float64)


def normalise_signals(
    raw: Mapping[str, npt.ArrayLike], floors: Mapping[str, float] = SIGNAL_FLOORS
) -> dict[str, FloatArray]:
    """Normalise each named raw signal over the candidates with its own floor."""
    _check_names(raw.keys(), "signal")
    return {
        name: normalise_over_candidates(values, floors.get(name, SIGNAL_FLOORS[name]))
        for name, values in raw.items()
    }


def reinforcement_signal(
    counts: npt.ArrayLike, saturation: int = REINFORCEMENT_SATURATION
) -> FloatArray:
    """ln(1 + n) / ln(1 + saturation), capped at 1: early uses count most, heavy use saturates."""
    if saturation < 1:
        raise InvalidInput(f"saturation must be ≥ 1, got {saturation}", "Use the default, 50.")
    n = _as_vector(counts, "reinforcement counts")
    if np.any(n < 0):
        raise InvalidInput("reinforcement counts cannot be negative", "Rebuild the ledger state.")
    return np.asarray(np.minimum(np.log1p(n) / np.log1p(saturation), 1.0), dtype=np.float64)


def centrality_signal(weighted_degree: npt.ArrayLike, half: float = CENTRALITY_HALF) -> FloatArray:
    """d / (d + half): a block's summed edge weight, saturating since auto-edges are capped at 5."""
    if not half > 0:
        raise InvalidInput(f"half must be > 0, got {half!r}", "Use the default, 2.0.")
    d = _as_vector(weighted_degree, "weighted degrees")
    if np.any(d < 0):
        raise InvalidInput("a weighted degree cannot be negative", "Edge weights are ≥ 0.")
    return np.asarray(d / (d + half), dtype=np.float64)


def confidence_signal(alpha: npt.ArrayLike, beta: npt.ArrayLike) -> FloatArray:
    """The Beta posterior mean α / (α + β) for every candidate at once."""
    a = _as_vector(alpha, "α values")
    b = _as_vector(beta, "β values")
    if a.shape != b.shape or np.any(a <= 0) or np.any(b <= 0):
        raise InvalidInput(
            "α and β must be positive and one per candidate",
            "Fold outcome events from the Jeffreys prior (0.5, 0.5).",
        )
    return np.asarray(a / (a + b), dtype=np.float64)


def composite(components: Mapping[str, npt.ArrayLike], weights: Mapping[str, float]) -> FloatArray:
    """Σ weight·component over the five signals; components should already be normalised.

    A signal with weight 0 may be left out of ``components``; one with a positive weight may not.
    """
    _check_names(components.keys(), "component")
    _check_names(weights.keys(), "weight")
    vectors = {name: _as_vector(values, name) for name, values in components.items()}
    sizes = {v.size for v in vectors.values()}
    if len(sizes) > 1:
        raise InvalidInput(
            f"signal arrays differ in length: {sorted(sizes)}",
            "Compute every signal over the same candidate list.",
        )
    total = np.zeros(sizes.pop() if sizes else 0, dtype=np.float64)
    for name in SIGNALS:
        weight = float(weights.get(name, 0.0))
        if weight == 0.0:
            continue
        if name not in vectors:
            raise InvalidInput(
                f"weight {weight} given for {name!r} but no {name} values",
                f"Pass a {name} array, or set its weight to 0.",
            )
        total += weight * vectors[name]
    return total


def _check_names(names: Iterable[str], what: str) -> None:
    unknown = sorted(set(names) - set(SIGNALS))
    if unknown:
        raise InvalidInput(
            f"unknown {what} name(s): {', '.join(unknown)}",
            f"Use the five signals: {', '.join(SIGNALS)}.",
        )
