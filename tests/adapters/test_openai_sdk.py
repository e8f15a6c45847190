"""The OpenAI adapter on the real ``openai`` SDK, against the loopback fake provider.

Every failure a user can meet (rate limit, server errors, timeout, a body that is not JSON, an
answer off the schema, a refusal, a wrong key) must arrive as an elfmem error with a recovery.
"""

from __future__ import annotations

import json
import socket

import pytest

from elfmem.adapters.analysis import NEUTRAL, SCHEMA, analyse
from elfmem.adapters.llm import make_llm
from elfmem.adapters.openai_llm import NO_KEY, OpenAILLM
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ModelReplyError, ProviderError
from tests.adapters.fake_provider import (
    FAST_RETRY,
    FakeProvider,
    Reply,
    openai_chat,
    openai_error,
)

GOOD = {"alignment": 0.8, "tags": ["db/postgres"], "summary": "Use pgbouncer.", "revision_of": None}


def local(provider: FakeProvider, **options: float) -> OpenAILLM:
    retries = int(options.pop("max_retries", 2))
    return OpenAILLM("local", provider.url + "/v1", **options, max_retries=retries)


def ask(llm: OpenAILLM) -> str:
    return llm.complete("sys", "q", max_tokens=8, temperature=0.0)


def ask_json(llm: OpenAILLM) -> dict[str, object]:
    return llm.complete_json("sys", "q", SCHEMA, name="analysis", max_tokens=64, temperature=0.0)


@pytest.mark.usefixtures("keys")
def test_success_sends_one_chat_completion_and_meters_its_tokens(provider: FakeProvider) -> None:
    provider.script.append(openai_chat("hi there", usage=(40, 7, 32)))
    llm = OpenAILLM("gpt-test", provider.url + "/v1/", "STUB_KEY")
    assert llm.complete("sys", "user text", max_tokens=100, temperature=0.0) == "hi there"
    [seen] = provider.seen
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
    total = llm.usage.total
    assert (total.input, total.output, total.cache_read, total.calls) == (40, 7, 32, 1)
    assert llm.identity == f"openai:gpt-test@{provider.url}/v1"


def test_a_local_server_needs_no_key_and_a_missing_usage_still_counts_the_call(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider.script.append(openai_chat(None, usage=None))
    llm = local(provider)
    assert ask(llm) == ""
    assert provider.seen[0].headers["authorization"] == f"Bearer {NO_KEY}"
    assert llm.usage.total.calls == 1 and llm.usage.total.input == 0


def test_content_sent_as_a_list_of_parts_is_joined(provider: FakeProvider) -> None:
    reply = openai_chat("x")
    assert isinstance(reply.payload, dict)
    parts = [
        {"type": "text", "text": "part one, "},
        {"type": "image"},
        {"type": "text", "text": "two"},
    ]
    reply.payload["choices"][0]["message"]["content"] = parts
    provider.script.append(reply)
    assert ask(local(provider)) == "part one, two"


def test_429_then_success_is_retried_by_the_sdk(provider: FakeProvider) -> None:
    provider.script += [openai_error(429, "slow down", FAST_RETRY), openai_chat("done")]
    llm = local(provider)
    assert ask(llm) == "done"
    assert len(provider.seen) == 2
    assert llm.usage.total.calls == 1  # only the answered call is billed


def test_429_past_the_retries_is_a_provider_error_suggesting_a_smaller_run(
    provider: FakeProvider,
) -> None:
    provider.script += [openai_error(429, "slow down", FAST_RETRY)] * 2
    with pytest.raises(ProviderError) as info:
        ask(local(provider, max_retries=1))
    assert info.value.status == 429 and "slow down" in info.value.message
    assert "max_retries" in info.value.recovery and "--max" in info.value.recovery


def test_500s_exhausting_the_retries_name_the_server_message(provider: FakeProvider) -> None:
    provider.script += [openai_error(500, "kaput", FAST_RETRY)] * 3
    with pytest.raises(ProviderError) as info:
        ask(local(provider, max_retries=2))
    assert len(provider.seen) == 3
    assert info.value.status == 500 and "HTTP 500: kaput" in info.value.message
    assert "2 retries spent" in info.value.message and "retry later" in info.value.recovery


def test_a_timeout_is_a_provider_error_pointing_at_llm_timeout(provider: FakeProvider) -> None:
    provider.script.append(Reply(200, {}, hold=True))
    with pytest.raises(ProviderError) as info:
        ask(local(provider, timeout=0.3, max_retries=0))
    assert "did not answer within 0.3s" in info.value.message
    assert "`llm.timeout`" in info.value.recovery


def test_a_timeout_is_retried_then_succeeds(provider: FakeProvider) -> None:
    provider.script.append(Reply(200, {}, hold=True))
    provider.answer = lambda _seen: openai_chat("second try")
    assert ask(local(provider, timeout=0.5, max_retries=2)) == "second try"
    assert len(provider.seen) >= 2


def test_a_body_that_is_not_json_is_a_provider_error_about_base_url(
    provider: FakeProvider,
) -> None:
    provider.script.append(Reply(200, b"<html>proxy login</html>"))
    with pytest.raises(ProviderError) as info:
        ask(local(provider))
    assert "not JSON" in info.value.message and "base_url" in info.value.recovery


def test_a_wrong_key_is_a_config_error_naming_the_variable_and_not_retried(
    provider: FakeProvider, keys: None
) -> None:
    provider.script.append(openai_error(401, "Incorrect API key"))
    with pytest.raises(ConfigError) as info:
        ask(OpenAILLM("gpt-test", provider.url + "/v1", "STUB_KEY"))
    assert "Incorrect API key" in info.value.message and "$STUB_KEY" in info.value.recovery
    assert len(provider.seen) == 1


def test_a_bad_request_fails_at_once_pointing_at_the_model(provider: FakeProvider) -> None:
    provider.script.append(openai_error(404, "model 'nope' not found"))
    with pytest.raises(ProviderError) as info:
        ask(local(provider))
    assert len(provider.seen) == 1
    assert "not found" in info.value.message and "`llm.model`" in info.value.recovery


def test_a_refused_connection_is_a_provider_error_about_base_url() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with pytest.raises(ProviderError, match="Cannot reach") as info:
        ask(OpenAILLM("local", dead, max_retries=0))
    assert "base_url" in info.value.recovery


def test_a_refusal_is_a_clear_error_keeping_the_refusal(provider: FakeProvider) -> None:
    provider.script += [openai_chat(None, refusal="I can't help with that.")] * 2
    llm = local(provider)
    with pytest.raises(ModelReplyError, match="refused") as info:
        ask(llm)
    assert info.value.raw == "I can't help with that." and info.value.recovery
    with pytest.raises(ModelReplyError, match="refused"):
        ask_json(llm)


def test_structured_output_asks_for_the_json_schema_and_returns_the_object(
    provider: FakeProvider,
) -> None:
    provider.script.append(openai_chat(json.dumps(GOOD)))
    assert ask_json(local(provider)) == GOOD
    response_format = provider.seen[0].body["response_format"]
    assert response_format == {
        "type": "json_schema",
        "json_schema": {"name": "analysis", "schema": SCHEMA, "strict": True},
    }


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('Sure! {"alignment": 0.8}', "not one JSON object"),
        ('{"alignment": "high", "tags": [], "summary": "", "revision_of": null}', "alignment"),
        ('{"alignment": 0.5, "tags": [], "summary": ""}', "revision_of is missing"),
    ],
)
def test_an_answer_off_the_schema_is_a_clear_error_keeping_the_raw_reply(
    provider: FakeProvider, reply: str, problem: str
) -> None:
    provider.script.append(openai_chat(reply))
    with pytest.raises(ModelReplyError, match=problem) as info:
        ask_json(local(provider))
    assert info.value.raw == reply and ".raw" in info.value.recovery


def test_an_answer_cut_off_by_max_tokens_says_to_raise_it(provider: FakeProvider) -> None:
    provider.script.append(openai_chat('{"alignment": 0.', finish="length"))
    with pytest.raises(ModelReplyError, match="ran out of tokens") as info:
        ask_json(local(provider))
    assert info.value.raw == '{"alignment": 0.' and "llm.max_tokens" in info.value.recovery


def test_analyse_uses_structured_output_and_salvages_or_neutralises_bad_replies(
    provider: FakeProvider,
) -> None:
    provider.script += [
        openai_chat(json.dumps(GOOD)),
        openai_chat("```json\n" + json.dumps(GOOD) + "\n```"),  # a server ignoring the schema
        openai_chat(None, refusal="No."),
    ]
    llm = local(provider)
    first, second, third = (analyse(llm, "SELF", "block", "cue") for _ in range(3))
    assert first.tags == ("db/postgres",) and first.alignment == 0.8 and not first.malformed
    assert second == first
    assert third == NEUTRAL
    assert llm.usage.total.calls == 3


def test_the_official_endpoint_uses_max_completion_tokens(
    provider: FakeProvider, keys: None
) -> None:
    llm = OpenAILLM("gpt-test", "https://api.openai.com/v1", "OPENAI_API_KEY")
    assert llm._max_tokens_field == "max_completion_tokens"


def test_azure_is_chosen_by_api_version_and_calls_the_deployment(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    provider.script.append(openai_chat("from azure"))
    config = LLMConfig(model="my-deployment", base_url=provider.url, api_version="2024-10-21")
    llm = make_llm(config)
    assert isinstance(llm, OpenAILLM)
    assert llm.complete("", "q", max_tokens=8, temperature=0.0) == "from azure"
    [seen] = provider.seen
    assert seen.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    assert seen.headers["api-key"] == "az-key"


def test_the_factory_passes_timeout_and_retries_from_the_config(provider: FakeProvider) -> None:
    provider.script += [openai_error(503, "busy", FAST_RETRY)] * 2
    config = LLMConfig(model="local", base_url=provider.url + "/v1", max_retries=1, timeout=5)
    llm = make_llm(config)
    assert llm is not None
    with pytest.raises(ProviderError, match="1 retries spent"):
        llm.complete("", "q", max_tokens=8, temperature=0.0)
    assert len(provider.seen) == 2


def test_the_factory_refuses_negative_retries() -> None:
    with pytest.raises(ConfigError, match="max_retries"):
        make_llm(LLMConfig(model="local", base_url="http://127.0.0.1:1/v1", max_retries=-1))
