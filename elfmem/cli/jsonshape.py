"""The keys a command's ``--json`` prints, read from the code that prints them.

docs/cli.md must not drift from the output, so nothing here is written by hand: keys come from a
result's ``to_dict`` (its dataclass fields when it uses ``asdict``, the literal dict it returns
otherwise), types from the field annotations, meanings from the docstring under each field. A
``to_dict`` this reader cannot follow is an error, never a guess.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from elfmem.errors import ElfmemError

GLOSSARY = {
    "summary": "One human line (what the command prints without `--json`).",
    "commit_id": "A commit id (40 hex digits); null when no commit was made.",
    "block_id": "A block's id.",
    "block_ids": "Block ids.",
    "id": "The block's id.",
    "content": "The block's text.",
    "cue": "When a future agent should recall it (one line).",
    "tags": "Its tags.",
    "path": "A file path.",
    "count": "How many items the list holds.",
    "ok": "True when nothing failed.",
    "error": "What went wrong.",
    "recovery": "What to do about it.",
    "type": "The exception's class name.",
    "mcp_config": "The MCP client config block for this memory, with real paths.",
    "ranked_ids": "Every ranked candidate's id, best first, before the token budget cut.",
    "embedded": "How many texts were embedded (the cache answers the rest).",
    "model": "The identity of the embedding model now in use.",
    "operation": "The operation asked about; null lists them all.",
    "text": "The text the command prints without `--json`.",
}
"""Meanings for keys that several results share and no field docstring explains; a docstring
under the field always wins."""


@dataclass(frozen=True)
class Key:
    """One top-level JSON key: its name, Python type and one-line meaning (either may be empty)."""

    name: str
    type: str
    meaning: str


@dataclass(frozen=True)
class Shape:
    """One JSON value a command prints.

    ``source`` is a result class (keys from its ``to_dict``), a function whose returned dict
    literal gives the keys, or None for the dict literal the command passes to ``emit``.
    ``plus_emitted`` adds the keys of that literal to a class's (``init`` adds ``mcp_config``).
    """

    source: type | Callable[..., Any] | None = None
    when: str = ""
    many: bool = False
    plus_emitted: bool = False


def _tree(obj: Any) -> ast.Module:
    return ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(obj))))


def _str_keys(node: ast.Dict) -> Iterator[str | None]:
    """String keys in order; None marks a ``**spread``."""
    for key in node.keys:
        if key is None:
            yield None
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            yield key.value


def _is_asdict(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "asdict"
    )


def _dict_keys(node: ast.Dict, fields: list[str], where: str) -> list[str]:
    keys: list[str] = []
    for key, value in zip(_str_keys(node), node.values, strict=True):
        if key is not None:
            keys.append(key)
        elif _is_asdict(value):
            keys += fields
    if not keys:
        raise ElfmemError(
            f"{where}: no keys found in its dict literal.",
            "Return a dict literal with string keys (or asdict(self)); docs/cli.md lists them.",
        )
    return keys


def to_dict_keys(cls: type) -> list[str]:
    """The keys ``cls(...).to_dict()`` returns, in order, read from its source."""
    fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    owner = next((k for k in cls.__mro__ if "to_dict" in vars(k)), None)
    if owner is None:
        return fields
    keys: list[str] = []
    for stmt in _tree(vars(owner)["to_dict"]).body[0].body:  # type: ignore[attr-defined]
        if isinstance(stmt, ast.Assign) and _is_asdict(stmt.value):
            keys += fields
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript):
            index = stmt.targets[0].slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                keys.append(index.value)
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Dict):
            keys += _dict_keys(stmt.value, fields, f"{owner.__qualname__}.to_dict")
    if not keys:
        raise ElfmemError(
            f"{owner.__qualname__}.to_dict: cannot tell which keys it returns.",
            "Build the dict from asdict(self) or return a dict literal.",
        )
    return list(dict.fromkeys(keys))


def literal_keys(fn: Callable[..., Any], call: str | None = None) -> list[str]:
    """String keys of the first dict literal ``fn`` returns, or passes to ``call(...)``."""
    for node in ast.walk(_tree(fn)):
        if call is None and isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            return [k for k in _str_keys(node.value) if k is not None]
        if (
            call is not None
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == call
            and node.args
            and isinstance(node.args[0], ast.Dict)
        ):
            return [k for k in _str_keys(node.args[0]) if k is not None]
    return []


def field_docs(cls: type) -> dict[str, str]:
    """First lines of the docstrings written under fields (``x: int`` then ``\"\"\"...\"\"\"``)."""
    docs: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if k is not object]):
        try:
            body = _tree(klass).body[0].body  # type: ignore[attr-defined]
        except (OSError, TypeError):
            continue
        for stmt, after in zip(body, body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = first_line(after.value.value)
    return docs


def first_line(text: str | None) -> str:
    """A docstring's first sentence-line, with RST double backticks made Markdown."""
    line = inspect.cleandoc(text or "").split("\n\n")[0].replace("\n", " ")
    return line.replace("``", "`").strip()


def _annotation(cls: type, name: str) -> str:
    for klass in cls.__mro__:
        note = vars(klass).get("__annotations__", {}).get(name)
        if note is not None:
            return str(note)
        prop = vars(klass).get(name)
        if isinstance(prop, property) and prop.fget is not None:
            return str(prop.fget.__annotations__.get("return", ""))
    return ""


def class_keys(cls: type) -> list[Key]:
    """Each key ``cls.to_dict()`` returns, with its type and meaning."""
    docs = field_docs(cls)
    keys = []
    for name in to_dict_keys(cls):
        prop = inspect.getattr_static(cls, name, None)
        own = first_line(prop.__doc__) if isinstance(prop, property) else ""
        meaning = docs.get(name) or own or GLOSSARY.get(name, "")
        keys.append(Key(name, _annotation(cls, name), meaning))
    return keys


def shape_keys(shape: Shape, command: Callable[..., Any] | None = None) -> list[Key]:
    """The keys one shape prints; ``command`` is the click callback (for emitted literals)."""
    source = shape.source
    emitted = literal_keys(command, "emit") if command is not None else []
    if isinstance(source, type):
        keys = class_keys(source)
    else:
        found = literal_keys(source) if source is not None else emitted
        keys = [Key(k, "", GLOSSARY.get(k, "")) for k in found]
    if shape.plus_emitted:
        keys += [Key(k, "", GLOSSARY.get(k, "")) for k in emitted]
    return keys


def _bindings(module_name: str) -> dict[str, tuple[str, str | None]]:
    """Each name a module's imports bind (those under TYPE_CHECKING and in functions included):
    name → (module, attribute or None for the module itself)."""
    tree = ast.parse(inspect.getsource(sys.modules[module_name]))
    bound: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound.setdefault(alias.asname or alias.name, (node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound.setdefault(alias.asname or alias.name, (alias.name, None))
    return bound


def _resolve(dotted: str, namespace: dict[str, Any], module_name: str) -> Any:
    head, *rest = dotted.split(".")
    if head in namespace:
        obj = namespace[head]
    else:
        where = _bindings(module_name).get(head)
        if where is None:
            return None
        module, attr = where
        obj = importlib.import_module(module)
        if attr is not None:
            obj = getattr(obj, attr, None) or importlib.import_module(f"{module}.{attr}")
    for part in rest:
        obj = getattr(obj, part)
    return obj


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def returned(method: Callable[..., Any]) -> tuple[type, ...]:
    """The result classes ``method`` declares it returns (``X``, ``list[X]``, ``X | Y``,
    ``mod.X``), in order, found through the imports of the module that defines it (those under
    TYPE_CHECKING too): a command's JSON is named by the API call that returns it, and the
    interface imports no layer below the API to name it."""
    fn = inspect.unwrap(getattr(method, "__func__", method))
    note = fn.__annotations__.get("return", "")
    tree = ast.parse(note if isinstance(note, str) else note.__name__, mode="eval")
    names = [d for n in ast.walk(tree) if isinstance(n, ast.expr) for d in [_dotted(n)] if d]
    found = []
    for name in dict.fromkeys(names):
        obj = _resolve(name, fn.__globals__, fn.__module__)
        if isinstance(obj, type) and hasattr(obj, "to_dict") and obj not in found:
            found.append(obj)
    return tuple(found)
