"""Switching from upstream elfmem: a memory the real upstream package made (fixtures/upstream, by
scripts/make_upstream_fixture.py) comes across with its ids, cues, tags, links, edges and
confidence, in one undoable commit; importing it again changes nothing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from elfmem.api import MemorySystem
from elfmem.block.model import RELATIONS, normalise_content
from elfmem.errors import NotFound, SecretRefused
from tests.conftest import arun, git

FIXTURE = Path(__file__).parent / "fixtures" / "upstream"
UPSTREAM_PYTHON = Path(
    os.environ.get("ELFMEM_UPSTREAM_PYTHON", "/work/wt/upstream-venv/bin/python")
)
SCRIPT = Path(__file__).parents[2] / "scripts" / "make_upstream_fixture.py"
STATUS = {"inbox": "inbox", "active": "active", "archived": "archived"}


def _expected(root: Path = FIXTURE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "expected.json").read_text())
    return data


@pytest.fixture
def memory(repo: Path) -> Path:
    async def go() -> None:
        system, _ = await MemorySystem.init(repo, name="elf")
        await system.close()

    arun(go())
    return repo


async def _import(path: Path, source: Path) -> Any:
    system = await MemorySystem.from_config(path)
    try:
        return await system.import_upstream(source)
    finally:
        await system.close()


def _check_against(memory: Path, expected: dict[str, Any]) -> None:
    """Every block and edge as upstream reported it, read back through our API."""

    async def go() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            for want in expected["blocks"]:
                got = await system.show(want["id"])
                assert got.content == normalise_content(want["content"])
                assert got.status == STATUS[want["status"]]
                assert got.cls == want["category"]
                assert got.cue == (want["cue"] or "")
                assert sorted(got.tags) == sorted(want["tags"])
                assert got.pinned == want["pinned"]
                state = system._core.ledger.folded(want["id"])
                assert state.alpha == pytest.approx(want["alpha"], abs=1e-9)
                assert state.beta == pytest.approx(want["beta"], abs=1e-9)
                assert state.confidence == pytest.approx(want["confidence"], abs=1e-6)
                assert state.outcomes == len(want["outcomes"])
            for edge in expected["edges"]:
                a, b = edge["from_id"], edge["to_id"]
                directed = edge["relation_type"] != "contradicts"
                known = not directed or edge["declared_by"] in (a, b)
                if edge["relation_type"] in RELATIONS and known:
                    declared = {
                        (kind, target)
                        for block in (a, b)
                        for kind, target in (await system.show(block)).relations
                    }
                    assert {(edge["relation_type"], b), (edge["relation_type"], a)} & declared
                else:
                    weights = system._core.ledger.folded(a).edges
                    assert any(
                        target == b and w == pytest.approx(edge["weight"])
                        for (target, _), w in weights.items()
                    )
        finally:
            await system.close()

    arun(go())


def test_upstream_memory_comes_across_with_ids_and_confidence(memory: Path) -> None:
    expected = _expected()
    commits = int(git(memory, "rev-list", "--count", "HEAD"))
    result = arun(_import(memory, FIXTURE / "project"))
    assert sorted(result.imported) == sorted(b["id"] for b in expected["blocks"])
    assert result.skipped == [] and result.commit_id
    assert int(git(memory, "rev-list", "--count", "HEAD")) == commits + 1
    assert "Elfmem-Op: import" in git(memory, "log", "-1", "--format=%B")
    assert git(memory, "status", "--porcelain") == ""
    _check_against(memory, expected)
    # Some of it must be more than defaults, or the comparison above proves little.
    assert any(b["outcomes"] for b in expected["blocks"])
    assert any(b["status"] == "archived" for b in expected["blocks"])
    assert any(e["relation_type"] in RELATIONS for e in expected["edges"])
    assert any(e["relation_type"] not in RELATIONS for e in expected["edges"])


def test_reimport_changes_nothing_and_undo_takes_it_all_back(memory: Path) -> None:
    first = arun(_import(memory, FIXTURE / "project" / ".elfmem" / "agent.db"))
    tip = git(memory, "rev-parse", "HEAD")
    again = arun(_import(memory, FIXTURE / "project"))
    assert again.imported == [] and again.commit_id is None
    assert sorted(again.already_present) == sorted(first.imported)
    assert git(memory, "rev-parse", "HEAD") == tip

    async def undo() -> tuple[list[str], float]:
        system = await MemorySystem.from_config(memory)
        try:
            await system.undo()
            listing = await system.ls(status=None)
            return [b.id for b in listing.blocks], system._core.ledger.folded(
                first.imported[0]
            ).alpha
        finally:
            await system.close()

    left, alpha = arun(undo())
    assert not set(left) & set(first.imported)
    assert alpha == 0.5  # the carried prior and outcomes were cancelled with the commit


def test_a_path_that_is_no_upstream_memory_is_a_clear_error(memory: Path, tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="neither an upstream database nor a project"):
        arun(_import(memory, tmp_path))


@pytest.mark.soak
def test_a_fresh_memory_from_the_upstream_package_imports(memory: Path, tmp_path: Path) -> None:
    """Regenerates the fixture with the real upstream package, when its venv is there."""
    if not UPSTREAM_PYTHON.exists():
        pytest.skip(
            f"no upstream venv at {UPSTREAM_PYTHON}: python3 -m venv DIR && DIR/bin/pip install "
            "elfmem==0.20.0, then set ELFMEM_UPSTREAM_PYTHON=DIR/bin/python"
        )
    out = tmp_path / "fresh"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [str(UPSTREAM_PYTHON), str(SCRIPT), str(out)],
        check=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
    )
    expected = _expected(out)
    result = arun(_import(memory, out / "project"))
    assert sorted(result.imported) == sorted(b["id"] for b in expected["blocks"])
    _check_against(memory, expected)
    shutil.rmtree(out)


def test_a_credential_in_upstream_content_stops_the_import_before_any_write(
    memory: Path, tmp_path: Path
) -> None:
    db = tmp_path / "agent.db"
    shutil.copy(FIXTURE / "project" / ".elfmem" / "agent.db", db)
    victim = _expected()["blocks"][3]["id"]
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE blocks SET content = ? WHERE id = ?",
            ("The deploy key is AKIAIOSFODNN7EXAMPLE, keep it safe.", victim),
        )
    conn.close()
    tip = git(memory, "rev-parse", "HEAD")
    notes = git(memory, "for-each-ref", "refs/notes/")
    with pytest.raises(SecretRefused):
        arun(_import(memory, db))
    assert git(memory, "rev-parse", "HEAD") == tip
    assert git(memory, "for-each-ref", "refs/notes/") == notes


def test_import_from_upstream_on_the_command_line_speaks_json(memory: Path) -> None:
    from click.testing import CliRunner

    from elfmem.cli import cli

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(cli, ["-C", str(memory), *args])

    done = invoke("import", "--from-upstream", str(FIXTURE / "project"), "--json")
    assert done.exit_code == 0, done.output
    ids = {b["id"] for b in _expected()["blocks"]}
    listed = invoke("ls", "--status", "all", "--json")
    assert ids <= {b["id"] for b in json.loads(listed.stdout)["blocks"]}
    both = invoke("import", "x.jsonl", "--from-upstream", str(FIXTURE / "project"))
    assert both.exit_code == 2 and "takes no FILE" in both.output


def _upstream_copy(tmp_path: Path, agent_name: str = "Nova") -> tuple[Path, list[str]]:
    """The fixture project, with what a long-used upstream memory holds: share levels, the
    relations upstream has and we have no typed link for, and an agent name of its own."""
    project = tmp_path / "upstream"
    shutil.copytree(FIXTURE / "project", project)
    config = project / ".elfmem" / "config.yaml"
    config.write_text(config.read_text().replace("agent_name: elf", f"agent_name: {agent_name}"))
    ids = [b["id"] for b in _expected()["blocks"] if b["status"] == "active"]
    with sqlite3.connect(project / ".elfmem" / "agent.db") as conn:
        conn.execute("UPDATE blocks SET share = 'private'")
        conn.execute("UPDATE blocks SET share = 'public' WHERE id = ?", (ids[4],))
        conn.execute("UPDATE blocks SET share = 'peer' WHERE id = ?", (ids[5],))
        conn.execute("INSERT INTO block_tags VALUES (?, 'self/constitutional')", (ids[6],))
        for n, relation in enumerate(("elaborates", "validates", "predicts", "co_occurs")):
            a, b = sorted((ids[7 + n], ids[11 + n]))
            conn.execute(
                "INSERT INTO edges (from_id, to_id, weight, reinforcement_count, created_at, "
                "relation_type, origin) VALUES (?, ?, 0.7, 0, '2026-12-01', ?, ?)",
                (a, b, relation, "co_retrieval" if relation == "co_occurs" else "agent"),
            )
    conn.close()
    return project, ids


def test_upstream_share_levels_come_across_so_private_blocks_stay_private(
    memory: Path, tmp_path: Path
) -> None:
    project, ids = _upstream_copy(tmp_path)
    arun(_import(memory, project))

    async def exported(share: str) -> set[str]:
        system = await MemorySystem.from_config(memory)
        try:
            out = tmp_path / f"{share}.bundle"
            await system.export(share, out)
            return {json.loads(line).get("id", "") for line in out.read_text().splitlines()}
        finally:
            await system.close()

    def export(share: str) -> set[str]:
        return arun(exported(share))

    assert ids[4] in export("public") and ids[5] not in export("public")
    at_peer = export("peer")
    assert ids[4] in at_peer and ids[5] in at_peer
    private = set(ids) - {ids[4], ids[5]}
    assert not private & at_peer and not private & export("all")  # the constitution too


def test_upstream_relations_keep_their_names(memory: Path, tmp_path: Path) -> None:
    project, ids = _upstream_copy(tmp_path)
    arun(_import(memory, project))

    async def go() -> dict[str, set[str]]:
        system = await MemorySystem.from_config(memory)
        try:
            return {
                block: {rel for (_, rel) in system._core.ledger.folded(block).edges}
                for block in ids
            }
        finally:
            await system.close()

    relations = arun(go())
    for n, relation in enumerate(("elaborates", "validates", "predicts", "co_occurs")):
        assert relation in relations[ids[7 + n]] and relation in relations[ids[11 + n]]
    assert "related" not in set().union(*relations.values())


def test_a_link_whose_direction_upstream_did_not_record_is_never_written_reversed(
    memory: Path,
) -> None:
    # scripts/make_upstream_fixture.py: connect(ids[0], ids[1], "supports"): the first fact
    # supports the second; upstream stored the endpoints sorted, declared_by empty.
    first, second = (b["id"] for b in _expected()["blocks"][:2])
    result = arun(_import(memory, FIXTURE / "project"))

    async def relations(block: str) -> list[tuple[str, str]]:
        system = await MemorySystem.from_config(memory)
        try:
            return list((await system.show(block)).relations)
        finally:
            await system.close()

    assert ("supports", first) not in arun(relations(second))  # never the wrong way round
    assert any("direction" in line for line in result.dropped)


def test_the_upstream_agents_name_comes_across_and_the_output_says_what_is_dropped(
    memory: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from elfmem.cli import cli

    project, _ = _upstream_copy(tmp_path)
    done = CliRunner().invoke(cli, ["-C", str(memory), "import", "--from-upstream", str(project)])
    assert done.exit_code == 0, done.output
    assert "dropped" in done.output.lower() and "session" in done.output.lower()
    text = CliRunner().invoke(cli, ["-C", str(memory), "frame", "self", "--json"])
    assert "Nova" in json.loads(text.stdout)["text"]
    config = yaml.safe_load(git(memory, "show", "HEAD:.elfmem/config.yaml"))
    assert config["project"]["agent_name"] == "Nova"
