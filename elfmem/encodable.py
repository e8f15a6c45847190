"""Text that can be stored: every string the API takes must encode to UTF-8.

A Python ``str`` may hold lone surrogates: bad bytes on the command line arrive that way
(``surrogateescape``), and JSON's ``"\\ud800"`` decodes to one. git, SQLite and the files cannot
store them, so the first encode deep inside a write would raise ``UnicodeEncodeError`` after
some work was done. ``checked`` refuses such text at the API's door instead, as invalid input
naming the parameter, before anything is read or written.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from elfmem.errors import InvalidInput

C = TypeVar("C", bound=type)
_DEPTH = 6  # arguments are flat records; deeper nesting is not text a caller typed
_GUARDED = "_elfmem_encodable_checked"
RECOVERY = (
    "Pass text that is valid Unicode (no lone surrogates such as \\ud800; from a shell, "
    "valid UTF-8 bytes); nothing was written."
)


def bad_position(value: Any, depth: int = 0) -> str | None:
    """Where ``value`` holds text that UTF-8 cannot encode ("" for the value itself), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f" character {exc.start}"
        return None
    if depth >= _DEPTH:
        return None
    if isinstance(value, Mapping):
        items: list[tuple[str, Any]] = []
        for key, item in value.items():
            items += [(f"key {len(items)}", key), (f"[{key!r}]", item)]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [(f"[{n}]", item) for n, item in enumerate(value)]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f".{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    else:
        return None
    for where, item in items:
        found = bad_position(item, depth + 1)
        if found is not None:
            return where.encode("ascii", "backslashreplace").decode() + found
    return None


def require_encodable(method: str, arguments: Mapping[str, Any]) -> None:
    """Raise InvalidInput naming the first argument holding text UTF-8 cannot encode."""
    for name, value in arguments.items():
        where = bad_position(value)
        if where is not None:
            at = where.strip()
            raise InvalidInput(
                f"{method}: `{name}` is not valid Unicode text (a lone surrogate at {at}).",
                RECOVERY,
            )


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind_partial(*args, **kwargs).arguments
        require_encodable(fn.__name__, {k: v for k, v in bound.items() if k not in ("self", "cls")})
        return await fn(*args, **kwargs)

    guarded.__dict__[_GUARDED] = True  # kept by functools.wraps around it
    return guarded


def checked(cls: C) -> C:
    """Guard every public coroutine method of ``cls`` (instance methods and classmethods).

    Only the class's own methods: a base class that wants its methods guarded is decorated too.
    A method guarded there, and wrapped again here, is not guarded twice."""
    for name, attr in list(vars(cls).items()):
        func = attr.__func__ if isinstance(attr, classmethod) else attr
        if name.startswith("_") or getattr(func, _GUARDED, False):
            continue
        if isinstance(attr, classmethod) and inspect.iscoroutinefunction(attr.__func__):
            setattr(cls, name, classmethod(_guard(attr.__func__)))
        elif inspect.iscoroutinefunction(attr):
            setattr(cls, name, _guard(attr))
    return cls
