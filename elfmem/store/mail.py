"""Peer mail: small signed commits on refs outside the memory branch, and their signatures.

A message is a commit whose tree holds one rendered block (``message.md``) and an envelope
(``envelope.json``); each sender keeps one linear chain per recipient, on
``refs/elfmem/mail/<recipient>/<sender>``, so senders never race each other for a ref. The
commit is made by the ``git`` binary (``commit-tree -S``) so every signing setup git knows (SSH,
OpenPGP, X.509, agents) signs it unchanged, and the ref moves only by compare-and-swap
(``update-ref NEW OLD``). Signatures are read back with pygit2 and checked with ``ssh-keygen -Y
verify`` (SSH) or ``gpg --verify`` (OpenPGP).
"""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from elfmem.errors import ConflictError, RemoteError

MAIL_PREFIX = "refs/elfmem/mail"
SSH_SIG = b"-----BEGIN SSH SIGNATURE-----"
PGP_SIG = b"-----BEGIN PGP SIGNATURE-----"
VERIFIED, UNSIGNED, BAD, UNKNOWN = "verified", "unsigned", "bad", "unverifiable"
"""Signature states: checked against the sender's key; none; a check that failed; signed with
a key nothing here can check (an OpenPGP key missing from the keyring)."""


@dataclass(frozen=True, slots=True)
class Signer:
    """How to sign: git's ``gpg.format`` and ``user.signingkey`` (a file or a key id)."""

    format: str
    key: str
    own: bool
    """True for elfmem's own key (git config has no signing key)."""


@dataclass(frozen=True, slots=True)
class Mail:
    """One message commit as read from a mail ref."""

    commit_id: str
    ref: str
    files: dict[str, bytes]
    signature: bytes | None
    signed_data: bytes | None


def _git(
    git_dir: Path, args: list[str], env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    full["LC_ALL"] = "C"
    try:
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=full,
            timeout=60,
            check=False,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        raise RemoteError(
            f"git {args[0]} could not run ({exc}).",
            "Install git 2.34 or newer and run the command again.",
        ) from exc


def configured_signer(repo: pygit2.Repository) -> Signer | None:
    """The user's own signing key for git, or None when git signs nothing."""
    try:
        key = repo.config["user.signingkey"]
    except KeyError:
        return None
    try:
        fmt = repo.config["gpg.format"]
    except KeyError:
        fmt = "openpgp"
    return Signer(str(fmt), str(key), own=False) if key else None


def own_key_path(state_dir: Path) -> Path:
    return state_dir / "peer" / "id_ed25519"


def ensure_own_key(state_dir: Path) -> Path:
    """elfmem's own ed25519 key in the git dir (never committed), made once by ``ssh-keygen``."""
    path = own_key_path(state_dir)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "elfmem", "-f", str(path)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        raise ConflictError(
            f"ssh-keygen could not make a peer key ({exc}).",
            "Install OpenSSH's ssh-keygen, or configure git signing "
            "(`git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub`).",
        ) from exc
    if done.returncode != 0:
        raise ConflictError(
            f"ssh-keygen could not make a peer key: {done.stderr.strip()}",
            "Check that the git directory is writable, then run `elfmem peer init` again.",
        )
    return path


def ssh_public_key(signer: Signer) -> str | None:
    """The ``ssh-ed25519 AAAA…`` line of an SSH signer, or None when it is not one."""
    if signer.format != "ssh":
        return None
    key = signer.key.strip()
    if key.startswith("key::"):
        key = key[len("key::") :]
    if key.startswith("ssh-"):
        return " ".join(key.split()[:2])
    path = Path(os.path.expanduser(key))
    pub = path if path.suffix == ".pub" else path.with_name(path.name + ".pub")
    if pub.is_file():
        return " ".join(pub.read_text().split()[:2])
    return None


def ed25519_bytes(public_line: str) -> bytes | None:
    """The 32 raw key bytes of an ``ssh-ed25519`` public key line."""
    parts = public_line.split()
    if len(parts) < 2 or parts[0] != "ssh-ed25519":
        return None
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except ValueError:
        return None
    out, at = [], 0
    while at + 4 <= len(blob):
        size = int.from_bytes(blob[at : at + 4], "big")
        out.append(blob[at + 4 : at + 4 + size])
        at += 4 + size
    return out[1] if len(out) == 2 and out[0] == b"ssh-ed25519" and len(out[1]) == 32 else None


def ed25519_line(raw: bytes) -> str:
    """The ``ssh-ed25519 AAAA…`` public key line for 32 raw key bytes."""
    name = b"ssh-ed25519"
    blob = len(name).to_bytes(4, "big") + name + len(raw).to_bytes(4, "big") + raw
    return "ssh-ed25519 " + base64.b64encode(blob).decode("ascii")


def write_mail(
    repo: pygit2.Repository,
    ref: str,
    files: Mapping[str, bytes],
    message: str,
    author: tuple[str, str],
    signer: Signer | None,
) -> str:
    """Commit ``files`` on top of ``ref`` (signed when ``signer`` is given); the new commit id."""
    builder = repo.TreeBuilder()
    for name, data in sorted(files.items()):
        builder.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    tree = builder.write()
    git_dir = Path(repo.path)
    for _ in range(5):
        old = _tip(repo, ref)
        args = ["commit-tree", str(tree)] + (["-p", old] if old else [])
        config: list[str] = []
        if signer is not None:
            config = ["-c", f"gpg.format={signer.format}", "-c", f"user.signingkey={signer.key}"]
            args.append("-S")
        else:
            args.append("--no-gpg-sign")
        name, email = author
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }
        done = _git(git_dir, [*config, *args], env, stdin=message)
        if done.returncode != 0:
            raise ConflictError(
                f"git could not make the message commit: {done.stderr.strip()}",
                "Check your signing setup with `git commit-tree -S`, or remove "
                "user.signingkey to send unsigned.",
            )
        commit = done.stdout.strip()
        moved = _git(git_dir, ["update-ref", ref, commit, old or "0" * 40])
        if moved.returncode == 0:
            return commit
    raise ConflictError(
        f"{ref} kept moving; the message was not queued.",
        "Another process is sending on the same ref; run the command again.",
    )


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    try:
        return str(repo.references[ref].target)
    except KeyError:
        return None


def mail_refs(repo: pygit2.Repository, prefix: str) -> list[str]:
    return sorted(r for r in repo.references if r.startswith(prefix.rstrip("/") + "/"))


def read_chain(repo: pygit2.Repository, ref: str) -> Iterator[Mail]:
    """Every message on ``ref``, oldest first."""
    tip = _tip(repo, ref)
    if tip is None:
        return
    chain: list[pygit2.Commit] = []
    commit = repo.get(tip)
    while isinstance(commit, pygit2.Commit):
        chain.append(commit)
        commit = commit.parents[0] if commit.parents else None
    for one in reversed(chain):
        files: dict[str, bytes] = {}
        for entry in one.tree:
            blob = repo.get(entry.id)
            if isinstance(blob, pygit2.Blob) and entry.name:
                files[entry.name] = blob.data
        sig, data = one.gpg_signature
        yield Mail(str(one.id), ref, files, sig, data)


def verify(mail: Mail, ssh_key_line: str | None, principal: str) -> str:
    """``verified``, ``unsigned``, ``bad`` or ``unverifiable`` for one message commit."""
    if not mail.signature or mail.signed_data is None:
        return UNSIGNED
    if ssh_key_line is not None and not mail.signature.startswith(SSH_SIG):
        return UNKNOWN  # the sender's id names an SSH key: a keyring signature proves nothing
    with tempfile.TemporaryDirectory(prefix="elfmem-verify-") as tmp:
        sig = Path(tmp) / "sig"
        sig.write_bytes(mail.signature)
        if mail.signature.startswith(SSH_SIG):
            if ssh_key_line is None:
                return UNKNOWN
            allowed = Path(tmp) / "allowed"
            allowed.write_text(f'{principal} namespaces="git" {ssh_key_line}\n')
            cmd = ["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal]
            cmd += ["-n", "git", "-s", str(sig)]
        elif mail.signature.startswith(PGP_SIG):
            data = Path(tmp) / "data"
            data.write_bytes(mail.signed_data)
            cmd = ["gpg", "--batch", "--verify", str(sig), str(data)]
        else:
            return UNKNOWN
        try:
            done = subprocess.run(
                cmd, input=mail.signed_data, capture_output=True, timeout=30, check=False
            )
        except (FileNotFoundError, subprocess.TimeoutExpired):
            return UNKNOWN
        if done.returncode == 0:
            return VERIFIED
        if mail.signature.startswith(PGP_SIG) and b"No public key" in done.stderr:
            return UNKNOWN
        return BAD


def fast_forward(repo: pygit2.Repository, ref: str, other: str) -> None:
    """Move ``ref`` to ``other``'s tip when that only adds commits; leave it otherwise.

    A ``ref`` that has commits ``other`` lacks keeps them (they are messages not pushed yet);
    one that ``other`` has moved past since is a fork another clone made, and is an error.
    """
    mine, theirs = _tip(repo, ref), _tip(repo, other)
    if theirs is None or mine == theirs:
        return
    if mine is not None and repo.descendant_of(mine, theirs):
        return
    if mine is not None and not repo.descendant_of(theirs, mine):
        raise ConflictError(
            f"{ref} here and on the remote hold different messages.",
            f"Another clone sent on the same ref; keep the remote's with `git update-ref {ref} "
            f"{theirs}` and send again.",
        )
    moved = _git(Path(repo.path), ["update-ref", ref, theirs, mine or "0" * 40])
    if moved.returncode != 0:
        raise ConflictError(f"{ref} moved while it was read.", "Run the command again.")
