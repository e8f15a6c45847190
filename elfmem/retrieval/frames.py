"""Frames: complete retrieval strategies — weights, tag filters, guarantees, budget, template.

A filter removes a category of blocks from a frame; a guarantee reserves a slot for one. Where they
conflict the guarantee wins, because it is the more specific declaration: TASK keeps a
block tagged both ``self/goal`` and ``self/constitutional``. Tag patterns are SQL-LIKE in spirit:
``%`` matches any run of characters, everything else (``_`` included, since tags use it) is
literal, and matching is case-sensitive like the tier rules in ``elfmem.block.model``.

Two exception lists refine the rules where upstream measured a need: ``guarantee_except`` keeps
peer letters (``peer/%``) from winning SELF's identity slots, and ``exclude_except`` keeps peer
letters that an LLM tagged ``self/constitutional`` in ATTENTION and TASK, because a peer letter is
knowledge, not identity. Peer tags are applied by the peer channel, never inferred.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from elfmem.errors import InvalidInput
from elfmem.retrieval.signals import SIGNALS

TEMPLATES: tuple[str, ...] = ("self", "list")
"""``self``: the numbered constitution with its preamble; ``list``: one entry per block."""

WEIGHT_TOLERANCE = 1e-6
_PATTERN_RE = re.compile(r"^[A-Za-z0-9_./%:+-]+$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("%")), re.DOTALL)


def tag_matches(tag: str, pattern: str) -> bool:
    """True when ``tag`` matches ``pattern`` whole, ``%`` standing for any run of characters."""
    return _compiled(pattern).fullmatch(tag) is not None


def any_match(tags: Iterable[str], patterns: Iterable[str]) -> bool:
    """True when at least one tag matches at least one pattern."""
    pats = tuple(patterns)
    return any(tag_matches(tag, p) for tag in tags for p in pats)


def validate_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """The five signal weights in canonical order, each in [0, 1] and summing to 1 (±1e-6)."""
    missing = [s for s in SIGNALS if s not in weights]
    unknown = sorted(set(weights) - set(SIGNALS))
    if missing or unknown:
        raise InvalidInput(
            f"frame weights need exactly the five signals (missing: {missing}, unknown: {unknown})",
            f"Give a weight for each of: {', '.join(SIGNALS)}.",
        )
    clean: dict[str, float] = {}
    for name in SIGNALS:
        value = weights[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInput(f"weight {name} is not a number: {value!r}", "Use e.g. 0.2.")
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise InvalidInput(f"weight {name}={value} is outside [0, 1]", "Use values in [0, 1].")
        clean[name] = float(value)
    total = sum(clean.values())
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise InvalidInput(
            f"frame weights sum to {total:.6f}, not 1.0",
            "Adjust the five weights so they add up to exactly 1.0.",
        )
    return clean


def validate_patterns(patterns: Iterable[str], what: str) -> tuple[str, ...]:
    """The patterns as a tuple, each non-empty and made of tag characters plus ``%``."""
    out = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    for pattern in out:
        if not isinstance(pattern, str) or not _PATTERN_RE.match(pattern):
            raise InvalidInput(
                f"{what} pattern {pattern!r} is not a tag pattern",
                "Write tags like 'self/goal', with % as a wildcard: 'self/%', 'mind/%'.",
            )
    return out


@dataclass(frozen=True)
class FrameSpec:
    """One frame. Weights are frozen into a read-only mapping in signal order."""

    name: str
    weights: Mapping[str, float]
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    guarantees: tuple[str, ...] = ()
    budget: int = 2000
    queryless: bool = False
    top_k: int = 5
    template: str = "list"
    guarantee_except: tuple[str, ...] = ()
    exclude_except: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise InvalidInput(
                f"frame name {self.name!r} is not valid",
                "Use lower-case letters, digits, '-' or '_', starting with a letter.",
            )
        object.__setattr__(self, "weights", MappingProxyType(validate_weights(self.weights)))
        for attr in ("include", "exclude", "guarantees", "guarantee_except", "exclude_except"):
            object.__setattr__(self, attr, validate_patterns(getattr(self, attr), attr))
        for attr in ("budget", "top_k"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidInput(
                    f"frame {self.name}: {attr} must be a positive integer, got {value!r}",
                    f"Set {attr} to a whole number above 0.",
                )
        if self.template not in TEMPLATES:
            raise InvalidInput(
                f"frame {self.name}: unknown template {self.template!r}",
                f"Use one of: {', '.join(TEMPLATES)}.",
            )

    def __hash__(self) -> int:  # the weights mapping is unhashable; equal specs share these
        return hash((self.name, tuple(self.weights.items()), self.budget, self.top_k))


def is_guaranteed(tags: Iterable[str], spec: FrameSpec) -> bool:
    """True when a tag matches a guarantee and none matches ``guarantee_except``."""
    tag_list = tuple(tags)
    return any_match(tag_list, spec.guarantees) and not any_match(tag_list, spec.guarantee_except)


def is_excluded(tags: Iterable[str], spec: FrameSpec) -> bool:
    """True when the frame's filters remove the block; a guaranteed block is never excluded."""
    tag_list = tuple(tags)
    if is_guaranteed(tag_list, spec):
        return False
    if spec.include and not any_match(tag_list, spec.include):
        return True
    return any_match(tag_list, spec.exclude) and not any_match(tag_list, spec.exclude_except)


_PEER = ("peer/%",)

BUILTIN_FRAMES: Mapping[str, FrameSpec] = MappingProxyType(
    {
        "self": FrameSpec(
            name="self",
            weights=dict(zip(SIGNALS, (0.10, 0.30, 0.05, 0.25, 0.30), strict=True)),
            include=("self/%",),
            guarantees=("self/constitutional",),
            guarantee_except=_PEER,
            budget=600,
            queryless=True,
            template="self",
        ),
        "attention": FrameSpec(
            name="attention",
            weights=dict(zip(SIGNALS, (0.35, 0.15, 0.25, 0.15, 0.10), strict=True)),
            exclude=("self/constitutional",),
            exclude_except=_PEER,
            budget=2000,
        ),
        "task": FrameSpec(
            name="task",
            weights=dict(zip(SIGNALS, (0.20, 0.20, 0.20, 0.20, 0.20), strict=True)),
            exclude=("self/constitutional",),
            exclude_except=_PEER,
            guarantees=("self/goal",),
            budget=800,
        ),
        "simulate": FrameSpec(
            name="simulate",
            weights=dict(zip(SIGNALS, (0.25, 0.25, 0.15, 0.20, 0.15), strict=True)),
            guarantees=("self/constitutional", "mind/%"),
            budget=2000,
        ),
    }
)

_PATTERN_KEYS = ("include", "exclude", "guarantees", "guarantee_except", "exclude_except")
CONFIG_KEYS: tuple[str, ...] = (
    "weights",
    *_PATTERN_KEYS,
    "budget",
    "queryless",
    "top_k",
    "template",
)


def frame_from_config(
    name: str, mapping: Mapping[str, Any], base: FrameSpec | None = None
) -> FrameSpec:
    """A frame from a config mapping (``frames: <name>: {...}`` in .elfmem/config.yaml).

    Keys absent from ``mapping`` come from ``base`` (or the FrameSpec defaults); weights, when
    given, must name all five signals, since a partial override could never sum to 1.
    """
    unknown = sorted(set(mapping) - set(CONFIG_KEYS))
    if unknown:
        raise InvalidInput(
            f"frame {name}: unknown key(s) {', '.join(unknown)}",
            f"Frame keys are: {', '.join(CONFIG_KEYS)}.",
        )
    if base is None and "weights" not in mapping:
        raise InvalidInput(
            f"frame {name} has no weights and no base frame",
            "Give weights for the five signals, or base the frame on a built-in one.",
        )
    values: dict[str, Any] = {}
    if base is not None:
        values = {key: getattr(base, key) for key in CONFIG_KEYS}
    for key, raw in mapping.items():
        if key in _PATTERN_KEYS:
            values[key] = (raw,) if isinstance(raw, str) else tuple(raw or ())
        elif key == "weights" and not isinstance(raw, Mapping):
            raise InvalidInput(f"frame {name}: weights must be a mapping", "Map signal → weight.")
        elif key == "queryless" and not isinstance(raw, bool):
            raise InvalidInput(f"frame {name}: queryless must be true or false", "Use true/false.")
        else:
            values[key] = raw
    return FrameSpec(name=name, **values)


def frames_from_config(section: Mapping[str, Mapping[str, Any]]) -> dict[str, FrameSpec]:
    """The built-in frames plus a config ``frames:`` section, which may override or extend them.

    An entry named after a built-in frame is based on it; any entry may name another with
    ``base: <frame>``.
    """
    frames = dict(BUILTIN_FRAMES)
    for name, entry in section.items():
        fields = {key: value for key, value in entry.items() if key != "base"}
        base_name = entry.get("base", name if name in BUILTIN_FRAMES else None)
        base = None if base_name is None else resolve_frame(str(base_name), frames)
        frames[name] = frame_from_config(name, fields, base)
    return frames


def resolve_frame(name: str, frames: Mapping[str, FrameSpec] = BUILTIN_FRAMES) -> FrameSpec:
    """The frame called ``name``, or InvalidInput listing the frames there are."""
    try:
        return frames[name]
    except KeyError:
        raise InvalidInput(
            f"unknown frame {name!r}",
            f"Use one of: {', '.join(sorted(frames))}.",
        ) from None
