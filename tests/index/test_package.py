"""``elfmem.index`` loads each of its modules when one of its names is first read."""

from __future__ import annotations

import importlib
import subprocess
import sys

import elfmem.index as index


def test_every_exported_name_is_its_home_modules_object() -> None:
    assert sorted(index.__all__) == sorted([*index._HOMES, "sync"])
    assert index.sync is importlib.import_module("elfmem.index.sync").sync  # not the module
    for name, home in index._HOMES.items():
        module = importlib.import_module(f"elfmem.index.{home}")
        assert getattr(index, name) is getattr(module, name), name


def test_importing_the_package_runs_only_what_sync_needs() -> None:
    probe = (
        "import sys, elfmem.index\n"
        "from elfmem.index import queries, IndexDB\n"
        "print(sorted(m for m in sys.modules if m.startswith('elfmem.index.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = {m.strip(" '") for m in out.strip().strip("[]").split(",")}
    assert "elfmem.index.sync" in loaded
    assert not loaded & {"elfmem.index.search", "elfmem.index.fulltext", "elfmem.index.writes"}
