"""A long document is remembered whole and found by a question about one of its paragraphs."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun

PLACES = [
    "Lisbon",
    "Oslo",
    "Nairobi",
    "Lima",
    "Hanoi",
    "Tbilisi",
    "Quito",
    "Perth",
    "Riga",
    "Accra",
]


def _document() -> str:
    """About 95 KB: a travel log, one paragraph per day, each naming its city and its meal."""
    days = []
    for day in range(700):
        city = PLACES[day % len(PLACES)]
        days.append(
            f"Day {day + 1}. We walked around {city} from morning to evening, "
            f"looked at old buildings, bought bread and water, and took the tram back late."
        )
    days[237] = (
        "Day 238. In Riga a fisherman taught us to smoke sprats over alder wood on the beach; "
        "we ate them with rye bread while the sun went down."
    )
    return "\n\n".join(days)


def test_a_95_kb_document_is_kept_whole_and_found_by_one_paragraph(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    document = _document()
    assert 64_000 < len(document.encode()) < 256_000  # past the old limit, under the new one
    doc = arun(system.remember(document, cue="travel log"))
    others = [f"Note {i}: the {p} office opens at nine" for i, p in enumerate(PLACES)]
    arun(system.remember_many([{"content": t} for t in others]))
    arun(system.dream(max_blocks=20, no_llm=True))
    found = arun(
        system.recall("who showed us how to smoke sprats over alder wood", reinforce=False)
    )
    assert found.ranked[0].id == doc.block_id
    rows = (
        system._core.db()
        .conn.execute("SELECT count(*) FROM passages WHERE block_id = ?", (doc.block_id,))
        .fetchone()[0]
    )
    assert rows > 300  # ~95 KB in passages of about 250 characters
    arun(system.close())
