"""LLM adapters: factory routing, both providers against loopback stubs, .env, analysis parsing."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from elfmem.adapters.analysis import NEUTRAL, SYSTEM, Analysis, analyse, parse_analysis
from elfmem.adapters.anthropic_llm import ANTHROPIC_VERSION, AnthropicLLM
from elfmem.adapters.dotenv import load_dotenv, parse_dotenv
from elfmem.adapters.endpoint import retry_wait
from elfmem.adapters.llm import make_llm, resolve_check
from elfmem.adapters.openai_llm import OpenAILLM
from elfmem.adapters.scripted import ScriptedLLM
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ElfmemError

# ---- a loopback server that answers from a script ----------------------------------------------


@dataclass
class Reply:
    status: int
    payload: object
    headers: dict[str, str] = field(default_factory=dict)
    hold: bool = False  # answer only after the test ends: the client must time out first


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, object]


@dataclass
class Stub:
    url: str
    script: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    fallback: Reply = field(default_factory=lambda: Reply(500, {"error": "script exhausted"}))

    def next_reply(self) -> Reply:
        return self.script.pop(0) if self.script else self.fallback


@pytest.fixture
def stub() -> Iterator[Stub]:
    state = Stub("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.seen.append(
                Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            reply = state.next_reply()
            if reply.hold:
                state.release.wait(10)
            payload = json.dumps(reply.payload).encode()
            try:
                self.send_response(reply.status)
                for key, value in {"Content-Type": "application/json", **reply.headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
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


def anthropic_ok(text: str) -> Reply:
    return Reply(
        200,
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
        },
    )


def openai_ok(text: str | None) -> Reply:
    return Reply(
        200,
        {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
        },
    )


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")
    monkeypatch.setenv("STUB_KEY", "stub-key")


# ---- the factory ------------------------------------------------------------------------------


def test_factory_returns_none_without_a_model(tmp_path: Path) -> None:
    assert make_llm(LLMConfig(), tmp_path) is None
    assert make_llm(LLMConfig(model="   ")) is None


@pytest.mark.usefixtures("keys")
def test_factory_routes_claude_models_to_anthropic() -> None:
    llm = make_llm(LLMConfig(model="claude-haiku-4-5-20251001"))
    assert isinstance(llm, AnthropicLLM)
    assert llm.identity == "anthropic:claude-haiku-4-5-20251001"


@pytest.mark.usefixtures("keys")
def test_factory_routes_other_models_to_openai_compatible() -> None:
    hosted = make_llm(LLMConfig(model="gpt-4o-mini"))
    local = make_llm(LLMConfig(model="qwen2.5:7b", base_url="http://localhost:11434/v1/"))
    assert isinstance(hosted, OpenAILLM) and isinstance(local, OpenAILLM)
    assert hosted.identity == "openai:gpt-4o-mini@https://api.openai.com/v1"
    assert local.identity == "openai:qwen2.5:7b@http://localhost:11434/v1"


@pytest.mark.parametrize(
    ("config", "variable"),
    [
        (LLMConfig(model="claude-haiku-4-5-20251001"), "ANTHROPIC_API_KEY"),
        (LLMConfig(model="gpt-4o-mini"), "OPENAI_API_KEY"),
        (
            LLMConfig(
                model="llama-3-70b", base_url="https://x.test/v1", api_key_env="TOGETHER_KEY"
            ),
            "TOGETHER_KEY",
        ),
    ],
)
def test_missing_key_is_a_config_error_naming_the_variable(
    config: LLMConfig, variable: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigError) as info:
        make_llm(config, tmp_path)
    assert variable in info.value.message
    assert f"export {variable}=" in info.value.recovery and ".env" in info.value.recovery


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = make_llm(LLMConfig(model="local-model", base_url="http://127.0.0.1:1234/v1"))
    assert isinstance(llm, OpenAILLM)


def test_factory_refuses_a_non_positive_timeout() -> None:
    with pytest.raises(ConfigError, match="timeout"):
        make_llm(LLMConfig(model="local", base_url="http://127.0.0.1:1/v1", timeout=0))


def test_factory_reads_the_key_from_the_project_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / ".env").write_text("ANTHROPIC_API_KEY=sk-from-dotenv\n")
    assert isinstance(make_llm(LLMConfig(model="claude-sonnet-4-5"), tmp_path), AnthropicLLM)


# ---- the Anthropic adapter --------------------------------------------------------------------


@pytest.mark.usefixtures("keys")
def test_anthropic_posts_messages_with_key_version_and_body(stub: Stub) -> None:
    stub.script.append(anthropic_ok("hello"))
    llm = AnthropicLLM("claude-haiku-4-5-20251001", base_url=stub.url + "/v1", backoff=0.0)
    assert llm.complete("be brief", "say hi", max_tokens=64, temperature=0.2) == "hello"
    [seen] = stub.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert seen.headers["content-type"] == "application/json"
    assert "authorization" not in seen.headers
    assert seen.body == {
        "model": "claude-haiku-4-5-20251001",
        "max_tokens": 64,
        "temperature": 0.2,
        "system": "be brief",
        "messages": [{"role": "user", "content": "say hi"}],
    }
    assert llm.identity == f"anthropic:claude-haiku-4-5-20251001@{stub.url}"


@pytest.mark.usefixtures("keys")
def test_anthropic_joins_text_blocks_and_skips_others(stub: Stub) -> None:
    stub.script.append(
        Reply(
            200,
            {
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "part one, "},
                    {"type": "text", "text": "part two"},
                ]
            },
        )
    )
    llm = AnthropicLLM("claude-x", base_url=stub.url, backoff=0.0)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "part one, part two"
    assert "system" not in stub.seen[0].body


@pytest.mark.usefixtures("keys")
def test_anthropic_retries_overload_then_succeeds(stub: Stub) -> None:
    stub.script += [
        Reply(529, {"type": "error", "error": {"message": "Overloaded"}}),
        anthropic_ok("fine"),
    ]
    llm = AnthropicLLM("claude-x", base_url=stub.url, backoff=0.0)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "fine"
    assert len(stub.seen) == 2


@pytest.mark.usefixtures("keys")
def test_anthropic_unexpected_shape_is_an_elfmem_error(stub: Stub) -> None:
    stub.script.append(Reply(200, {"id": "msg_1"}))
    llm = AnthropicLLM("claude-x", base_url=stub.url, backoff=0.0)
    with pytest.raises(ElfmemError, match="unexpected shape"):
        llm.complete("", "q", max_tokens=8, temperature=0.0)


# ---- the OpenAI-compatible adapter ------------------------------------------------------------


@pytest.mark.usefixtures("keys")
def test_openai_posts_chat_completions_with_bearer_key(stub: Stub) -> None:
    stub.script.append(openai_ok("hi there"))
    llm = OpenAILLM("gpt-test", stub.url + "/v1/", "STUB_KEY", backoff=0.0)
    assert llm.complete("sys", "user text", max_tokens=100, temperature=0.0) == "hi there"
    [seen] = stub.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer stub-key"
    assert seen.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "user text"},
        ],
        "temperature": 0.0,
        "max_tokens": 100,
    }


def test_openai_local_server_gets_no_authorization_header(stub: Stub) -> None:
    stub.script.append(openai_ok(None))
    llm = OpenAILLM("local", stub.url + "/v1", "", backoff=0.0)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == ""
    assert "authorization" not in stub.seen[0].headers
    assert stub.seen[0].body["messages"] == [{"role": "user", "content": "q"}]


def test_openai_retries_429_then_succeeds(stub: Stub) -> None:
    stub.script += [
        Reply(429, {"error": {"message": "slow down"}}),
        Reply(503, {"error": "busy"}),
        openai_ok("done"),
    ]
    llm = OpenAILLM("local", stub.url + "/v1", backoff=0.0)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "done"
    assert len(stub.seen) == 3


def test_openai_gives_up_after_the_retries_with_the_server_message(stub: Stub) -> None:
    stub.script += [Reply(500, {"error": {"message": "kaput"}})] * 3
    llm = OpenAILLM("local", stub.url + "/v1", retries=2, backoff=0.0)
    with pytest.raises(ElfmemError, match="HTTP 500: kaput"):
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert len(stub.seen) == 3


def test_openai_bad_request_fails_at_once_pointing_at_the_config(stub: Stub) -> None:
    stub.script.append(Reply(404, {"error": {"message": "model 'nope' not found"}}))
    llm = OpenAILLM("nope", stub.url + "/v1", backoff=0.0)
    with pytest.raises(ElfmemError) as info:
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert len(stub.seen) == 1
    assert "not found" in info.value.message and "`llm.model`" in info.value.recovery


@pytest.mark.usefixtures("keys")
def test_openai_rejected_key_is_a_config_error_naming_the_variable(stub: Stub) -> None:
    stub.script.append(Reply(401, {"error": {"message": "Incorrect API key"}}))
    llm = OpenAILLM("gpt-test", stub.url + "/v1", "STUB_KEY", backoff=0.0)
    with pytest.raises(ConfigError) as info:
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert "$STUB_KEY" in info.value.recovery
    assert len(stub.seen) == 1


def test_openai_timeout_is_retried_then_succeeds(stub: Stub) -> None:
    stub.script.append(Reply(200, {}, hold=True))
    stub.fallback = openai_ok("second try")  # a busy machine may time out more than once
    llm = OpenAILLM("local", stub.url + "/v1", timeout=1.0, backoff=0.0)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "second try"
    assert len(stub.seen) >= 2


def test_openai_timeout_on_the_last_attempt_is_an_elfmem_error(stub: Stub) -> None:
    stub.script.append(Reply(200, {}, hold=True))
    llm = OpenAILLM("local", stub.url + "/v1", timeout=0.5, retries=0, backoff=0.0)
    with pytest.raises(ElfmemError, match="timed out") as info:
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert "timeout" in info.value.recovery


def test_refused_connection_fails_without_retrying() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    llm = OpenAILLM("local", dead, retries=3, backoff=60.0)  # a retry would wait a minute
    with pytest.raises(ElfmemError, match="Cannot reach") as info:
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert "base_url" in info.value.recovery


def test_openai_official_endpoint_uses_max_completion_tokens(keys: None) -> None:
    llm = OpenAILLM("gpt-test", "https://api.openai.com/v1", "OPENAI_API_KEY")
    assert llm._max_tokens_field == "max_completion_tokens"


def test_retry_wait_prefers_retry_after_and_caps_the_backoff() -> None:
    assert retry_wait(0, "2", 1.0) == 2.0
    assert retry_wait(0, "", 1.0) == 1.0
    assert retry_wait(2, "soon", 1.0) == 4.0
    assert retry_wait(10, "", 1.0) == 30.0
    assert retry_wait(0, "3600", 1.0) == 30.0


def test_resolve_check_returns_the_reply_and_refuses_empty_text() -> None:
    llm = ScriptedLLM([" ok\n", ""])
    assert resolve_check(llm) == "ok"
    with pytest.raises(ElfmemError, match="empty text"):
        resolve_check(llm)


# ---- .env ------------------------------------------------------------------------------------


def test_dotenv_sets_missing_variables_without_overriding(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# keys\nexport NEW_KEY=from-file\nKEPT=file-value\n\nnot an assignment\n"
    )
    env = {"KEPT": "from-shell"}
    assert load_dotenv(tmp_path / ".env", env) == ["NEW_KEY"]
    assert env == {"KEPT": "from-shell", "NEW_KEY": "from-file"}


def test_dotenv_missing_file_is_no_error(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    assert load_dotenv(tmp_path / ".env", env) == [] and env == {}


def test_dotenv_quotes_and_comments() -> None:
    text = (
        "A='single # kept'\n"
        'B="double\\nline \\"q\\""  # comment\n'
        "C=plain value # comment\n"
        "D=a#b\n"
        "E=\n"
        "F = spaced\n"
    )
    assert parse_dotenv(text) == {
        "A": "single # kept",
        "B": 'double\nline "q"',
        "C": "plain value",
        "D": "a#b",
        "E": "",
        "F": "spaced",
    }


# ---- analysis ---------------------------------------------------------------------------------

GOOD = (
    '{"alignment": 0.8, "tags": ["db/postgres", "pooling"], "summary": "Use pgbouncer.", '
    '"revision_of": null}'
)


def test_analyse_sends_one_call_with_self_block_cue_and_lookalikes() -> None:
    llm = ScriptedLLM([GOOD])
    result = analyse(
        llm,
        "I value reliability.",
        "Use pgbouncer",
        "db pooling",
        [("0123456789abcdef", "Use pgpool")],
        max_tokens=300,
    )
    assert result == Analysis(0.8, ("db/postgres", "pooling"), "Use pgbouncer.", None)
    [(system, prompt)] = llm.calls
    assert system == SYSTEM
    for part in (
        "I value reliability.",
        "Use pgbouncer",
        "db pooling",
        "0123456789abcdef",
        "Use pgpool",
        '"revision_of": the id',
    ):
        assert part in prompt


def test_analyse_without_lookalikes_asks_for_null_revision() -> None:
    llm = ScriptedLLM([GOOD])
    analyse(llm, "", "content", "cue")
    assert '"revision_of": null' in llm.calls[0][1]
    assert "<older" not in llm.calls[0][1]


def test_parse_fenced_json() -> None:
    reply = f"Here you go:\n```json\n{GOOD}\n```\nAnything else?"
    assert parse_analysis(reply).alignment == 0.8


def test_parse_json_inside_prose_and_after_thinking() -> None:
    reply = '<think>{"alignment": 0.1} maybe</think>Sure! The result is ' + GOOD + " hope so."
    result = parse_analysis(reply)
    assert result.alignment == 0.8 and not result.malformed


def test_parse_nested_object_and_string_alignment() -> None:
    reply = '{"analysis": {"alignment": "0.25", "tags": [], "summary": "s"}}'
    assert parse_analysis(reply) == Analysis(0.25, (), "s", None)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I cannot help with that.",
        "{not json}",
        '{"tags": ["a"]}',
        '{"alignment": "high"}',
        '{"alignment": true}',
        '{"alignment": NaN}',
        '["alignment", 1]',
    ],
)
def test_parse_garbage_is_neutral_and_malformed(reply: str) -> None:
    assert parse_analysis(reply) == NEUTRAL == Analysis(0.5, (), "", None, malformed=True)


@pytest.mark.parametrize(("raw", "clamped"), [(1.7, 1.0), (-3, 0.0), (85, 1.0), (0, 0.0)])
def test_parse_clamps_alignment(raw: float, clamped: float) -> None:
    assert parse_analysis(json.dumps({"alignment": raw})).alignment == clamped


def test_parse_drops_invalid_reserved_and_duplicate_tags_and_caps_at_five() -> None:
    tags = [
        "has space",
        "#ok",
        "ok",
        7,
        "self/constitutional",
        "peer/ada",
        "a%",
        "-lead",
        "t1",
        "t2",
        "t3",
        "t4",
        "t5",
    ]
    result = parse_analysis(json.dumps({"alignment": 0.5, "tags": tags}))
    assert result.tags == ("ok", "t1", "t2", "t3", "t4")
    assert not result.malformed


def test_parse_keeps_revision_only_among_offered_ids() -> None:
    offered = ["0123456789abcdef", "fedcba9876543210"]
    good = parse_analysis('{"alignment": 0.5, "revision_of": " fedcba9876543210 "}', offered)
    invented = parse_analysis('{"alignment": 0.5, "revision_of": "aaaaaaaaaaaaaaaa"}', offered)
    unasked = parse_analysis('{"alignment": 0.5, "revision_of": "0123456789abcdef"}')
    assert good.revision_of == "fedcba9876543210"
    assert invented.revision_of is None and unasked.revision_of is None


def test_parse_summary_is_one_line_and_capped() -> None:
    result = parse_analysis(json.dumps({"alignment": 0.5, "summary": "a\n  b " + "x" * 400}))
    assert result.summary.startswith("a b x") and "\n" not in result.summary
    assert len(result.summary) == 300


def test_analyse_lets_transport_errors_through() -> None:
    llm = ScriptedLLM([ElfmemError("down", "retry")])
    with pytest.raises(ElfmemError, match="down"):
        analyse(llm, "", "content", "cue")


# ---- the scripted fake ------------------------------------------------------------------------


def test_scripted_llm_replays_records_and_runs_out() -> None:
    llm = ScriptedLLM(["first"])
    llm.enqueue("second")
    assert llm.complete("s1", "p1", max_tokens=1, temperature=0.0) == "first"
    assert llm.complete("s2", "p2", max_tokens=1, temperature=0.0) == "second"
    assert llm.calls == [("s1", "p1"), ("s2", "p2")]
    assert llm.identity == "scripted" and llm.remaining == 0
    with pytest.raises(ElfmemError, match="ran out of replies at call 3") as info:
        llm.complete("s3", "p3", max_tokens=1, temperature=0.0)
    assert "enqueue()" in info.value.recovery


def test_scripted_llm_with_a_responder_answers_every_call_after_the_queue() -> None:
    llm = ScriptedLLM(lambda system, prompt: f"{system}|{prompt}")
    llm.enqueue("queued")
    assert llm.complete("a", "b", max_tokens=1, temperature=0.0) == "queued"
    assert llm.complete("a", "b", max_tokens=1, temperature=0.0) == "a|b"
