"""A tool call's arguments checked against the tool's own input schema, before anything is read.

A client is not trusted to have validated what it sends, so the bounds the model is shown (`catalog`)
are the bounds enforced: one schema, read twice. Only the shapes the catalog uses are understood
(an object of strings, enumerations, whole numbers and a list of strings); a schema using anything
else is a programming error, caught by the tests that walk every tool.

The refusals are the command line's usage lines (`UsageError`: "limit must be a whole number of at
least 1"), checked in the schema's property order, so a call with several faults is told the first one
the command line would name. A string that is only whitespace counts as empty where one is required;
an optional string may be empty (it then means "not given").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from continuity.errors import UsageError


def _string(name: str, spec: Mapping[str, Any], value: object, required: bool) -> str | None:
    if value is None:
        if required:
            raise UsageError(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a string")
    if len(value) > spec["maxLength"]:
        raise UsageError(f"{name} is longer than {spec['maxLength']} characters")
    if required and spec.get("minLength", 0) > 0 and not value.strip():
        raise UsageError(f"{name} must not be empty")
    return value


def _integer(name: str, spec: Mapping[str, Any], value: object) -> int | None:
    if value is None:
        return None
    minimum = spec.get("minimum")
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        raise UsageError(f"{name} must be a whole number of at least {minimum}")
    return value


def _strings(name: str, spec: Mapping[str, Any], value: object) -> list[str]:
    """A list of one-line strings; blank items are dropped before the count is checked."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(f"{name} must be a list of strings")
    longest = spec["items"]["maxLength"]
    if any(len(item) > longest for item in value):
        raise UsageError(f"{name} has an item longer than {longest} characters")
    items = [item for item in value if item.strip()]
    low, high = spec["minItems"], spec["maxItems"]
    if not low <= len(items) <= high:
        raise UsageError(f"{name} has {len(items)} items; write {low} to {high}")
    return items


def validate(tool: str, schema: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as the tool's handler reads them: each property of the schema present, with its
    default when it has one and None when it was not given; any fault raises the command line's line."""
    properties: Mapping[str, Mapping[str, Any]] = schema["properties"]
    extra = sorted(str(key) for key in args if key not in properties)
    if extra:
        raise UsageError(f"{tool} takes no argument {', '.join(extra)}")
    required = set(schema.get("required", ()))
    checked: dict[str, Any] = {}
    for name, spec in properties.items():
        value = args.get(name, spec.get("default"))
        if "enum" in spec:
            if value is None and name not in required and name not in args:
                checked[name] = None  # the handler chooses (the brief's event follows the audience)
            elif value not in spec["enum"]:
                raise UsageError(f"{name} must be one of {', '.join(spec['enum'])}")
            else:
                checked[name] = value
        elif spec["type"] == "string":
            checked[name] = _string(name, spec, value, name in required)
        elif spec["type"] == "integer":
            found = _integer(name, spec, value)
            checked[name] = spec.get("default") if found is None else found
        elif spec["type"] == "array":
            checked[name] = _strings(name, spec, value)
        else:
            raise TypeError(f"{tool}.{name}: schema type {spec['type']!r} is not understood")
    return checked
