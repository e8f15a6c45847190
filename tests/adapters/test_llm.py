"""The LLM factory, .env, analysis parsing and the scripted model (the SDK adapters have their own
files, run against tests/adapters/fake_provider.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elfmem.adapters.analysis import NEUTRAL, SYSTEM, Analysis, analyse, parse_analysis
from elfmem.adapters.anthropic_llm import AnthropicLLM
from elfmem.adapters.dotenv import load_dotenv, parse_dotenv
from elfmem.adapters.llm import key_env_for, make_llm, resolve_check
from elfmem.adapters.openai_llm import OpenAILLM
from elfmem.adapters.scripted import ScriptedLLM
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ElfmemError

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


@pytest.mark.parametrize(
    ("config", "variable"),
    [
        (LLMConfig(model="claude-haiku-4-5-20251001"), "ANTHROPIC_API_KEY"),
        (LLMConfig(model="gpt-4o-mini"), "OPENAI_API_KEY"),
        (LLMConfig(model="gpt-4o-mini", base_url="https://api.openai.com/v1/"), "OPENAI_API_KEY"),
        (
            LLMConfig(model="dep", base_url="https://r.openai.azure.com", api_version="v"),
            "AZURE_OPENAI_API_KEY",
        ),
        (LLMConfig(model="qwen", base_url="http://localhost:11434/v1"), ""),
        (LLMConfig(model="claude-x", api_key_env=" MY_KEY "), "MY_KEY"),
    ],
)
def test_key_env_for_names_the_variable_the_factory_and_doctor_read(
    config: LLMConfig, variable: str
) -> None:
    assert key_env_for(config) == variable
