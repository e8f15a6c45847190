"""The guide's entries are data files: they ship in the wheel, load on first use, and a bad edit
fails here with its file named."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from elfmem.guide import parse

ROOT = Path(__file__).resolve().parents[2]
FIELDS = 'use_when = "u"\ndont_use_when = "-"\ncost = "ms"\nreturns = "R"\nnext = "-"\n'


def test_every_topic_file_is_package_data_so_a_wheel_install_finds_it() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["elfmem"]
    topics = sorted((ROOT / "elfmem" / "guide").glob("*.toml"))
    assert topics
    for path in topics:
        relative = path.relative_to(ROOT / "elfmem").as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative


def test_importing_the_guide_reads_no_topic_file() -> None:
    probe = (
        "import sys, elfmem.guide as g\n"
        "print(g._load.cache_info().currsize, 'tomllib' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["0", "False"]


def test_a_malformed_or_repeated_entry_names_its_file() -> None:
    assert parse({"a.toml": f"[x]\n{FIELDS}"}) == {"x": ("u", "-", "ms", "R", "-")}
    with pytest.raises(ValueError, match=r"b\.toml: \[x\] is already in another topic file"):
        parse({"a.toml": f"[x]\n{FIELDS}", "b.toml": f"[x]\n{FIELDS}"})
    with pytest.raises(ValueError, match=r"a\.toml: \[x\] needs exactly use_when, "):
        parse({"a.toml": '[x]\nuse_when = "u"\n'})
    with pytest.raises(ValueError, match=r"a\.toml: \[x\] has a field that is not a string"):
        parse({"a.toml": "[x]\n" + FIELDS.replace('"ms"', "1")})
