"""``doctor --secrets``: credentials already in history are found by path, commit and kind, the
purge is explained, and nothing is rewritten."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git

TAIL = "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"
GHP = "ghp_" + TAIL[:36]
GLPAT = "glpat-" + TAIL[:20]


def cli_run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def test_a_clean_history_passes(repo: Path) -> None:
    assert cli_run(repo, "init", "--seed")[0] == 0
    assert cli_run(repo, "remember", "Redis needs maxmemory set")[0] == 0
    code, out, err = cli_run(repo, "doctor", "--secrets", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "ok": True,
        "findings": [],
        "purge": [],
        "summary": json.loads(out)["summary"],
    }


def test_secrets_anywhere_in_history_are_found_and_the_purge_explained(repo: Path) -> None:
    assert cli_run(repo, "init")[0] == 0
    code, out, _ = cli_run(repo, "remember", f"ci uses {GHP}", "--allow-secret")
    assert code == 0
    introduced = git(repo, "rev-parse", "HEAD").strip()
    bucket = git(repo, "show", "--name-only", "--format=", "HEAD").strip()
    git(repo, "rm", "-q", bucket)  # gone from the tip, still in history
    git(repo, "commit", "-q", "--no-verify", "-m", "remove it")
    git(repo, "notes", "--ref=elfmem", "add", "-f", "-m", f"source {GLPAT}", "HEAD")
    before = refs(repo)

    code, out, err = cli_run(repo, "doctor", "--secrets", "--json")
    assert code == 1, err
    report = json.loads(out)
    assert not report["ok"]
    found = {(f["kind"], f["path"], f["ref"]) for f in report["findings"]}
    assert ("GitHub token", bucket, "refs/heads/main") in found
    in_bucket = [f for f in report["findings"] if f["path"] == bucket]
    assert sorted(f["line"] for f in in_bucket) == [1, 4]  # the heading and the body
    assert {f["commit"] for f in in_bucket} == {introduced}
    assert any(
        f["kind"] == "GitLab token" and f["ref"] == "refs/notes/elfmem" for f in report["findings"]
    )
    assert GHP not in out and GLPAT not in out
    assert "git filter-repo" in out and "bfg" in out and "refs/notes/elfmem" in out
    assert refs(repo) == before  # reported, never rewritten

    code, text, _ = cli_run(repo, "doctor", "--secrets")
    assert code == 1
    assert f"{bucket}:4: GitHub token (since commit {introduced[:12]}" in text
    assert "Rotate the credential" in text
