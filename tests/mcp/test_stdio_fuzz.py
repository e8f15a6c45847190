"""Malformed messages on the real stdio wire: each gets a JSON-RPC error, and serving goes on.

A buggy client writes what it writes. Every line below is answered with a parse error (-32700)
or an invalid request (-32600), carrying the request's id where one can be read, and the valid
request written right after it is still answered. Stdout carries nothing but protocol.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun
from tests.mcp.test_stdio import BOUND, child_env, client_config

pytestmark = pytest.mark.slow

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
DEEP = 100_000


def ping(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode()


FUZZ: list[tuple[str, bytes, int, Any]] = [
    ("not json", b"this is not json", PARSE_ERROR, None),
    ("truncated", b'{"jsonrpc": "2.0", "id": 1, "method": "pi', PARSE_ERROR, None),
    ("invalid utf-8", b'{"jsonrpc": "2.0", "id": 2, "method": "ping\xff"}', PARSE_ERROR, None),
    ("a number", b"5", INVALID_REQUEST, None),
    ("a string", b'"ping"', INVALID_REQUEST, None),
    ("null", b"null", INVALID_REQUEST, None),
    ("empty object", b"{}", INVALID_REQUEST, None),
    ("missing method", b'{"jsonrpc": "2.0", "id": 3}', INVALID_REQUEST, 3),
    ("method not a string", b'{"jsonrpc": "2.0", "id": 4, "method": 7}', INVALID_REQUEST, 4),
    ("jsonrpc 1.0", b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', INVALID_REQUEST, 5),
    ("no jsonrpc", b'{"id": "six", "method": "ping"}', INVALID_REQUEST, "six"),
    ("params not an object", b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": 3}',
     INVALID_REQUEST, 7),
    ("batch", b"[" + ping(8) + b", " + ping(9) + b"]", INVALID_REQUEST, None),
    ("empty batch", b"[]", INVALID_REQUEST, None),
    ("bad id", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', INVALID_REQUEST, None),
    ("lone surrogate", b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": '
     b'{"name": "elfmem_remember", "arguments": {"content": "pools \\ud800 hold 20"}}}',
     INVALID_REQUEST, 10),
    ("lone surrogate key", b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": '
     b'{"\\udc00": 1}}', INVALID_REQUEST, 11),
    ("deep nesting", b'{"jsonrpc": "2.0", "id": 12, "method": "ping", "params": {"a": '
     + b"[" * DEEP + b"]" * DEEP + b"}}", INVALID_REQUEST, None),
    ("50 MB line", b'{"jsonrpc": "2.0", "id": 13, "method": "ping", "params": {"pad": "'
     + b"x" * 50_000_000 + b'"}}', INVALID_REQUEST, None),
    ("50 MB of garbage", b"y" * 50_000_000, INVALID_REQUEST, None),
]  # fmt: skip


class Wire:
    """The server's stdout, read line by line on a thread so a silent server cannot hang us."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.done = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")
        self.done.set()

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def replies_until(self, reply_id: int) -> list[dict[str, Any]]:
        """Every message up to and including the reply to ``reply_id``."""
        seen: list[dict[str, Any]] = []
        while True:
            line = self.lines.get(timeout=BOUND)
            assert line, f"the server closed stdout; saw {seen}"
            message = json.loads(line)  # anything but protocol fails here
            seen.append(message)
            if message.get("id") == reply_id and "result" in message:
                return seen


def test_every_malformed_message_is_answered_and_serving_goes_on(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    config = client_config(repo)
    proc = subprocess.Popen(
        [config["command"], *config["args"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    wire = Wire(proc)
    try:
        wire.send(json.dumps({
            "jsonrpc": "2.0", "id": 1000, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}},
        }).encode())  # fmt: skip
        wire.replies_until(1000)
        wire.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for n, (name, line, code, reply_id) in enumerate(FUZZ, 2000):
            wire.send(line)
            wire.send(ping(n))
            *errors, _ = wire.replies_until(n)
            assert len(errors) == 1, (name, errors)
            [error] = errors
            assert error["jsonrpc"] == "2.0" and "id" in error, (name, error)
            assert error["error"]["code"] == code, (name, error)
            assert error["id"] == reply_id, (name, error)
            assert error["error"]["message"], (name, error)
        remembered = json.dumps({
            "jsonrpc": "2.0", "id": 3000, "method": "tools/call",
            "params": {"name": "elfmem_ls", "arguments": {}},
        }).encode()  # fmt: skip
        wire.send(remembered)
        [listed] = wire.replies_until(3000)
        assert listed["result"]["isError"] is False
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        code = proc.wait(timeout=BOUND)
        wire.done.wait(timeout=BOUND)
        proc.stdout.close()
    assert code == 0
