"""The schema check behind structured output, token metering, and the SDKs staying out of
``import elfmem``."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest

from elfmem.adapters.analysis import SCHEMA
from elfmem.adapters.scripted import ScriptedLLM
from elfmem.adapters.structured import checked, decoded, problems
from elfmem.adapters.usage import Meter, Usage, tokens_since, usage_of
from elfmem.errors import ModelReplyError
from elfmem.rhythms.results import TOKEN_KEYS

GOOD = {"alignment": 0.5, "tags": ["a"], "summary": "s", "revision_of": None}


def test_a_reply_that_fits_the_schema_has_no_problems() -> None:
    assert problems(GOOD, SCHEMA) == []
    assert problems({**GOOD, "revision_of": "abc", "alignment": 1}, SCHEMA) == []


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({**GOOD, "alignment": True}, "$.alignment is bool, expected number"),
        ({**GOOD, "alignment": "0.5"}, "$.alignment is str, expected number"),
        ({**GOOD, "tags": ["a", 3]}, "$.tags[1] is int, expected string"),
        ({**GOOD, "revision_of": 7}, "$.revision_of is int, expected string or null"),
        ({**GOOD, "extra": 1}, "$.extra is not allowed"),
        ({k: v for k, v in GOOD.items() if k != "summary"}, "$.summary is missing"),
        (["not", "an", "object"], "$ is list, expected object"),
    ],
)
def test_each_way_off_the_schema_is_named(reply: object, problem: str) -> None:
    assert problem in problems(reply, SCHEMA)
    with pytest.raises(ModelReplyError) as info:
        checked(reply, SCHEMA, "raw text", "model")
    assert info.value.raw == "raw text" and problem in info.value.message


def test_decoded_refuses_text_around_the_object_and_keeps_it() -> None:
    assert decoded(
        '{"alignment": 0.5, "tags": [], "summary": "", "revision_of": null}', SCHEMA, "m"
    )
    with pytest.raises(ModelReplyError, match="not one JSON object") as info:
        decoded("```json\n{}\n```", SCHEMA, "model")
    assert info.value.raw == "```json\n{}\n```"


def test_usage_keys_are_the_documented_token_keys() -> None:
    assert tuple(f.name for f in fields(Usage)) == TOKEN_KEYS
    assert tuple(Usage().as_dict()) == TOKEN_KEYS


def test_a_meter_sums_calls_and_treats_missing_fields_as_zero() -> None:
    meter = Meter()
    meter.add(10, 2, 5, None)
    meter.add(None, 3)
    assert meter.total == Usage(input=10, output=5, cache_read=5, cache_creation=0, calls=2)


def test_tokens_since_counts_only_the_span_and_zero_for_a_model_without_a_meter() -> None:
    llm = ScriptedLLM(["a", "b", "c"])
    llm.complete("", "q", max_tokens=1, temperature=0.0)
    before = usage_of(llm)
    llm.complete("", "q", max_tokens=1, temperature=0.0)
    llm.complete("", "q", max_tokens=1, temperature=0.0)
    assert tokens_since(llm, before) == {**dict.fromkeys(TOKEN_KEYS, 0), "calls": 2}
    assert tokens_since(object(), Usage()) == dict.fromkeys(TOKEN_KEYS, 0)


def test_importing_elfmem_does_not_import_the_sdks() -> None:
    probe = (
        "import sys, elfmem.api, elfmem.cli, elfmem.adapters.llm, elfmem.adapters.openai_llm, "
        "elfmem.adapters.openai_compat; "
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
