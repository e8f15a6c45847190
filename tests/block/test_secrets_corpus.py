"""The secret check against a corpus: a true positive of every kind, and the look-alikes a
git-native memory is full of (commit ids, digests, UUIDs, base64 of text, env var names).

Tokens are assembled at run time from a fixed random-looking tail, so no file holds a string that
a forge's push protection would take for a live key.
"""

from __future__ import annotations

import base64

import pytest

from elfmem.block import credentials
from elfmem.block.secrets import find_secret, scan

TAIL = "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"  # 42 mixed characters, no words
HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example
PEM_BODY = "MIIEowIBAAKCAQEA" + TAIL + "\n" + TAIL[::-1]
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

POSITIVES: list[tuple[str, str]] = [
    ("Anthropic API key", "use sk-ant-api03-" + TAIL),
    ("OpenAI API key", "OPENAI key: sk-proj-" + TAIL),
    ("OpenAI API key", "sk-" + TAIL[:40]),
    ("AWS access key id", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS access key id", "temporary ASIAY34FZKBOKMUTVV7A for the session"),
    ("AWS secret access key", f"aws_secret_access_key = {AWS_SECRET}"),
    ("AWS secret access key", f"AWS_SECRET_ACCESS_KEY: '{AWS_SECRET}'"),
    ("AWS secret access key", f"the secret is {AWS_SECRET}"),
    ("GitHub token", "ghp_" + TAIL[:36]),
    ("GitHub token", "gho_" + TAIL[:36]),
    ("GitHub token", "ghu_" + TAIL[:36]),
    ("GitHub token", "ghs_" + TAIL[:36]),
    ("GitHub token", "ghr_" + TAIL[:36]),
    ("GitHub token", "github_pat_11ABCDEFG0" + TAIL[:30]),
    ("GitLab token", "glpat-" + TAIL[:20]),
    ("Slack token", "xoxb-1234567890-0987654321-" + TAIL[:24]),
    ("Slack token", "xoxp-1234567890-" + TAIL[:20]),
    ("Slack token", "xoxa-2-" + TAIL[:20]),
    ("Slack token", "xoxr-" + TAIL[:20]),
    ("Stripe key", "sk_live_" + TAIL[:24]),
    ("Stripe key", "rk_live_" + TAIL[:24]),
    ("Twilio API key", "SK" + HEX32),
    ("Google API key", "AIza" + TAIL[:35]),
    ("JWT", "Authorization: Bearer " + JWT),
    (
        "PEM private key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
    ),
    ("PEM private key", f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"),
    ("PEM private key", "-----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY),
    ("PEM private key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + PEM_BODY),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA"),
    ("PGP private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + TAIL),
    ("connection string with a password", "postgres://user:pass@db.internal:5432/app"),
    ("connection string with a password", "mongodb+srv://admin:S3cr3t!@cluster0.example.net"),
    ("connection string with a password", "redis://:hunter2@cache:6379/0"),
    ("connection string with a password", "DATABASE_URL=mysql://app:pw@localhost/shop"),
    ("high-entropy value assigned to a secret-like name", "DB_PASSWORD=Xq9vR2mTz8LwK4pN"),
    ("high-entropy value assigned to a secret-like name", '"client_secret": "' + TAIL + '"'),
    ("high-entropy value assigned to a secret-like name", "api_key: " + TAIL[:24]),
    ("high-entropy value assigned to a secret-like name", "the password is " + TAIL[:18]),
    ("high-entropy value assigned to a secret-like name", "X_AUTH_TOKEN=" + HEX32),
    (
        "high-entropy value assigned to a secret-like name",
        "| host | **Password** |\n|---|---|\n| db | `Xq9!vR2/mTz8#LwK` |",
    ),
]

NEGATIVES: list[str] = [
    "fixed in 3f786850e387550fdab836ed7e6dc881de23001b",
    "see commit 3f78685 and https://github.com/o/r/commit/3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "--hash=sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request 550e8400-e29b-41d4-a716-446655440000 failed",
    "the key is " + base64.b64encode(b"meet at the usual place at noon").decode(),
    "secret note: " + base64.b64encode(b"the deploy runs every Friday at 5pm").decode(),
    "token " + base64.b64encode(b"Postgres needs pgbouncer!!").decode().rstrip("="),
    "the key is in $OPENAI_API_KEY",
    "export GITHUB_TOKEN=${GITHUB_TOKEN}",
    "api_key_env: ANTHROPIC_API_KEY",
    "password: <your password here>",
    "postgres://user:${PGPASSWORD}@db/app",
    "postgres://localhost:5432/app and postgres://app@db/app",
    "git@github.com:example/repo.git",
    "keys live in ~/.aws/credentials and ~/.ssh/id_ed25519",
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "use sk-learn for the baseline; sklearn-pipeline-for-classification",
    "model claude-3-5-sonnet-20241022, gpt-4o-mini, text-embedding-3-small",
    "embedding minishlab/potion-base-8M",
    "max_tokens = 4096; password reset tokens expire after 15 minutes",
    "token budget: 1234567890123456",
    "block 0123456789abcdef refines 89abcdef01234567",
    "Elfmem-Block: 0123456789abcdef",
    "AKIA is the prefix of an AWS access key id",
    "the tokenizer is bert-base-uncased-v2-2024",
    "https://example.com:8080/path?q=1",
    "the private key lives in the vault at secret/data/prod/api",
]


@pytest.mark.parametrize(
    ("kind", "text"), POSITIVES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(POSITIVES)]
)
def test_every_kind_is_found_and_named(kind: str, text: str) -> None:
    finding = find_secret(text)
    assert finding is not None, text
    assert finding.kind == kind


@pytest.mark.parametrize("text", NEGATIVES)
def test_look_alikes_pass(text: str) -> None:
    assert scan(text, "content") == []


def test_every_rule_carries_part_of_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switching any one rule off lets a true positive through or misnames it: no rule is dead
    weight."""
    for name in list(credentials.RULES):
        kept = {k: v for k, v in credentials.RULES.items() if k != name}
        monkeypatch.setattr(credentials, "RULES", kept)
        missed = [t for k, t in POSITIVES if getattr(find_secret(t), "kind", None) != k]
        assert missed, f"rule {name!r} is switched off and the corpus did not notice"
        monkeypatch.undo()


def test_a_finding_never_carries_the_value() -> None:
    for _, text in POSITIVES:
        finding = find_secret(text, "cue")
        assert finding is not None
        assert finding.__slots__ == ("kind", "where")
        assert finding.where == "cue" or finding.where.startswith("cue line ")
