"""Exchange bundles: export → import round trips, share levels, trust, idempotence and undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import InvalidInput, NotFound, SecretRefused
from elfmem.sharing import bundle
from elfmem.store.ledger import encode, fold
from tests.conftest import arun, git
from tests.sharing.test_peers import call


def _memory(root: Path, name: str) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    system, _ = arun(MemorySystem.init(root, name=name))
    arun(system.close())
    return root


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    """``ada`` with blocks at every share level; ``bob`` knowing ada at trust 0.5."""
    a, b = _memory(tmp_path / "ada", "Ada"), _memory(tmp_path / "bob", "Bob")

    async def fill() -> None:
        system = await MemorySystem.from_config(a)
        public = await system.remember(
            "Our public API speaks JSON over HTTPS", cue="api", tags=["share/public"]
        )
        await system.remember("The deploy key rotates monthly", cue="deploys")
        await system.remember("My salary review is in May", cue="me", tags=["share/private"])
        await system.dream(no_llm=True)
        await system.outcome([public.block_id], 1.0, weight=3.0, source="test")
        await system.close()

    arun(fill())
    a_id = call(a, "peer_init").id  # type: ignore[attr-defined]
    call(b, "peer_add", "ada", a_id)
    return a, b


def confidence(root: Path, block_id: str) -> float:
    """The block's folded confidence, from the events ``elfmem ledger`` reports."""
    events = call(root, "ledger", block_id).events  # type: ignore[attr-defined]
    return fold(encode(e) for e in events).confidence


def _contents(path: Path) -> list[str]:
    return sorted(r.block.content for r in bundle.decode(path.read_bytes()).records)


def test_share_levels_filter_and_private_never_leaves(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two
    public, peer, every = tmp_path / "p.jsonl", tmp_path / "q.jsonl", tmp_path / "r.jsonl"
    call(a, "export", "public", public)
    call(a, "export", "peer", peer)
    call(a, "export", "all", every)
    assert _contents(public) == ["Our public API speaks JSON over HTTPS"]
    assert _contents(peer) == [
        "Our public API speaks JSON over HTTPS",
        "The deploy key rotates monthly",
    ]
    assert "My salary review is in May" not in every.read_text()
    header = json.loads(peer.read_text().splitlines()[0])
    assert (header["format"], header["version"], header["blocks"]) == ("elfmem-bundle", 1, 2)
    strong = tmp_path / "s.jsonl"
    result = call(a, "export", "peer", strong, 0.6)
    assert _contents(strong) == ["Our public API speaks JSON over HTTPS"]
    assert result.skipped_confidence == 1  # type: ignore[attr-defined]
    record = next(r for r in bundle.decode(strong.read_bytes()).records)
    assert record.ledger["alpha"] == pytest.approx(3.5) and record.ledger["outcomes"] == 1


def test_import_from_a_peer_is_quarantined_scaled_by_trust_idempotent_and_undoable(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two
    path = tmp_path / "peer.jsonl"
    call(a, "export", "peer", path)
    before = int(git(b, "rev-list", "--count", "HEAD"))
    done = call(b, "import_bundle", path, "ada")
    assert len(done.imported) == 2 and done.trust == pytest.approx(0.5)  # type: ignore[attr-defined]
    assert int(git(b, "rev-list", "--count", "HEAD")) == before + 1
    public_id = next(
        r.block.id for r in bundle.decode(path.read_bytes()).records if "public" in r.block.content
    )
    shown = call(b, "show", public_id)
    assert "peer/ada" in shown.tags  # type: ignore[attr-defined]
    # ada's 3 good outcomes count as 1.5 here (trust 0.5): (0.5 + 1.5) / (1 + 1.5) = 0.8
    assert confidence(b, public_id) == pytest.approx(0.8)
    # carried evidence never moves trust: only outcomes recorded here do
    assert call(b, "peer_trust", "ada").trust == pytest.approx(0.5)  # type: ignore[attr-defined]

    again = call(b, "import_bundle", path, "ada")
    assert again.commit_id is None and again.already == 2  # type: ignore[attr-defined]
    assert int(git(b, "rev-list", "--count", "HEAD")) == before + 1

    call(b, "undo")
    with pytest.raises(NotFound):
        call(b, "show", public_id)
    redo = call(b, "import_bundle", path, "ada")  # after undo the blocks come back
    assert len(redo.imported) == 2  # type: ignore[attr-defined]


def test_self_merge_keeps_ids_tags_and_ledger_at_trust_one(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two
    path = tmp_path / "all.jsonl"
    call(a, "export", "all", path)
    records = bundle.decode(path.read_bytes()).records
    public = next(r for r in records if "public" in r.block.content)
    assert public.events  # "all" carries the raw ledger lines
    fresh = _memory(tmp_path / "ada2", "Ada")
    (fresh / ".elfmem/peers.json").write_bytes((a / ".elfmem/peers.json").read_bytes())
    git(fresh, "add", ".elfmem/peers.json")
    git(fresh, "commit", "-qm", "same identity")
    done = call(fresh, "import_bundle", path, self_merge=True)
    assert done.source == "self" and len(done.imported) == len(records)  # type: ignore[attr-defined]
    shown = call(fresh, "show", public.block.id)
    assert not any(t.startswith("peer/") for t in shown.tags)  # type: ignore[attr-defined]
    assert confidence(fresh, public.block.id) == pytest.approx(3.5 / 4.0)
    with pytest.raises(InvalidInput):  # carol's memory is not ada's
        other = _memory(tmp_path / "carol", "Carol")
        call(other, "peer_init")
        call(other, "import_bundle", path, self_merge=True)


def test_a_tampered_truncated_or_secret_bundle_is_refused_and_writes_nothing(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two
    path = tmp_path / "peer.jsonl"
    call(a, "export", "peer", path)
    head = git(b, "rev-parse", "HEAD")
    text = path.read_text()
    edited = tmp_path / "edited.jsonl"
    edited.write_text(text.replace("monthly", "never"))
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(text.splitlines()[:2]) + "\n")
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe not a bundle")
    for bad in (edited, cut, junk):
        with pytest.raises(InvalidInput):
            call(b, "import_bundle", bad, "ada")
    with pytest.raises(NotFound):
        call(b, "import_bundle", tmp_path / "missing.jsonl", "ada")
    with pytest.raises(InvalidInput):  # two sources at once
        call(b, "import_bundle", path, "ada", True)
    leaked = _rebuilt(path, "AKIAIOSFODNN7EXAMPLE is the deploy key")
    with pytest.raises(SecretRefused):
        call(b, "import_bundle", leaked, "ada")
    assert git(b, "rev-parse", "HEAD") == head
    assert git(b, "status", "--porcelain") == ""


def _rebuilt(path: Path, content: str) -> Path:
    """A bundle re-encoded (valid digest) with one block's text replaced."""
    found = bundle.decode(path.read_bytes())
    first = found.records[0]
    records = [
        bundle.Record(first.block.with_changes(content=content), first.status, first.ledger),
        *found.records[1:],
    ]
    out = path.with_name("leaked.jsonl")
    out.write_bytes(bundle.encode(found.header, records))
    return out


def test_cli_export_and_import_speak_json_and_need_one_source(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two
    path = tmp_path / "x.jsonl"
    runner = CliRunner()
    out = runner.invoke(cli, ["-C", str(a), "export", "--share", "peer", "-o", str(path), "--json"])
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["blocks"] == 2
    out = runner.invoke(cli, ["-C", str(b), "import", str(path)])
    assert out.exit_code == 2
    out = runner.invoke(cli, ["-C", str(b), "import", str(path), "--from", "ada", "--json"])
    assert out.exit_code == 0, out.stderr
    assert len(json.loads(out.stdout)["imported"]) == 2


def test_mcp_export_and_import_bundle(two: tuple[Path, Path]) -> None:
    from tests.mcp.test_server import connected, fails, ok

    a, b = two

    async def scenario() -> None:
        async with connected(a) as client:
            done = await ok(client, "elfmem_export", share="public", output="mcp.jsonl")
            assert done["blocks"] == 1
        path = Path(done["path"])  # a client's export lands in the exports folder
        assert path == a / ".git" / "elfmem" / "exports" / "mcp.jsonl"
        async with connected(b) as client:
            body = await fails(client, "elfmem_import_bundle", path=str(path))
            assert "--from" in body["error"]
            done = await ok(client, "elfmem_import_bundle", path=str(path), from_peer="ada")
            assert len(done["imported"]) == 1

    arun(scenario())


def test_an_import_of_long_blocks_keeps_buckets_within_their_byte_bound(
    two: tuple[Path, Path], tmp_path: Path
) -> None:
    """Imports append through the same bounded path as capture: never one huge bucket."""
    from elfmem.block.layout import BUCKET_BYTES

    a, _ = two
    paragraph = "Chapter notes on the harbour survey, tides and moorings. " * 160  # ~9 KB

    async def fill() -> None:
        system = await MemorySystem.from_config(a)
        try:
            await system.remember_many(
                [{"content": f"Survey part {i}. {paragraph}"} for i in range(40)]
            )
        finally:
            await system.close()

    arun(fill())
    path = tmp_path / "long.jsonl"
    call(a, "export", "all", path)
    fresh = _memory(tmp_path / "ada2", "Ada")
    (fresh / ".elfmem/peers.json").write_bytes((a / ".elfmem/peers.json").read_bytes())
    git(fresh, "add", ".elfmem/peers.json")
    git(fresh, "commit", "-qm", "same identity")
    call(fresh, "import_bundle", path, self_merge=True)
    files = list((fresh / ".elfmem" / "memory").rglob("*.md"))
    assert sum(1 for p in files if "Survey part" in p.read_text()) >= 2
    assert max(p.stat().st_size for p in files) <= BUCKET_BYTES + 10_000
