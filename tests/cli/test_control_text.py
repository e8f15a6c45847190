"""Text from real sources: control characters are stored, three are refused, a terminal sees
them escaped, and a refused batch names the line of its record.

A chat export carries Windows-1252 quotes decoded as C1 controls (U+0093), vertical tabs and
form feeds; refusing a whole batch for one of them loses the import. Only what can corrupt a
file or a terminal is refused: NUL, ESC and U+009B (the one-byte CSI).
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.cli import cli

MOJIBAKE = "He said \x93ship it\x94 and left\x0bthen\x0cmore\x85end \x1c\u2028 last"


def run(repo: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def memory(repo: Path) -> Path:
    assert run(repo, "init")[0] == 0
    return repo


def test_a_batch_with_mojibake_quotes_and_vertical_tabs_is_stored_as_it_came(
    memory: Path,
) -> None:
    lines = [json.dumps({"content": MOJIBAKE, "cue": "a chat \x93export\x94"}), ""]
    code, out, err = run(memory, "remember", "--batch", "-", "--json", input="\n".join(lines))
    assert code == 0, err
    (block_id,) = json.loads(out)["created"]
    code, out, _ = run(memory, "show", block_id, "--json")
    shown = json.loads(out)
    assert shown["content"] == MOJIBAKE and shown["cue"] == "a chat \x93export\x94"
    assert run(memory, "dream", "--no-llm")[0] == 0
    code, out, _ = run(memory, "index", "check", "--json")
    assert code == 0, out
    _, out, _ = run(memory, "show", block_id, "--json")
    assert json.loads(out)["content"] == MOJIBAKE


def test_nul_esc_and_csi_are_refused_and_the_batch_error_names_the_line(memory: Path) -> None:
    for bad in ("\x00", "\x1b", "\x9b"):
        good = json.dumps({"content": "a fine record"})
        lines = [good, "", json.dumps({"content": f"bad {bad} text"})]
        code, _, err = run(memory, "remember", "--batch", "-", input="\n".join(lines))
        assert code == 2, err
        assert f"U+{ord(bad):04X}" in err and "line 3" in err, err
    assert run(memory, "ls", "--json")[1].count('"id"') == 0  # nothing was written


def test_a_terminal_sees_control_characters_escaped(memory: Path) -> None:
    code, out, _ = run(memory, "remember", "quote \x93here\x94 and\x0bthere")
    block_id = out.strip()
    primary, secondary = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(memory), "show", block_id],
        stdout=secondary,
        stderr=subprocess.PIPE,
        check=False,
        timeout=120,
    )
    os.close(secondary)
    shown = os.read(primary, 65536).decode("utf-8")
    os.close(primary)
    assert proc.returncode == 0, proc.stderr
    assert "\\x93here\\x94" in shown and "\\x0bthere" in shown
    assert "\x93" not in shown and "\x0b" not in shown
    piped = run(memory, "show", block_id)[1]  # not a terminal: the text as stored
    assert "\x93here\x94" in piped
