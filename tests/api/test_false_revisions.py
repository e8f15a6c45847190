"""No false revisions: generated pairs that are not corrections never become one.

Through the detector dream uses (``rhythms.revisions.revision_of``) and the embedded model's real
cosines, on a seeded generator of 600 pairs, each newer than the other by a day:

- two subjects, one statement: two services, two tables, two people, two paths, the newer
  phrased bare or with the words a correction brings ("since the upgrade", "now", "from now on");
- two subjects and two values ("the timeout of A is 30 s" against "the timeout of B is 60 s");
- one subject, two attributes (a service's timeout and its owner), bare or worded;
- a fact and a note on its subject and attribute that answers nothing ("A review of the owner
  of the billing service is planned");
- two subjects of one word whose value follows a verb left out of the comparison ("The
  builder_7 runs 4 replicas" against "The watcher_3 runs 4 replicas"), with the same or
  another value.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from elfmem.adapters.embedding import make_embedder
from elfmem.block.model import Block
from elfmem.index.calibration import model_cuts
from elfmem.rhythms.revisions import revision_of

SERVICES = (
    "billing service, search service, vesper router, serac loader, amber gateway, cobalt cache, "
    "ingest_q7, export_worker2, Project Halcyon, Project Osprey, quartz scheduler, tidal broker"
).split(", ")
TABLES = "orders users invoices payments sessions events accounts audit_log".split()
PEOPLE = (
    "Alice Chen, Dana Park, Omar Haddad, Priya Nair, Lena Vogel, Marco Rossi, Kenji Sato, "
    "Sofia Alves"
).split(", ")
PATHS = (
    "/etc/billing/main.yaml /etc/search/main.yaml /srv/app/config.toml /opt/app/config.toml "
    "/var/lib/export/settings.json /var/lib/ingest/settings.json ~/.config/tool/init.lua "
    "./deploy/values.yaml"
).split()
TEAMS = "payments search platform growth infra data mobile security".split()
VALUES = {
    "num": [str(n) for n in (3, 5, 8, 12, 20, 30, 45, 60, 90, 120)],
    "person": PEOPLE,
    "team": TEAMS,
    "region": "eu-west-1 eu-central-1 us-east-1 us-west-2 ap-south-1".split(),
    "path": PATHS,
    "ver": "3.9 3.10 3.11 3.12 3.13".split(),
    "state": "enabled disabled running paused".split(),
    "ctx": ["on Fridays", "during business hours", "on weekends", "before the nightly backup"],
    "date": ["2027-03-14", "2027-05-02", "2027-08-21", "2027-11-30"],
    "unit": "minutes hours days weeks".split(),
    "city": "Berlin Lisbon Toronto Osaka".split(),
    "db": "analytics billing reporting ledger".split(),
    "col": "day month region tenant".split(),
    "user": "root deploy www-data postgres".split(),
    "chan": "ops-alerts oncall-primary incident-room sre-feed".split(),
}
# (subject kind, attribute, template with {s} and one value slot)
SHAPES = (
    ("service", "timeout", "The timeout of the {s} is {num} seconds"),
    ("service", "replicas", "The {s} runs {num} replicas"),
    ("service", "owner", "The {s} is owned by {person}"),
    ("service", "team", "The {s} belongs to the {team} team"),
    ("service", "region", "The {s} runs in region {region}"),
    ("service", "config", "The {s} reads its config from {path}"),
    ("service", "python", "The {s} runs on Python {ver}"),
    ("service", "export", "The nightly export of the {s} is {state}"),
    ("service", "deploys", "Deploying the {s} is allowed {ctx}"),
    ("service", "certificate", "The certificate of the {s} expires on {date}"),
    ("service", "cache", "The {s} keeps its cache for 12 {unit}"),
    ("service", "alerts", "Alerts for the {s} go to the {chan} channel"),
    ("service", "retries", "The {s} retries a failed request {num} times"),
    ("service", "approval", "Releases of the {s} are approved by {person}"),
    ("table", "columns", "The {s} table has {num} columns"),
    ("table", "partition", "The {s} table is partitioned by {col}"),
    ("table", "owner", "The {s} table is owned by the {team} team"),
    ("table", "database", "The {s} table lives in the {db} database"),
    ("table", "retention", "Rows in the {s} table are kept for {num} days"),
    ("person", "office", "{s} works from the {city} office"),
    ("person", "team", "{s} is on the {team} team"),
    ("person", "laptop", "The laptop of {s} runs macOS {ver}"),
    ("person", "pages", "Pages for {s} go to the {chan} channel"),
    ("path", "timeout", "{s} sets the timeout to {num} seconds"),
    ("path", "owner", "The file {s} is owned by {user}"),
    ("path", "reader", "{s} is read by the {team} team's deploy job"),
    ("path", "edit", "Edit {s} to change the log level of the {db} service"),
)
SUBJECTS = {"service": SERVICES, "table": TABLES, "person": PEOPLE, "path": PATHS}
ONE_WORD = "ingest_q7 export_worker2 builder_7 watcher_3 sweeper_drift2 crawler_quartz2".split()
"""Subjects of one content word, whose value follows a verb the comparison leaves out."""
ONE_WORD_SHAPES = (
    "The {s} runs {num} replicas",
    "The {s} runs in region {region}",
    "The {s} runs on Python {ver}",
    "The {s} lives in the {db} database",
    "The {s} is {state}",
)
WORDS = (
    "Since the March upgrade, {}",
    "{} now",
    "From now on, {}",
    "{} after the incident review",
    "As of June, {}",
)


def _slot(template: str) -> str:
    return next(name for name in VALUES if "{" + name + "}" in template)


def _say(template: str, subject: str, value: str) -> str:
    text = template.replace("{s}", subject).replace("{" + _slot(template) + "}", value)
    return text[:1].upper() + text[1:]


NOTES = (
    "A review of the {a} of the {s} is planned",
    "We should document the {a} of the {s} better",
    "Someone asked about the {a} of the {s} in the standup",
    "The {a} of the {s} will be discussed at the next planning meeting",
    "Who decides the {a} of the {s} is still open",
)
LOWER = ("The", "Rows", "Deploying", "Alerts", "Pages", "Edit")


def _worded(rng: random.Random, text: str) -> str:
    frame = rng.choice(WORDS)
    if frame[0] != "{" and text.split()[0] in LOWER:
        text = text[:1].lower() + text[1:]
    return frame.format(text)


FAMILIES = (
    "subject",
    "subject, worded",
    "subject and value",
    "attribute",
    "note",
    "one-word subject",
)


def pairs(seed: int = 30) -> Iterator[tuple[str, str, str]]:
    """(family, older text, newer text): 600 pairs, none a correction of the other."""
    rng = random.Random(seed)
    for n in range(600):
        kind, attr, shape = rng.choice(SHAPES)
        s1, s2 = rng.sample(SUBJECTS[kind], 2)
        v1, v2 = rng.sample(VALUES[_slot(shape)], 2)
        family = FAMILIES[n % len(FAMILIES)]
        if family == "one-word subject":
            shape = rng.choice(ONE_WORD_SHAPES)
            s1, s2 = rng.sample(ONE_WORD, 2)
            v1, v2 = rng.sample(VALUES[_slot(shape)], 2)
            newer = _say(shape, s2, rng.choice((v1, v2)))
            yield family, _say(shape, s1, v1), _worded(rng, newer) if n % 4 == 1 else newer
        elif family == "subject":
            yield family, _say(shape, s1, v1), _say(shape, s2, v1)
        elif family == "subject, worded":
            yield family, _say(shape, s1, v1), _worded(rng, _say(shape, s2, v1))
        elif family == "subject and value":
            yield family, _say(shape, s1, v1), _say(shape, s2, v2)
        elif family == "note":
            note = rng.choice(NOTES).format(a=attr, s=s1)
            yield family, _say(shape, s1, v1), note[:1].upper() + note[1:]
        else:
            _, _, other = rng.choice([x for x in SHAPES if x[0] == kind and x[1] != attr])
            newer = _say(other, s1, rng.choice(VALUES[_slot(other)]))
            yield family, _say(shape, s1, v1), _worded(rng, newer) if n % 8 == 3 else newer


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return make_embedder(None)


def test_generated_pairs_cover_every_family() -> None:
    found = list(pairs())
    assert len(found) >= 500
    assert {f for f, _, _ in found} == set(FAMILIES)
    assert all(old != new for _, old, new in found)


def test_no_generated_pair_is_taken_for_a_revision(embedder) -> None:  # type: ignore[no-untyped-def]
    found = list(pairs())
    texts = [t for _, old, new in found for t in (old, new)]
    vectors = embedder.embed(texts)
    cuts = model_cuts(embedder)
    false = []
    for n, (family, old, new) in enumerate(found):
        a = Block(f"a{n:04d}", old, created="2026-03-01T09:00:00+00:00")
        b = Block(f"b{n:04d}", new, created="2026-03-02T09:00:00+00:00")
        cos = float(vectors[2 * n] @ vectors[2 * n + 1])
        if revision_of(a, b, cos, cuts) is not None:
            false.append((family, old, new, round(cos, 3)))
    assert false == []
