"""The "name = secret" rule as a generated matrix, not a list of examples.

Every key word × every separator (``=``, ``:``, ``::``, ``->``, ``|``, a table cell, "for prod:")
× every wrapping (backticks, bold, parentheses, quotes) × values with symbols and ``/`` must be
refused; the same shapes holding a placeholder (``${VAR}``, ``********``, "see the vault") must be
stored, and so must prose that only mentions a password, a token or a key, and the random-looking
things a git-native memory is full of (commit ids, UUIDs, digests, base64 images, SSH public keys).
"""

from __future__ import annotations

import base64
import itertools

import pytest

from elfmem.block.secrets import find_secret, redact, scan

KEYS = (
    "password", "Password", "DB_PASSWORD", "passwd", "pwd", "passphrase", "secret",
    "client_secret", "api_key", "apikey", "API-Key", "access_token", "auth_token", "token",
    "private_key", "secret_key", "credentials",
)  # fmt: skip
KEY_MARKUP = ("{}", "**{}**", "`{}`", '"{}"', "_{}_")
SEPARATORS = (
    "{k} = {v}", "{k}={v}", "{k}: {v}", "{k}:: {v}", "{k} -> {v}", "{k}|{v}", "| {k} | {v} |",
    "{k} for prod: {v}", "{k} for the staging db = {v}", "{k} := {v}", "{k} => {v}",
)  # fmt: skip
WRAPS = ("{}", "`{}`", "**{}**", "({})", '"{}"', "'{}'", "`{}`.", "({}),")
SECRET_VALUES = (
    "Xq9!vR2/mTz8#LwK",  # symbols and a slash
    "p@ss/W0rd+2024!",
    "Tr0ub4dor&3/zz",
    "k9/Fj2+Lq8=Wz3/Vb7Q",
    "Q7x9Lm2Pz4Kd8Rw1Ty6V",  # no symbol: random letters and digits
)
PLACEHOLDERS = (
    "${DB_PASSWORD}", "$API_KEY", "********", "see the vault", "<your password>",
    "{{ vault.prod }}", "%APP_SECRET%", "REDACTED", "...", "(not set)",
)  # fmt: skip


def shapes(values: tuple[str, ...]) -> list[str]:
    """Every key word (in turn bare, bold, in backticks, quoted) in every shape and wrapping."""
    marked = itertools.cycle(KEY_MARKUP)
    return [
        "the prod db " + sep.format(k=next(marked).format(key), v=wrap.format(value))
        for key in KEYS
        for sep in SEPARATORS
        for wrap in WRAPS
        for value in values
    ]


def table(header: str, value: str) -> str:
    return f"| service | user | {header} |\n|---|---|---|\n| prod | admin | {value} |\n"


def test_every_shape_of_a_named_secret_is_refused_and_redacted() -> None:
    texts = shapes(SECRET_VALUES)
    texts += [table(f"**{k}**", f"`{v}`") for k in KEYS for v in SECRET_VALUES]
    assert len(texts) > 5_000
    missed = [t for t in texts if find_secret(t) is None]
    assert not missed, f"{len(missed)} of {len(texts)} passed, e.g. {missed[:5]}"
    leaked = [t for t in texts for v in SECRET_VALUES if v in t and v in redact(t)]
    assert not leaked, leaked[:5]


def test_the_same_shapes_holding_a_placeholder_are_stored() -> None:
    texts = shapes(PLACEHOLDERS) + [table(k, v) for k in KEYS for v in PLACEHOLDERS]
    wrongly = [t for t in texts if scan(t, "content")]
    assert not wrongly, f"{len(wrongly)} of {len(texts)} refused, e.g. {wrongly[:5]}"


CONNECTIONS = (
    "POSTGRES://app:Xq9vR2mTz8@db.internal/app",
    "Postgresql://app:hunter2@db/app",
    "postgres://app:pa/ss/w0rd@db.internal:5432/app",
    "MySQL://root:S3cr3t!/x@localhost/shop",
    "redis://:p/w0rd@cache:6379/0",
    "DATABASE_URL=`mongodb+srv://admin:Xq9!vR2/mTz8@cluster0.example.net`",
)


@pytest.mark.parametrize("text", CONNECTIONS)
def test_connection_strings_in_any_case_and_with_a_slash_in_the_password(text: str) -> None:
    finding = find_secret(text)
    assert finding is not None and finding.kind == "connection string with a password"
    password = text.split("://", 1)[1].split("@")[0].split(":", 1)[1]
    assert password not in redact(text)


PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)
SSH_PUBLIC = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@lap"
)
FALSE_POSITIVES = (
    "Remember to rotate the password every 90 days.",
    "The token expires after one hour; ask for a new token.",
    "Which key opens the server room? The blue key.",
    "password: required for the admin console",
    "Password for prod: ask Ada, she keeps it in 1Password.",
    "api_key: set it in the environment before the deploy",
    "token: none",
    "secret: the launch date is still under wraps",
    "passwords must have 12+ characters and a symbol",
    "| setting | password |\n|---|---|\n| prod | stored in the vault |\n",
    "| password | see the vault |",
    "the token limit is 8192 and max_tokens = 4096",
    "token count: 128000",
    "token_type: Bearer",
    "the secret to good coffee is fresh beans",
    "password_hash uses bcrypt with cost 12",
    "private_key: /etc/ssl/private/server.key",
    "credentials: ~/.aws/credentials (profile prod)",
    "token -> the value of $GITHUB_TOKEN",
    "password = os.environ['DB_PASSWORD']",
    "secret_key = settings.SECRET_KEY",
    "api_key: ANTHROPIC_API_KEY",
    "the password reset link is https://example.com/reset?user=ada",
    "https://example.com:8080/path/to@alice and http://host:80/x@y",
    "fixed in 3f786850e387550fdab836ed7e6dc881de23001b",
    "request 550e8400-e29b-41d4-a716-446655440000 failed",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "md5 of the file: 9e107d9d372bb6826bd81d3542a419d6",
    PNG,
    f"![logo]({PNG})",
    SSH_PUBLIC,
    f"deploy key (public): {SSH_PUBLIC}",
    "the key is " + base64.b64encode(b"meet at the usual place at noon").decode(),
    "the tokenizer is bert-base-uncased-v2-2024",
    "the secret-key rotation runs on Fridays",
)


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_prose_and_look_alikes_are_stored(text: str) -> None:
    assert scan(text, "content") == [], text
