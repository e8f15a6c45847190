"""The CLI: one call into the API per command, --json everywhere, errors with recovery and exit
codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git


def run(repo: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_the_issue_walkthrough(repo: Path) -> None:
    code, out, err = run(repo, "init", "--seed", "--name", "Ada")
    assert code == 0, err
    assert '"mcpServers"' in out and str(repo) in out
    code, out, _ = run(
        repo,
        "remember",
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "--cue",
        "choosing a connection pooling strategy",
        "--tags",
        "db/postgres",
    )
    assert code == 0
    block_id = out.strip()
    code, out, _ = run(repo, "ls", "--json")
    listed = json.loads(out)
    assert block_id in [b["id"] for b in listed["blocks"]] and listed["count"] == 11
    code, out, _ = run(
        repo,
        "edit",
        block_id,
        "Postgres needs pgbouncer above 100 concurrent clients",
        "--cue",
        "pooling",
        "--json",
    )
    assert code == 0 and json.loads(out)["changed"]
    assert run(repo, "forget", block_id)[0] == 0
    code, out, _ = run(repo, "undo", "--json")
    assert code == 0 and json.loads(out)["block_ids"] == [block_id]
    code, out, _ = run(repo, "show", block_id, "--json")
    assert json.loads(out)["content"] == "Postgres needs pgbouncer above 100 concurrent clients"
    code, out, _ = run(repo, "ledger", block_id, "--json")
    assert [e["kind"] for e in json.loads(out)["events"]][:3] == ["birth", "edit", "forget"]
    code, out, _ = run(repo, "history", block_id, "--json")
    assert [c["op"] for c in json.loads(out)["commits"]] == ["undo", "forget", "edit", "remember"]
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert subjects[0].startswith('Revert "forget:')
    assert git(repo, "status", "--porcelain") == ""


def test_a_duplicate_remember_prints_the_existing_id_and_says_so_on_stderr(repo: Path) -> None:
    assert run(repo, "init", "--name", "Ada")[0] == 0
    code, first, _ = run(repo, "remember", "The build cache lives in /var/cache/ci")
    assert code == 0
    head = git(repo, "rev-parse", "HEAD")
    code, out, err = run(repo, "remember", "The build cache lives in /var/cache/ci")
    assert code == 0
    assert out == first  # only the id, as for a new block
    assert err.strip() == f"Duplicate of {first.strip()}; nothing written."
    assert git(repo, "rev-parse", "HEAD") == head


def test_remember_when_writes_the_date_and_an_unreadable_one_exits_2(repo: Path) -> None:
    assert run(repo, "init", "--name", "Ada")[0] == 0
    code, out, err = run(repo, "remember", "We moved to Lisbon", "--when", "8 May 2023", "--json")
    assert code == 0, err
    block_id = json.loads(out)["block_id"]
    assert f"id: {block_id}" in git(repo, "grep", "-h", "when: 2023-05-08", "HEAD", "--", ".")
    head = git(repo, "rev-parse", "HEAD")
    code, out, _ = run(repo, "remember", "We moved again", "--when", "someday", "--json")
    assert code == 2
    assert "2023-05-08" in json.loads(out)["recovery"]
    assert git(repo, "rev-parse", "HEAD") == head
    code, out, _ = run(repo, "recall", "When did we move to Lisbon?")
    assert code == 0 and "(said: 2023-05-08)" in out


def test_dream_recall_and_index_commands(repo: Path, tmp_path: Path) -> None:
    assert run(repo, "init", "--seed")[0] == 0
    run(
        repo,
        "remember",
        "Shard the events table by tenant once it passes 500 million rows",
        "--cue",
        "database scaling",
    )
    code, out, _ = run(repo, "dream", "--no-llm", "--json")
    assert code == 0 and len(json.loads(out)["promoted"]) == 1
    code, out, _ = run(
        repo, "recall", "database scaling", "--frame", "attention", "--top-k", "8", "--json"
    )
    data = json.loads(out)
    assert code == 0 and "Shard the events table" in data["blocks"][0]["content"]
    assert set(data["blocks"][0]) >= {
        "id",
        "content",
        "tags",
        "score",
        "similarity",
        "confidence",
        "recency",
        "centrality",
        "reinforcement",
    }
    code, out, _ = run(repo, "recall", "who am I", "--frame", "self")
    assert code == 0 and out.startswith("## You are elf")
    code, out, _ = run(repo, "recall", "database scaling", "--at", "HEAD~1", "--json")
    at_inbox = json.loads(out)["blocks"]  # before the dream: found in the inbox, marked so
    assert code == 0 and [b["status"] for b in at_inbox] == ["inbox"] and at_inbox[0]["note"]
    assert run(repo, "doctor", "--frames")[0] == 0
    assert run(repo, "index", "check")[0] == 0
    assert run(repo, "index", "status", "--json")[0] == 0
    code, out, _ = run(repo, "index", "rebuild", "--to", str(tmp_path / "x.db"), "--json")
    assert code == 0 and json.loads(out)["blocks"] == 11
    assert run(repo, "index", "parity")[0] == 0


def test_batch_from_file_and_stdin_is_one_commit_each(repo: Path, tmp_path: Path) -> None:
    run(repo, "init")
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        "\n".join(json.dumps({"content": f"Batch fact {i}", "tags": ["b"]}) for i in range(5))
    )
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    assert run(repo, "remember", "--batch", str(batch))[0] == 0
    lines = "\n".join(json.dumps({"content": f"Stdin fact {i}"}) for i in range(3))
    code, out, _ = run(repo, "remember", "--batch", "-", "--json", input=lines)
    assert code == 0 and len(json.loads(out)["created"]) == 3
    assert int(git(repo, "rev-list", "--count", "HEAD")) == before + 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("remember", ""), "empty"),
        (("edit", "0123456789abcdef", "new text"), "No block has id"),
        (("forget", "0123456789abcdef"), "No block has id"),
        (("remember", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCD"), "GitHub token"),
        (("recall", "x", "--frame", "nonsense"), "unknown frame"),
        (("undo", "HEAD~1"), "not made by elfmem"),
    ],
)
def test_errors_print_error_and_recovery_and_exit_nonzero(
    repo: Path, args: tuple[str, ...], needle: str
) -> None:
    run(repo, "init")
    head = git(repo, "rev-parse", "HEAD")
    code, out, err = run(repo, *args)
    assert code != 0
    assert needle in err and "Recovery:" in err
    assert git(repo, "rev-parse", "HEAD") == head
    code, out, _ = run(repo, *args, "--json")
    assert code != 0 and set(json.loads(out)) >= {"error", "recovery"}


def test_bad_batch_line_names_the_line(repo: Path, tmp_path: Path) -> None:
    run(repo, "init")
    batch = tmp_path / "bad.jsonl"
    batch.write_text('{"content": "ok"}\nnot json\n')
    code, _, err = run(repo, "remember", "--batch", str(batch))
    assert code != 0 and "bad.jsonl:2" in err


def test_git_elfmem_runs_as_a_git_subcommand(repo: Path) -> None:
    exe = shutil.which("git-elfmem") or str(Path(sys.executable).with_name("git-elfmem"))
    if not Path(exe).exists():
        pytest.skip(
            "git-elfmem is not installed in this environment (pip install -e . installs it)"
        )
    env = {**os.environ, "PATH": f"{Path(exe).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        ["git", "elfmem", "init", "--name", "Ada"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Initialised memory for Ada" in out.stdout
    out = subprocess.run(
        ["git", "elfmem", "remember", "via git", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["status"] == "created"
