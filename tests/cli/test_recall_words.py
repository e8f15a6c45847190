"""What recall says beside its answer speaks of what the person chose: a shortfall against a
number they asked for, and blocks a filter kept out when the filter is theirs.

Real repository, the real embedded model, the CLI through click's runner.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.cli import cli

OPS = [
    "The API rate limit is 100 req/min per key",
    "Grafana dashboards live in the ops folder",
    "Postgres backups run nightly at 02:00 UTC",
]


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def memory(repo: Path) -> Path:
    assert run(repo, "init", "--name", "Ada")[0] == 0
    for text in OPS:
        assert run(repo, "remember", text, "--tags", "ops")[0] == 0
    code, _, err = run(repo, "dream", "--no-llm")
    assert code == 0, err
    return repo


def test_a_shortfall_is_said_only_against_a_number_asked_for(memory: Path) -> None:
    code, out, err = run(memory, "recall", "what is the API rate limit")
    assert code == 0 and "100 req/min" in out
    assert "Only" not in err and "asked for" not in err, err
    code, out, err = run(memory, "recall", "what is the API rate limit", "--top-k", "5")
    assert code == 0 and "100 req/min" in out
    assert "Only 1 of the 5 blocks asked for bear on this query." in err
    _, out, _ = run(memory, "recall", "what is the API rate limit", "--json")
    assert json.loads(out)["shortfall"] == ""


def test_nothing_bearing_is_said_whether_or_not_a_number_was_asked(memory: Path) -> None:
    code, out, err = run(memory, "recall", "zebra migration patterns in Kenya")
    assert code == 0 and "Nothing in memory matched." in out
    assert "Nothing in memory bears on this query." in err


def test_excluded_by_filter_only_when_the_filter_is_the_persons(memory: Path) -> None:
    assert run(memory, "init", "--seed")[0] == 0  # SELF's ten principles, which attention skips
    _, out, _ = run(memory, "recall", "what is the API rate limit", "--json")
    answer = json.loads(out)
    assert answer["excluded_by_filter"] > 0  # the attention frame keeps SELF's principles out
    assert "excluded by filter" not in answer["summary"], answer["summary"]
    config = memory / ".elfmem" / "config.yaml"
    config.write_text(
        config.read_text() + "\nframes:\n  ops:\n    base: attention\n    exclude: [ops]\n"
    )
    _, out, _ = run(memory, "recall", "what is the API rate limit", "--frame", "ops", "--json")
    answer = json.loads(out)
    assert answer["excluded_by_filter"] == len(OPS) and "100 req/min" not in answer["text"]
    assert f"{answer['excluded_by_filter']} excluded by filter" in answer["summary"]
