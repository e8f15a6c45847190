"""Seeded corpora for the adaptivity benchmark: subjects, look-alike answers, corrections.

Every corpus is drawn from a seed. A subject is a lower-case multi-word name ("vesper router"), an
identifier ("ingest_q7") or a capitalised name ("Project Halcyon"). Each subject gets one question
of one of four types, asked through one of six template families:

- value: a number with a unit ("The timeout of the vesper router is 30 seconds");
- policy: a negation and a preposition ("Restarting X is allowed after the nightly backup");
- state: an antonym and an environment ("The audit flag of X must be enabled in production");
- place: a path ("The vesper router keeps its config in /etc/vesper/main.yaml").

The right answer has two misleading look-alikes, each differing from it in one content token,
and the subject has distractors that share its vocabulary. Corrections arrive mid-run: a newer
block that changes the value, the negation, the state or the path; some are right (the world
changed) and some wrong. Families 0–2 are for tuning, 3–5 for reporting.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

TUNE_FAMILIES = (0, 1, 2)
REPORT_FAMILIES = (3, 4, 5)

_ADJ = (
    "vesper serac amber cobalt quartz tundra harbor lumen sable ember drift falcon granite "
    "juniper kestrel marlin nimbus onyx pylon quill raven solstice tidal umber velvet willow "
    "zephyr basalt cinder dune fjord glacier heron iris jade"
).split()
_NOUN = (
    "router loader scheduler gateway indexer crawler broker cache proxy relay collector "
    "resolver watcher builder importer exporter sweeper balancer"
).split()
_PROJECT = (
    "Halcyon Meridian Osprey Calypso Tamarind Brightwater Kingfisher Larkspur Nightjar "
    "Pennant Quillon Redwing Saltmarsh Thornbury Underhill Vantage Westmoor Yarrow"
).split()
_TEAMS = "platform payments search growth infra data mobile security".split()
_SINKS = "loki splunk kafka syslog s3 bigquery".split()
_CHANNELS = "ops-alerts oncall-primary incident-room pager-low sre-feed".split()
_MONTHS = "March April May June September October".split()

_VALUE_ATTRS = (
    ("timeout", "seconds", (5, 10, 15, 20, 30, 45, 60, 90, 120)),
    ("batch size", "items", (25, 50, 100, 200, 250, 500, 1000)),
    ("rate limit", "requests per minute", (60, 100, 300, 600, 1000, 1200)),
    ("retry budget", "attempts", (2, 3, 4, 5, 6, 8, 10)),
    ("memory cap", "MiB", (256, 512, 768, 1024, 2048, 4096)),
    ("pool size", "connections", (8, 16, 20, 32, 40, 64)),
)
_POLICY_ACTIONS = (
    ("restarting", "restart"),
    ("deploying", "deploy"),
    ("rotating the keys of", "rotate the keys of"),
    ("resizing", "resize"),
)
_EVENTS = ("nightly backup", "weekly release", "traffic peak", "schema migration")
_FEATURES = ("audit", "tracing", "compression", "debug logging", "read replica", "canary")
_ENVS = ("production", "staging")
_STATES = ("enabled", "disabled")
_DIRS = ("/etc", "/opt", "/srv", "/var/lib")
_FILES = ("main.yaml", "config.toml", "settings.json", "service.ini")

# (question, answer) per family; {s} subject, {S} subject capitalised, slots per type.
VALUE = (
    ("what is the {attr} of the {s}", "The {attr} of the {s} is {x} {unit}"),
    ("how is the {attr} of the {s} set", "{S} has its {attr} set to {x} {unit}"),
    ("{s} {attr}", "Keep the {s} {attr} at {x} {unit}"),
    ("which {attr} does the {s} use", "The {s} uses a {attr} of {x} {unit}"),
    ("tell me the {attr} for the {s}", "For the {s} the {attr} equals {x} {unit}"),
    ("what {attr} should the {s} run with", "Run the {s} with a {attr} of {x} {unit}"),
)
POLICY = (
    ("when may I {verb} the {s}", "{Act} the {s} is {neg}allowed {prep} the {event}"),
    (
        "is {act} the {s} allowed around the {event}",
        "{Act} the {s} is {neg}allowed {prep} the {event}",
    ),
    ("rules for {act} the {s}", "You may {neg}{verb} the {s} {prep} the {event}"),
    ("can we {verb} the {s} near the {event}", "We {negdo}{verb} the {s} {prep} the {event}"),
    ("timing of {act} the {s}", "{Act} the {s} is {neg}permitted {prep} the {event}"),
    (
        "should I {verb} the {s} relative to the {event}",
        "{Verb} the {s} {prep} the {event}, {negwhy}",
    ),
)
STATE = (
    ("should the {feat} of the {s} be on", "The {feat} of the {s} must be {x} in {env}"),
    ("{feat} setting for the {s}", "Keep {feat} {x} on the {s} in {env}"),
    ("is {feat} on for the {s}", "On the {s}, {feat} is {x} in {env}"),
    ("what about {feat} on the {s}", "{Feat} stays {x} for the {s} in {env}"),
    ("{s} {feat} flag", "The {s} runs with {feat} {x} in {env}"),
    ("do we run the {s} with {feat}", "In {env} the {s} has {feat} {x}"),
)
PLACE = (
    ("where does the {s} keep its config", "The {s} keeps its config in {x}"),
    ("config file of the {s}", "Config for the {s} lives at {x}"),
    ("which file configures the {s}", "Edit {x} to configure the {s}"),
    ("path to the {s} configuration", "The {s} reads its configuration from {x}"),
    ("where is the {s} configured", "{S} is configured in {x}"),
    ("what config path does the {s} load", "At start the {s} loads {x}"),
)
FAMILIES = {"value": VALUE, "policy": POLICY, "state": STATE, "place": PLACE}
DISTRACT = (
    "The {s} is owned by the {team} team",
    "The {s} ships its logs to {sink}",
    "Alerts for the {s} go to the {chan} channel",
)


@dataclass
class Subject:
    name: str
    kind: str
    family: int
    question: str
    right: str
    misleading: list[str]
    distractors: list[str]
    correction: str = ""
    correction_right: bool = False
    ids: dict[str, str] = field(default_factory=dict)
    note: str = ""
    """A neutral note on the same subject and attribute that answers nothing, captured later."""


def _subjects(rng: random.Random, n: int) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        style = len(names) % 3
        if style == 0:
            name = f"{rng.choice(_ADJ)} {rng.choice(_NOUN)}"
        elif style == 1:
            name = f"{rng.choice(_NOUN)}_{rng.choice(_ADJ)}{rng.randint(2, 9)}"
        else:
            name = f"Project {rng.choice(_PROJECT)}"
        if name not in names:
            names.append(name)
    return names


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(template: str, **slots: str) -> str:
    return template.format(**slots)


def _value(rng: random.Random, s: str, fam: int) -> tuple[str, str, list[str], str]:
    attr, unit, values = rng.choice(_VALUE_ATTRS)
    right, m1, m2, new = rng.sample(values, 4)
    q, a = VALUE[fam]
    slots = {"s": s, "S": _cap(s), "attr": attr, "unit": unit}
    answers = [_fill(a, x=str(v), **slots) for v in (right, m1, m2, new)]
    return _fill(q, **slots), answers[0], answers[1:3], answers[3]


def _policy(rng: random.Random, s: str, fam: int) -> tuple[str, str, list[str], str]:
    act, verb = rng.choice(_POLICY_ACTIONS)
    event = rng.choice(_EVENTS)
    q, a = POLICY[fam]
    base = {"s": s, "act": act, "verb": verb, "Act": _cap(act), "Verb": _cap(verb), "event": event}

    def answer(negated: bool, prep: str) -> str:
        return _fill(
            a,
            neg="not " if negated else "",
            negdo="do not " if negated else "",
            negwhy="never" if negated else "always",
            prep=prep,
            **base,
        )

    right_neg = rng.random() < 0.5
    return (
        _fill(q, **base),
        answer(right_neg, "after"),
        [answer(not right_neg, "after"), answer(right_neg, "before")],
        answer(not right_neg, "after"),
    )


def _state(rng: random.Random, s: str, fam: int) -> tuple[str, str, list[str], str]:
    feat = rng.choice(_FEATURES)
    q, a = STATE[fam]
    base = {"s": s, "feat": feat, "Feat": _cap(feat)}
    right_state = rng.choice(_STATES)
    other = _STATES[1 - _STATES.index(right_state)]
    return (
        _fill(q, **base),
        _fill(a, x=right_state, env="production", **base),
        [
            _fill(a, x=other, env="production", **base),
            _fill(a, x=right_state, env="staging", **base),
        ],
        _fill(a, x=other, env="production", **base),
    )


def _place(rng: random.Random, s: str, fam: int) -> tuple[str, str, list[str], str]:
    q, a = PLACE[fam]
    stem = s.split()[0].lower().replace("_", "-")
    paths = [f"{d}/{stem}/{f}" for d in _DIRS for f in _FILES]
    right, m1, m2, new = rng.sample(paths, 4)
    base = {"s": s, "S": _cap(s)}
    return (
        _fill(q, **base),
        *(_fill(a, x=p, **base) for p in (right,)),
        [_fill(a, x=p, **base) for p in (m1, m2)],
        _fill(a, x=new, **base),
    )


_MAKERS = {"value": _value, "policy": _policy, "state": _state, "place": _place}


def corpus(
    seed: int, families: tuple[int, ...], n_subjects: int = 40, corrections: float = 0.3
) -> list[Subject]:
    """One corpus: ``n_subjects`` subjects, questions drawn from ``families``.

    A share ``corrections`` of subjects later receive a correction; two in three of those are
    right (the world changed), the rest wrong.
    """
    rng = random.Random(seed)
    out: list[Subject] = []
    kinds = list(FAMILIES)
    for i, name in enumerate(_subjects(rng, n_subjects)):
        kind = kinds[i % len(kinds)]
        fam = rng.choice(families)
        question, right, misleading, correction = _MAKERS[kind](rng, name, fam)
        slots = {
            "s": name,
            "team": rng.choice(_TEAMS),
            "sink": rng.choice(_SINKS),
            "chan": rng.choice(_CHANNELS),
        }
        distractors = [_fill(t, **slots) for t in DISTRACT]
        subject = Subject(name, kind, fam, question, right, misleading, distractors)
        if kind != "place" and rng.random() < corrections:  # a value, a negation or a state
            subject.correction = correction.rstrip(".") + f" since the {rng.choice(_MONTHS)} change"
            subject.correction_right = rng.random() < 2 / 3
        out.append(subject)
    return out


def flip_draw(seed: int, subject: str, round_: int, role: str) -> float:
    """A uniform draw in [0, 1) for one outcome, from (seed, subject, round, the block's role).

    The benchmark's ``--flips hash``: an outcome is flipped when this is below the flip rate,
    whatever else the run did. With one stream of draws, a ranking change that alters which
    blocks a recall returns changes every later flip; with this, the same outcome draws the same
    noise in any ranking, so two rankings are compared on one draw of the noise.
    """
    key = f"{seed}/{subject}/{round_}/{role}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2.0**64
