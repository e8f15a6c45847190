"""Confirmed truth over neutral notes: a block confirmed several times ranks above an unjudged
note on its subject that answers nothing, and never above a note with an answer of its own.
Real repositories, the real embedded model, the real ledger."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun

# (question, fact, attribute named by the notes)
SUBJECTS = (
    (
        "who maintains the router_onyx9",
        "The router_onyx9 is maintained by Tomas Novak",
        "maintainer",
    ),
    (
        "which team runs the basalt watcher",
        "The basalt watcher is run by the search team",
        "operating team",
    ),
    (
        "what is the region of the Project Calypso",
        "The region of the Project Calypso is ap-south-1",
        "region",
    ),
    (
        "who maintains the amber watcher",
        "The amber watcher is maintained by Grace Okafor",
        "maintainer",
    ),
    (
        "which team runs the Project Pennant",
        "The Project Pennant is run by the security team",
        "operating team",
    ),
    (
        "what is the region of the gateway_jade2",
        "The region of the gateway_jade2 is us-west-2",
        "region",
    ),
    (
        "which team does the Project Saltmarsh belong to",
        "The Project Saltmarsh belongs to the infra team",
        "team",
    ),
    ("who owns the sweeper_sable4", "The sweeper_sable4 is owned by Kenji Sato", "owner"),
)
NOTES = (
    "A review of the {a} of the {s} is planned",
    "We should document the {a} of the {s} better",
    "Someone asked about the {a} of the {s} in the standup",
)
OTHERS = (
    "The {s} runs 8 replicas",
    "The {s} writes its logs to /var/lib/{s}/app.log",
)


def _subject(fact: str) -> str:
    words = fact.split()
    return " ".join(words[1:3]) if words[1] in ("Project", "amber", "basalt") else words[1]


def _memory(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    texts = [f for _, f, _ in SUBJECTS]
    texts += [o.format(s=_subject(f)) for _, f, _ in SUBJECTS for o in OTHERS]
    facts = arun(system.remember_many([{"content": t} for t in texts])).created[: len(SUBJECTS)]
    arun(system.dream(no_llm=True))
    return system, facts


def _notes(system: MemorySystem) -> list[str]:
    notes = [n.format(a=a, s=_subject(f)) for _, f, a in SUBJECTS for n in NOTES]
    created = arun(system.remember_many([{"content": n} for n in notes])).created
    arun(system.dream(no_llm=True))
    return created


def _top(system: MemorySystem, question: str) -> str:
    return arun(system.recall(question, top_k=5, reinforce=False)).blocks[0].id


def test_a_block_confirmed_three_times_ranks_above_notes_that_answer_nothing(
    repo: Path,
) -> None:
    system, facts = _memory(repo)
    confirmed = list(zip(SUBJECTS, facts, strict=True))[::2]
    unconfirmed = list(zip(SUBJECTS, facts, strict=True))[1::2]
    for _ in range(3):
        for (question, _, _), fact in confirmed:
            arun(system.recall(question, top_k=5))
            arun(system.outcome([fact], 1.0))
    _notes(system)
    for (question, _, _), fact in confirmed:
        assert _top(system, question) == fact, question
    for (question, _, _), fact in unconfirmed:  # shown, wherever relevance alone puts it
        ids = [b.id for b in arun(system.recall(question, top_k=5, reinforce=False)).blocks]
        assert fact in ids, question
    arun(system.close())


def test_a_note_with_an_answer_of_its_own_is_not_pushed_down(repo: Path) -> None:
    """Popularity does not beat relevance: a newer statement naming another maintainer keeps
    its place above the confirmed block (a candidate correction: outcomes decide)."""
    system, facts = _memory(repo)
    question = SUBJECTS[0][0]
    for _ in range(3):
        arun(system.recall(question, top_k=5))
        arun(system.outcome([facts[0]], 1.0))
    other = arun(system.remember("Since June the router_onyx9 is maintained by Lena Vogel"))
    arun(system.dream(no_llm=True))
    assert _top(system, question) == other.block_id
    arun(system.close())
