"""A deterministic stand-in for an LLM: replies come from a script, every call is recorded.

Dream's LLM path must be testable without a network or a key, and demos must run anywhere; a
scripted model makes both exact. A queued exception is raised instead of returned, so a test can
stage a transport failure at a chosen call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from elfmem.adapters.usage import Meter
from elfmem.errors import ElfmemError

Reply = str | Exception
Responder = Callable[[str, str], str]


class ScriptedLLM:
    """Answers from queued replies first, then from ``responder(system, prompt)`` if given.

    ``ScriptedLLM(["a", "b"])`` answers "a" then "b" and then raises; ``ScriptedLLM(fn)`` answers
    every call with ``fn(system, prompt)``. ``calls`` holds each ``(system, prompt)`` received;
    ``usage`` counts the calls and no tokens (a script has none to report).
    """

    identity = "scripted"

    def __init__(self, replies: Iterable[Reply] | Responder = ()) -> None:
        self.calls: list[tuple[str, str]] = []
        self.usage = Meter()
        self._queue: deque[Reply] = deque()
        self._responder: Responder | None = None
        if callable(replies):
            self._responder = replies
        else:
            self._queue.extend(replies)

    def enqueue(self, reply: Reply) -> None:
        """Add one reply (or an exception to raise) after those already queued."""
        self._queue.append(reply)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str:
        self.calls.append((system, prompt))
        self.usage.add(0, 0)
        if self._queue:
            reply = self._queue.popleft()
            if isinstance(reply, Exception):
                raise reply
            return reply
        if self._responder is not None:
            return self._responder(system, prompt)
        raise ElfmemError(
            f"ScriptedLLM ran out of replies at call {len(self.calls)}.",
            "enqueue() one reply per expected call, or pass a callable that answers every call.",
        )
