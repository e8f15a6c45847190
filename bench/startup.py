"""Start-up time of the ``elfmem`` command, as whole processes, beside ``git status``.

Hooks run elfmem on every commit and checkout, so what a command costs before it does anything
is paid all day. Each row is the median (and p90) of ``--runs`` whole-process runs of the
installed ``elfmem`` in one memory of ``--blocks`` blocks, interleaved with ``git status`` in
the same folder so a busy machine shows in both columns. ``recall`` loads the embedding model;
that load is timed apart in its own process (import, load, one embed) and subtracted, so the
``recall`` row shows what elfmem itself adds.

    python bench/startup.py [--runs 15] [--blocks 1000] [--keep DIR] [--against DIR]...

The memory is filled once (``remember --batch`` of synthetic notes, then ``dream --no-llm``, then
``hooks install``); ``--keep DIR`` reuses it on later runs. ``--against DIR`` also times the
elfmem package found in DIR (e.g. ``git archive REV elfmem | tar -x -C DIR``), each of its runs
beside the installed one's, for a before-and-after table measured in the same minutes. It runs
in a copy of the memory of its own (made after the fill), so that two versions of the index
schema do not rebuild each other's index. Each tree is byte-compiled first, as an install is.
``--against`` may be given more than once: two trees, the old code and the new, start the same
way (a ``-c`` launcher, ``PYTHONPATH``), which the installed console script does not quite.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from common import parse

BIN = Path(sys.executable).parent
ELFMEM = str(BIN / "elfmem")
FROM_SOURCE = """import sys
try:
    from elfmem.launch import main
except ImportError:  # a tree from before elfmem.launch
    from elfmem.cli import main
sys.argv[0] = "elfmem"
main()
"""
WORDS = (
    "postgres redis cache pool shard tenant queue worker deploy rollback latency index vector "
    "backup restore schema migration token session cookie header proxy gateway kafka topic"
).split()
MODEL_LOAD = """
import time
t = time.perf_counter()
from elfmem.adapters.embedding import make_embedder
make_embedder(None).embed(["warm up the model"])
print(time.perf_counter() - t)
"""


def fill(folder: Path, blocks: int) -> None:
    """A memory of ``blocks`` consolidated blocks in a fresh repository (skipped when present)."""
    if (folder / ".elfmem" / "config.yaml").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)
    subprocess.run(
        [ELFMEM, "-C", str(folder), "init", "--name", "Bench"], check=True, capture_output=True
    )
    lines = []
    for i in range(blocks):
        words = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(10))
        lines.append(json.dumps({"content": f"Note {i}: {words} on port {8000 + i}"}))
    subprocess.run(
        [ELFMEM, "-C", str(folder), "remember", "--batch", "-"],
        input="\n".join(lines),
        text=True,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [ELFMEM, "-C", str(folder), "dream", "--no-llm"], check=True, capture_output=True
    )
    subprocess.run([ELFMEM, "-C", str(folder), "hooks", "install"], check=True, capture_output=True)


def _copy(folder: Path, name: str) -> Path:
    """``folder`` for the installed elfmem; a fresh copy of it beside it for another side."""
    if name == "elfmem":
        return folder
    copy = folder.with_name(f"{folder.name}-{name}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy, symlinks=True)
    return copy


def once(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process; CPU (user + system) is what a busy machine
    inflates least, so the table shows both."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def model_load() -> float:
    out = subprocess.run(
        [sys.executable, "-c", MODEL_LOAD], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip())


def commands(n: int, elfmem: list[str]) -> list[tuple[str, list[str]]]:
    """Each row: its label and argv; ``{n}`` makes each ``remember`` new, not a duplicate. The
    hook program is what git runs on a checkout of files; ``elfmem hook`` is the command it
    would start."""
    return [
        ("--version", [*elfmem, "--version"]),
        ("--help", [*elfmem, "--help"]),
        ("hook program, no-op", ["sh", ".git/hooks/post-checkout", "HEAD", "HEAD", "0"]),
        ("elfmem hook, no-op", [*elfmem, "hook", "post-checkout", "HEAD", "HEAD", "0"]),
        ("remember", [*elfmem, "remember", f"start-up bench note {n}: the pool needs pgbouncer"]),
        ("status", [*elfmem, "status"]),
        ("recall", [*elfmem, "recall", "connection pooling", "--top-k", "5"]),
    ]


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return f"{statistics.median(values) * 1000:7.0f} {p90 * 1000:7.0f}"


def sides(against: list[Path]) -> list[tuple[str, list[str], dict[str, str] | None]]:
    """The elfmem commands timed: the installed one, and the package in each ``against``."""
    out: list[tuple[str, list[str], dict[str, str] | None]] = [("elfmem", [ELFMEM], None)]
    for tree in against:
        # Compiled once here: with PYTHONDONTWRITEBYTECODE set, each start would compile it all.
        compileall.compile_dir(tree, quiet=1)
        env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
        out.append((tree.name, [sys.executable, "-c", FROM_SOURCE], env))
    return out


def write_table(
    out: TextIO, args: argparse.Namespace, rows: list[str], times: dict[str, dict[str, list[float]]]
) -> None:
    names = list(times)
    trees = ", ".join(str(tree) for tree in args.against)
    what = f"installed elfmem (against: {trees})" if trees else "installed elfmem"
    out.write(f"{what}, {args.blocks} blocks, median and p90 of {args.runs} runs (ms)\n")
    out.write(f"{'command':<22}" + "".join(f" {n:>10} {'p90':>7}  " for n in names) + "\n")
    for label in rows:
        cells = "".join(f" {ms(times[n][label]) if times[n][label] else '':>18}  " for n in names)
        out.write(f"{label:<22}{cells}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--against", type=Path, action="append", default=[])
    args = parse(parser, {"runs": 3, "blocks": 100})
    timed = sides(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)) / f"blocks-{args.blocks}"
        fill(folder, args.blocks)
        rows = [label for label, _ in commands(0, [ELFMEM])]
        names = [n for n, _, _ in timed]
        names += ["git status", *(f"{n} cpu" for n in names)]
        times: dict[str, dict[str, list[float]]] = {
            name: {label: [] for label in rows} for name in names
        }
        # Each side runs in a copy of its own: another version's index schema would make them
        # rebuild each other's index at every turn.
        folders = {name: _copy(folder, name) for name, _, _ in timed}
        for name, elfmem, env in timed:  # each index is brought up to date once, untimed
            once([*elfmem, "status"], folders[name], env)
        for n in range(args.runs):
            for name, elfmem, env in timed:
                for label, argv in commands(n, elfmem):
                    if name != "elfmem" and argv[0] == "sh":
                        continue  # the hook program installed is this version's
                    if name == "elfmem":
                        times["git status"][label].append(once(["git", "status"], folder)[0])
                    wall, cpu = once(argv, folders[name], env)
                    times[name][label].append(wall)
                    times[f"{name} cpu"][label].append(cpu)
        loads = [model_load() for _ in range(max(3, args.runs // 3))]
    load = statistics.median(loads)
    write_table(sys.stdout, args, rows, times)
    rest = "".join(f" {ms([t - load for t in times[n]['recall']]):>18}  " for n, _, _ in timed)
    sys.stdout.write(f"{'recall - model load':<22}{rest}\n")
    sys.stdout.write(f"{'model load (apart)':<22} {ms(loads):>18}\n")
    when = time.strftime("%Y-%m-%d %H:%M")
    sys.stdout.write(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {when}\n")


if __name__ == "__main__":
    main()
