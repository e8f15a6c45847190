"""The Anthropic adapter on the real ``anthropic`` SDK, against the loopback fake provider.

Besides the failures every provider shares, Claude's own wire features are checked: the system
prompt carries ``cache_control``, cache reads and writes are metered, structured answers come
through a forced tool, and ``stop_reason: refusal`` is a clear error.
"""

from __future__ import annotations

import json

import pytest

from elfmem.adapters.analysis import SCHEMA, analyse
from elfmem.adapters.anthropic_llm import AnthropicLLM
from elfmem.adapters.llm import make_llm
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ModelReplyError, ProviderError
from tests.adapters.fake_provider import (
    FAST_RETRY,
    FakeProvider,
    Reply,
    anthropic_error,
    anthropic_message,
)

GOOD = {
    "alignment": 0.7,
    "tags": ["ops/deploy"],
    "summary": "Deploy on Tuesdays.",
    "revision_of": None,
}

pytestmark = pytest.mark.usefixtures("keys")


def claude(provider: FakeProvider, *, timeout: float = 5.0, max_retries: int = 2) -> AnthropicLLM:
    return AnthropicLLM(
        "claude-x", base_url=provider.url + "/v1", timeout=timeout, max_retries=max_retries
    )


def ask(llm: AnthropicLLM) -> str:
    return llm.complete("be brief", "q", max_tokens=8, temperature=0.0)


def ask_json(llm: AnthropicLLM) -> dict[str, object]:
    return llm.complete_json("sys", "q", SCHEMA, name="analysis", max_tokens=64, temperature=0.0)


def test_success_caches_the_system_prompt_and_meters_cache_tokens(provider: FakeProvider) -> None:
    provider.script.append(anthropic_message("hello", usage=(30, 4, 900, 0)))
    provider.script.append(anthropic_message("again", usage=(30, 5, 0, 900)))
    llm = claude(provider)
    assert llm.complete("be brief", "say hi", max_tokens=64, temperature=0.2) == "hello"
    assert ask(llm) == "again"
    seen = provider.seen[0]
    assert seen.path == "/v1/messages"
    assert "sk-ant-test" in seen.headers.get("x-api-key", seen.headers.get("authorization", ""))
    assert seen.headers["anthropic-version"]
    assert seen.body == {
        "model": "claude-x",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "say hi"}],
    }
    total = llm.usage.total
    assert (total.input, total.output, total.cache_read, total.cache_creation) == (60, 9, 900, 900)
    assert total.calls == 2
    assert llm.identity == f"anthropic:claude-x@{provider.url}"


def test_text_blocks_are_joined_and_others_skipped(provider: FakeProvider) -> None:
    reply = anthropic_message("part one, ")
    assert isinstance(reply.payload, dict)
    reply.payload["content"] = [
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "text", "text": "part one, "},
        {"type": "text", "text": "part two"},
    ]
    provider.script.append(reply)
    llm = claude(provider)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "part one, part two"
    assert "system" not in provider.seen[0].body


@pytest.mark.parametrize("status", [429, 529])
def test_rate_limit_or_overload_then_success_is_retried(
    provider: FakeProvider, status: int
) -> None:
    provider.script += [anthropic_error(status, "busy", FAST_RETRY), anthropic_message("fine")]
    assert ask(claude(provider)) == "fine"
    assert len(provider.seen) == 2


def test_500s_exhausting_the_retries_name_the_server_message(provider: FakeProvider) -> None:
    provider.script += [anthropic_error(500, "kaput", FAST_RETRY)] * 2
    with pytest.raises(ProviderError) as info:
        ask(claude(provider, max_retries=1))
    assert len(provider.seen) == 2
    assert info.value.status == 500 and "HTTP 500: kaput" in info.value.message
    assert info.value.recovery


def test_a_timeout_is_a_provider_error_pointing_at_llm_timeout(provider: FakeProvider) -> None:
    provider.script.append(Reply(200, {}, hold=True))
    with pytest.raises(ProviderError, match="did not answer within 0.3s") as info:
        ask(claude(provider, timeout=0.3, max_retries=0))
    assert "`llm.timeout`" in info.value.recovery


def test_a_body_that_is_not_json_is_a_provider_error(provider: FakeProvider) -> None:
    provider.script.append(Reply(200, b"garbage"))
    with pytest.raises(ProviderError, match="not JSON") as info:
        ask(claude(provider))
    assert "base_url" in info.value.recovery


def test_a_wrong_key_is_a_config_error_naming_the_variable(provider: FakeProvider) -> None:
    provider.script.append(anthropic_error(401, "invalid x-api-key"))
    with pytest.raises(ConfigError, match="invalid x-api-key") as info:
        ask(claude(provider))
    assert "$ANTHROPIC_API_KEY" in info.value.recovery and len(provider.seen) == 1


def test_a_refusal_is_a_clear_error_keeping_what_was_said(provider: FakeProvider) -> None:
    provider.script += [anthropic_message("I won't judge this.", stop_reason="refusal")] * 2
    llm = claude(provider)
    with pytest.raises(ModelReplyError, match="refused") as info:
        ask(llm)
    assert info.value.raw == "I won't judge this." and info.value.recovery
    with pytest.raises(ModelReplyError, match="refused"):
        ask_json(llm)
    assert llm.usage.total.calls == 2  # a refusal is still billed


def test_structured_output_forces_a_tool_with_the_schema(provider: FakeProvider) -> None:
    provider.script.append(anthropic_message(tool=("analysis", GOOD), stop_reason="tool_use"))
    assert ask_json(claude(provider)) == GOOD
    body = provider.seen[0].body
    assert body["tools"] == [
        {"name": "analysis", "description": "Record your answer.", "input_schema": SCHEMA}
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "analysis"}


def test_a_tool_input_off_the_schema_is_a_clear_error_keeping_the_raw_input(
    provider: FakeProvider,
) -> None:
    bad = {"alignment": "high", "tags": "ops", "summary": "x", "revision_of": None}
    provider.script.append(anthropic_message(tool=("analysis", bad), stop_reason="tool_use"))
    with pytest.raises(ModelReplyError, match=r"\$.alignment is str") as info:
        ask_json(claude(provider))
    assert json.loads(info.value.raw) == bad


def test_an_answer_without_the_tool_call_keeps_the_text(provider: FakeProvider) -> None:
    provider.script.append(anthropic_message(json.dumps(GOOD), stop_reason="max_tokens"))
    with pytest.raises(ModelReplyError, match="without calling") as info:
        ask_json(claude(provider))
    assert info.value.raw == json.dumps(GOOD) and "max_tokens" in info.value.recovery


def test_analyse_salvages_a_text_answer_through_the_tolerant_parser(
    provider: FakeProvider,
) -> None:
    provider.script += [
        anthropic_message(tool=("analysis", GOOD), stop_reason="tool_use"),
        anthropic_message("Here you go: " + json.dumps(GOOD)),
    ]
    llm = claude(provider)
    first, second = (analyse(llm, "SELF", "block", "cue") for _ in range(2))
    assert first.tags == ("ops/deploy",) and not first.malformed and second == first


def test_the_factory_passes_timeout_and_retries_from_the_config(provider: FakeProvider) -> None:
    provider.script += [anthropic_error(529, "overloaded", FAST_RETRY)] * 4
    llm = make_llm(LLMConfig(model="claude-x", base_url=provider.url, max_retries=3))
    assert isinstance(llm, AnthropicLLM)
    with pytest.raises(ProviderError, match="3 retries spent"):
        ask(llm)
    assert len(provider.seen) == 4
