"""Fuzzing the error contract: random bytes and strings per input class, through the CLI (in
process and as a real process) and the MCP server's in-memory client.

Each class of input has the outcomes it may have: content, cue and tag either store or are
invalid input (2); an id that is not a block is not found (3) or invalid input (2); a frame name
that is not a frame and a number out of range are invalid input (2). Whatever the input, the
answer is that class's named error with its recovery, never a traceback or an internal error.
Fixed seed (derandomize) and no deadline, so a loaded machine cannot make it flaky.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.mcp import build_server
from tests.conftest import arun

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
INVALID = {"InvalidInput", "SecretRefused", "BlockFormatError"}
FRAMES = {"self", "attention", "task", "simulate"}

argv_text = st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape"))
any_text = st.one_of(argv_text, st.text(max_size=40))
option_like = st.text(max_size=12).filter(lambda s: not s.startswith("-"))


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "project"
    root.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    system, _ = arun(MemorySystem.init(root))
    arun(system.close())
    return root


def invoke(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args, "--json"])
    return result.exit_code, result.stdout, result.stderr


def check(code: int, out: str, err: str, allowed: dict[int, set[str]]) -> None:
    """The exit code is one the class allows; a failure carries its contract."""
    assert code in allowed, (code, err)
    if code == 0:
        return
    assert err.startswith("Error: ") and "\nRecovery: " in err, err
    assert "Traceback" not in err and "internal error" not in err, err
    body = json.loads(out.strip().splitlines()[-1] if out.strip() else "{}")
    assert body.get("type") in allowed[code], (body, err)
    assert body["recovery"]


def not_option(text: str) -> bool:
    return not text.startswith("-")


@FUZZ
@given(content=any_text.filter(not_option))
def test_content(memory: Path, content: str) -> None:
    check(*invoke(memory, "remember", content, "--cue", "fuzz"), {0: set(), 2: INVALID})


@FUZZ
@given(cue=any_text)
def test_cue(memory: Path, cue: str) -> None:
    check(*invoke(memory, "remember", "fuzzed cue", f"--cue={cue}"), {0: set(), 2: INVALID})


@FUZZ
@given(tag=any_text)
def test_tag(memory: Path, tag: str) -> None:
    check(*invoke(memory, "remember", "fuzzed tag", f"--tags={tag}"), {0: set(), 2: INVALID})


@FUZZ
@given(block_id=any_text.filter(not_option))
def test_id(memory: Path, block_id: str) -> None:
    allowed = {3: {"BlockNotFound", "NotFound"}, 2: INVALID}
    check(*invoke(memory, "show", block_id), allowed)
    check(*invoke(memory, "forget", block_id), allowed)


@FUZZ
@given(name=any_text.filter(lambda s: not_option(s) and s not in FRAMES))
def test_frame_name(memory: Path, name: str) -> None:
    check(*invoke(memory, "frame", name), {2: INVALID})


@FUZZ
@given(number=st.one_of(st.integers(), argv_text))
def test_numbers(memory: Path, number: int | str) -> None:
    code, out, err = invoke(memory, "ls", f"--limit={number}")
    check(code, out, err, {0: set(), 2: INVALID})
    if isinstance(number, str) and code == 0:
        int(number)  # only a string click reads as an integer may pass
    code, out, err = invoke(memory, "recall", "fuzz", f"--top-k={number}")
    check(code, out, err, {0: set(), 2: INVALID})


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=4)
@given(raw=st.binary(min_size=1, max_size=24).filter(lambda b: b"\0" not in b))  # argv: no NUL
def test_a_real_process_with_random_bytes(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes
) -> None:
    """argv and stdin as raw bytes, through the interpreter's own decoding, in a subprocess."""
    root = tmp_path_factory.mktemp("proc")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "elfmem.cli", "-C", str(root)]
    for args, stdin in (([b"remember", b"--json"], raw + b"\xff"), ([b"show", raw], b"")):
        done = subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=env)
        err = done.stderr.decode("utf-8", "replace")
        assert done.returncode in (2, 3), err
        assert err.startswith("Error: ") and "\nRecovery: " in err and "Traceback" not in err


async def _call(client: Client, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, arguments)
    body = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return bool(result.is_error), body


MCP_TEXTS = st.lists(
    st.one_of(st.text(max_size=30), st.sampled_from(["", " ", "\ud800", "a\udcffb", "\x00"])),
    min_size=6,
    max_size=6,
)


@settings(derandomize=True, deadline=None, max_examples=3)
@given(texts=MCP_TEXTS, numbers=st.lists(st.integers(), min_size=2, max_size=2))
def test_mcp_tools_with_random_strings(memory: Path, texts: list[str], numbers: list[int]) -> None:
    """One server per example, every tool per input class: a result or that class's error."""
    cases: list[tuple[str, dict[str, Any], set[str]]] = []
    for text in texts:
        cases += [
            ("elfmem_remember", {"content": text, "cue": "c"}, INVALID),
            ("elfmem_remember", {"content": "fine", "cue": text}, INVALID),
            ("elfmem_remember", {"content": "fine", "tags": [text]}, INVALID),
            ("elfmem_show", {"block_id": text}, INVALID | {"BlockNotFound"}),
            ("elfmem_forget", {"block_id": text}, INVALID | {"BlockNotFound"}),
            ("elfmem_frame", {"name": text}, INVALID),
            ("elfmem_recall", {"query": text}, INVALID),
        ]
    for number in numbers:
        cases += [
            ("elfmem_recall", {"query": "q", "top_k": number}, INVALID),
            ("elfmem_ls", {"limit": number}, INVALID),
        ]

    async def scenario() -> None:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            for tool, arguments, allowed in cases:
                is_error, body = await _call(client, tool, **arguments)
                if is_error:
                    assert body["type"] in allowed, (tool, arguments, body)
                    assert body["error"] and body["recovery"]
                    assert "Traceback" not in json.dumps(body)

    arun(scenario())
