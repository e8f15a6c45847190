"""Structured replies: the JSON object a schema asks for, checked before anyone trusts it.

Providers that support structured output (OpenAI's ``response_format`` json_schema, Anthropic's
tool use with an ``input_schema``) mostly keep to the schema, but local servers may ignore it and
any model can be cut off mid-object. So the reply is checked against the same schema here, and a
reply that fails is a ``ModelReplyError`` that keeps the raw text, never a silent guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from elfmem.errors import ModelReplyError

Schema = Mapping[str, Any]
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def problems(value: object, schema: Schema, at: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema`` (the subset structured output uses); empty when it fits.

    Checks ``type`` (one or a list), ``properties``, ``required``, ``additionalProperties: false``
    and ``items``; that subset is all a reply shape needs.
    """
    wanted = schema.get("type")
    if wanted is not None:
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        if not any(_is(value, name) for name in names):
            return [f"{at} is {type(value).__name__}, expected {' or '.join(names)}"]
    if isinstance(value, dict):
        return _object_problems(value, schema, at)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [
            p for i, item in enumerate(value) for p in problems(item, schema["items"], f"{at}[{i}]")
        ]
    return []


def _is(value: object, name: str) -> bool:
    if isinstance(value, bool) and name in ("number", "integer"):
        return False  # JSON true is not a number, though Python's bool is an int
    return isinstance(value, _TYPES.get(name, (object,)))


def _object_problems(value: dict[str, Any], schema: Schema, at: str) -> list[str]:
    properties: Mapping[str, Schema] = schema.get("properties", {})
    found = [f"{at}.{key} is missing" for key in schema.get("required", ()) if key not in value]
    if schema.get("additionalProperties") is False:
        found += [f"{at}.{key} is not allowed" for key in value if key not in properties]
    for key, sub in properties.items():
        if key in value:
            found += problems(value[key], sub, f"{at}.{key}")
    return found


def checked(value: object, schema: Schema, raw: str, source: str) -> dict[str, Any]:
    """``value`` if it is an object that fits ``schema``, else a ModelReplyError keeping ``raw``."""
    found = problems(value, schema)
    if found or not isinstance(value, dict):
        raise ModelReplyError(
            f"{source} answered outside the asked-for shape: {'; '.join(found[:3])}.",
            "Retry, or use a model that supports structured output (the raw reply is kept on "
            "the error's `.raw`).",
            raw=raw,
        )
    return value


def decoded(text: str, schema: Schema, source: str) -> dict[str, Any]:
    """The JSON object in ``text`` (a whole reply, nothing around it) if it fits ``schema``."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelReplyError(
            f"{source} answered with text that is not one JSON object ({exc}).",
            "Retry, or use a model that supports structured output (the raw reply is kept on "
            "the error's `.raw`).",
            raw=text,
        ) from exc
    return checked(value, schema, text, source)


def refused(source: str, reason: str, raw: str) -> ModelReplyError:
    """The error for a model that declined to answer."""
    return ModelReplyError(
        f"{source} refused to answer: {reason or '(no reason given)'}",
        "Read the refusal on the error's `.raw`; rephrase the content or use another model.",
        raw=raw or reason,
    )
