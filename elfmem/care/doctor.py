"""doctor: paths, config, git state, hooks, ledger, loose objects, index freshness, the model,
keys (seed §9).

Each check says what it found and, when something is wrong, the command that fixes it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elfmem.block.layout import MEMORY_DIR
from elfmem.care import hooks, maintenance
from elfmem.care.status import inbox_backlog
from elfmem.config import CONFIG_PATH
from elfmem.errors import ElfmemError
from elfmem.index import queries
from elfmem.index.embedding import backlog
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store.repo import in_progress


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class DoctorResult(Result):
    checks: list[Check] = field(default_factory=list)
    """Each check as ``{name, ok, detail, fix}``; ``fix`` is what to run when ``ok`` is false."""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def summary(self) -> str:
        lines = [
            f"{'ok  ' if c.ok else 'FAIL'} {c.name:<12} {c.detail}"
            + ("" if c.ok else f"\n     fix: {c.fix}")
            for c in self.checks
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks], "summary": self.summary}


def _guard(name: str, probe: Callable[[], Check]) -> Check:
    try:
        return probe()
    except ElfmemError as exc:
        return Check(name, False, exc.message, exc.recovery)
    except OSError as exc:
        return Check(name, False, str(exc), "Check the path and permissions.")


def _present(core: Core, path: str) -> bool:
    """On disk in a work tree; in the memory ref's tree in a bare repository or ref mode (there
    is no disk copy, and reads take the committed one)."""
    wd = core.store.memory_workdir
    if wd is not None:
        return (wd / path).exists()
    if path == MEMORY_DIR:
        return core.store.memory_tree_oid() is not None
    return core.store.committed_file(path) is not None


def _config(core: Core) -> Check:
    """No config file is a working state (every setting has its default), so it passes."""
    path = str(core.store.root / CONFIG_PATH)
    if _present(core, CONFIG_PATH):
        return Check("config", True, path)
    return Check(
        "config",
        True,
        f"{path} absent: defaults apply (`elfmem init` writes them out to edit)",
    )


def _memory(core: Core) -> Check:
    """Missing memory is made by ``init``, unless another branch holds it (an empty clone)."""
    path = str(core.store.root / MEMORY_DIR)
    if _present(core, MEMORY_DIR):
        return Check("memory", True, path)
    branch = core.store.memory_elsewhere()
    if branch is None:
        return Check("memory", False, path, "elfmem init")
    return Check(
        "memory",
        False,
        f"{path}: not in this checkout; branch {branch} holds it",
        f"git switch {branch}",
    )


def _where(core: Core) -> str:
    if core.store.ref_mode:
        return f"memory on its own ref {core.store.branch}; code branches untouched"
    return f"branch {core.store.branch}"


_FINISH = {
    "a merge": "resolve the conflicts (`git status` lists them), `git add` them and `git commit`; "
    "or `git merge --abort` to go back",
    "a rebase": "resolve the conflicts (`git status` lists them), `git add` them and "
    "`git rebase --continue`; or `git rebase --abort` to go back",
    "a cherry-pick": "resolve the conflicts, `git add` them and `git cherry-pick --continue`; "
    "or `git cherry-pick --abort`",
    "a revert": "resolve the conflicts, `git add` them and `git revert --continue`; "
    "or `git revert --abort`",
    "`git am`": "resolve the conflicts, `git add` them and `git am --continue`; "
    "or `git am --abort`",
    "`git am` or a rebase": "finish with `git rebase --continue` (or `git am --continue`), "
    "or go back with `git rebase --abort` (or `git am --abort`)",
}


def _repository(core: Core) -> Check:
    """Git's own state first: in a rebase HEAD is detached too, and `git switch` would be the
    wrong advice; the operation in progress must be finished or aborted."""
    store = core.store
    if store.ref_mode:
        return Check("repository", True, f"{store.repo.path} ({_where(core)})")
    what = in_progress(store.repo)
    advice = store.pull_advice()
    if what is not None:
        detached = " (HEAD is detached)" if store.repo.head_is_detached else ""
        return Check(
            "repository",
            False,
            f"in the middle of {what}{detached}; elfmem will not write until it is finished",
            advice or _FINISH.get(what, "finish or abort it (`git status` says how)"),
        )
    if advice is not None:  # the move is fetched, not merged yet
        return Check("repository", False, advice.split(". To follow it: ")[0], advice)
    if store.repo.head_is_detached:
        return Check("repository", False, "HEAD is detached", "git switch <branch>")
    return Check("repository", True, f"{store.repo.path} ({_where(core)})")


def doctor(core: Core, resolve: Callable[[], str] | None = None, key_env: str = "") -> DoctorResult:
    store = core.store
    root = store.root
    checks = [
        _repository(core),
        _config(core),
        _memory(core),
        _guard("hooks", lambda: _hooks(core)),
        _guard("merge driver", lambda: _merge_driver(core)),
        _ledger(core),
        _guard("locks", lambda: _locks(core)),
        _guard("write lock", lambda: _write_lock(core)),
        _guard("files", lambda: _strays(core)),
        _guard("objects", lambda: _objects(core)),
        _guard("index", lambda: _index(core)),
        _guard("inbox", lambda: _inbox(core)),
        _guard("embedder", lambda: _embedder(core)),
    ]
    if core.config.llm.model:
        present = bool(os.environ.get(key_env)) if key_env else True
        checks.append(
            Check(
                "llm key",
                present,
                f"{core.config.llm.model} via ${key_env or '(none needed)'}",
                f"export {key_env}=<key> or put it in {root / '.env'}",
            )
        )
        if resolve is not None:
            checks.append(
                _guard("llm call", lambda: Check("llm call", True, f"replied: {resolve()[:60]!r}"))
            )
    else:
        checks.append(Check("llm", True, "none configured: dream runs its deterministic path"))
    return DoctorResult(checks)


def _ledger(core: Core) -> Check:
    broken = core.store.ledger_broken()
    if broken is not None:
        return Check("ledger", False, broken.message, broken.recovery)
    tip = core.store.ledger.tip()
    return Check(
        "ledger",
        tip is not None,
        f"refs/notes/elfmem at {tip[:12]}" if tip else "no notes yet",
        "Remember something: the ledger starts with the first write.",
    )


def _strays(core: Core) -> Check:
    """Links and committed temporary files under .elfmem: plain git made them, elfmem never."""
    links, temporaries = core.store.strays()
    if not links and not temporaries:
        return Check("files", True, "no links or leftover temporary files under .elfmem")
    found = [f"{p} is a symbolic link (elfmem will not write through it)" for p in links]
    found += [f"{p} is a temporary file of a killed write, committed" for p in temporaries]
    fixes = [f"replace the link {p} with the folder itself, then commit" for p in links]
    if temporaries:
        fixes.append(
            f"git rm -q --ignore-unmatch {' '.join(temporaries)} && git commit -m "
            "'drop a temporary file a killed elfmem write left'"
        )
    return Check("files", False, "; ".join(found), "; ".join(fixes))


def _write_lock(core: Core) -> Check:
    who = core.store.write_lock_holder()
    if who is None:
        return Check("write lock", True, "free")
    return Check(
        "write lock",
        False,
        f"{core.store.state_dir / 'write.lock'} is held by {who}: writers wait for it, then "
        "fail (exit 5)",
        "Let that process finish; if it is stuck (paused, stopped), end it with `kill <pid>`: "
        "the next elfmem command finishes or undoes its write.",
    )


def _hooks(core: Core) -> Check:
    report = hooks.status(core.store.root)
    mine = [h for h in report.hooks if h.state in ("ours", "chained")]
    detail = f"{len(mine)} of {len(report.hooks)} elfmem hooks installed"
    if not mine:
        detail += (
            " (optional: `elfmem hooks install` checks memory on commit, reindexes on checkout)"
        )
    elif len(mine) < len(report.hooks):  # installed by an older elfmem: the notes wait for sync
        detail += " (`elfmem hooks install` adds the missing ones)"
    return Check("hooks", True, detail)


def _merge_driver(core: Core) -> Check:
    """Whether a plain `git pull` would merge memory files by block id: the driver is set in
    this clone's config (a clone does not copy it; elfmem sets it at the first command) and
    the interpreter it names still exists (a deleted virtualenv would leave markers)."""
    config = core.store.repo.config
    command = config["merge.elfmem.driver"] if "merge.elfmem.driver" in config else ""
    fix = "elfmem hooks install (it registers the merge driver with this interpreter)"
    if not command:
        return Check("merge driver", True, "not registered here (plain git merges memory as text)")
    words = shlex.split(command)
    exe = words[0] if words else ""
    if exe and "/" in exe and not Path(exe).exists():
        return Check("merge driver", False, f"registered, but {exe} is gone", fix)
    return Check("merge driver", True, "registered: plain git merges memory by block id")


def _locks(core: Core) -> Check:
    """Git lock files that would stop the next write: elfmem deletes only its own (a killed
    write's, proven by its journal); any other is for a person to judge."""
    held = core.store.locks()
    if not held:
        return Check("locks", True, "no git lock files held")
    return Check(
        "locks",
        False,
        "; ".join(lock.describe() for lock in held),
        "Wait for the git command holding it to finish; if none is running, a crash left it: "
        + " ".join(f"rm {lock.path}" for lock in held),
    )


def _objects(core: Core) -> Check:
    """Loose objects pile up: each write adds seven, and only git's own commands pack them."""
    estimate, limit = core.store.loose_objects()
    if limit <= 0:
        return Check("objects", True, f"about {estimate:,} loose objects (gc.auto is off)")
    detail = f"about {estimate:,} loose objects; git packs them past {limit:,}"
    return Check(
        "objects",
        estimate <= 256 * -(-limit // 256),  # git's rule: objects/17 past ceil(gc.auto / 256)
        detail,
        "git gc (elfmem never packs; git runs `git gc --auto` itself after its own commits)",
    )


def _index(core: Core) -> Check:
    report = core.sync()
    errors = len(report.errors)
    detail = f"{report.mode} sync, {errors} unparsable file(s)"
    damage, note = maintenance.inspect_index(core)
    if damage or note:
        fix = "nothing to do: the index is derived and was rebuilt; delete the .broken file"
        return Check("index", damage is None, f"{detail}; {damage or note}", fix)
    advice = core.store.pull_advice() if errors else None
    fix = advice or "elfmem index check (then fix the file:line it names)"
    return Check("index", errors == 0, detail, fix)


def _inbox(core: Core) -> Check:
    inbox = queries.counts(core.db()).get("inbox", 0)
    threshold = core.config.memory.inbox_threshold
    backlog = inbox_backlog(inbox, threshold)
    return Check("inbox", not backlog, f"{inbox} waiting (dream is due at {threshold})", backlog)


def _embedder(core: Core) -> Check:
    """The model embeds, and how many blocks still wait for its vectors (after a change of
    model, all of them): reported, never embedded here, so doctor stays quick on any memory."""
    vec = core.embedder.embed(["doctor check"])
    detail = f"{core.embedder.identity} ({core.embedder.dimensions} dims)"
    waiting, other_model = backlog(core.db(), core.embedder)
    if waiting:
        why = "the stored vectors are another model's" if other_model else "not embedded yet"
        detail += (
            f"; {waiting} blocks wait for its vectors ({why}): `elfmem index update` or "
            "`elfmem dream` embeds them, and recall ranks them by their words until then"
        )
    return Check("embedder", vec.shape[0] == 1, detail)
