"""doctor reports loose objects past git's gc.auto, which elfmem itself never packs."""

from __future__ import annotations

import hashlib
from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git


def _contents_with_prefix(prefix: str, count: int) -> list[bytes]:
    """Blob contents whose git oid starts with ``prefix``: they land in ``objects/<prefix>/``."""
    found, i = [], 0
    while len(found) < count:
        data = f"loose object {i}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith(prefix):
            found.append(data)
        i += 1
    return found


def _objects_check(system: MemorySystem) -> tuple[bool, str, str]:
    check = next(c for c in arun(system.doctor()).checks if c.name == "objects")
    return check.ok, check.detail, check.fix


def test_doctor_names_loose_objects_past_gc_auto_until_git_gc_packs_them(
    repo: Path, tmp_path: Path
) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("The pager rota changes on Mondays"))
    assert _objects_check(system)[0]
    # git counts objects/17 and packs past gc.auto / 256 there: 256 allows one.
    git(repo, "config", "gc.auto", "256")
    for n, data in enumerate(_contents_with_prefix("17", 2)):
        (tmp_path / f"blob{n}").write_bytes(data)
        git(repo, "hash-object", "-w", str(tmp_path / f"blob{n}"))
    ok, detail, fix = _objects_check(system)
    assert not ok and fix.startswith("git gc")
    assert int(detail.split()[1].replace(",", "")) >= 512 and "past 256" in detail
    git(repo, "gc", "-q", "--prune=now")
    assert _objects_check(system)[0]
    git(repo, "config", "gc.auto", "0")
    ok, detail, _ = _objects_check(system)
    assert ok and "gc.auto is off" in detail
    arun(system.close())
