"""Files an MCP client asks for land only in the exports folder, and never replace one unasked.

A client is a model that may be confused or hostile: ``elfmem_export`` with ``output`` pointing at
``.git/config``, a hook, a memory file or anywhere outside the repository must write nothing. The
command line keeps writing where the person says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.mcp import build_server
from tests.conftest import arun, git


@pytest.fixture
def memory(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cwd = tmp_path / "cwd" / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)  # a path the server wrongly took as relative lands in tmp_path
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("Deploys freeze on Fridays", cue="planning a release"))
    arun(system.close())
    return repo


async def export(root: Path, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    async with Client(build_server(await MemorySystem.from_config(root))) as client:
        result = await client.call_tool("elfmem_export", {"share": "all", **arguments})
        body = json.loads(result.content[0].text)  # type: ignore[union-attr]
        return bool(result.is_error), body


def snapshot(root: Path) -> dict[str, bytes]:
    """The files a stray write could damage: the work tree, .elfmem, git's config and hooks."""
    gitdir = root / ".git"
    kept = [p for p in root.rglob("*") if gitdir not in p.parents]
    kept += [gitdir / "config", gitdir / "HEAD", *(gitdir / "hooks").rglob("*")]
    return {str(p.relative_to(root)): p.read_bytes() for p in kept if p.is_file()}


def test_an_export_lands_in_the_exports_folder(memory: Path) -> None:
    failed, body = arun(export(memory, output="ada.jsonl"))
    assert not failed, body
    written = memory / ".git" / "elfmem" / "exports" / "ada.jsonl"
    assert Path(body["path"]) == written and written.read_text().count("\n") >= 2


@pytest.mark.parametrize(
    "output",
    [
        "{outside}/stolen.jsonl",
        "{repo}/.git/config",
        "../../config",
        "../../hooks/pre-commit",
        "{repo}/.git/hooks/post-commit",
        "{repo}/.elfmem/memory/log/knowledge/2026-01.md",
        "../../../.elfmem/config.yaml",
        "{repo}/README.md",
        "",
        ".",
    ],
)
def test_an_export_outside_the_exports_folder_writes_nothing(
    memory: Path, tmp_path: Path, output: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    before = snapshot(memory)
    target = output.format(outside=outside, repo=memory)
    failed, body = arun(export(memory, output=target, overwrite=True))
    assert failed and body["type"] == "InvalidInput" and body["recovery"], body
    assert "exports" in body["recovery"]
    assert snapshot(memory) == before
    assert list(outside.iterdir()) == []
    git(memory, "status")  # the repository still works


def test_a_symlink_in_the_exports_folder_is_not_followed(memory: Path, tmp_path: Path) -> None:
    exports = memory / ".git" / "elfmem" / "exports"
    exports.mkdir(parents=True, exist_ok=True)
    (exports / "hook.jsonl").symlink_to(memory / ".git" / "config")
    (exports / "away").symlink_to(tmp_path)
    config = (memory / ".git" / "config").read_bytes()
    for output in ("hook.jsonl", "away/x.jsonl"):
        failed, body = arun(export(memory, output=output, overwrite=True))
        assert failed and body["type"] == "InvalidInput", body
    assert (memory / ".git" / "config").read_bytes() == config
    assert not (tmp_path / "x.jsonl").exists()


def test_an_export_never_replaces_a_file_unless_asked(memory: Path) -> None:
    failed, _ = arun(export(memory, output="ada.jsonl"))
    assert not failed
    written = memory / ".git" / "elfmem" / "exports" / "ada.jsonl"
    written.write_text("kept\n")
    failed, body = arun(export(memory, output="ada.jsonl"))
    assert failed and "overwrite" in body["recovery"], body
    assert written.read_text() == "kept\n"
    failed, body = arun(export(memory, output="ada.jsonl", overwrite=True))
    assert not failed, body
    assert written.read_text() != "kept\n"


def test_the_exports_folder_is_configurable(memory: Path) -> None:
    config = memory / ".elfmem" / "config.yaml"
    config.write_text(config.read_text() + "mcp:\n  exports: shared/bundles\n")
    failed, body = arun(export(memory, output="ada.jsonl"))
    assert not failed, body
    assert (memory / "shared" / "bundles" / "ada.jsonl").exists()


@pytest.mark.parametrize("folder", [".git/hooks", ".git", ".elfmem/memory", ".elfmem"])
def test_an_exports_folder_inside_git_or_memory_is_refused(memory: Path, folder: str) -> None:
    config = memory / ".elfmem" / "config.yaml"
    config.write_text(config.read_text() + f"mcp:\n  exports: {folder}\n")
    before = snapshot(memory)
    failed, body = arun(export(memory, output="pre-commit", overwrite=True))
    assert failed and body["type"] == "ConfigError", body
    assert snapshot(memory) == before


def test_the_command_line_still_writes_where_the_person_says(memory: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine.jsonl"
    for _ in range(2):  # and replaces its own earlier file, as before
        result = CliRunner().invoke(cli, ["-C", str(memory), "export", "--share", "all", "-o",
                                          str(out)])  # fmt: skip
        assert result.exit_code == 0, result.stderr
    assert out.read_text().count("\n") >= 2
