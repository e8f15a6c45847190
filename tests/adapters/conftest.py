"""The fake provider server as a fixture for every adapter test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adapters.fake_provider import FakeProvider, serve


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    yield from serve()


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")
    monkeypatch.setenv("STUB_KEY", "stub-key")
