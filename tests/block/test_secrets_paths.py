"""Every path by which a secret once reached git history, driven through the CLI and the API.

Each refusal must name the kind and the field, never show the value, and leave history, the notes
ref and (for a hand edit) the person's file exactly as they were.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import SecretRefused
from tests.conftest import arun, git

TAIL = "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"
GHP = "ghp_" + TAIL[:36]
AKIA = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SLACK_CATEGORY = "xoxb-1234567890-0987654321-abcdefghij"  # lower case: a valid folder name
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + TAIL + "\n-----END RSA PRIVATE KEY-----"
PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF"
    + TAIL
    + "\n-----END PGP PRIVATE KEY BLOCK-----"
)


def cli_run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def everything_git_holds(repo: Path) -> str:
    """Every commit message, every diff (notes included), every ref name, every tracked file."""
    return "\n".join(
        [
            git(repo, "log", "--all", "-p", "--format=%H%n%B"),
            git(repo, "for-each-ref"),
            git(repo, "ls-files"),
        ]
    )


@pytest.fixture
def memory(repo: Path) -> tuple[Path, str]:
    """An initialised memory with one block; returns the repository and the block id."""
    code, _, err = cli_run(repo, "init", "--name", "Ada")
    assert code == 0, err
    code, out, err = cli_run(repo, "remember", "Redis needs maxmemory set", "-t", "db/redis")
    assert code == 0, err
    return repo, out.strip()


def refused(repo: Path, secret: str, *args: str) -> str:
    """Run a command that must be refused; return its stderr, having checked nothing moved."""
    before = everything_git_holds(repo)
    code, out, err = cli_run(repo, *args)
    assert code == 2, (out, err)  # SecretRefused is invalid input (docs/errors.md)
    assert err.startswith("Error: Refused: ") and "Recovery:" in err
    assert secret not in err + out and secret[:12] not in err + out
    assert everything_git_holds(repo) == before
    assert secret not in everything_git_holds(repo)
    return err


@pytest.mark.parametrize(
    ("secret", "tags", "where", "kind"),
    [
        (GHP, [GHP], "tag 1", "GitHub token"),
        (AKIA, ["ops/aws", AKIA], "tag 2", "AWS access key id"),
        (AKIA, [f"ops/aws,{AKIA}"], "tag 2", "AWS access key id"),
    ],
)
def test_remember_refuses_a_secret_tag(
    memory: tuple[Path, str], secret: str, tags: list[str], where: str, kind: str
) -> None:
    repo, _ = memory
    args = [a for t in tags for a in ("-t", t)]
    err = refused(repo, secret, "remember", "the deploy user", *args)
    assert f"{kind} in {where} " in err


def test_edit_refuses_a_secret_tag_and_keeps_the_block(memory: tuple[Path, str]) -> None:
    repo, block_id = memory
    err = refused(repo, GHP, "edit", block_id, "-t", f"db/redis {GHP}")
    assert "GitHub token in tag 2 " in err
    code, out, _ = cli_run(repo, "show", block_id, "--json")
    assert code == 0 and '"db/redis"' in out


def test_a_category_that_is_a_token_never_becomes_a_folder(memory: tuple[Path, str]) -> None:
    repo, _ = memory
    err = refused(repo, SLACK_CATEGORY, "remember", "chat bot", "--category", SLACK_CATEGORY)
    assert "Slack token in category " in err
    assert not list((repo / ".elfmem/memory").rglob(f"*{SLACK_CATEGORY}*"))


def test_outcome_source_never_reaches_the_notes(memory: tuple[Path, str]) -> None:
    repo, block_id = memory
    err = refused(repo, GHP, "outcome", block_id, "0.9", "--source", f"ci {GHP}")
    assert "GitHub token in outcome source " in err
    assert "--allow-secret" not in err.split("Recovery:")[1]


@pytest.mark.parametrize(
    ("content", "secret", "kind", "where"),
    [
        (f"deploy key\n{PGP}", "lQOYBF" + TAIL, "PGP private key block", "content line 2"),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "AWS secret access key", "content"),
        (f"prod uses {AKIA} with {AWS_SECRET}", AWS_SECRET, "AWS access key id", "content"),
        (f"the deploy secret {AWS_SECRET} rotates", AWS_SECRET, "AWS secret access key", "content"),
    ],
)
def test_remember_refuses_secret_content(
    memory: tuple[Path, str], content: str, secret: str, kind: str, where: str
) -> None:
    repo, _ = memory
    err = refused(repo, secret, "remember", content)
    assert f"{kind} in {where}" in err


def test_the_cue_is_scanned(memory: tuple[Path, str]) -> None:
    repo, _ = memory
    err = refused(repo, GHP, "remember", "harmless content", "--cue", f"use {GHP}")
    assert "GitHub token in cue " in err


def test_init_self_with_a_pem_key_writes_nothing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    err = refused(repo, TAIL, "init", "--self", f"I am Ada.\n{PEM}")
    assert "PEM private key in self.md line 4 " in err
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / ".elfmem/memory/self.md").exists()


def test_the_override_stores_it_records_the_kind_and_keeps_it_out_of_the_subject(
    memory: tuple[Path, str],
) -> None:
    repo, _ = memory
    code, out, err = cli_run(
        repo, "remember", f"the deploy secret {AWS_SECRET} rotates", "--allow-secret"
    )
    assert code == 0, err
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Elfmem-Allow-Secret,valueonly)")
    assert trailers.strip() == "AWS secret access key"
    subject = git(repo, "log", "-1", "--format=%s")
    assert AWS_SECRET not in subject and "[AWS secret access key]" in subject
    assert AWS_SECRET in git(repo, "show", "HEAD", "--format=")  # stored, as asked


def test_a_block_stored_with_the_override_can_be_edited_and_forgotten(
    memory: tuple[Path, str],
) -> None:
    """The writer's gate looks only at what is new: an allowed secret is not refused again."""
    repo, _ = memory
    code, out, err = cli_run(repo, "remember", f"key {GHP}", "--allow-secret")
    assert code == 0, err
    block_id = out.strip()
    assert cli_run(repo, "edit", block_id, "-t", "ops/ci")[0] == 0
    assert cli_run(repo, "forget", block_id)[0] == 0
    assert cli_run(repo, "undo")[0] == 0


def test_the_api_refuses_and_the_override_through_it(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    try:
        with pytest.raises(SecretRefused) as err:
            arun(system.remember("bot", tags=["chat", "xoxp-1234567890-" + TAIL[:20]]))
        assert "Slack token in tag 2 " in err.value.message
        assert (
            "--allow-secret" in err.value.recovery and "Elfmem-Allow-Secret" in err.value.recovery
        )
        made = arun(system.remember("pool DB_PASSWORD=Xq9vR2mTz8LwK4pN", allow_secret=True))
        assert made.status == "created"
    finally:
        arun(system.close())


def _hand_edit(repo: Path, block_id: str, old: str, new: str) -> tuple[Path, bytes]:
    """Replace the last occurrence of ``old`` (the body, not the heading) in the block's file."""
    [bucket] = [p for p in (repo / ".elfmem/memory").rglob("*.md") if block_id in p.read_text()]
    head, _, tail = bucket.read_text().rpartition(old)
    bucket.write_text(head + new + tail)
    return bucket, bucket.read_bytes()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Redis needs maxmemory set", f"Redis needs maxmemory set\nadmin {GHP}"),
        ("db/redis", f"db/redis, {GHP}"),
        ("-->", f"cue: deploy with {GHP} -->"),  # parses into `created`: read the whole file
    ],
)
def test_a_hand_edit_with_a_key_is_not_carried_into_the_next_commit(
    memory: tuple[Path, str], old: str, new: str
) -> None:
    repo, block_id = memory
    bucket, edited = _hand_edit(repo, block_id, old, new)
    line = next(n for n, t in enumerate(bucket.read_text().splitlines(), 1) if GHP in t)
    err = refused(repo, GHP, "remember", "Postgres wants pgbouncer")
    rel = bucket.relative_to(repo).as_posix()
    assert f"GitHub token in {rel} line {line} " in err
    assert f"Your uncommitted edit to {rel} is left on disk." in err
    assert bucket.read_bytes() == edited
    assert git(repo, "status", "--porcelain", "--", rel).startswith(" M")


def test_the_pre_commit_hook_refuses_a_staged_key_without_echoing_it(
    memory: tuple[Path, str],
) -> None:
    repo, block_id = memory
    bucket, _ = _hand_edit(repo, block_id, "db/redis", f"db/redis, {AKIA}")
    rel = bucket.relative_to(repo).as_posix()
    git(repo, "add", rel)
    code, out, err = cli_run(repo, "hook", "pre-commit")
    assert code == 1
    assert f"{rel}:" in err + out and "AWS access key id" in err + out
    assert AKIA not in err + out
    done = subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=repo)
    assert done.returncode == 1  # still staged, nothing committed
