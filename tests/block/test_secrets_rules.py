"""The secret check rule by rule, the override, and the writer's gate that backs every call site.

Each guard here was checked by breaking it once: the test named for it fails without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.block import credentials, secrets
from elfmem.block.model import Block
from elfmem.errors import SecretRefused
from elfmem.store import FileEdit, MemoryView, Plan
from tests.conftest import arun, git

TAIL = "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"
GHP = "ghp_" + TAIL[:36]
RANDOM = "Xq9vR2mTz8LwK4pN"


def test_check_refuses_naming_kind_and_field_never_the_value() -> None:
    fields = secrets.capture_fields("fine", "also fine", ["ok", GHP], "knowledge")
    with pytest.raises(SecretRefused) as err:
        secrets.check(fields, overridable=True)
    text = err.value.message + err.value.recovery
    assert "GitHub token in tag 2 " in err.value.message
    assert GHP not in text and GHP[4:12] not in text
    assert "--allow-secret" in err.value.recovery
    with pytest.raises(SecretRefused) as err:
        secrets.check(fields)  # a caller without the override never suggests it
    assert "allow" not in err.value.recovery


def test_check_with_the_override_returns_the_kinds_it_let_through() -> None:
    fields = [("content", f"{GHP} and api_key={RANDOM}"), ("cue", "")]
    kinds = secrets.check(fields, allow=True)
    assert kinds == ("GitHub token", "high-entropy value assigned to a secret-like name")
    assert secrets.allow_trailers([*kinds, "GitHub token"]) == [
        ("Elfmem-Allow-Secret", "GitHub token"),
        ("Elfmem-Allow-Secret", "high-entropy value assigned to a secret-like name"),
    ]


def test_a_multi_line_field_names_the_line() -> None:
    [finding] = secrets.scan(f"one\ntwo\nkey {GHP}\n", "self.md")
    assert finding.where == "self.md line 3"


def test_redact_names_the_kind_in_place_of_the_value() -> None:
    assert secrets.redact(f"use {GHP} now") == "use [GitHub token] now"
    assert secrets.redact("nothing here") == "nothing here"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (f"password={RANDOM}", True),
        (f"password = '{RANDOM}'", True),
        (f"the api key is {RANDOM}", False),  # `key` alone is too common a word
        ("password=aaaaaaaaaaaaaaaa1", False),  # one letter repeated: low entropy
        ("password=abcdefghijklmnop", False),  # no digit: a word, not a key
        ("password=" + RANDOM[:7], False),  # fewer than 8 characters
        ("password=" + RANDOM[:8], True),  # 8 mixing three classes, after an `=`
        ("password " + RANDOM[:15], False),  # prose needs 16 random characters
        (f"note={RANDOM}", False),  # not a secret-like name
    ],
)
def test_high_entropy_assignments(text: str, found: bool) -> None:
    assert bool(secrets.scan(text, "content")) is found


def test_the_high_entropy_rule_is_what_finds_an_unprefixed_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert secrets.find_secret(f"DB_PASSWORD={RANDOM}") is not None
    monkeypatch.delitem(credentials.RULES, "high-entropy")
    assert secrets.find_secret(f"DB_PASSWORD={RANDOM}") is None


def test_the_entropy_measure() -> None:
    assert credentials.entropy("aaaa") == 0
    assert credentials.entropy("abcd") == 2
    assert credentials.looks_random(RANDOM)
    assert not credentials.looks_random("aaaaaaaa11111111")


# ---- through the API: the call sites and the gate ----------------------------------------------


@pytest.fixture
def system(repo: Path) -> MemorySystem:
    made, _ = arun(MemorySystem.init(repo))
    return made


def test_the_cue_is_scanned_at_capture(system: MemorySystem) -> None:
    try:
        with pytest.raises(SecretRefused) as err:
            arun(system.remember("a harmless sentence", cue=f"deploy with {GHP}"))
        assert "GitHub token in cue " in err.value.message
    finally:
        arun(system.close())


def test_the_override_is_recorded_for_remember_batch_and_edit(
    system: MemorySystem, repo: Path
) -> None:
    def trailers() -> list[str]:
        out = git(repo, "log", "-1", "--format=%(trailers:key=Elfmem-Allow-Secret,valueonly)")
        return out.split()

    try:
        made = arun(system.remember(f"ci uses {GHP}", allow_secret=True))
        assert trailers() == ["GitHub", "token"]
        arun(system.remember_many([{"content": f"DB_PASSWORD={RANDOM}"}], allow_secret=True))
        assert " ".join(trailers()) == "high-entropy value assigned to a secret-like name"
        arun(
            system.edit(made.block_id, f"ci uses {GHP} and AKIAIOSFODNN7EXAMPLE", allow_secret=True)
        )
        assert " ".join(trailers()) == "GitHub token AWS access key id"
        with pytest.raises(SecretRefused):
            arun(system.remember(f"again {GHP[:-1]}x"))  # the override is per call
    finally:
        arun(system.close())


def test_the_gate_refuses_a_plan_from_any_path(system: MemorySystem, repo: Path) -> None:
    """A write that bypassed the call sites (a new rhythm, an import) still meets the check."""
    head = git(repo, "rev-parse", "HEAD")
    store = system._core.store
    try:
        with pytest.raises(SecretRefused) as err:
            store.write(lambda view: Plan(op="x", subject=f"x {GHP}", raw={".elfmem/n.txt": b"n"}))
        assert "GitHub token in commit message" in err.value.message
        with pytest.raises(SecretRefused) as err:
            store.write(lambda view: Plan(op="x", subject="x", raw={".elfmem/n.txt": GHP.encode()}))
        assert "GitHub token in .elfmem/n.txt" in err.value.message
        allowed = [("Elfmem-Allow-Secret", "GitHub token")]
        with pytest.raises(SecretRefused):  # the override covers the plan's blocks, not raw files
            store.write(
                lambda view: Plan(
                    op="x", subject="x", raw={".elfmem/n.txt": GHP.encode()}, trailers=allowed
                )
            )
        new = Block(id="0123456789abcdef", content="from an import", tags=("ok", GHP))

        def plan(view: MemoryView) -> Plan:  # a block no call site checked: dream, import, …
            path = view.append_target("inbox", "knowledge", "2026-01")
            edit = FileEdit((*view.read(path), new))
            return Plan(op="import", subject="import", files={path: edit})

        with pytest.raises(SecretRefused) as err:
            store.write(plan)
        assert "GitHub token in .elfmem/memory/log/knowledge/2026-01.md block" in err.value.message
        assert "block 0123456789abcdef tag 2" in err.value.message

        def allowed_plan(view: MemoryView) -> Plan:  # the override covers the plan's own blocks
            made = plan(view)
            made.trailers = [("Elfmem-Allow-Secret", "GitHub token")]
            return made

        with pytest.raises(SecretRefused):
            store.write(allowed_plan)
        assert git(repo, "rev-parse", "HEAD") == head
    finally:
        arun(system.close())


def test_a_batch_names_the_record_and_writes_none_of_it(system: MemorySystem, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    records = [{"content": "fine"}, {"content": "also fine", "tags": ["ok", GHP]}]
    try:
        with pytest.raises(SecretRefused) as err:
            arun(system.remember_many(records))
        assert err.value.message.startswith("Record 2: Refused: ")
        assert "GitHub token in tag 2 " in err.value.message
        assert git(repo, "rev-parse", "HEAD") == head
    finally:
        arun(system.close())


def test_outcome_source_is_refused_before_anything_is_recorded(
    system: MemorySystem, repo: Path
) -> None:
    try:
        block = arun(system.remember("Redis needs maxmemory set"))
        notes = git(repo, "for-each-ref", "refs/notes")
        with pytest.raises(SecretRefused) as err:
            arun(system.outcome([block.block_id], 0.9, source=f"ci {GHP}"))
        assert "GitHub token in outcome source" in err.value.message
        assert git(repo, "for-each-ref", "refs/notes") == notes
    finally:
        arun(system.close())
