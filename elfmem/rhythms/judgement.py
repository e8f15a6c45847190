"""Judgements: what an LLM (or the host agent) says about one block, and how the ledger keeps it.

Dream asks once per inbox block; deep sleep (``dream --rescore``) asks again for aged active
blocks. Every answer becomes a new ``analysis`` event and none replaces another, so the history of
how a block was judged survives and the fold decides which one counts (the latest well-formed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from elfmem.block import secrets
from elfmem.block.model import Block, is_valid_tag
from elfmem.errors import InvalidInput
from elfmem.rhythms.core import Core


@dataclass(frozen=True)
class Judgement:
    """What an LLM (or the host agent) says about one block."""

    alignment: float = 0.5
    tags: tuple[str, ...] = ()
    summary: str = ""
    revision_of: str | None = None
    malformed: bool = False
    duplicate_of: str | None = None
    """An offered look-alike this block repeats exactly: dream archives it as a duplicate."""


Judge = Callable[[Block, list[tuple[str, str]]], Judgement]
"""(block, older look-alikes as (id, content)) → judgement; one LLM call per block."""


class HostJudge:
    """Judgements supplied by the host agent; ``ids`` says which blocks it judged."""

    def __init__(self, checked: Mapping[str, Judgement]) -> None:
        self._checked = dict(checked)
        self.ids = frozenset(self._checked)

    def __call__(self, block: Block, lookalikes: list[tuple[str, str]]) -> Judgement:
        return self._checked.get(block.id, Judgement())


def host_judge(core: Core, analyses: Mapping[str, Mapping[str, object]]) -> HostJudge:
    """Judgements supplied by the host agent (``dream --host-analyses FILE``), validated."""
    checked: dict[str, Judgement] = {}
    for block_id, entry in analyses.items():
        if not isinstance(entry, Mapping):
            raise InvalidInput(
                f"host analysis for {block_id} is not an object.",
                'Give {"<id>": {"alignment": 0.8, "tags": ["a/b"], "summary": "…"}}.',
            )
        alignment = entry.get("alignment", 0.5)
        if not isinstance(alignment, int | float) or not 0 <= float(alignment) <= 1:
            raise InvalidInput(
                f"host analysis for {block_id}: alignment must be a number in [0, 1].",
                "Fix the alignment value.",
            )
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or not all(
            isinstance(t, str) and is_valid_tag(t) for t in tags
        ):
            raise InvalidInput(
                f"host analysis for {block_id}: tags must be a list of valid tags.",
                "Tags use letters, digits and _ . / % : + - (no spaces).",
            )
        revision = entry.get("revision_of")
        duplicate = entry.get("duplicate_of")
        checked[block_id] = _screened(
            block_id,
            Judgement(
                float(alignment),
                tuple(tags),
                str(entry.get("summary", "")),
                str(revision) if revision else None,
                duplicate_of=str(duplicate) if duplicate else None,
            ),
        )
    return HostJudge(checked)


def _screened(block_id: str, judgement: Judgement) -> Judgement:
    """Refuse a host judgement holding a credential before anything is written: its summary
    and tags go into refs/notes/elfmem, its tags into the block, and dream has no override."""
    where = f"host analysis for {block_id}"
    fields = [(f"{where} summary", judgement.summary)]
    fields += [(f"{where} tag {n}", tag) for n, tag in enumerate(judgement.tags, 1)]
    fields += [(f"{where} revision_of", judgement.revision_of or "")]
    fields += [(f"{where} duplicate_of", judgement.duplicate_of or "")]
    findings = secrets.scan_fields(fields)
    if findings:
        raise secrets.refusal(
            findings,
            "Remove the credential from the host analyses file (say where it lives instead, "
            "e.g. 'the token is in $GITHUB_TOKEN'), then run dream again; nothing was written.",
        )
    return judgement


def analysis_line(core: Core, block_id: str, judgement: Judgement, *, rescore: bool) -> str:
    """One ``analysis`` event; ``rescore`` marks a deep-sleep re-judgement of an active block."""
    extra: dict[str, object] = {"rescore": True} if rescore else {}
    return core.event(
        "analysis",
        block_id,
        alignment=judgement.alignment,
        summary=secrets.redact(judgement.summary),  # an LLM may quote a block stored on purpose
        tags=[secrets.redact(t) for t in judgement.tags],
        malformed=judgement.malformed,
        **extra,
    )


def describe(judgements: Mapping[str, Judgement]) -> dict[str, dict[str, object]]:
    """The judgements as a result reports them, with a quoted credential named by its kind."""
    return {
        block_id: {
            "alignment": j.alignment,
            "tags": [secrets.redact(t) for t in j.tags],
            "summary": secrets.redact(j.summary),
            "malformed": j.malformed,
        }
        for block_id, j in judgements.items()
    }
