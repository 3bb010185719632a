"""JSON for the hook's warm path, read by the C scanner `json` itself uses, without importing `json`.

`import json` loads `re`, and with it `enum`, `functools` and `collections`: about a third of what
the warm session start executes beyond the bare interpreter (34 of 95 million instructions under
callgrind), for a few small documents: the harness's JSON, the connection's record, the head of the
startup record, and the receipt it writes. `json.loads` hands each of them to `_json`'s scanner
anyway; `loads` calls that scanner directly with the settings `json.loads` gives it, and whenever it
does not read a whole document (not JSON, another encoding, no `_json` in this Python) `json.loads`
itself answers, so the value or the error is always the one `json` gives. `dumps` writes any value
of JSON's own shapes (dicts with string keys, lists, tuples, strings, numbers, booleans, null) as
`json.dumps` does with the same separators and `ensure_ascii`, quoting strings with the C functions
`json` quotes them with; anything else (another key type, another object, a nesting deeper than
`_DEPTH`) goes to `json` itself, which writes it or raises as it always does. The MCP server writes
its answers with it too: `import json` was a third of the processor time its start took before the
first answers (8 of 23 ms, `docs/mcp.md`). Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module exists to keep imports off the warm path
if TYPE_CHECKING:
    from typing import Any

try:
    import _json as accelerator
except ImportError:  # pragma: no cover - CPython has it; elsewhere `json` answers every call
    accelerator = None  # type: ignore[assignment]

_SPACE = " \t\n\r"  # JSON's whitespace, as json.decoder.WHITESPACE matches it


class _Settings:
    """What `json.JSONDecoder()` hands the scanner: strict strings, plain dicts, float and int."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = None if accelerator is None else accelerator.make_scanner(_Settings())  # type: ignore[arg-type]


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`: the same value, or the same error."""
    if _scan is not None and isinstance(text, (str, bytes)):
        try:
            doc = text if isinstance(text, str) else text.decode("utf-8")
            value, end = _scan(doc, len(doc) - len(doc.lstrip(_SPACE)))
            if not doc[end:].strip(_SPACE):
                return value
        except (StopIteration, ValueError, SystemError):
            # Not one whole JSON document in UTF-8: `json` says what it is. (The scanner words the errors
            # it finds itself with `json.decoder`'s exception class, which it looks up only among the
            # modules already imported: before `json` is, such an error comes out as a SystemError.)
            pass
    import json  # only for what the scanner did not read

    return json.loads(text)


_DEPTH = 100  # containers nested deeper are written by `json` (which also finds a circular one)
_CONSTANTS = {None: "null", True: "true", False: "false"}
_FLOAT_WORDS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # float's own repr, as json writes it


class _Unwritten(Exception):
    """A value this module leaves to `json`."""


def dumps(value: object, *, separators: tuple[str, str] = (", ", ": "), ensure_ascii: bool = True) -> str:
    """`json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)`: the same text, or the same error."""
    if accelerator is not None:
        quote = accelerator.encode_basestring_ascii if ensure_ascii else accelerator.encode_basestring
        out: list[str] = []
        try:
            _write(value, out, quote, separators, 0)
            return "".join(out)
        except _Unwritten:
            pass
    import json  # only for what this does not write

    return json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)


def _write(value: object, out: list[str], quote: Any, separators: tuple[str, str], depth: int) -> None:
    """Append `value`'s JSON text to `out`, as `json`'s encoder writes it."""
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):  # float's own repr and value, whatever a subclass says of itself
        text = float.__repr__(value)
        out.append(_FLOAT_WORDS.get(text, text))
    elif depth >= _DEPTH:
        raise _Unwritten
    elif isinstance(value, dict):
        out.append("{")
        for number, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise _Unwritten
            if number:
                out.append(separators[0])
            out.append(quote(key))
            out.append(separators[1])
            _write(item, out, quote, separators, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for number, item in enumerate(value):
            if number:
                out.append(separators[0])
            _write(item, out, quote, separators, depth + 1)
        out.append("]")
    else:
        raise _Unwritten
