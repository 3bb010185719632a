"""JSON for the hook's warm path, read by the C scanner `json` itself uses, without importing `json`.

`import json` loads `re`, and with it `enum`, `functools` and `collections`: about a third of what
the warm session start executes beyond the bare interpreter (34 of 95 million instructions under
callgrind), for a few small documents: the harness's JSON, the connection's record, the head of the
startup record, and the receipt it writes. `json.loads` hands each of them to `_json`'s scanner
anyway; `loads` calls that scanner directly with the settings `json.loads` gives it, and whenever it
does not read a whole document (not JSON, another encoding, no `_json` in this Python) `json.loads`
itself answers, so the value or the error is always the one `json` gives. `dumps` writes a flat
object of strings, integers, booleans and nulls as `json.dumps` does; anything else goes to `json`.
Standard library only.
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
    if _scan is not None:
        try:
            doc = text if isinstance(text, str) else text.decode("utf-8")
            value, end = _scan(doc, len(doc) - len(doc.lstrip(_SPACE)))
            if not doc[end:].strip(_SPACE):
                return value
        except (StopIteration, ValueError):
            pass  # not one whole JSON document in UTF-8: `json` says what it is
    import json  # only for what the scanner did not read

    return json.loads(text)


def dumps(doc: dict[str, object]) -> str:
    """`json.dumps(doc)` for a flat object of str, int, bool and None values."""
    if accelerator is not None:
        encode = accelerator.encode_basestring_ascii
        parts = []
        for key, value in doc.items():
            if not isinstance(key, str):
                break
            if value is None or isinstance(value, bool):
                text = {None: "null", True: "true", False: "false"}[value]
            elif isinstance(value, str):
                text = encode(value)
            elif type(value) is int:
                text = int.__repr__(value)
            else:
                break
            parts.append(f"{encode(key)}: {text}")
        else:
            return "{" + ", ".join(parts) + "}"
    import json  # only for what this does not write

    return json.dumps(doc)
