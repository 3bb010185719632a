"""JSON for the hook's warm path, read by the C scanner `json` itself uses, without importing `json`.

`import json` loads `re`, and with it `enum`, `functools` and `collections`: about a third of what
the warm session start executes beyond the bare interpreter (34 of 95 million instructions under
callgrind), for a few small documents: the harness's JSON, the connection's record, the head of the
startup record, and the receipt it writes. `json.loads` hands each of them to `_json`'s scanner
anyway; `loads` calls that scanner directly with the settings `json.loads` gives it, and whenever it
does not read a whole document (not JSON, another encoding, no `_json` in this Python) `json.loads`
itself answers, so the value or the error is always the one `json` gives. `dumps` likewise calls the
C encoder `json.dumps` uses, with the arguments `json.dumps` gives it for its separators and
`ensure_ascii`; a value that encoder cannot write goes to `json` itself. The MCP server writes
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


class _Unwritten(Exception):
    """A value `json`'s C encoder leaves to its `default`: here, to `json` itself."""


def _unwritten(value: object) -> object:
    raise _Unwritten


def dumps(value: object, *, separators: tuple[str, str] = (", ", ": "), ensure_ascii: bool = True) -> str:
    """`json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)`: the same text, or the same
    error. It calls the C encoder `json.dumps` itself calls, with the arguments it gives it; a value
    that encoder hands to `default` (not of JSON's shapes) goes to `json`, which raises as it does."""
    if accelerator is not None:
        quote = accelerator.encode_basestring_ascii if ensure_ascii else accelerator.encode_basestring
        item_separator, key_separator = separators
        # json.encoder.JSONEncoder.iterencode: markers, default, encoder, indent, key_separator,
        # item_separator, sort_keys, skipkeys, allow_nan
        encoder = accelerator.make_encoder(
            {}, _unwritten, quote, None, key_separator, item_separator, False, False, True
        )
        try:
            return "".join(encoder(value, 0))
        except _Unwritten:
            pass
    import json  # only for what this does not write

    return json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)
