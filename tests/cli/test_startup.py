"""What the command line loads before it does anything: hooks run it on every commit and checkout.

Times are measured by bench/startup.py, never asserted; these tests keep the cause away: the
modules behind ``--version``, ``--help`` and a hook with nothing to do must not pull in the API,
numpy, pygit2, the MCP SDK or an LLM client; ``remember`` and ``status`` load neither numpy, the
embedding runtime, the MCP SDK, an LLM client, PyYAML (once the config was read), nor the layers of
recall, dream and sharing; ``status`` and ``recall`` load no writer, none of what the opening's
checks need only when they find work, and ``recall`` no text test it did not run.
"""

from __future__ import annotations

import importlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.care import hooks as hooks_logic
from elfmem.cli import hooks as hooks_cli
from elfmem.cli import lookalikes
from elfmem.rhythms import lookalikes as logic

HEAVY = ("numpy", "pygit2", "mcp", "openai", "anthropic", "elfmem.api", "sqlite3", "asyncio")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    return [name for name in HEAVY if name in loaded]


def test_importing_the_cli_loads_no_api_numpy_pygit2_mcp_or_llm_client() -> None:
    assert _loaded_after("import elfmem.cli") == []


def test_version_and_help_load_nothing_heavy() -> None:
    for argv in (["--version"], ["--help"], ["remember", "--help"]):
        code = (
            "import sys\nfrom elfmem.cli import cli\n"
            f"try:\n    cli.main({argv!r}, prog_name='elfmem')\nexcept SystemExit:\n    pass"
        )
        assert _loaded_after(code) == [], argv


def test_a_hook_with_nothing_to_do_loads_nothing_heavy() -> None:
    code = (
        "from elfmem.cli import cli\n"
        "try:\n    cli.main(['hook', 'post-checkout', 'HEAD', 'HEAD', '0'], prog_name='elfmem')\n"
        "except SystemExit:\n    pass"
    )
    assert _loaded_after(code) == []


def test_the_cli_spells_the_lookalike_actions_as_the_rhythm_does() -> None:
    assert lookalikes.ACTIONS == logic.ACTIONS


def test_the_cli_names_the_hooks_the_rhythm_installs() -> None:
    assert hooks_cli.HOOK_NAMES == hooks_logic.HOOK_NAMES


def _interrupted_once(after: str, repo: Path) -> subprocess.CompletedProcess[str]:
    """The installed ``elfmem status``, sent SIGINT the moment ``after`` has been imported
    (``-X importtime`` reports each import as it completes), so it lands while loading."""
    script = Path(sys.executable).parent / "elfmem"
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", str(script), "-C", str(repo), "status"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.split("|")[-1].strip() == after:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    said = "\n".join(x for x in err.splitlines() if not x.startswith("import time:"))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, said)


def test_ctrl_c_while_starting_exits_130_without_a_traceback(repo: Path) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        pytest.skip("SIGINT is ignored here (nohup), and so in the child")
    starting = _interrupted_once("elfmem.launch", repo)  # while the command line loads
    assert starting.returncode == 130, starting.stderr
    assert "Traceback" not in starting.stderr and "KeyboardInterrupt" not in starting.stderr
    assert "interrupted (Ctrl-C)" in starting.stderr
    running = _interrupted_once("elfmem.cli", repo)  # while the command imports what it needs
    assert running.returncode == 130, running.stderr
    assert "Traceback" not in running.stderr and "interrupted (Ctrl-C)" in running.stderr


PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["elfmem", *sys.argv[1:]]
from elfmem.launch import main
main()
"""
PACKAGES_UNUSED_BY_WRITES = (
    *("onnxruntime", "tokenizers", "model2vec", "safetensors", "mcp", "openai", "anthropic"),
    "asyncio",  # the CLI steps the API's coroutines itself (cli/output.finish)
)
LAYERS_UNUSED_BY_WRITES = (
    *("elfmem.retrieval.pipeline", "elfmem.rhythms.recall", "elfmem.rhythms.dream"),
    *("elfmem.care.doctor", "elfmem.care.maintenance", "elfmem.sharing.sync"),
    *("elfmem.sharing.exchange", "elfmem.sharing.peers", "elfmem.identity.review", "elfmem.mcp"),
)


def _loaded_by(*argv: str) -> set[str]:
    """The modules a whole ``elfmem`` process had loaded when it exited."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_version_loads_only_the_package_itself() -> None:
    loaded = _loaded_by("--version")
    assert sorted(m for m in loaded if m.startswith("elfmem")) == ["elfmem", "elfmem.launch"]
    assert "click" not in loaded


def test_remember_and_status_load_no_model_runtime_sdk_or_other_layers(repo: Path) -> None:
    assert _loaded_by("-C", str(repo), "init", "--name", "Ada")  # a real memory to use
    assert _loaded_by("-C", str(repo), "status")  # the first read of the config's text parses it
    for argv in (["remember", "The pool holds 20 connections"], ["status"]):
        loaded = _loaded_by("-C", str(repo), *argv)
        assert "elfmem.api" in loaded and "pygit2" in loaded, argv  # it did run the command
        heavy = sorted(m for m in loaded if m.split(".")[0] in PACKAGES_UNUSED_BY_WRITES)
        assert heavy == [], argv
        assert "yaml" not in loaded, argv  # the config parsed before is read as JSON
        assert [m for m in LAYERS_UNUSED_BY_WRITES if m in loaded] == [], argv
        # numpy may be bound (elfmem/lazyload.py) but never run: its submodules load with it
        assert sorted(m for m in loaded if m.startswith("numpy.")) == [], argv


WRITING_ONLY = (
    *("elfmem.store.writer", "elfmem.store.plan", "elfmem.store.journal", "elfmem.index.writes"),
    *("elfmem.rhythms.results", "elfmem.block.secrets", "elfmem.block.reconcile"),
)
"""What only a write runs: the writer with its journal and plans, the index's writers, the
rhythms' results, the secret patterns, the reconciliation pass."""
OPEN_CHECKS_ONLY = ("elfmem.sharing.driver", "elfmem.store.transport", "elfmem.store.notesmerge")
"""What the opening's checks load only when they find work: the merge driver's setup, a fetch,
a merge of notes that moved."""
TEXT_TESTS = ("elfmem.block.answers", "elfmem.block.correction", "elfmem.block.facts")
"""Ranking's text tests, for confirmed blocks and judged rivals only."""


def test_status_and_recall_load_no_writer_and_no_open_check_that_found_nothing(
    repo: Path,
) -> None:
    assert _loaded_by("-C", str(repo), "init", "--name", "Ada")
    for text in ("The pool holds 20 connections", "Connection pooling runs in pgbouncer"):
        assert _loaded_by("-C", str(repo), "remember", text)
    status = _loaded_by("-C", str(repo), "status")
    assert [m for m in (*WRITING_ONLY, *OPEN_CHECKS_ONLY) if m in status] == []
    index_for_queries = ("elfmem.index.search", "elfmem.index.vectorfile", "elfmem.index.fulltext")
    assert [m for m in index_for_queries if m in status] == []
    recall = _loaded_by("-C", str(repo), "recall", "connection pooling")
    assert "elfmem.retrieval.pipeline" in recall  # it did rank
    # its events go through the spool, whose secret check loads the patterns: not a write's rest
    writing = [m for m in WRITING_ONLY if m != "elfmem.block.secrets"]
    assert [m for m in (*writing, *OPEN_CHECKS_ONLY, *TEXT_TESTS) if m in recall] == []


def test_the_installed_post_checkout_hook_starts_no_python_for_a_checkout_of_files(
    repo: Path, tmp_path: Path
) -> None:
    from elfmem.care import hooks

    program = repo / "post-checkout"
    program.write_bytes(hooks.program("post-checkout"))
    program.chmod(0o755)
    stand_in = tmp_path / "bin" / "elfmem"  # records each time the hook starts elfmem
    stand_in.parent.mkdir()
    stand_in.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "started"}\n')
    stand_in.chmod(0o755)
    env = {"PATH": f"{stand_in.parent}:/usr/bin:/bin"}
    for args in (["a" * 40, "b" * 40, "0"], ["a" * 40, "a" * 40, "1"]):  # files; same commit
        subprocess.run([str(program), *args], cwd=repo, env=env, check=True)
    assert not (tmp_path / "started").exists()
    subprocess.run([str(program), "a" * 40, "b" * 40, "1"], cwd=repo, env=env, check=True)
    assert (tmp_path / "started").read_text().split() == [
        "hook",
        "post-checkout",
        "a" * 40,
        "b" * 40,
        "1",
    ]


def test_the_command_table_names_every_command_where_its_module_defines_it() -> None:
    from elfmem.cli import COMMAND_MODULES

    defined = {}
    for module_name in set(COMMAND_MODULES.values()):
        module = importlib.import_module(f"elfmem.cli.{module_name}")
        defined.update({command.name: module_name for command in module.COMMANDS})
    assert defined == COMMAND_MODULES


def test_a_command_loads_its_own_command_module_and_no_other(repo: Path) -> None:
    assert _loaded_by("-C", str(repo), "init", "--name", "Ada")
    loaded = _loaded_by("-C", str(repo), "remember", "The pool holds 20 connections")
    from elfmem.cli import COMMAND_MODULES

    modules = {f"elfmem.cli.{m}" for m in COMMAND_MODULES.values()}
    assert sorted(modules & loaded) == ["elfmem.cli.capture"]
