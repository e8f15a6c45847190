"""``elfmem guide`` speaks the CLI's command names, checked against the commands themselves."""

from __future__ import annotations

from click.testing import CliRunner

from elfmem.cli import cli, topics
from elfmem.cli.manpage import runs_alone
from elfmem.cli.reference import commands
from elfmem.guide import GUIDES, guide


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["guide", *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_visible_command_has_a_topic_and_every_topic_a_command() -> None:
    visible = {path for path, c in commands(cli) if runs_alone(c)}
    assert set(topics.COMMANDS) == visible
    assert set(topics.CLI_ONLY) == {c for c, ops in topics.COMMANDS.items() if not ops}
    for ops in topics.COMMANDS.values():
        assert set(ops) <= set(GUIDES)


def test_guide_history_describes_the_cli_history_command() -> None:
    code, out, _ = run("history")
    assert code == 0
    assert out.startswith("history  (API: block_history)\n")
    assert "The commits that touched a block." in out
    code, out, _ = run("log")
    assert out.startswith("log  (API: history)\n") and "Recent elfmem operations." in out


def test_the_whole_guide_lists_commands_with_the_api_name_beside_each() -> None:
    code, out, _ = run()
    assert code == 0
    for command, ops in topics.COMMANDS.items():
        beside = f"(API: {', '.join(ops)})" if ops else "(CLI only)"
        assert f"\n{command}  {beside}\n" in f"\n{out}"
    assert "block_history\n" not in out and "hooks_install  " not in out
    assert "Python API only" in out and "flush_ledger" in out


def test_names_in_an_entry_are_the_commands_a_person_types() -> None:
    assert "NEXT            edit, history" in run("show")[1]
    assert "DON'T USE WHEN  Many at once: remember --batch." in run("remember")[1]
    assert "COST            walks history" in run("history")[1]  # prose stays prose
    assert run("index", "check")[1].startswith("index check  (API: index_check)")
    hooks = run("hooks")[1]
    assert "hooks install  (API: hooks_install)" in hooks and "hooks status  (API:" in hooks


def test_an_api_name_still_works_and_says_which_command_runs_it() -> None:
    code, out, _ = run("block_history")
    assert code == 0 and "CLI             the command: history" in out
    assert "Python API only" in run("flush_ledger")[1]


def test_an_unknown_topic_lists_them_all_and_exits_non_zero() -> None:
    code, out, err = run("forgetx")
    assert code != 0 and out == ""
    assert "Error: No guide topic 'forgetx'. Did you mean: forget" in err
    assert "Commands: init, templates, remember" in err and "Recovery:" in err


def test_the_api_guide_returns_the_topic_list_for_an_unknown_name_without_raising() -> None:
    text = guide("forgetx")
    assert "No operation named 'forgetx'" in text
    assert all(name in text for name in GUIDES)
    assert guide(" ").startswith("No operation named ' '")
    assert "No operation" in guide(42)  # type: ignore[arg-type]
