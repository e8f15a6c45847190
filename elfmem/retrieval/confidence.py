"""Beta confidence: has this block been right before?

Each block keeps the sufficient statistics (α, β) of a Beta posterior, starting from the Jeffreys
prior α = β = 0.5. An outcome signal s in [0, 1] with weight w is w observations of which a fraction
s succeeded: α += w·s, β += w·(1−s). The sums commute, so two clones' outcome events fold to the
same posterior in any order. Mature blocks (large α+β) move slowly, cold blocks track the signal.

The band decides what else an outcome does (docs/ranking.md, "Outcomes decide"):

- ``reinforce``: s ≥ 0.8. Confidence up, the block counts as used (decay clock reset).
- ``neutral``: 0.2 ≤ s < 0.8. The dead band: confidence moves, nothing else happens.
- ``penalise``: s < 0.2. Confidence down and the block's λ doubles (see ``decay.effective_lambda``).

Boundaries: 0.8 itself reinforces and 0.2 itself is neutral: the penalty is for a signal below
0.2, strictly under it; a caller that means "failed" sends 0.0.
"""

from __future__ import annotations

import math
import numbers
from typing import Literal

from elfmem.errors import InvalidInput

JEFFREYS_PRIOR: tuple[float, float] = (0.5, 0.5)
REINFORCE_AT = 0.8
PENALISE_BELOW = 0.2

Band = Literal["reinforce", "neutral", "penalise"]


def _as_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def check_signal(signal: float) -> float:
    """The signal as a float, or InvalidInput when it is not a finite number in [0, 1]."""
    value = _as_float(signal)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidInput(
            f"an outcome signal must be a number in [0, 1], got {signal!r}",
            "Normalise the domain signal first, e.g. signal = 1.0 if tests_passed else 0.0.",
        )
    return value


def check_weight(weight: float) -> float:
    """The weight as a float, or InvalidInput when it is not finite and > 0."""
    value = _as_float(weight)
    if not (math.isfinite(value) and value > 0.0):
        raise InvalidInput(
            f"an outcome weight must be a finite number > 0, got {weight!r}",
            "Use weight=1.0 for one observation; to record nothing, do not call outcome().",
        )
    return value


def _check_posterior(alpha: float, beta: float) -> None:
    if not (math.isfinite(alpha) and math.isfinite(beta) and alpha > 0.0 and beta > 0.0):
        raise InvalidInput(
            f"Beta parameters must be finite and > 0, got α={alpha!r}, β={beta!r}",
            "Start from JEFFREYS_PRIOR (0.5, 0.5) and fold outcome events with beta_update.",
        )


def beta_update(
    alpha: float, beta: float, signal: float, weight: float = 1.0
) -> tuple[float, float]:
    """Fold one outcome into (α, β): α += w·s, β += w·(1−s)."""
    _check_posterior(alpha, beta)
    s = check_signal(signal)
    w = check_weight(weight)
    return alpha + w * s, beta + w * (1.0 - s)


def beta_mean(alpha: float, beta: float) -> float:
    """The posterior mean α / (α + β): the block's confidence in [0, 1]."""
    _check_posterior(alpha, beta)
    return alpha / (alpha + beta)


def beta_evidence(alpha: float, beta: float, prior: tuple[float, float] = JEFFREYS_PRIOR) -> float:
    """How many weighted observations the posterior holds beyond its prior.

    Curation wants "low confidence *with enough evidence*": a cold block at 0.3 after one
    outcome is not refuted, one at 0.3 after twenty is.
    """
    _check_posterior(alpha, beta)
    return max(0.0, alpha + beta - prior[0] - prior[1])


def band(
    signal: float, reinforce_at: float = REINFORCE_AT, penalise_below: float = PENALISE_BELOW
) -> Band:
    """Which band an outcome signal falls in; thresholds come from config (penalize_threshold)."""
    s = check_signal(signal)
    if not 0.0 <= penalise_below <= reinforce_at <= 1.0:
        raise InvalidInput(
            f"band thresholds must satisfy 0 ≤ {penalise_below} ≤ {reinforce_at} ≤ 1",
            "Set memory.penalize_threshold below the reinforce threshold (defaults 0.2, 0.8).",
        )
    if s >= reinforce_at:
        return "reinforce"
    if s < penalise_below:
        return "penalise"
    return "neutral"
