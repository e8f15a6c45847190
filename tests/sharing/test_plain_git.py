"""Plain git keeps working once elfmem is set up: push, pull and clone, with the real binary."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git
from tests.sharing.clones import bare, block_ids, clone, folded, outcome, project, remember, rev
from tests.sharing.helpers import dream

NOTES = "refs/notes/elfmem"


def _init(root: Path, ref: str | None = None, hooks: bool = True) -> None:
    async def go() -> None:
        system, _ = await MemorySystem.init(root, ref=ref)
        try:
            if hooks:
                await system.hooks_install()
        finally:
            await system.close()

    arun(go())


def _remote_refs(remote: Path) -> dict[str, str]:
    lines = git(remote, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    return dict(line.split(" ", 1) for line in lines)


def test_setup_never_changes_what_a_plain_push_sends(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    before = git(a, "push", "--dry-run", "--porcelain", "origin")
    _init(a)
    assert git(a, "config", "--get-all", "remote.origin.push", check=False) == ""
    specs = git(a, "config", "--get-all", "remote.origin.fetch").split()
    assert f"+{NOTES}*:refs/notes/remotes/origin/elfmem*" in specs
    assert not any(s.lstrip("+").startswith(f"{NOTES}:{NOTES}") for s in specs)  # no forced fetch
    after = git(a, "push", "--dry-run", "--porcelain", "origin").replace(rev(a, "main"), "X")
    assert [ln.split("\t")[1] for ln in after.splitlines() if "\t" in ln] == [
        ln.split("\t")[1] for ln in before.splitlines() if "\t" in ln
    ]  # the same refs as before: refs/heads/main only


def test_pre_push_carries_the_notes_and_a_clone_gets_the_ledger(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a)
    ids = remember(a, "Invoices are generated on the first of the month.")
    dream(a)
    outcome(a, ids, 1.0)
    git(a, "push", "-q", "origin", "main")  # the user's own push; the hook adds the notes
    refs = _remote_refs(remote)
    assert refs[NOTES] == rev(a, NOTES)
    assert refs["refs/heads/main"] == rev(a, "main")
    assert set(refs) == {"refs/heads/main", NOTES}
    b = clone(remote, tmp_path / "b")
    assert block_ids(b) == set(ids)  # the first elfmem command fetched the ledger
    assert folded(b, ids) == folded(a, ids)
    assert folded(b, ids)[ids[0]][0] > 1.0


def test_a_dry_run_or_a_rejected_push_sends_no_notes_and_the_next_good_push_does(
    tmp_path: Path,
) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a)
    remember(a, "The nightly job compacts the audit log.")
    git(a, "push", "-q", "--dry-run", "origin", "main")
    assert NOTES not in _remote_refs(remote)  # a dry run sends nothing
    hook = remote / "hooks" / "update"
    hook.write_text('#!/bin/sh\ncase "$1" in refs/heads/*) echo frozen >&2; exit 1;; esac\n')
    hook.chmod(0o755)
    pushed = git(a, "push", "-q", "origin", "main", check=False)
    assert rev(remote, "main") != rev(a, "main")  # the remote refused the branch
    assert NOTES not in _remote_refs(remote), pushed  # so the notes stay here too
    hook.unlink()
    git(a, "push", "-q", "origin", "main")
    refs = _remote_refs(remote)
    assert refs["refs/heads/main"] == rev(a, "main") and refs[NOTES] == rev(a, NOTES)
    git(a, "fetch", "-q", "origin")  # a fetch is not a push: nothing more goes out
    assert _remote_refs(remote) == refs


def test_plain_pull_never_fails_on_notes_and_drops_none(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a, hooks=False)
    git(a, "push", "-q", "origin", "main")
    b = clone(remote, tmp_path / "b")
    _init(b, hooks=False)  # b knows elfmem: fetch refspec for notes into a tracking ref
    git(b, "pull", "-q")  # the remote has no notes at all yet: still fine
    ids_a = remember(a, "The CDN purges on every deploy.")
    git(a, "push", "-q", "origin", "main", NOTES)
    ids_b = remember(b, "Feature branches are squashed on merge.")
    local = rev(b, NOTES)
    git(b, "pull", "-q", "--no-rebase", "--no-edit")  # diverged code and diverged notes
    assert rev(b, NOTES) == local  # plain git left the local ledger alone
    assert rev(b, "refs/notes/remotes/origin/elfmem") == rev(a, NOTES)
    states = folded(b, [*ids_a, *ids_b])  # the next elfmem command merges by union
    assert all(s[2] > 0 for s in states.values())
    parents = git(b, "log", "-1", "--format=%P", NOTES).split()
    assert sorted(parents) == sorted([local, rev(a, NOTES)])


def test_post_merge_hook_merges_fetched_notes(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a)
    git(a, "push", "-q", "origin", "main")
    b = clone(remote, tmp_path / "b")
    _init(b)
    ids = remember(a, "Retries back off exponentially up to a minute.")
    git(a, "push", "-q", "origin", "main")  # pre-push sends a's notes too
    git(b, "pull", "-q", "--no-rebase", "--no-edit")  # post-merge runs elfmem's hook
    shown = git(b, "notes", "--ref=elfmem", "list").split()
    from elfmem.store.notes import anchor_for_block

    assert anchor_for_block(ids[0]) in shown  # merged by the hook, before any elfmem command


def test_a_clone_of_a_ref_mode_memory_finds_its_memory(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a, ref="elfmem", hooks=False)
    ids = remember(a, "Schema migrations run before the app starts.")
    git(a, "push", "-q", "origin", "refs/heads/elfmem", NOTES)
    b = clone(remote, tmp_path / "b")
    assert block_ids(b) == set(ids)
    assert git(b, "config", "elfmem.ref").strip() == "refs/heads/elfmem"
    assert not (b / ".elfmem").exists()
    assert rev(b, "refs/heads/elfmem") == rev(a, "refs/heads/elfmem")
    more = remember(a, "The app reads config from the environment only.")
    git(a, "push", "-q", "origin", "refs/heads/elfmem")
    git(b, "fetch", "-q")  # plain fetch; the next command fast-forwards the memory ref
    assert block_ids(b) == {*ids, *more}
