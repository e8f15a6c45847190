"""Runs write operations in forked children that kill themselves at a named fault point.

Started once per test run as ``python -m tests.faults.worker <spec.json>``: it imports elfmem
and loads the model once, then forks one child per case, so a case costs a fork, not an
interpreter start. Each case runs on its own copy of a prepared repository; after the child is
gone the killed state is copied once more for each check in which a person commits on top of it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from elfmem.api import MemorySystem
from elfmem.store import faults

UPSTREAM = Path(__file__).resolve().parents[1] / "sharing" / "fixtures" / "upstream" / "project"


def _commit_upstream_files(root: Path) -> None:
    """Upstream's flat memory files, committed by plain git: what ``migrate`` then moves."""
    dest = root / ".elfmem" / "memory" / "notes" / "knowledge.md"
    shutil.copy(UPSTREAM / ".elfmem" / "memory" / "notes" / "knowledge.md", dest)
    subprocess.run(["git", "-C", str(root), "add", str(dest)], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "upstream files"], check=True)


async def _op(system: MemorySystem, op: str, ids: list[str]) -> None:
    if op == "remember":
        await system.remember("The fault drill adds this fact", cue="fault drill")
    elif op == "batch":
        await system.remember_many(
            [
                {"content": "Batch fact about the pager", "cue": "pager"},
                {"content": "Batch procedure for deploys", "category": "procedure"},
            ]
        )
    elif op == "edit":
        await system.edit(ids[0], content="The pager rota changes on Tuesdays now")
    elif op == "forget":
        await system.forget(ids[1])
    elif op == "dream":
        await system.dream(no_llm=True)
    elif op == "curate":
        await system.curate()
    elif op == "undo":
        await system.undo()
    elif op == "outcome":
        await system.outcome([ids[0]], 0.9, source="drill")
    elif op == "connect":
        await system.connect(ids[0], ids[2], "supports")  # declared: written into the file
    elif op == "mind":  # a write path added later (identity): the same writer, the same points
        await system.mind_create("ops-team", "The ops team answers pages within ten minutes")
    elif op == "sync":  # sharing: the union merge of diverged notes, then a push
        await system.sync("origin")
    elif op == "reconcile":  # a block copied into a second file by plain git, then resolved
        _copy_into_second_file(system, ids[0])
        await system.reconcile(after_merge=False)
    elif op == "import-upstream":
        await system.import_upstream(UPSTREAM)
    elif op == "migrate":
        _commit_upstream_files(system.root)
        await system.migrate_apply()
    elif op == "import-bundle":  # sharing: a bundle of two blocks, one commit
        await system.import_bundle(_bundle(system), self_merge=True)
    elif op == "peer-add":  # sharing: the roster, a file outside the memory folder
        await system.peer_add("bob", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK")
    else:
        raise ValueError(op)


def _copy_into_second_file(system: MemorySystem, block_id: str) -> None:
    from elfmem.block.model import Block
    from elfmem.block.render import render_file

    copy = Block(id=block_id, content="The pager rota changes on Wednesdays")
    path = system.root / ".elfmem/memory/archive/knowledge/1999-01.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_file([copy]))
    subprocess.run(["git", "-C", str(system.root), "add", str(path)], check=True)
    subprocess.run(["git", "-C", str(system.root), "commit", "-q", "-m", "copy"], check=True)


def _bundle(system: MemorySystem) -> Path:
    """A bundle (no author: a self-merge takes it) of two blocks this memory does not hold."""
    from elfmem.block.model import Block
    from elfmem.sharing import bundle

    blocks = [
        Block("c0ffee00c0ffee01", "Bundled fact about the on-call phone", created="2026-01-02"),
        Block("c0ffee00c0ffee02", "Bundled note on the release train", created="2026-01-02"),
    ]
    records = [bundle.Record(b, "inbox", {"alpha": 2.5, "beta": 0.5}) for b in blocks]
    path = system.root.parent / "drill-bundle.jsonl"
    path.write_bytes(bundle.encode({"share": "all", "from": ""}, records))
    return path


def _tip(root: Path, ref: str) -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", ref], cwd=root, capture_output=True, text=True
    )
    return proc.stdout.strip()


def _child(root: Path, op: str, point: str, ids: list[str]) -> None:
    os.environ["ELFMEM_FAULT"] = point
    faults._armed.cache_clear()

    async def run() -> None:
        system = await MemorySystem.from_config(root)
        await _op(system, op, ids)
        ack = {"head": _tip(root, "HEAD"), "notes": _tip(root, "refs/notes/elfmem")}
        (root.parent / "ack.tmp").write_text(json.dumps(ack))
        (root.parent / "ack.tmp").rename(root.parent / "ack.json")
        await system.close()

    asyncio.run(run())


def _start(base: Path, case: dict[str, Any], ids: list[str]) -> int:
    where = Path(case["dir"])
    shutil.copytree(base, where / "a", symlinks=True)
    # Each case pushes to its own copy of the remote, so cases running side by side never meet.
    shutil.copytree(base.parent / "remote.git", where / "remote.git", symlinks=True)
    git = ["git", "-C", str(where / "a")]
    subprocess.run([*git, "remote", "set-url", "origin", str(where / "remote.git")], check=True)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _child(where / "a", case["op"], case["point"], ids)
        except BaseException as exc:  # reported to the test, which fails on it
            (where / "error.txt").write_text(repr(exc))
            code = 1
        os._exit(code)
    return pid


def run_cases(
    base: Path, cases: list[dict[str, Any]], ids: list[str], copies: list[str]
) -> list[dict[str, Any]]:
    """Two children at a time (the machine the suite targets has two cores); each killed
    state is copied once per check that acts on it (``copies``)."""
    pending, done = list(cases), []
    running: dict[int, dict[str, Any]] = {}
    while pending or running:
        if pending and len(running) < 2:
            case = pending.pop(0)
            running[_start(base, case, ids)] = case
            continue
        pid, status = os.waitpid(-1, 0)
        case = running.pop(pid)
        for name in copies:
            shutil.copytree(Path(case["dir"]) / "a", Path(case["dir"]) / name, symlinks=True)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status)
        done.append({**case, "signal": killed, "status": status})
    return done


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    base = Path(spec["base"])
    ids = asyncio.run(prepare(base))
    results = run_cases(base, spec["cases"], ids, spec.get("copies", ["b"]))
    Path(spec["out"]).write_text(json.dumps({"ids": ids, "cases": results}))


async def prepare(base: Path) -> list[str]:
    """A project with a memory: three blocks promoted by a dream, then two in the inbox. It
    also loads the model and every module before forking, so children start warm."""
    git = ["git", "-C", str(base)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (base / "README.md").write_text("# project\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "initial"], check=True)
    system, _ = await MemorySystem.init(base)
    facts = [
        ("The pager rota changes on Mondays", "who is on call"),
        ("Deploys freeze on Fridays", "when to deploy"),
        ("The ops wiki lists the rota", "where the rota is"),
    ]
    ids = [(await system.remember(text, cue=cue)).block_id for text, cue in facts]
    await system.dream(no_llm=True)
    await system.remember("Standups start at ten", cue="standup time")
    await system.remember("Retros happen every other Thursday", cue="retro cadence")
    await system.outcome([ids[2]], 0.0, weight=4.0, source="drill")  # refuted: curate archives it
    await system.recall("warm up")
    await system.close()
    await _diverge_notes(base, ids)
    # Packed, the repository copies in a few files instead of hundreds of loose objects.
    subprocess.run([*git, "gc", "-q"], check=True)
    return ids


async def _diverge_notes(base: Path, ids: list[str]) -> None:
    """A remote (a bare clone) whose ledger gained an outcome another clone recorded, while the
    base recorded one of its own: ``sync`` then makes a two-parent notes merge and pushes it."""
    remote, other = base.parent / "remote.git", base.parent / "other"
    subprocess.run(["git", "clone", "-q", "--bare", str(base), str(remote)], check=True)
    subprocess.run(["git", "-C", str(base), "remote", "add", "origin", str(remote)], check=True)
    subprocess.run(
        ["git", "-C", str(base), "push", "-q", "origin", "refs/notes/elfmem"], check=True
    )
    await (await MemorySystem.from_config(base)).close()  # its notes refspec, in step now
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    system = await MemorySystem.from_config(other)  # fetches the ledger once, as a clone does
    await system.outcome([ids[0]], 1.0, source="other clone")
    await system.close()
    subprocess.run(
        ["git", "-C", str(other), "push", "-q", "origin", "refs/notes/elfmem"], check=True
    )
    system = await MemorySystem.from_config(base)  # fetches nothing: the remote moved unseen
    await system.outcome([ids[1]], 1.0, source="drill")
    await system.close()


if __name__ == "__main__":
    main(sys.argv[1])
