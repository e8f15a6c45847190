"""A question that asks by the kind of its answer ("what state is the firewall of Kestrel
in") is answered by the block that states a value of that kind ("the firewall of Kestrel is
open"), not by a note that repeats the noun about another subject ("a review of the firewall
state of Osprey is planned"); and a correction of that value in plain words
ranks first once dream has seen it. Real repositories, the real embedded model."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun

SUBJECTS = ("Kestrel", "Osprey", "Heron", "Merlin", "Falcon")
STATES = ("open", "closed", "open", "closed", "open")
OTHER_FACTS = (
    "{s} runs {n} replicas",
    "{s} is owned by the {team} team",
    "{s} writes its logs to /var/log/{stem}",
    "{s} depends on postgres 1{n}",
    "The deploys of {s} go through the staging cluster first",
)
TEAMS = ("payments", "platform", "search", "identity", "data")
NOTES = (
    "A review of the firewall state of {s} is planned",
    "We should document the firewall state of {s} better",
    "Someone asked about the firewall state of {s} in the standup",
)
ASKED = "what state is the firewall of Kestrel in"
FACT = "The firewall of Kestrel is open"
CORRECTION = "The firewall of Kestrel is now closed after the network review"


def _memory(repo: Path) -> MemorySystem:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    texts = []
    for n, (s, state, team) in enumerate(zip(SUBJECTS, STATES, TEAMS, strict=True)):
        texts.append(f"The firewall of {s} is {state}")
        texts += [f.format(s=s, n=n + 2, team=team, stem=s.lower()) for f in OTHER_FACTS]
    for note, s in zip(NOTES, SUBJECTS[1:], strict=False):  # every subject but the one asked
        texts.append(note.format(s=s))
    arun(system.remember_many([{"content": t} for t in texts]))
    arun(system.dream(no_llm=True))
    return system


def _shown(system: MemorySystem, question: str) -> list[str]:
    return [b.content for b in arun(system.recall(question, top_k=5, reinforce=False)).blocks]


def test_the_block_stating_a_value_of_the_asked_kind_answers_before_notes_naming_it(
    repo: Path,
) -> None:
    system = _memory(repo)
    shown = _shown(system, ASKED)
    assert "what state" in ASKED and "state" not in FACT  # the question's noun is not in it
    assert shown[0] == FACT, shown
    assert all("Kestrel" in text for text in shown[:3]), shown  # notes on others come later
    arun(system.close())


def test_a_state_corrected_in_plain_words_ranks_first_for_a_question_in_other_words(
    repo: Path,
) -> None:
    system = _memory(repo)
    for _ in range(3):  # the old fact is used, and confirmed, before the world changes
        result = arun(system.recall(ASKED, top_k=5))
        old = next(b.id for b in result.blocks if b.content == FACT)
        arun(system.outcome([old], 1.0))
    new = arun(system.remember(CORRECTION)).block_id
    arun(system.dream(no_llm=True))
    blocks = arun(system.recall(ASKED, top_k=5, reinforce=False)).blocks
    ids = [b.id for b in blocks]
    assert ids[0] == new, [(b.content, b.note) for b in blocks]
    assert old not in ids or ids.index(old) > 0
    arun(system.close())


def test_a_yes_or_no_question_is_answered_by_the_subjects_new_state_not_the_word_elsewhere(
    repo: Path,
) -> None:
    # "is the firewall of Kestrel open", after Kestrel's firewall was paused and Heron's closed:
    # Kestrel's correction answers it, not Heron's, which replaced a block holding "open"
    system = _memory(repo)
    polar = "is the firewall of Kestrel open"
    for _ in range(3):
        result = arun(system.recall(polar, top_k=5))
        old = next(b.id for b in result.blocks if b.content == FACT)
        arun(system.outcome([old], 1.0))
    paused = "The firewall of Kestrel is now paused after the security audit"
    closed = "The firewall of Heron is now closed after the security audit"
    new, _ = arun(system.remember_many([{"content": paused}, {"content": closed}])).created
    arun(system.dream(no_llm=True))
    blocks = arun(system.recall(polar, top_k=5, reinforce=False)).blocks
    assert blocks[0].id == new, [b.content for b in blocks]
    arun(system.close())
