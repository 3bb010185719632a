"""A small strict JSON reader and an ASCII string writer, for the startup hook's warm path.

The standard `json` module imports `re` and costs several milliseconds at every session start; the
hook reads one small object from the harness and writes a few small receipts, which this covers.
Anything outside strict JSON raises ValueError and the hook falls back to its full path.
"""

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WS = " \t\n\r"


def _string(text: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    start = i
    end = len(text)
    quote = backslash = -1
    while True:
        # The next quote or backslash by str.find (a long tool output would take milliseconds a
        # character at a time), each searched again only once passed, so that many escapes before a
        # distant quote stay linear; the run before it may hold no control character.
        if quote < i:
            quote = text.find('"', i) % (end + 1)  # not found: `end`
        if backslash < i:
            backslash = text.find("\\", i) % (end + 1)
        j = min(quote, backslash)
        if j >= end:
            raise ValueError(f"bad string at {start}")
        run = text[i:j]
        if not run.isprintable() and any(c < " " for c in run):
            raise ValueError(f"bad string at {start}")
        out.append(run)
        if text[j] == '"':
            return "".join(out), j + 1
        esc = text[j + 1 : j + 2]
        if esc == "u":
            code = int(text[j + 2 : j + 6], 16)
            i = j + 6
            if 0xD800 <= code < 0xDC00 and text[i : i + 2] == "\\u":
                low = int(text[i + 2 : i + 6], 16)
                if 0xDC00 <= low < 0xE000:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            out.append(chr(code))
        elif esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i = j + 2
        else:
            raise ValueError(f"bad escape at {j}")


def _value(text: str, i: int, depth: int) -> tuple[object, int]:
    while i < len(text) and text[i] in _WS:
        i += 1
    if depth > 64 or i >= len(text):
        raise ValueError("unexpected end or nesting")
    ch = text[i]
    if ch == '"':
        return _string(text, i + 1)
    if ch in "{[":
        closing = "}" if ch == "{" else "]"
        items: list[object] = []
        pairs: dict[str, object] = {}
        i += 1
        while True:
            while i < len(text) and text[i] in _WS:
                i += 1
            if text[i : i + 1] == closing and not items and not pairs:
                return (pairs if ch == "{" else items), i + 1
            if ch == "{":
                if text[i : i + 1] != '"':
                    raise ValueError(f"expected a key at {i}")
                key, i = _string(text, i + 1)
                while i < len(text) and text[i] in _WS:
                    i += 1
                if text[i : i + 1] != ":":
                    raise ValueError(f"expected ':' at {i}")
                pairs[key], i = _value(text, i + 1, depth + 1)
            else:
                item, i = _value(text, i, depth + 1)
                items.append(item)
            while i < len(text) and text[i] in _WS:
                i += 1
            if text[i : i + 1] == ",":
                i += 1
                continue
            if text[i : i + 1] == closing:
                return (pairs if ch == "{" else items), i + 1
            raise ValueError(f"expected ',' or '{closing}' at {i}")
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, i):
            return value, i + len(word)
    j = i
    while j < len(text) and text[j] in "+-0123456789.eE":
        j += 1
    if j == i:
        raise ValueError(f"unexpected character at {i}")
    number = text[i:j]
    if not _is_number(number):
        raise ValueError(f"bad number at {i}")
    return (float(number) if any(c in number for c in ".eE") else int(number)), j


_DIGITS = frozenset("0123456789")


def _digits(text: str, i: int) -> int:
    while i < len(text) and text[i] in _DIGITS:
        i += 1
    return i


def _is_number(text: str) -> bool:
    """JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (Python's int() is looser)."""
    i = 1 if text.startswith("-") else 0
    if text[i : i + 1] == "0":
        i += 1
    elif text[i : i + 1] in _DIGITS:
        i = _digits(text, i)
    else:
        return False
    if text[i : i + 1] == ".":
        end = _digits(text, i + 1)
        if end == i + 1:
            return False
        i = end
    if text[i : i + 1] in ("e", "E"):
        i += 1
        if text[i : i + 1] in ("+", "-"):
            i += 1
        end = _digits(text, i)
        if end == i:
            return False
        i = end
    return i == len(text)


def parse_json(text: str) -> object:
    value, end = _value(text, 0, 0)
    if text[end:].strip(_WS):
        raise ValueError("trailing data")
    return value


def json_object(fields: dict[str, object]) -> str:
    """A flat JSON object (as `json.dumps` spaces it) of strings, integers, booleans and nulls."""
    parts = []
    for name, value in fields.items():
        if isinstance(value, bool) or value is None:
            text = "true" if value is True else "false" if value is False else "null"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = json_string(str(value))
        parts.append(f"{json_string(name)}: {text}")
    return "{" + ", ".join(parts) + "}"


def json_string(text: str) -> str:
    """A JSON string literal, ASCII only, for the few documents this module writes by hand."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    out.append('"')
    return "".join(out)
