"""Corrections in plain words: templates of a fact and its correction, per kind of changed value.

Each template states a fact about a subject and the sentence that corrects it later. The kinds
of changed value are number, unit, date, version, state, negation, person, team, identifier and
path; every kind has two templates where the correction is the fact with the value swapped
(``bare``) and two where it comes in ordinary words around the new value ("now", "was changed
from … to …", "moved to … in June", "no longer", "instead of", "since …", "after …").

The split is fixed here, before any detector was tuned on it: per kind, the first bare and the
first worded template are for tuning, the second of each for the report (``TUNE`` / ``REPORT``).
Seeds follow ``bench/adaptivity.py``: 0–9 tune, 10 and up report.

A corpus is a list of ``truthgen.Subject`` so the adaptivity loop runs it unchanged: the right
block is the fact, two misleading look-alikes state other values, three distractors state other
attributes of the same subject, and a share of subjects get a correction before round 6 (two in
three right). Subjects without a correction may get a neutral note later, on the same subject
and attribute but answering nothing ("A review of the owner of the X is planned").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import truthgen

KINDS = (
    "number",
    "unit",
    "date",
    "version",
    "state",
    "negation",
    "person",
    "team",
    "identifier",
    "path",
)


@dataclass(frozen=True)
class Template:
    """``{s}`` the subject, ``{x}`` the value (``{n}`` the new one, ``{y}`` the old one in a
    correction that names it), ``{S}`` the subject capitalised."""

    kind: str
    worded: bool
    """The correction comes with surrounding words, not as the fact with one value swapped."""
    question: str
    fact: str
    correction: str
    topic: str
    """The attribute, for the neutral note about it."""


T = Template
TEMPLATES: tuple[Template, ...] = (
    # number
    T(
        "number",
        False,
        "what is the timeout of the {s}",
        "The timeout of the {s} is {x} seconds",
        "The timeout of the {s} is {n} seconds",
        "timeout",
    ),
    T(
        "number",
        False,
        "how many replicas does the {s} run",
        "The {s} runs {x} replicas",
        "The {s} runs {n} replicas",
        "replica count",
    ),
    T(
        "number",
        True,
        "how often does the {s} retry a failed request",
        "The {s} retries a failed request {x} times",
        "After the outage review the {s} now retries a failed request {n} times",
        "retry policy",
    ),
    T(
        "number",
        True,
        "what is the rate limit of the {s}",
        "The rate limit of the {s} is {x} requests per minute",
        "The rate limit of the {s} was changed from {y} to {n} requests per minute",
        "rate limit",
    ),
    # unit
    T(
        "unit",
        False,
        "how long does the {s} keep its cache",
        "The {s} keeps its cache for 12 {x}",
        "The {s} keeps its cache for 12 {n}",
        "cache lifetime",
    ),
    T(
        "unit",
        False,
        "what is the memory limit of the {s}",
        "The memory limit of the {s} is 512 {x}",
        "The memory limit of the {s} is 512 {n}",
        "memory limit",
    ),
    T(
        "unit",
        True,
        "how long are the logs of the {s} kept",
        "Logs of the {s} are kept for 30 {x}",
        "Logs of the {s} are now kept for 30 {n} to meet the audit rule",
        "log retention",
    ),
    T(
        "unit",
        True,
        "how often does the {s} poll its queue",
        "The {s} polls its queue every 5 {x}",
        "Since the upgrade the {s} polls its queue every 5 {n} instead",
        "polling interval",
    ),
    # date
    T(
        "date",
        False,
        "when does the certificate of the {s} expire",
        "The certificate of the {s} expires on {x}",
        "The certificate of the {s} expires on {n}",
        "certificate",
    ),
    T(
        "date",
        False,
        "when is the next maintenance window of the {s}",
        "The next maintenance window of the {s} is on {x}",
        "The next maintenance window of the {s} is on {n}",
        "maintenance window",
    ),
    T(
        "date",
        True,
        "when is the migration of the {s} due",
        "The migration of the {s} is due on {x}",
        "The migration of the {s} was pushed back to {n} after the vendor delay",
        "migration",
    ),
    T(
        "date",
        True,
        "when does the contract of the {s} renew",
        "The contract of the {s} renews on {x}",
        "From now on the contract of the {s} renews on {n}",
        "contract",
    ),
    # version
    T(
        "version",
        False,
        "which Python version does the {s} run on",
        "The {s} runs on Python {x}",
        "The {s} runs on Python {n}",
        "Python version",
    ),
    T(
        "version",
        False,
        "which version of the requests library does the {s} pin",
        "The {s} pins the requests library to version {x}",
        "The {s} pins the requests library to version {n}",
        "requests pin",
    ),
    T(
        "version",
        True,
        "which postgres version does the {s} depend on",
        "The {s} depends on postgres {x}",
        "Since the upgrade the {s} depends on postgres {n}",
        "postgres dependency",
    ),
    T(
        "version",
        True,
        "what is the client of the {s} pinned to",
        "The client of the {s} is pinned to v{x}",
        "The client pin of the {s} was relaxed to v{n} since the March upgrade",
        "client pin",
    ),
    # state
    T(
        "state",
        False,
        "is the nightly export of the {s} running",
        "The nightly export of the {s} is {x}",
        "The nightly export of the {s} is {n}",
        "nightly export",
    ),
    T(
        "state",
        False,
        "what mode is the cache of the {s} in",
        "The cache of the {s} is {x}",
        "The cache of the {s} is {n}",
        "cache mode",
    ),
    T(
        "state",
        True,
        "is the cleanup job of the {s} running",
        "The cleanup job of the {s} is {x}",
        "The cleanup job of the {s} is {n} until the migration finishes",
        "cleanup job",
    ),
    T(
        "state",
        True,
        "is the public endpoint of the {s} open",
        "The public endpoint of the {s} is {x}",
        "The public endpoint of the {s} is now {n} after the security audit",
        "public endpoint",
    ),
    # negation: {x} is the context; the correction says the opposite of the fact
    T(
        "negation",
        False,
        "may we deploy the {s} {x}",
        "Deploying the {s} is allowed {x}",
        "Deploying the {s} is not allowed {x}",
        "deploy policy",
    ),
    T(
        "negation",
        False,
        "can the {s} be restarted {x}",
        "The {s} can be restarted {x}",
        "The {s} cannot be restarted {x}",
        "restart policy",
    ),
    T(
        "negation",
        True,
        "may engineers scale the {s} {x}",
        "Engineers may scale the {s} {x}",
        "Engineers may no longer scale the {s} {x} after the incident review",
        "scaling policy",
    ),
    T(
        "negation",
        True,
        "does the {s} write audit logs {x}",
        "The {s} writes audit logs {x}",
        "From now on the {s} does not write audit logs {x}",
        "audit logging",
    ),
    # person
    T(
        "person",
        False,
        "who owns the {s}",
        "The {s} is owned by {x}",
        "The {s} is owned by {n}",
        "owner",
    ),
    T(
        "person",
        False,
        "who is on call for the {s}",
        "The on-call engineer for the {s} is {x}",
        "The on-call engineer for the {s} is {n}",
        "on-call rota",
    ),
    T(
        "person",
        True,
        "who maintains the {s}",
        "The {s} is maintained by {x}",
        "{n} now maintains the {s}; {y} moved to the search team",
        "maintainer",
    ),
    T(
        "person",
        True,
        "who approves security reviews of the {s}",
        "Security reviews of the {s} are approved by {x}",
        "Since {y} left, security reviews of the {s} are approved by {n}",
        "security review",
    ),
    # team
    T(
        "team",
        False,
        "which team does the {s} belong to",
        "The {s} belongs to the {x} team",
        "The {s} belongs to the {n} team",
        "team",
    ),
    T(
        "team",
        False,
        "which team gets pages for the {s}",
        "Pages for the {s} go to the {x} team",
        "Pages for the {s} go to the {n} team",
        "paging",
    ),
    T(
        "team",
        True,
        "which team runs the {s}",
        "The {s} is run by the {x} team",
        "The {s} is now run by the {n} team instead of the {y} team",
        "operating team",
    ),
    T(
        "team",
        True,
        "who handles incidents on the {s}",
        "Incidents on the {s} are handled by the {x} team",
        "Incidents on the {s} are handled by the {n} team from now on",
        "incident handling",
    ),
    # identifier
    T(
        "identifier",
        False,
        "which region does the {s} run in",
        "The {s} runs in region {x}",
        "The {s} runs in region {n}",
        "region",
    ),
    T(
        "identifier",
        False,
        "which bucket does the {s} write to",
        "The {s} writes to bucket {x}",
        "The {s} writes to bucket {n}",
        "bucket",
    ),
    T(
        "identifier",
        True,
        "what is the region of the {s}",
        "The region of the {s} is {x}",
        "The region of the {s} moved from {y} to {n} in June",
        "region",
    ),
    T(
        "identifier",
        True,
        "which instance type does the {s} use",
        "The {s} uses the instance type {x}",
        "The {s} now uses the instance type {n} instead",
        "instance type",
    ),
    # path
    T(
        "path",
        False,
        "where does the {s} read its config from",
        "The {s} reads its config from {x}",
        "The {s} reads its config from {n}",
        "config",
    ),
    T(
        "path",
        False,
        "where does the {s} write its logs",
        "The {s} writes its logs to {x}",
        "The {s} writes its logs to {n}",
        "log file",
    ),
    T(
        "path",
        True,
        "where does the {s} keep its data",
        "The {s} keeps its data in {x}",
        "After the disk migration the {s} keeps its data in {n}",
        "data directory",
    ),
    T(
        "path",
        True,
        "where does the {s} load its certificates from",
        "The {s} loads its certificates from {x}",
        "The {s} loads its certificates from {n} now, not from {y}",
        "certificate store",
    ),
)
del T


def _split(first: bool) -> tuple[Template, ...]:
    out = []
    for kind in KINDS:
        for worded in (False, True):
            pair = [t for t in TEMPLATES if t.kind == kind and t.worded == worded]
            out.append(pair[0 if first else 1])
    return tuple(out)


TUNE = _split(True)
"""Per kind, the first bare and the first worded template: tuning only."""
REPORT = _split(False)
"""Per kind, the second bare and the second worded template: what is reported."""
TUNE_SEEDS = range(0, 10)
REPORT_SEEDS = range(10, 40)

_PEOPLE = (
    "Alice Chen, Dana Park, Omar Haddad, Priya Nair, Lena Vogel, Marco Rossi, Kenji Sato, "
    "Sofia Alves, Tomas Novak, Grace Okafor"
).split(", ")
_STATE_PAIRS = (("enabled", "disabled"), ("running", "paused"), ("open", "closed"))
_CONTEXTS = (
    "on Fridays",
    "during business hours",
    "before the nightly backup",
    "during the release freeze",
    "on weekends",
)
_MONTHS = "March April May June July September October November".split()
_UNIT_SETS = {
    "cache lifetime": ("minutes", "hours", "days", "weeks"),
    "memory limit": ("KB", "MB", "GB", "TB"),
    "log retention": ("days", "weeks", "months", "years"),
    "polling interval": ("seconds", "minutes", "hours", "days"),
}
_NOTES = (
    "A review of the {topic} of the {s} is planned",
    "Someone asked about the {topic} of the {s} in the standup",
    "The {topic} of the {s} will be discussed at the next planning meeting",
    "We should document the {topic} of the {s} better",
)


def _values(rng: random.Random, t: Template, stem: str) -> list[str]:
    """Four distinct values for ``t``: the fact's, two misleading ones, and the correction's."""
    kind = t.kind
    if kind == "number":
        return [str(v) for v in rng.sample((3, 4, 5, 6, 8, 10, 12, 20, 30, 45, 60, 90, 120), 4)]
    if kind == "unit":
        return rng.sample(_UNIT_SETS[t.topic], 4)
    if kind == "date":
        if "{x}" in t.fact and "certificate" in t.fact:
            days = rng.sample(range(1, 28), 4)
            months = [rng.randint(1, 12) for _ in days]
            return [f"2027-{m:02d}-{d:02d}" for m, d in zip(months, days, strict=True)]
        months = rng.sample(_MONTHS, 4)
        return [f"{m} {rng.randint(1, 28)}" for m in months]
    if kind == "version":
        if "Python" in t.fact:
            return rng.sample(("3.9", "3.10", "3.11", "3.12", "3.13"), 4)
        if "requests" in t.fact:
            return rng.sample(("2.25.1", "2.28.1", "2.28.2", "2.31.0", "2.32.3"), 4)
        if "postgres" in t.fact:
            return rng.sample(("12.17", "13.13", "14.10", "15.5", "16.1"), 4)
        return rng.sample(("1.4", "1.8", "2.0", "2.3", "3.1"), 4)
    if kind == "state":  # the correction's value is the opposite; the look-alikes other states
        a, b = rng.choice(_STATE_PAIRS)
        if rng.random() < 0.5:
            a, b = b, a
        others = [w for p in _STATE_PAIRS if a not in p for w in p]
        return [a, *rng.sample(others, 2), b]
    if kind == "negation":  # the context; the correction negates the fact in the same one
        a, b, c = rng.sample(_CONTEXTS, 3)
        return [a, b, c, a]
    if kind == "person":
        return rng.sample(_PEOPLE, 4)
    if kind == "team":
        return rng.sample(truthgen._TEAMS, 4)
    if kind == "identifier":
        if "bucket" in t.fact:
            return [
                f"{stem}-{w}-{rng.randint(2, 9)}"
                for w in rng.sample(("logs", "raw", "events", "audit", "exports"), 4)
            ]
        if "instance" in t.fact:
            return rng.sample(("m5.large", "m6i.xlarge", "c5.2xlarge", "r6g.large", "t3.medium"), 4)
        return rng.sample(("eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1"), 4)
    dirs = ("/etc", "/opt", "/srv", "/var/lib", "/data")
    files = {
        "config": ("main.yaml", "config.toml", "settings.json"),
        "log file": ("app.log", "service.log", "out.log"),
        "data directory": ("store", "data", "db"),
        "certificate store": ("certs", "tls", "pki"),
    }[t.topic]
    paths = [f"{d}/{stem}/{f}" for d in dirs for f in files]
    return rng.sample(paths, 4)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(text: str, s: str, x: str = "", n: str = "", y: str = "") -> str:
    return _cap(text.format(s=s, S=_cap(s), x=x, n=n, y=y))


def subject_for(rng: random.Random, name: str, t: Template) -> truthgen.Subject:
    """One subject stated through ``t``: the fact, two look-alikes, three distractors."""
    stem = name.split()[-1].lower().replace("_", "-")
    old, m1, m2, new = _values(rng, t, stem)
    right = _fill(t.fact, name, old)
    misleading = [_fill(t.fact, name, v) for v in (m1, m2)]
    correction = _fill(t.correction, name, old, new, old)
    others = [o for o in TEMPLATES if o.topic != t.topic and o.kind != t.kind]
    distractors = []
    for o in rng.sample(others, 3):
        distractors.append(_fill(o.fact, name, _values(rng, o, stem)[0]))
    question = t.question.format(s=name, x=old)
    subject = truthgen.Subject(
        name, t.kind, TEMPLATES.index(t), question, right, misleading, distractors
    )
    subject.correction = correction
    return subject


def corpus(
    seed: int,
    templates: tuple[Template, ...],
    n_subjects: int = 40,
    corrections: float = 0.6,
    notes: float = 0.5,
) -> list[truthgen.Subject]:
    """``n_subjects`` subjects, each through a template drawn from ``templates``, kinds in turn.

    A share ``corrections`` of subjects keep their correction (two in three right); of the
    others, a share ``notes`` get a neutral note on the same attribute (``Subject.note``).
    """
    rng = random.Random(f"corrections-{seed}")
    names = truthgen._subjects(rng, n_subjects)
    kinds = list(dict.fromkeys(t.kind for t in templates))
    out = []
    for i, name in enumerate(names):
        kind = kinds[i % len(kinds)]
        t = rng.choice([t for t in templates if t.kind == kind])
        s = subject_for(rng, name, t)
        if rng.random() < corrections:
            s.correction_right = rng.random() < 2 / 3
        else:
            s.correction = ""
            if rng.random() < notes:
                s.note = _fill(rng.choice(_NOTES).replace("{topic}", t.topic), name)
        out.append(s)
    return out


def template_set(name: str) -> tuple[Template, ...]:
    return {"tune": TUNE, "report": REPORT}[name]
