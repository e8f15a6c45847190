"""The merge driver under the plain git binary: merge, pull, rebase and cherry-pick.

Every scenario is two lines of work that both write the same bucket; without the driver each
ends in conflict markers. Nothing here installs elfmem's hooks unless it says so, so
the reconciliation seen is the one the next elfmem command runs.
"""

from __future__ import annotations

from pathlib import Path

from elfmem.block.layout import MEMORY_DIR
from elfmem.care.doctor import Check
from tests.conftest import git
from tests.sharing.helpers import (
    dream,
    edit,
    files_on_disk,
    forget,
    ids_once,
    init,
    listed,
    remember,
    with_memory,
)


def _fork(repo: Path) -> list[str]:
    init(repo)
    base = remember(repo, "The build server is ci-1", "Deploys happen on Tuesdays")
    git(repo, "checkout", "-q", "-b", "other")
    return base


def test_init_registers_the_driver_in_config_and_gitattributes(repo: Path) -> None:
    init(repo)
    assert "merge.elfmem.driver" in git(repo, "config", "--get-regexp", "merge")
    assert "-m elfmem.sharing.driver %O %A %B %P" in git(repo, "config", "merge.elfmem.driver")
    attr = git(repo, "check-attr", "merge", f"{MEMORY_DIR}/log/knowledge/2026-01.md")
    assert attr.strip().endswith("merge: elfmem")


def test_git_merge_of_two_branches_that_wrote_one_bucket_keeps_every_block(repo: Path) -> None:
    base = _fork(repo)
    theirs = remember(repo, "Redis eviction is allkeys-lru")
    edit(repo, base[0], "The build server is ci-2")
    git(repo, "checkout", "-q", "main")
    ours = remember(repo, "Kafka retention is seven days")
    edit(repo, base[0], "The build server is ci-3")
    git(repo, "merge", "-q", "--no-edit", "other")
    assert git(repo, "status", "--porcelain") == ""
    contents = set(listed(repo).values())
    assert {"Redis eviction is allkeys-lru", "Kafka retention is seven days"} <= contents
    assert {"The build server is ci-2", "The build server is ci-3"} <= contents
    assert {base[1], *theirs, *ours} <= ids_once(repo)


def test_git_rebase_replays_memory_commits_without_conflicts(repo: Path) -> None:
    _fork(repo)
    theirs = remember(repo, "Theirs one", "Theirs two")
    git(repo, "checkout", "-q", "main")
    ours = remember(repo, "Ours one")
    git(repo, "checkout", "-q", "other")
    git(repo, "rebase", "-q", "main")
    assert set(theirs + ours) <= ids_once(repo)
    assert git(repo, "log", "--merges", "--oneline") == ""


def test_git_cherry_pick_of_a_memory_commit_merges_by_block(repo: Path) -> None:
    _fork(repo)
    [picked] = remember(repo, "Picked fact")
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    [ours] = remember(repo, "Ours fact")
    git(repo, "cherry-pick", commit)
    assert {picked, ours} <= ids_once(repo)


def test_git_pull_between_two_clones_through_a_bare_remote(tmp_path: Path, repo: Path) -> None:
    init(repo)
    remember(repo, "Shared fact")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    with_memory(other, lambda s: s.hooks_install())
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main")
    mine = remember(repo, "Mine one", "Mine two")
    yours = remember(other, "Yours one", "Yours two")
    git(other, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase", "--no-edit")
    git(repo, "push", "-q")
    git(other, "pull", "-q", "--no-rebase", "--no-edit")
    assert set(mine + yours) <= ids_once(repo) == ids_once(other)
    assert git(repo, "rev-parse", "HEAD:.elfmem") == git(other, "rev-parse", "HEAD:.elfmem")


def test_promoted_on_one_side_and_edited_on_the_other_ends_once_with_the_edit(
    repo: Path,
) -> None:
    base = _fork(repo)
    edit(repo, base[0], "The build server is ci-9")
    git(repo, "checkout", "-q", "main")
    dream(repo)  # moves both blocks from log/ to notes/
    git(repo, "merge", "-q", "--no-edit", "other")
    assert listed(repo)[base[0]] == "The build server is ci-9"  # the next command reconciles
    where = [p for p, ids in files_on_disk(repo).items() if base[0] in ids]
    assert where == ["notes/knowledge/" + where[0].rsplit("/", 1)[1]]
    assert "Elfmem-Op: reconcile" in git(repo, "log", "-1", "--format=%B")


def test_forgotten_on_one_side_and_edited_on_the_other_stays_with_the_edit(repo: Path) -> None:
    base = _fork(repo)
    edit(repo, base[0], "The build server is ci-5")
    git(repo, "checkout", "-q", "main")
    forget(repo, base[0])
    git(repo, "merge", "-q", "--no-edit", "other")
    assert listed(repo)[base[0]] == "The build server is ci-5"
    [where] = [p for p, ids in files_on_disk(repo).items() if base[0] in ids]
    assert not where.startswith("archive/")


def test_a_file_that_is_not_a_bucket_gets_git_text_merge(repo: Path) -> None:
    init(repo)
    self_md = repo / MEMORY_DIR / "self.md"
    git(repo, "checkout", "-q", "-b", "other")
    self_md.write_text(self_md.read_text() + "\nTheirs line.\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    self_md.write_text(self_md.read_text() + "\nOurs line.\n")
    git(repo, "commit", "-q", "-am", "ours")
    git(repo, "merge", "-q", "--no-edit", "other", check=False)
    assert "<<<<<<<" in self_md.read_text()  # a person decides the constitution


def test_with_hooks_installed_the_post_merge_hook_reconciles_at_once(repo: Path) -> None:
    base = _fork(repo)
    with_memory(repo, lambda s: s.hooks_install())
    edit(repo, base[0], "The build server is ci-7")
    git(repo, "checkout", "-q", "main")
    dream(repo)
    git(repo, "merge", "-q", "--no-edit", "other")
    assert "Elfmem-Op: reconcile" in git(repo, "log", "-1", "--format=%B")  # no elfmem command
    assert git(repo, "status", "--porcelain") == ""
    assert base[0] in ids_once(repo)


def test_rebasing_an_edit_onto_a_promotion_ends_once_with_the_edit(repo: Path) -> None:
    base = _fork(repo)
    edit(repo, base[0], "The build server is ci-8")
    git(repo, "checkout", "-q", "main")
    dream(repo)
    git(repo, "checkout", "-q", "other")
    git(repo, "rebase", "-q", "main")
    assert listed(repo)[base[0]] == "The build server is ci-8"  # the next command reconciles
    [where] = [p for p, ids in files_on_disk(repo).items() if base[0] in ids]
    assert where.startswith("notes/")
    assert "Elfmem-Op: reconcile" in git(repo, "log", "-1", "--format=%B")


def test_doctor_says_whether_plain_git_merges_memory_by_block_id(repo: Path) -> None:
    init(repo)

    def check() -> Check:
        result = with_memory(repo, lambda s: s.doctor())
        [found] = [c for c in result.checks if c.name == "merge driver"]
        return found

    assert check().ok and "registered" in check().detail
    git(repo, "config", "merge.elfmem.driver", "/gone/venv/bin/python -m elfmem.sharing.driver")
    gone = check()
    assert not gone.ok and "/gone/venv/bin/python" in gone.detail and "hooks install" in gone.fix
    git(repo, "config", "--unset", "merge.elfmem.driver")
    assert check().ok and "not registered" in check().detail
