"""What a newcomer meets in the first hour: each message names the step that works.

Every test drives the real CLI (click's runner) on a real repository and asserts the words and
exit code a person sees, then checks git itself where the fix writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git


def run(repo: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def memory(repo: Path) -> Path:
    code, _, err = run(repo, "init", "--name", "Ada")
    assert code == 0, err
    return repo


def test_remember_dash_reads_one_block_from_stdin(memory: Path) -> None:
    code, out, err = run(memory, "remember", "-", input="Piped text about pgbouncer pools\n")
    assert code == 0, err
    code, shown, _ = run(memory, "show", out.strip(), "--json")
    assert json.loads(shown)["content"] == "Piped text about pgbouncer pools"
    _, helptext, _ = run(memory, "remember", "--help")
    assert "stdin" in helptext and "`-`" in helptext


def test_undo_at_the_start_of_history_says_nothing_is_left_to_undo(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "fresh", "init", "--name", "Ada")
    assert code == 0, err
    code, _, err = run(tmp_path / "fresh", "undo")
    assert "Nothing left to undo" in err and "single-parent" not in err
    assert "Recovery:" in err


def test_outside_a_repository_a_command_exits_3_with_the_recovery(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, "status")
    assert code == 3, err
    assert f"No git repository contains {tmp_path}" in err and "elfmem init" in err


def test_dash_c_to_a_missing_folder_says_the_folder_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, _, err = run(missing, "status")
    assert code == 3, err
    assert f"The folder {missing} does not exist" in err and "Recovery:" in err


def test_doctor_without_a_config_says_defaults_apply_and_passes(repo: Path) -> None:
    assert run(repo, "remember", "A fact before any init")[0] == 0
    (repo / ".elfmem" / "config.yaml").unlink(missing_ok=True)
    code, out, _ = run(repo, "doctor", "--json")
    config = next(c for c in json.loads(out)["checks"] if c["name"] == "config")
    assert config["ok"] and "defaults" in config["detail"]
    assert code == 0


def test_the_first_remember_writes_the_default_config_in_the_same_commit(repo: Path) -> None:
    code, _, err = run(repo, "remember", "Postgres needs pgbouncer above 100 clients")
    assert code == 0, err
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert ".elfmem/config.yaml" in changed
    assert "config" in err and ".elfmem/config.yaml" in err
    assert run(repo, "doctor")[0] == 0


def test_dream_counts_one_block_in_the_singular(memory: Path) -> None:
    run(memory, "remember", "Only one fact waits in the inbox")
    code, out, _ = run(memory, "dream", "--no-llm")
    assert code == 0 and "Dreamed over 1 block " in out, out


def test_no_help_text_shows_doubled_backticks() -> None:
    def walk(command: click.Command, path: list[str]) -> list[str]:
        ctx = click.Context(command, info_name=" ".join(path))
        found = [" ".join(path)] if "``" in command.get_help(ctx) else []
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                found += walk(sub, [*path, name])
        return found

    assert walk(cli, ["elfmem"]) == []


def test_a_backup_written_inside_the_work_tree_leaves_git_status_clean(memory: Path) -> None:
    code, out, err = run(memory, "backup", "-o", str(memory / "mem.bundle"))
    assert code == 0, err
    assert (memory / "mem.bundle").exists()
    assert git(memory, "status", "--porcelain") == ""
    assert ".git/info/exclude" in out


def test_sync_to_a_missing_remote_names_git_s_reason(memory: Path, tmp_path: Path) -> None:
    code, _, err = run(memory, "sync", str(tmp_path / "nope.git"))
    assert code == 8, err
    assert "does not appear to be a git repository" in err
    assert "and the repository exists" not in err


def test_an_outcome_on_an_inbox_block_says_run_dream_then_send_it_again(memory: Path) -> None:
    _, out, _ = run(memory, "remember", "The API rate-limits at 100 req/min per key")
    block_id = out.strip()
    code, out, err = run(memory, "outcome", block_id, "1.0")
    assert code == 0
    assert "still in the inbox" in err and "elfmem dream" in err and "again" in err
    code, out, _ = run(memory, "outcome", block_id, "1.0", "--json")
    reply = json.loads(out)
    assert reply["skipped"][0]["reason"] == "pending_inbox" and "elfmem dream" in reply["recovery"]
    run(memory, "dream", "--no-llm")
    code, out, _ = run(memory, "outcome", block_id, "1.0", "--json")
    assert [u["id"] for u in json.loads(out)["updated"]] == [block_id]


def test_the_human_sync_line_lists_the_merge_events_json_lists() -> None:
    from elfmem.sharing.sync import SyncResult

    event = "block 0123456789abcdef: edited on both sides; kept both versions"
    result = SyncResult(remote="origin", mode="ref", memory_in="merge", events=[event])
    assert event in result.summary and result.to_dict()["events"] == [event]


def test_init_name_renames_everywhere_in_one_commit_that_undo_reverts(repo: Path) -> None:
    assert run(repo, "init", "--seed", "--name", "Ada")[0] == 0
    before = git(repo, "rev-parse", "HEAD").strip()
    code, _, err = run(repo, "init", "--name", "Bob")
    assert code == 0, err
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    _, frame, _ = run(repo, "recall", "who am I", "--frame", "self")
    assert "Bob" in frame and "Ada" not in frame
    assert "Ada" not in (repo / ".elfmem" / "memory" / "self.md").read_text()
    assert "agent_name: Bob" in (repo / ".elfmem" / "config.yaml").read_text()
    code, _, err = run(repo, "undo")
    assert code == 0, err
    _, frame, _ = run(repo, "recall", "who am I", "--frame", "self")
    assert "Ada" in frame and "Bob" not in frame
    assert "agent_name: Ada" in (repo / ".elfmem" / "config.yaml").read_text()
    assert git(repo, "status", "--porcelain") == ""


def test_recall_on_an_empty_memory_says_what_fills_it(repo: Path) -> None:
    code, out, err = run(repo, "recall", "database scaling")
    assert code == 0 and "Nothing in memory matched" in out
    assert "no blocks yet" in err and "elfmem remember" in err
