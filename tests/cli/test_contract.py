"""The error contract at the command line: one table of kinds and exit codes, Error:/Recovery: on
stderr for every way out (usage errors, bad bytes, crashes), the JSON error object with --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem import errors
from elfmem.api import MemorySystem
from elfmem.cli import cli
from tests.conftest import arun, git

ROOT = Path(__file__).resolve().parents[2]

TABLE = {  # the table in errors.py and docs/errors.md: exception → (kind, exit code)
    errors.InvalidInput: ("invalid input", 2),
    errors.BlockFormatError: ("invalid input", 2),
    errors.SecretRefused: ("invalid input", 2),
    errors.NotFound: ("not found", 3),
    errors.BlockNotFound: ("not found", 3),
    errors.ConflictError: ("conflict", 4),
    errors.RepoStateError: ("conflict", 4),
    errors.UndoError: ("conflict", 4),
    errors.LockedError: ("locked", 5),
    errors.ConfigError: ("config", 6),
    errors.ModelMismatch: ("config", 6),
    errors.ProviderError: ("provider", 7),
    errors.ModelReplyError: ("provider", 7),
    errors.RemoteError: ("remote", 8),
    errors.InternalError: ("internal", 70),
}


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    return repo


def invoke(repo: Path, *args: str, input: bytes | str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def assert_contract(code: int, err: str, expected: int) -> None:
    assert code == expected, err
    assert err.startswith("Error: ") and "\nRecovery: " in err, err
    assert "Traceback" not in err


def commits(repo: Path) -> int:
    return len(git(repo, "log", "--oneline").splitlines())


def test_every_class_has_its_kind_and_exit_code() -> None:
    for cls, (kind, code) in TABLE.items():
        assert (cls.kind, cls.exit_code) == (kind, code), cls.__name__
    named = {c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, Exception)}
    assert named - {errors.ElfmemError} == set(TABLE), "a class is missing from the table"


def test_the_table_in_the_docs_is_the_one_in_the_code() -> None:
    doc = (ROOT / "docs" / "errors.md").read_text()
    for cls, (kind, code) in TABLE.items():
        if cls.__base__ is errors.ElfmemError:  # the row's head class names the row
            assert f"| {kind} | `{cls.__name__}` | {code} |" in doc, cls.__name__
    assert errors.__doc__ is not None and "InternalError    70" in errors.__doc__


def test_kinds_decide_the_exit_code_of_real_commands(memory: Path) -> None:
    assert_contract(*invoke(memory, "remember", "   ")[::2], 2)
    assert_contract(*invoke(memory, "show", "0123456789abcdef")[::2], 3)
    assert_contract(*invoke(memory, "forget", "0123456789abcdef")[::2], 3)
    assert_contract(*invoke(memory, "frame", "no-such-frame")[::2], 2)
    assert_contract(*invoke(memory, "undo", "HEAD~1")[::2], 4)  # the user's own commit


def test_a_missing_option_says_what_it_is_and_gives_an_example(memory: Path) -> None:
    code, _, err = invoke(memory, "index", "rebuild")
    assert_contract(code, err, 2)
    assert "Missing option '--to'" in err
    assert "Where to write the rebuilt index" in err  # what --to is
    assert "`elfmem index rebuild --to FILE`" in err  # an example


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--bogus"], "No such option"),
        (["ls", "--limit", "many"], "'many' is not a valid integer"),
        (["ls", "--nope"], "No such option"),
        (["no-such-command"], "No such command"),
        (["show"], "Missing argument"),
        (["hook", "not-a-hook"], "not-a-hook"),
        ([], "`elfmem` needs a command"),
        (["index"], "`elfmem index` needs a command"),
    ],
)
def test_usage_errors_keep_the_contract(memory: Path, args: list[str], said: str) -> None:
    code, _, err = invoke(memory, *args)
    assert_contract(code, err, 2)
    assert said in err


def test_with_json_the_error_object_is_on_stdout(memory: Path) -> None:
    code, out, err = invoke(memory, "show", "0123456789abcdef", "--json")
    assert_contract(code, err, 3)
    assert json.loads(out) == {
        "error": "No block has id '0123456789abcdef'.",
        "recovery": json.loads(out)["recovery"],
        "type": "BlockNotFound",
    }
    code, out, err = invoke(memory, "index", "rebuild", "--json")
    assert_contract(code, err, 2)
    assert json.loads(out)["type"] == "InvalidInput" and "--to" in json.loads(out)["recovery"]


def test_invalid_utf8_on_stdin_is_invalid_input_and_writes_nothing(memory: Path) -> None:
    before = commits(memory)
    code, out, err = invoke(memory, "remember", "--json", input=b"bad \xff")
    assert_contract(code, err, 2)
    assert "not valid UTF-8" in err and json.loads(out)["type"] == "InvalidInput"
    code, _, err = invoke(memory, "remember", "--batch", "-", input=b'{"content": "x\xff"}\n')
    assert_contract(code, err, 2)
    assert commits(memory) == before


def test_bad_bytes_on_argv_are_invalid_input_and_write_nothing(memory: Path) -> None:
    before = commits(memory)
    bad = b"bad \xff\xfe".decode("utf-8", "surrogateescape")  # how Python hands argv bytes over
    for args in (
        ["remember", bad],
        ["remember", "fine text", "--cue", bad],
        ["remember", "fine text", "-t", bad],
        ["show", bad],
        ["frame", bad],
    ):
        code, _, err = invoke(memory, *args)
        assert_contract(code, err, 2)
        assert "not valid Unicode" in err or "not valid UTF-8" in err, err
    assert commits(memory) == before


def test_lone_surrogates_through_the_api_are_invalid_input(memory: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            for call in (
                lambda: system.remember("ok \ud800", cue="c"),
                lambda: system.remember("ok", cue="\udcff"),
                lambda: system.remember("ok", tags=["a\ud800"]),
                lambda: system.remember_many([{"content": "ok", "cue": "\ud800"}]),
                lambda: system.recall("\ud800"),
                lambda: system.show("\ud800"),
                lambda: system.frame("\udfff"),
            ):
                with pytest.raises(errors.InvalidInput) as caught:
                    await call()
                assert "lone surrogate" in caught.value.message and caught.value.recovery
        finally:
            await system.close()

    before = commits(memory)
    arun(scenario())
    assert commits(memory) == before


def test_an_unexpected_exception_is_an_internal_error_without_a_traceback(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: MemorySystem, *args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(MemorySystem, "ls", broken)
    code, out, err = invoke(memory, "ls", "--json")
    assert_contract(code, err, 70)
    assert "internal error (RuntimeError: disk on fire)" in err
    assert "--debug" in err and "ELFMEM_DEBUG=1" in err
    assert json.loads(out)["type"] == "InternalError"
    code, _, err = invoke(memory, "--debug", "ls")
    assert code == 70 and "Traceback" in err and "disk on fire" in err
    monkeypatch.setenv("ELFMEM_DEBUG", "1")
    assert "Traceback" in invoke(memory, "ls")[2]


def test_a_named_error_is_never_swallowed_by_the_catch_all(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def locked(self: MemorySystem, *args: object, **kwargs: object) -> None:
        raise errors.LockedError("held by pid 1", "wait for it")

    monkeypatch.setattr(MemorySystem, "ls", locked)
    code, _, err = invoke(memory, "ls")
    assert_contract(code, err, 5)
    assert "held by pid 1" in err and "internal" not in err


def test_a_real_process_with_bad_bytes_on_stdin_and_argv(memory: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "elfmem.cli", "-C", str(memory)]
    before = commits(memory)
    for args, stdin in (
        (["remember"], b"bad \xff"),
        (["remember", "--json"], b"bad \xff"),
        ([b"remember", b"x \xff"], b""),
        ([b"remember", b"ok", b"--cue", b"\xc3\x28"], b""),
    ):
        done = subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=env)
        err = done.stderr.decode()
        assert_contract(done.returncode, err, 2)
        if "--json" in args:
            assert json.loads(done.stdout)["type"] == "InvalidInput"
    assert commits(memory) == before
