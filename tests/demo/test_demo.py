"""``elfmem demo`` runs to completion, labels every step, and keeps the folder it was given."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from elfmem.cli import cli
from elfmem.demo import STEPS, self_excerpt
from tests.conftest import git


def demo(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["demo", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_demo_labels_every_step_in_order_and_keeps_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "tour"
    code, out, err = demo(str(folder))
    assert code == 0, err
    labels = re.findall(r"^== (\d+)\. ([^:]+):", out, re.MULTILINE)
    assert labels == [(str(n), step) for n, step in enumerate(STEPS, 1)]
    assert {"Capture", "Consolidate", "Recall", "A correction", "An outcome", "Undo"} <= set(STEPS)
    assert {"Time travel", "The git log", "The notes"} <= set(STEPS)
    assert f"kept in {folder}" in out
    assert f"elfmem -C {folder} recall" in out
    log = git(folder, "log", "--format=%s")
    assert "init: memory for Ada" in log and "Revert" in log and "dream:" in log
    assert git(folder, "notes", "--ref=elfmem", "list")
    assert git(folder, "status", "--porcelain", "--untracked-files=no") == ""


def test_the_correction_and_time_travel_show_what_recall_returned(tmp_path: Path) -> None:
    code, out, _ = demo(str(tmp_path / "tour"))
    assert code == 0
    correction = out.split("== 4.")[1].split("== 5.")[0]
    assert "<- the correction" in correction and "supersedes:: [[" in correction
    past = out.split("== 7.")[1].split("== 8.")[0]
    assert "pgbouncer above 200" not in past  # the memory as it was before the correction


def test_without_a_folder_the_demo_says_its_temporary_folder_is_deleted() -> None:
    code, out, err = demo()
    assert code == 0, err
    assert "deleted now" in out and "elfmem demo ~/elfmem-demo" in out
    assert len(re.findall(r"^== \d+\. ", out, re.MULTILINE)) == len(STEPS)


def test_a_folder_with_files_in_it_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out, err = demo(str(tmp_path))
    assert code != 0 and out == ""
    assert "Error:" in err and "not empty" in err and "Recovery:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_folder_inside_a_git_repository_is_refused(repo: Path) -> None:
    before = git(repo, "rev-parse", "HEAD")
    code, _, err = demo(str(repo / "sub" / "tour"))
    assert code != 0
    assert "inside the git repository" in err and "Recovery:" in err
    assert not (repo / "sub").exists()
    assert git(repo, "rev-parse", "HEAD") == before


def test_the_self_text_is_cut_between_paragraphs_never_inside_one() -> None:
    sentence = "A whole sentence that must not be cut anywhere in its middle."
    text = "\n\n".join(["## You are Ada", sentence * 4, sentence * 4, sentence * 4])
    out = self_excerpt(text, limit=300)
    kept = out.split("\n\n")
    assert kept[:-1] == ["## You are Ada", sentence * 4]
    assert kept[-1].startswith("(2 more paragraphs")
    assert self_excerpt("short", limit=300) == "short"
