"""``elfmem demo``: the main job, offline, as a tour a newcomer can follow and then look at.

Each step is one ``MemorySystem`` call under a heading that says what it shows; the folder stays
when one is given (so ``git log`` and the files are there to read afterwards). Everything runs
on the embedded defaults: no API key, no network, no LLM.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.block.text import shorten
from elfmem.errors import InvalidInput
from elfmem.retrieval.result import FrameResult

Say = Callable[[str], None]

FACTS = [
    (
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "choosing a connection pooling strategy",
        ["db/postgres"],
    ),
    (
        "Raise max_connections to 5000 instead of pooling",
        "choosing a connection pooling strategy",
        ["db/postgres"],
    ),
    (
        "Shard the events table by tenant once it passes 500 million rows",
        "database scaling",
        ["db/postgres"],
    ),
    (
        "Redis needs maxmemory set or it grows until the OOM killer runs",
        "configuring a redis cache",
        ["db/redis"],
    ),
    (
        "Deploys to production happen Tuesday and Thursday mornings only",
        "planning a release",
        ["ops/deploy"],
    ),
]
CORRECTION = (
    "Postgres needs pgbouncer above 200 clients, not 100: the March load test held 180 without it",
    "choosing a connection pooling strategy",
    ["db/postgres"],
)
QUERY = "how should we handle Postgres connections"
STEPS = (
    "Capture",
    "Consolidate",
    "Recall",
    "A correction",
    "An outcome",
    "Undo",
    "Time travel",
    "The git log",
    "The notes",
    "Who am I",
)
"""The step labels, in order, each printed as a heading (a test checks them)."""
SELF_CHARS = 600
"""About how much of the self frame to show; it is cut between paragraphs, never inside one."""


def heading(n: int, detail: str) -> str:
    return f"\n== {n}. {STEPS[n - 1]}: {detail} =="


def listing(result: FrameResult, notes: dict[str, str] | None = None) -> str:
    """Recall's blocks as it returned them, in its order, with the score each was ranked by."""
    notes = notes or {}
    lines = [
        f"  {b.id[:8]}  score {b.score:.2f}  conf {b.confidence:.2f}  "
        f"{shorten(b.content, 70)}{notes.get(b.id, '')}"
        for b in result.blocks
    ]
    return "\n".join(lines) or "  (nothing)"


def self_excerpt(text: str, limit: int = SELF_CHARS) -> str:
    """Whole paragraphs of the self frame up to about ``limit`` characters, never a cut sentence."""
    paragraphs = [p for p in text.strip().split("\n\n") if p.strip()]
    kept: list[str] = []
    for p in paragraphs:
        if kept and sum(len(k) for k in kept) + len(p) > limit:
            break
        kept.append(p)
    rest = len(paragraphs) - len(kept)
    plural = "s" if rest != 1 else ""
    more = f"({rest} more paragraph{plural}: the whole text is .elfmem/memory/self.md)"
    tail = [more] if rest else []
    return "\n\n".join([*kept, *tail])


def ledger_digest(lines: list[str]) -> str:
    """A note's events counted by kind, then its birth event whole: one JSON object a line."""
    kinds = Counter(str(json.loads(line).get("kind")) for line in lines if line.strip())
    counted = ", ".join(f"{kind} x{n}" if n > 1 else kind for kind, n in sorted(kinds.items()))
    birth = next((line for line in lines if '"kind":"birth"' in line), "")
    return f"  {len(lines)} events: {counted}\n  the birth event: {birth}"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.rstrip()


async def tour(root: Path, say: Say) -> None:
    """Every step on a fresh memory at ``root`` (a new or empty folder the caller checked)."""
    system, init = await MemorySystem.init(root, name="Ada", seed=True)
    say(f"A new memory for an agent called Ada: {init.summary}")
    try:
        async with system.session():
            ids = await _capture_and_consolidate(system, say)
            before = git(root, "rev-parse", "HEAD")
            fixed = await _correct(system, say, ids[0])
            await _outcome(system, say, fixed, ids[1])
            await _undo(system, say, ids[1])
            say(heading(7, f"recall --at {before[:12]} answers from memory before the correction"))
            say(listing(await system.recall(QUERY, top_k=3, at=before, reinforce=False)))
            anchor = (await system.ledger(fixed)).anchor
            self_text = (await system.frame("self", reinforce=False)).text
    finally:
        await system.close()  # flushes the spooled ledger events into the notes ref
    say(heading(8, "one readable commit per operation, with trailers (git log --oneline)"))
    say(git(root, "log", "--oneline", "-12"))
    say(heading(9, f"the ledger of block {fixed[:8]} is a git note (refs/notes/elfmem)"))
    say(f"$ git notes --ref=elfmem show {anchor}")
    say(ledger_digest(git(root, "notes", "--ref=elfmem", "show", anchor).splitlines()))
    say(heading(10, "the self frame an agent reads first, its constitution whole"))
    say(self_excerpt(self_text))


async def _capture_and_consolidate(system: MemorySystem, say: Say) -> list[str]:
    say(heading(1, f"remember {len(FACTS)} facts, each with a cue (one commit, no LLM)"))
    batch = await system.remember_many([{"content": c, "cue": q, "tags": t} for c, q, t in FACTS])
    for block_id, (content, _, _) in zip(batch.created, FACTS, strict=True):
        say(f"  {block_id[:8]}  {content}")
    say(heading(2, "dream embeds, links and promotes the inbox (one commit)"))
    say((await system.dream(max_blocks=10, no_llm=True)).summary)
    say(heading(3, f'what bears on "{QUERY}"'))
    say(listing(await system.recall(QUERY, top_k=3)))
    return list(batch.created)


async def _correct(system: MemorySystem, say: Say, old: str) -> str:
    content, cue, tags = CORRECTION
    say(heading(4, f"a new fact supersedes {old[:8]}; recall shows what it now returns"))
    fixed = (await system.remember(content, cue=cue, tags=tags)).block_id
    await system.connect(fixed, old, "supersedes")
    await system.dream(max_blocks=10, no_llm=True)
    say(f"  {fixed[:8]}  {content}\n  {fixed[:8]} supersedes:: [[{old}]]")
    notes = {fixed: "   <- the correction", old: "   <- superseded"}
    say(listing(await system.recall(QUERY, top_k=3), notes))
    return fixed


async def _outcome(system: MemorySystem, say: Say, good: str, bad: str) -> None:
    say(heading(5, "ground truth moves confidence (three outcomes each)"))
    for _ in range(3):
        up = await system.outcome([good], 1.0, source="demo")
        down = await system.outcome([bad], 0.0, source="demo")
    for result in (up, down):
        for row in result.updated:
            say(
                f"  {str(row['id'])[:8]}  signal {result.signal:.1f}: confidence "
                f"{float(str(row['confidence_before'])):.2f} -> "
                f"{float(str(row['confidence_after'])):.2f} (last of three)"
            )


async def _undo(system: MemorySystem, say: Say, block_id: str) -> None:
    say(heading(6, f"forget {block_id[:8]}, then undo: a revert commit brings it back"))
    say("  " + (await system.forget(block_id)).summary)
    say("  " + (await system.undo()).summary)
    say(f"  {block_id[:8]} is {(await system.show(block_id)).status} again")


def check_folder(folder: Path) -> Path:
    """``folder`` made ready for a kept demo: new or empty, and in no git repository.

    A demo commits freely, so it must never land in someone's project history or mix with
    files already there; it refuses both before writing anything.
    """
    root = folder.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"{folder} is a file, not a folder.", _ELSEWHERE)
    if root.is_dir() and any(root.iterdir()):
        raise InvalidInput(
            f"{folder} is not empty; the demo writes only to a fresh folder.", _ELSEWHERE
        )
    for parent in (root, *root.parents):
        if (parent / ".git").exists():
            raise InvalidInput(
                f"{folder} is inside the git repository at {parent}; the demo would commit there.",
                _ELSEWHERE,
            )
    root.mkdir(parents=True, exist_ok=True)
    return root


_ELSEWHERE = (
    "Give a new folder outside any repository, e.g. `elfmem demo /tmp/elfmem-demo`, or none "
    "to run in a temporary folder."
)


def next_steps(root: Path, kept: bool, program: str = "elfmem") -> str:
    """Commands to type next, with ``program`` as the demo was started (``.venv/bin/elfmem``
    works where a bare ``elfmem`` is not on PATH)."""
    if not kept:
        return (
            "\nThe demo ran in a temporary folder, deleted now. Keep one to look around:\n"
            f"  {program} demo ~/elfmem-demo     (a new folder, outside any git repository)"
        )
    where = shlex.quote(str(root))
    return "\n".join(
        [
            f"\nThe memory is kept in {root}. Try next:",
            f"  cd {where} && git log --stat -3",
            f"  {program} -C {where} recall 'database scaling'",
            f"  {program} -C {where} ls",
            f"  {program} -C {where} visualise",
            f"  {program} -C {where} guide",
        ]
    )


async def run(folder: Path | None, say: Say, program: str = "elfmem") -> Path | None:
    """The whole demo: in ``folder`` (checked, then kept) or in a temporary one (then deleted)."""
    import tempfile

    if folder is None:
        with tempfile.TemporaryDirectory(prefix="elfmem-demo-") as tmp:
            await tour(Path(tmp), say)
        say(next_steps(Path(tmp), kept=False, program=program))
        return None
    root = check_folder(folder)
    await tour(root, say)
    say(next_steps(root, kept=True, program=program))
    return root
