"""A loopback server that speaks OpenAI's and Anthropic's wire formats, for the real SDKs to call.

The adapters are tested through the official SDKs themselves (their retries, timeouts, parsing and
typed errors are the behaviour under test), so the fake sits at the HTTP boundary: a
``http.server`` on 127.0.0.1 at a random port, in a thread of the test process, answering from a
script of replies and recording every request. No network, no key.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAST_RETRY = {"retry-after-ms": "1"}
"""Both SDKs wait what the server asks before a retry: 1 ms keeps retry tests fast."""


@dataclass
class Reply:
    status: int
    payload: object
    """A JSON value, or raw bytes sent as they are (to test a body that is not JSON)."""
    headers: dict[str, str] = field(default_factory=dict)
    hold: bool = False
    """Answer only once the test ends: the client must time out first."""


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeProvider:
    url: str = ""
    script: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    answer: Callable[[Seen], Reply] | None = None
    """Answers every request once the script is spent (a responder, like ScriptedLLM's)."""
    release: threading.Event = field(default_factory=threading.Event)

    def next_reply(self, seen: Seen) -> Reply:
        if self.script:
            return self.script.pop(0)
        if self.answer is not None:
            return self.answer(seen)
        return Reply(500, {"error": {"message": "fake provider: script exhausted"}})


def serve() -> Iterator[FakeProvider]:
    """Run a FakeProvider for the duration of a fixture."""
    state = FakeProvider()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            state.seen.append(seen)
            reply = state.next_reply(seen)
            if reply.hold:
                state.release.wait(10)
            payload = reply.payload
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(reply.status)
                for key, value in {"Content-Type": "application/json", **reply.headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client already gave up on a held reply

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


# ---- OpenAI: chat completions and embeddings ---------------------------------------------------


def openai_chat(
    text: str | None,
    *,
    refusal: str | None = None,
    finish: str = "stop",
    usage: tuple[int, int, int] | None = (12, 5, 0),
) -> Reply:
    """A ``chat.completion``; ``usage`` is (prompt, completion, cached prompt) tokens."""
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": text, "refusal": refusal},
            }
        ],
    }
    if usage is not None:
        prompt, completion, cached = usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
    return Reply(200, body)


def openai_embeddings(rows: list[list[float]]) -> Reply:
    data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
    return Reply(
        200,
        {
            "object": "list",
            "model": "fake",
            "data": data,
            "usage": {"prompt_tokens": 3 * len(rows), "total_tokens": 3 * len(rows)},
        },
    )


def openai_error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "fake_error"}}, headers or {})


# ---- Anthropic: messages -------------------------------------------------------------------------


def anthropic_message(
    text: str | None = None,
    *,
    tool: tuple[str, object] | None = None,
    stop_reason: str = "end_turn",
    usage: tuple[int, int, int, int] = (20, 6, 0, 0),
) -> Reply:
    """A ``message``; ``tool`` is (name, input) of a tool_use block; ``usage`` is (input, output,
    cache read, cache creation) tokens."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool is not None:
        content.append({"type": "tool_use", "id": "toolu_fake", "name": tool[0], "input": tool[1]})
    return Reply(
        200,
        {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "content": content,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "cache_read_input_tokens": usage[2],
                "cache_creation_input_tokens": usage[3],
            },
        },
    )


def anthropic_error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
    return Reply(
        status,
        {"type": "error", "error": {"type": kind.get(status, "api_error"), "message": message}},
        headers or {},
    )
