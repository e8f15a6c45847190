"""Corrections in ordinary sentences win without an LLM: each old fact is recalled three times,
its correction is remembered in plain words, ``dream --no-llm`` runs, and the correction ranks
first for the question. Real repositories, the real embedded model, the real ledger."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.clock import SimulatedClock
from elfmem.rhythms.adaptive import revision_edges
from tests.conftest import arun

# (question, old fact, correction in plain words)
TEN = (
    (
        "what is the request timeout of the billing API",
        "The request timeout of the billing API is 30 seconds",
        "The billing API's request timeout was raised to 60 seconds",
    ),
    (
        "which region does the analytics cluster run in",
        "The analytics cluster runs in eu-west-1",
        "The analytics cluster moved to eu-central-1 in June",
    ),
    (
        "who owns the billing service",
        "The billing service is owned by Alice Chen",
        "Dana Park now owns the billing service; Alice Chen moved to the search team",
    ),
    (
        "which Django version does the web app pin",
        "The web app pins Django to 4.2",
        "Since the Python 3.12 upgrade, the Django pin of the web app was relaxed to 5.0",
    ),
    (
        "are deploys allowed on Fridays",
        "Deploys on Fridays are allowed",
        "After the incident review, deploys on Fridays are no longer allowed",
    ),
    (
        "how long are audit logs retained",
        "Audit logs are retained for 90 days",
        "Audit logs are now retained for 365 days to meet the SOX rule",
    ),
    (
        "is the nightly reindex job enabled",
        "The nightly reindex job is enabled",
        "The nightly reindex job is disabled until the schema migration finishes",
    ),
    (
        "which team handles the support inbox",
        "The support inbox is handled by the payments team",
        "The growth team handles the support inbox now, instead of the payments team",
    ),
    (
        "where does the deploy script read its settings from",
        "The deploy script reads its settings from /etc/deploy/settings.yaml",
        "The deploy script now reads its settings from /srv/deploy/settings.yaml",
    ),
    (
        "when is the quarterly billing run",
        "The quarterly billing run is on March 3",
        "The quarterly billing run was moved to March 10",
    ),
)
OTHERS = (
    "The billing API is written in Go",
    "The analytics cluster has 12 nodes",
    "The billing service sends invoices every night",
    "The web app serves the customer dashboard",
    "Deploys go through the staging cluster first",
    "Audit logs are stored in the compliance bucket",
    "The reindex job rebuilds the search index",
    "The support inbox gets about 40 tickets a day",
    "The deploy script is written in bash",
    "Customers get their statements after each billing run",
)


def test_ten_corrections_in_plain_words_rank_first_after_a_dream_without_llm(
    repo: Path,
) -> None:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    olds = arun(system.remember_many([{"content": old} for _, old, _ in TEN])).created
    arun(system.remember_many([{"content": text} for text in OTHERS]))
    arun(system.dream(no_llm=True))
    for question, _, _ in TEN:  # the old facts are used before the world changes
        for _ in range(3):
            arun(system.recall(question, top_k=5))
    news = arun(system.remember_many([{"content": new} for _, _, new in TEN])).created
    arun(system.dream(no_llm=True))

    linked = set(revision_edges(system._core.ledger, news))
    assert linked == set(zip(news, olds, strict=True))
    for (question, _, new_text), new, old in zip(TEN, news, olds, strict=True):
        ids = [b.id for b in arun(system.recall(question, top_k=5, reinforce=False)).blocks]
        shown = arun(system.recall(question, top_k=5, reinforce=False)).blocks
        assert ids[0] == new, (question, new_text, [(b.content, b.note) for b in shown])
        assert old not in ids or ids.index(old) > 0
    arun(system.close())


def test_a_fact_and_its_correction_captured_in_one_batch_are_not_a_revision(
    repo: Path,
) -> None:
    """Their order inside one batch is arbitrary: a tie is never a revision."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    _, old, new = TEN[0]
    ids = arun(system.remember_many([{"content": old}, {"content": new}])).created
    arun(system.dream(no_llm=True))
    assert revision_edges(system._core.ledger, ids) == []
    arun(system.close())


def test_one_batch_that_crosses_a_second_is_still_a_tie(repo: Path) -> None:
    """A slow batch stamps its blocks in different seconds; it is still one commit."""
    clock = SimulatedClock(1767603600.0, tick=0.4)  # every read of the clock takes 0.4 s
    system, _ = arun(MemorySystem.init(repo, name="Ada", clock=clock))
    _, old, new = TEN[0]
    ids = arun(system.remember_many([{"content": old}, {"content": new}])).created
    arun(system.dream(no_llm=True))
    assert len({b.created for b in arun(system.ls()).blocks}) > 1
    assert revision_edges(system._core.ledger, ids) == []
    arun(system.close())


def test_when_decides_which_is_newer_where_both_blocks_have_one(repo: Path) -> None:
    """Captured later but said earlier: the block captured first is the correction."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    _, old, new = TEN[5]
    later = arun(system.remember(new, when="2026-06-01")).block_id
    arun(system.dream(no_llm=True))
    earlier = arun(system.remember(old, when="2025-01-10")).block_id
    arun(system.dream(no_llm=True))
    assert revision_edges(system._core.ledger, [later, earlier]) == [(later, earlier)]
    ids = [b.id for b in arun(system.recall("how long are audit logs retained")).blocks]
    assert ids[0] == later
    arun(system.close())


# Settings as agents write them: a frequency turned into "never", a state said before the subject
# it is about, the state of a "read replica".
SETTINGS = (
    (
        "should I restart the vesper router relative to the schema migration",
        "Restart the vesper router after the schema migration, always",
        "Restart the vesper router after the schema migration, never since the May change",
    ),
    (
        "what about tracing on the sable importer",
        "Tracing stays disabled for the sable importer in production",
        "Tracing stays enabled for the sable importer in production since the May change",
    ),
    (
        "resolver_nimbus7 read replica flag",
        "The resolver_nimbus7 runs with read replica enabled in production",
        "The resolver_nimbus7 runs with read replica disabled in production since the June change",
    ),
)


def test_a_confirmed_setting_gives_way_to_its_correction(repo: Path) -> None:
    """The old settings drew three confirmations each before the world changed: dream must link
    each correction to its setting, or those confirmations keep the old value first."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    olds = arun(system.remember_many([{"content": old} for _, old, _ in SETTINGS])).created
    arun(system.remember_many([{"content": text} for text in OTHERS]))
    arun(system.dream(no_llm=True))
    for _ in range(3):
        arun(system.outcome(olds, 1.0, source="test"))
    news = arun(system.remember_many([{"content": new} for _, _, new in SETTINGS])).created
    arun(system.dream(no_llm=True))

    assert set(revision_edges(system._core.ledger, news)) == set(zip(news, olds, strict=True))
    for (question, _, _), new, old in zip(SETTINGS, news, olds, strict=True):
        ids = [b.id for b in arun(system.recall(question, top_k=5, reinforce=False)).blocks]
        assert ids[0] == new, question
        assert old not in ids or ids.index(old) > 0
    arun(system.close())
