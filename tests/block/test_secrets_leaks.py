"""A property: no value the secret check refuses ever reaches stderr, ``--json`` or a subject.

Text holding a credential (a named value in any shape the matrix knows, a prefixed token, a
connection string) goes through the commands that refuse it, store it on purpose, forget it, and
fail on it as an argument; whatever they print and whatever subject they commit must not hold it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from elfmem.block.secrets import find_secret
from elfmem.cli import cli
from tests.block.test_secrets_matrix import KEYS, SEPARATORS, WRAPS
from tests.conftest import git

LEAKS = settings(
    derandomize=True,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ALNUM = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
SYMBOLS = "!#&+/=@^~"


@st.composite
def password(draw: st.DrawFn) -> str:
    """A password with letters of both cases, a digit, and often symbols or a slash."""
    body = draw(st.text(alphabet=ALNUM + SYMBOLS, min_size=9, max_size=22))
    value = draw(st.sampled_from(ALNUM[:25])) + body + draw(st.sampled_from("ABCXYZ")) + "7"
    assume(not value.endswith(tuple(SYMBOLS)))
    return value


@st.composite
def secret_text(draw: st.DrawFn) -> tuple[str, str]:
    """(text, the value in it that must never be repeated)."""
    kind = draw(st.sampled_from(["named", "token", "url"]))
    value = draw(password())
    if kind == "token":
        value = "ghp_" + draw(st.text(alphabet=ALNUM, min_size=36, max_size=36))
        return f"ci deploys with {value}", value
    if kind == "url":
        scheme = draw(st.sampled_from(["postgres", "POSTGRES", "mysql", "Redis"]))
        return f"the db is {scheme}://app:{value}@db.internal/app", value
    sep = draw(st.sampled_from(SEPARATORS))
    key = draw(st.sampled_from(KEYS))
    wrap = draw(st.sampled_from(WRAPS))
    return "prod: " + sep.format(k=key, v=wrap.format(value)), value


@pytest.fixture(scope="module")
def memory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git(root, "init", "-q", "-b", "main")
        result = CliRunner().invoke(cli, ["-C", str(root), "init", "--name", "Ada"])
        assert result.exit_code == 0, result.stderr
        yield root


def _outputs(repo: Path, text: str) -> Iterator[str]:
    """stdout and stderr of every command that meets the text, then every subject committed."""
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(cli, ["-C", str(repo), *args])
        return result.exit_code, result.stdout + result.stderr

    for args in (
        ("remember", text),
        ("remember", "--json", text),
        ("remember", "a fact", "--when", text, "--json"),
        ("remember", "a fact", "--cue", text, "--json"),
        ("show", text, "--json"),
    ):
        code, out = run(*args)
        assert code != 0, args
        yield out
    code, out = run("remember", "--allow-secret", "--json", text)
    assert code == 0, out
    yield out
    block_id = json.loads(out)["block_id"]
    yield run("edit", block_id, f"{text} (again)", "--allow-secret", "--json")[1]
    yield run("forget", block_id, "--json")[1]
    yield git(repo, "log", "--all", "--format=%s%n%b")


@LEAKS
@given(case=secret_text())
def test_a_refused_value_never_appears_in_output_or_a_subject(
    memory: Path, case: tuple[str, str]
) -> None:
    text, value = case
    assume(find_secret(text) is not None)
    for out in _outputs(memory, text):
        assert value not in out, (text, out)
