"""Talking to git remotes, through the ``git`` binary.

Fetch and push go through the user's own git so that everything they configured for it works
unchanged: SSH keys and agents, credential helpers, proxies, ``insteadOf`` rewrites. libgit2 would
need each of these wired by hand. Every call is bounded in time, never forces a ref it was not
told to force, and turns git's failure into a :class:`RemoteError` that says what to do.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from elfmem.errors import NotFound, RemoteError

TIMEOUT = 120.0
"""Seconds one fetch or push may take before it is abandoned."""

_OFFLINE_HINTS = (
    "could not resolve host",
    "could not read from remote",
    "connection refused",
    "connection timed out",
    "network is unreachable",
    "does not appear to be a git repository",
    "unable to access",
    "no such file or directory",
)
_MOVED_HINTS = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
    "failed to lock",
)
"""A refusal that means the remote ref moved (or another receive held it): fetch, merge and
push again. Anything else (a hook or a protection that declined) is final."""
_FINAL_HINTS = ("declined", "protected", "denied")


@dataclass(frozen=True, slots=True)
class RefUpdate:
    """One line of git's ``--porcelain`` report: what happened to one ref."""

    flag: str
    """``' '`` fast-forward, ``'+'`` forced, ``'-'`` deleted, ``'*'`` new, ``'!'`` rejected,
    ``'='`` up to date, ``'t'`` tag update."""
    source: str
    target: str
    summary: str

    @property
    def changed(self) -> bool:
        return self.flag not in ("=", "!")

    @property
    def moved(self) -> bool:
        """Rejected because the remote ref moved or was locked: worth a fetch, merge and retry."""
        low = self.summary.lower()
        return (
            self.flag == "!"
            and any(h in low for h in _MOVED_HINTS)
            and not any(h in low for h in _FINAL_HINTS)
        )


def _run(
    git_path: Path | None, args: Sequence[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``git`` with ``args`` against the repository at ``git_path`` (None: no repository)."""
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait on a password prompt nobody can see
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"  # git's messages are matched below; keep them in English
    env["ELFMEM_GIT"] = "1"  # elfmem's own fetch or push: its reference-transaction hook skips
    try:
        return subprocess.run(
            ["git", *([f"--git-dir={git_path}"] if git_path is not None else []), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError as exc:
        raise RemoteError(
            "the git program is not installed or not on PATH.",
            "Install git (2.30 or newer) and run the command again.",
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise RemoteError(
            f"git {args[0]} gave no answer within {timeout:.0f} s.",
            "Check the network and the remote's address (`git remote -v`), then run it again; "
            "nothing local was changed.",
        ) from exc


def remotes(git_path: Path) -> list[str]:
    """The names of the configured remotes, in git's order."""
    done = _run(git_path, ["remote"], 10.0)
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def remote_or_default(git_path: Path, remote: str | None) -> str:
    """``remote`` if it exists, else the only/``origin`` remote; a clear error otherwise."""
    known = remotes(git_path)
    if remote:
        if remote in known or "/" in remote or ":" in remote:
            return remote  # a name, or a URL or path git understands directly
        raise NotFound(
            f"no remote named {remote!r} (known: {', '.join(known) or 'none'}).",
            "Add it with `git remote add NAME URL`, or pass a URL or path instead of a name.",
        )
    if "origin" in known:
        return "origin"
    if len(known) == 1:
        return known[0]
    if not known:
        raise NotFound(
            "this repository has no remote to share memory through.",
            "Add one with `git remote add origin URL` (any git server, or a bare repository "
            "path), then run the command again.",
        )
    raise RemoteError(
        f"several remotes and none named origin: {', '.join(known)}.",
        "Name the one to use, e.g. `elfmem sync " + known[0] + "`.",
    )


def _parse_porcelain(text: str) -> list[RefUpdate]:
    updates: list[RefUpdate] = []
    for line in text.splitlines():
        if len(line) < 3 or line[1] != "\t":
            continue
        flag, rest = line[0], line[2:]
        refs, _, summary = rest.partition("\t")
        source, _, target = refs.partition(":")
        updates.append(RefUpdate(flag, source, target, summary.strip()))
    return updates


def _reason(stderr: str) -> str:
    """git's own reason: its first ``fatal:``/``error:`` line, not the boilerplate after it
    ("Please make sure you have the correct access rights and the repository exists.")."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    for line in lines:
        for prefix in ("fatal: ", "error: "):
            if line.startswith(prefix):
                return line.removeprefix(prefix)
    return lines[-1] if lines else "no message"


_NOTHING_LOCAL = "nothing local was changed"


def _failure(action: str, remote: str, stderr: str, local: str = _NOTHING_LOCAL) -> RemoteError:
    """The error for a failed fetch or push; ``local`` says what stands locally (the caller
    knows: a push after a merge has changed something here)."""
    low = stderr.lower()
    detail = _reason(stderr)
    if any(h in low for h in _OFFLINE_HINTS):
        return RemoteError(
            f"cannot reach remote {remote!r} to {action} ({detail}).",
            "Check the network and the address (`git remote -v`), then run it again; "
            f"{local} and your memory keeps working offline.",
        )
    if "permission denied" in low or "authentication" in low or "403" in low:
        return RemoteError(
            f"remote {remote!r} refused to {action}: {detail}.",
            "Check your credentials for this remote with a plain `git fetch`/`git push`, then "
            f"run it again; {local}.",
        )
    return RemoteError(
        f"git could not {action} {remote!r}: {detail}.",
        f"Run the same with plain git to see the whole message; {local}.",
    )


def _ref_oids(git_path: Path) -> dict[str, str]:
    done = _run(git_path, ["for-each-ref", "--format=%(refname) %(objectname)"], 30.0)
    pairs = (line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return {name: oid for name, oid in pairs}


def _destination(spec: str) -> str:
    return spec.lstrip("+").partition(":")[2]


def fetch(
    git_path: Path, remote: str, refspecs: Sequence[str], timeout: float = TIMEOUT
) -> list[RefUpdate]:
    """Fetch exactly ``refspecs`` (a leading ``+`` forces, as in git) and report each
    destination ref that moved (git 2.39's fetch has no porcelain report, so the refs are read
    before and after).

    A refspec whose source the remote does not have is not an error: the remote simply has no
    memory of that kind yet, and it is left out of the report.
    """
    before = _ref_oids(git_path)
    present: list[str] = []
    done = _run(git_path, ["fetch", "--quiet", "--no-tags", remote, *refspecs], timeout)
    if done.returncode == 0:
        present = list(refspecs)
    elif "couldn't find remote ref" in done.stderr.lower():
        for spec in refspecs:  # one by one, so the refs the remote has still come in
            one = _run(git_path, ["fetch", "--quiet", "--no-tags", remote, spec], timeout)
            if one.returncode == 0:
                present.append(spec)
            elif "couldn't find remote ref" not in one.stderr.lower():
                raise _failure("fetch from", remote, one.stderr)
    else:
        raise _failure("fetch from", remote, done.stderr)
    after = _ref_oids(git_path)
    updates = []
    for spec in present:
        target = _destination(spec)
        old, new = before.get(target), after.get(target)
        if target and new and old != new:
            updates.append(RefUpdate("*" if old is None else " ", spec, target, f"{old}..{new}"))
    return updates


@dataclass(frozen=True, slots=True)
class PushReport:
    updates: list[RefUpdate]

    @property
    def rejected(self) -> list[RefUpdate]:
        return [u for u in self.updates if u.flag == "!"]


def push(
    git_path: Path,
    remote: str,
    refspecs: Sequence[str],
    timeout: float = TIMEOUT,
    local: str = _NOTHING_LOCAL,
) -> PushReport:
    """Push ``refspecs`` without force. Refs the remote rejects because they moved (not fast
    forward, fetch first, or locked by another receive at that moment) come back in
    ``rejected``: the caller fetches, merges and tries again. Any other refusal (a hook that
    declined, a protected ref) is a ``RemoteError`` whose recovery ends with ``local``."""
    done = _run(git_path, ["push", "--porcelain", "--no-verify", remote, *refspecs], timeout)
    updates = _parse_porcelain(done.stdout)
    if done.returncode != 0:
        rejected = [u for u in updates if u.flag == "!"]
        final = [u for u in rejected if not u.moved]
        if final:
            raise RemoteError(
                f"remote {remote!r} refused {final[0].target}: {final[0].summary}.",
                "A hook or a protection rule on the server declined it, so trying again would "
                f"not help: allow pushes to {final[0].target} there, or use another remote; "
                f"{local}.",
            )
        if not rejected:
            raise _failure("push to", remote, done.stderr, local)
    return PushReport(updates)


BUNDLE_SIGNATURES = (b"# v2 git bundle\n", b"# v3 git bundle\n")


def is_bundle(path: Path) -> bool:
    """True when ``path`` is a file in git's bundle format (its first line says so)."""
    try:
        with path.open("rb") as handle:
            return handle.read(16) in BUNDLE_SIGNATURES
    except OSError:
        return False


def bundle_create(git_path: Path, target: Path, refs: Sequence[str]) -> None:
    """Write ``refs`` and everything they reach into the bundle file ``target``."""
    done = _run(git_path, ["bundle", "create", "--quiet", str(target), *refs], TIMEOUT)
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no message"
        raise RemoteError(
            f"git could not write the bundle {target} ({detail}).",
            "Check that the folder exists and is writable, then run it again; the memory "
            "was not changed.",
        )


def bundle_heads(source: Path) -> dict[str, str]:
    """Ref name → commit id for every ref the bundle file ``source`` carries."""
    if not is_bundle(source):
        raise NotFound(
            f"{source} is not a git bundle.",
            "Pass a file written by `elfmem backup -o FILE` (or `git bundle create`).",
        )
    done = _run(None, ["bundle", "list-heads", str(source)], 30.0)
    if done.returncode != 0:
        raise _failure("read the bundle", str(source), done.stderr)
    heads: dict[str, str] = {}
    for line in done.stdout.splitlines():
        oid, _, name = line.partition(" ")
        if name:
            heads[name.strip()] = oid
    return heads


def clone(source: str, target: Path, branch: str | None = None) -> None:
    """``git clone`` ``source`` (a URL, a path or a bundle file) into the new folder ``target``."""
    args = ["clone", "--quiet", "--no-tags", *(["--branch", branch] if branch else [])]
    done = _run(None, [*args, source, str(target)], TIMEOUT)
    if done.returncode != 0:
        raise _failure("clone", source, done.stderr)
