"""Dream through the real OpenAI SDK equals dream through the ScriptedLLM, and says what it cost.

The SDK path adds transport, structured output and schema checks between the model and the
memory; none of that may change what is written. Two copies of one repository dream over the same
inbox, one with the scripted model and one with the SDK adapter pointed at the fake provider
answering the same script: the content commits (tree and message) and the ledger events (minus
their timestamps and random event ids) must be identical; with the writer's clock fixed, so are
the commit ids.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner

from elfmem.adapters.openai_llm import OpenAILLM
from elfmem.adapters.scripted import ScriptedLLM
from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.rhythms.results import TOKEN_KEYS, DreamResult
from elfmem.store import writer
from tests.adapters.fake_provider import FakeProvider, Reply, Seen, openai_chat
from tests.conftest import arun, git

FACTS = [
    ("Postgres needs pgbouncer above 100 clients", "choosing a connection pooler"),
    ("Deploys happen on Tuesdays after the standup", "planning a release"),
    ("The billing service retries webhooks three times", "debugging billing"),
    ("Redis keys for sessions expire after 30 minutes", "session timeouts"),
]


def script(system: str, prompt: str) -> str:
    """One judgement per block, derived from its text, so both paths get the same answers."""
    block = re.search(r"<block>\n(.*?)\n</block>", prompt, re.DOTALL)
    text = block.group(1) if block else ""
    word = re.findall(r"[a-z]+", text.lower())[0]
    return json.dumps(
        {
            "alignment": round(0.3 + len(text) % 7 / 10, 2),
            "tags": [f"topic/{word}", "scripted"],
            "summary": f"About {word}.",
            "revision_of": None,
        }
    )


def over_the_wire(seen: Seen) -> Reply:
    messages = seen.body["messages"]
    assert isinstance(messages, list)
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    return openai_chat(script(system, prompt), usage=(100, 20, 64))


def inbox_repo(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember_many([{"content": c, "cue": q} for c, q in FACTS]))
    arun(system.close())


def dream_with(repo: Path, llm: object) -> DreamResult:
    system = arun(MemorySystem.from_config(repo))
    system.llm = llm  # type: ignore[assignment]
    result = arun(system.dream(max_blocks=10))
    arun(system.close())
    return result


def history(repo: Path, since: str) -> list[tuple[str, str]]:
    """Each content commit after ``since`` as (tree, message)."""
    out = git(repo, "log", "--format=%T%x00%B%x1e", f"{since}..HEAD")
    return [tuple(entry.strip().split("\0", 1)) for entry in out.split("\x1e") if entry.strip()]  # type: ignore[misc]


def ledger(repo: Path) -> list[dict[str, object]]:
    """Every ledger event in the notes, without the fields that are random or the clock's."""
    events: list[dict[str, object]] = []
    for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/").split():
        for line in git(repo, "notes", f"--ref={ref}", "list").splitlines():
            note, _ = line.split()
            for row in git(repo, "cat-file", "-p", note).splitlines():
                if row.startswith("{"):
                    event = json.loads(row)
                    events.append({k: v for k, v in event.items() if k not in ("ts", "eid")})
    return sorted(events, key=lambda e: json.dumps(e, sort_keys=True))


def test_scripted_and_sdk_dreams_write_the_same_commits(
    repo: Path, tmp_path: Path, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fixed clock for the writer's commits, so equal trees and messages mean equal commit ids.
    fixed = SimpleNamespace(time=lambda: 1_800_000_000.0, sleep=time.sleep)
    monkeypatch.setattr(writer, "time", fixed)
    inbox_repo(repo)
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin)
    start = git(repo, "rev-parse", "HEAD").strip()
    assert git(twin, "rev-parse", "HEAD").strip() == start

    scripted = dream_with(repo, ScriptedLLM(script))
    provider.answer = over_the_wire
    sdk = dream_with(twin, OpenAILLM("local", provider.url + "/v1", max_retries=0))

    assert len(provider.seen) == len(FACTS)
    assert sdk.promoted == scripted.promoted and len(sdk.promoted) == len(FACTS)
    assert sdk.analyses == scripted.analyses and sdk.malformed == scripted.malformed == 0
    assert history(twin, start) == history(repo, start) != []
    assert git(twin, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")
    assert ledger(twin) == ledger(repo) != []
    assert scripted.tokens == {
        "input": 0,
        "output": 0,
        "cache_read": 0,
        "cache_creation": 0,
        "calls": len(FACTS),
    }
    assert sdk.tokens == {
        "input": 100 * len(FACTS),
        "output": 20 * len(FACTS),
        "cache_read": 64 * len(FACTS),
        "cache_creation": 0,
        "calls": len(FACTS),
    }


def test_dream_json_reports_tokens_from_the_configured_sdk_model(
    repo: Path, provider: FakeProvider
) -> None:
    inbox_repo(repo)
    config = repo / ".elfmem" / "config.yaml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["llm"] = {"model": "local", "base_url": provider.url + "/v1", "max_retries": 0}
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    provider.answer = over_the_wire
    result = CliRunner().invoke(cli, ["-C", str(repo), "dream", "--json", "--max", "10"])
    assert result.exit_code == 0, result.stderr
    tokens = json.loads(result.stdout)["tokens"]
    assert list(tokens) == list(TOKEN_KEYS)
    assert tokens["calls"] == len(FACTS) and tokens["input"] == 100 * len(FACTS)


def test_a_dream_without_a_model_reports_zero_tokens(repo: Path) -> None:
    inbox_repo(repo)
    system = arun(MemorySystem.from_config(repo))
    result = arun(system.dream(no_llm=True))
    arun(system.close())
    assert result.tokens == dict.fromkeys(TOKEN_KEYS, 0)
