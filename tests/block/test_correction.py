"""The text test of a correction (``block/correction.py``) and the order in time
(``rhythms/revisions.py``): every kind of changed value, bare and in plain words; subject swaps
and attribute swaps refused; ties never a revision."""

from __future__ import annotations

import pytest

from elfmem.block.correction import corrects
from elfmem.block.model import Block
from elfmem.index.calibration import DEFAULT_CUTS
from elfmem.rhythms.revisions import order_in_time, revision_of

CORRECTIONS = (
    # number
    ("The cache holds 500 entries", "The cache holds 2000 entries"),
    ("The importer retries 3 times", "The importer now retries 5 times"),
    # unit
    ("Sessions expire after 30 minutes", "Sessions expire after 30 hours"),
    ("Snapshots are kept for 7 days", "Snapshots are now kept for 7 weeks to meet the policy"),
    # date
    ("The certificate expires on 2026-04-01", "The certificate expires on 2026-10-01"),
    ("The launch is planned for May 4", "The launch was pushed back to June 9"),
    # version
    ("The worker runs on Node 18", "The worker runs on Node 22"),
    ("The SDK is pinned to v2.1", "Since the upgrade the SDK is pinned to v3.0"),
    ("The SDK is pinned to v2.1", "The SDK pin was relaxed to v3.0 after the upgrade"),
    # state
    ("The feature flag for search is enabled", "The feature flag for search is disabled"),
    ("The reindex job is running", "The reindex job is paused until the migration finishes"),
    # negation
    ("Merges to main are allowed on Fridays", "Merges to main are not allowed on Fridays"),
    ("Guests may book the big room", "Guests may no longer book the big room"),
    ("Restart the router after the backup, always", "Restart the router after the backup, never"),
    # a state said before the subject it is about
    (
        "Tracing stays disabled for the sable importer in production",
        "Tracing stays enabled for the sable importer in production since the May change",
    ),
    # "read" naming a thing, not telling of an event
    (
        "The indexer runs with read replica enabled in production",
        "The indexer runs with read replica disabled in production",
    ),
    # person
    ("The on-call lead this week is Omar Haddad", "The on-call lead this week is Priya Nair"),
    ("The payroll export is owned by Lena Vogel", "Kenji Sato now owns the payroll export"),
    # team
    (
        "The ledger service belongs to the payments team",
        "The ledger service belongs to the data team",
    ),
    ("Alerts are handled by the infra team", "Alerts are handled by the security team from now on"),
    # identifier
    ("The queue lives in region us-east-1", "The queue lives in region eu-west-1"),
    (
        "The database runs on instance db.r5.large",
        "The database now runs on instance db.r6g.xlarge instead",
    ),
    # a one-word subject, the verb left out of what is compared
    ("The builder_7 runs 4 replicas", "The builder_7 runs 6 replicas"),
    ("The feature is enabled by default", "The feature is disabled by default"),
    # path
    ("The crawler writes to /var/log/crawler.log", "The crawler writes to /srv/logs/crawler.log"),
    ("The linter reads ~/.lintrc", "After the cleanup the linter reads ./config/lint.toml"),
)
NOT_CORRECTIONS = (
    # one statement, two subjects
    ("The orders table has 12 columns", "The users table has 12 columns"),
    ("Alice Chen works from the Berlin office", "Dana Park works from the Berlin office"),
    (
        "/etc/a/main.yaml sets the timeout to 30 seconds",
        "/etc/b/main.yaml sets the timeout to 30 seconds",
    ),
    (
        "The timeout of the billing service is 30 seconds",
        "The timeout of the search service is 30 seconds",
    ),
    (
        "The billing service is owned by Alice Chen",
        "Since June the search service is owned by Alice Chen",
    ),
    # two subjects and two values
    (
        "The timeout of the billing service is 30 seconds",
        "The timeout of the search service is 60 seconds",
    ),
    # one subject, two attributes
    (
        "The billing service has a timeout of 30 seconds",
        "The billing service is owned by Alice Chen",
    ),
    ("The billing service runs on Python 3.11", "The billing service runs in region us-east-1"),
    ("The orders table lives in the ledger database", "The orders table is owned by the data team"),
    (
        "The billing service is run by the infra team",
        "Dana Park now maintains the billing service; Omar Haddad moved to the search team",
    ),
    ("The builder_7 runs 4 replicas", "The watcher_3 runs 4 replicas"),
    # the words missing from the newer span a verb: the subject's name and its value went
    (
        "The region of the Project Quillon is us-east-1",
        "The Project Redwing runs in region eu-west-1",
    ),
    (
        "Tracing stays disabled for the billing service in production",
        "Tracing stays enabled for the search service in production",
    ),
    ("Restart the router after the backup, always", "Restart the loader after the backup, never"),
    ("The timeout of billing is 30 seconds", "The timeout of search is 30 seconds"),
    # a state word that describes a noun or is a passive verb states no value
    (
        "The cache of the sable cache is disabled",
        "After the outage review the sable cache now retries a failed request 10 times",
    ),
    (
        "The cache of the tidal cache is paused",
        "Since Tomas Novak left, security reviews of the tidal cache are approved by Marco Rossi",
    ),
    # the old value named, but not as the former one
    (
        "The worker reads its config from /etc/w.yaml",
        "The worker reads its config from /etc/w.yaml and its secrets from /etc/s.yaml",
    ),
    # the same information
    ("The cache holds 500 entries", "The cache holds 500 entries"),
)


@pytest.mark.parametrize(("old", "new"), CORRECTIONS)
def test_a_changed_value_of_every_kind_is_a_correction(old: str, new: str) -> None:
    assert corrects(old, new)


@pytest.mark.parametrize(("old", "new"), NOT_CORRECTIONS)
def test_another_subject_or_attribute_is_not_a_correction(old: str, new: str) -> None:
    assert not corrects(old, new)


def _block(block_id: str, content: str, created: str, when: str = "") -> Block:
    extra = (("when", when),) if when else ()
    return Block(block_id, content, created=created, extra=extra)


OLD, NEW = CORRECTIONS[0]
DAY1, DAY2 = "2026-03-01T09:00:00+00:00", "2026-03-02T09:00:00+00:00"


def test_the_newer_block_revises_the_older_whichever_is_passed_first() -> None:
    a, b = _block("a", OLD, DAY1), _block("b", NEW, DAY2)
    assert revision_of(a, b, 0.95, DEFAULT_CUTS) == (b, a)
    assert revision_of(b, a, 0.95, DEFAULT_CUTS) == (b, a)
    swapped = _block("a", OLD, DAY2), _block("b", NEW, DAY1)  # a number changed back
    assert revision_of(*swapped, 0.95, DEFAULT_CUTS) == swapped


def test_a_tie_is_never_a_revision() -> None:
    a, b = _block("a", OLD, DAY1), _block("b", NEW, DAY1)
    assert revision_of(a, b, 0.95, DEFAULT_CUTS) is None  # same second, births unknown
    one_commit = {"a": ("c1", "t1"), "b": ("c1", "t2")}
    assert revision_of(a, b, 0.95, DEFAULT_CUTS, one_commit.__getitem__) is None
    two_commits = {"a": ("c1", "t1"), "b": ("c2", "t2")}
    assert revision_of(a, b, 0.95, DEFAULT_CUTS, two_commits.__getitem__) == (b, a)
    later = _block("b", NEW, DAY2)  # one batch whose capture crossed a second
    assert revision_of(a, later, 0.95, DEFAULT_CUTS, one_commit.__getitem__) is None
    assert revision_of(a, later, 0.95, DEFAULT_CUTS, two_commits.__getitem__) == (later, a)
    same_when = _block("a", OLD, DAY1, "2026-05"), _block("b", NEW, DAY2, "2026-05-14")
    assert order_in_time(*same_when) is None


def test_when_wins_over_created_where_both_blocks_have_one() -> None:
    a, b = _block("a", OLD, DAY2, "2026-01-10"), _block("b", NEW, DAY1, "2026-06-01")
    assert revision_of(a, b, 0.95, DEFAULT_CUTS) == (b, a)
    only_one = _block("a", OLD, DAY1, "2027-01-01"), _block("b", NEW, DAY2)
    assert revision_of(*only_one, 0.95, DEFAULT_CUTS) == (only_one[1], only_one[0])


def test_unrelated_texts_are_refused_by_the_cosine_whatever_the_words() -> None:
    a, b = _block("a", OLD, DAY1), _block("b", NEW, DAY2)
    assert revision_of(a, b, DEFAULT_CUTS.scaled(0.59), DEFAULT_CUTS) is None
