"""JSON-RPC 2.0 and the Model Context Protocol's handshake, on the standard library alone.

Why not the official SDK: importing `mcp` costs about a second of CPU on a small computer (it loads
its client, its server and two protocol revisions of pydantic models whatever is used), and a client
waits for its servers at launch, so every session paid that second. This module reads and writes JSON
with `lightjson` (`json`'s own C scanner and quoting, without importing `json` and `re`, which were
half of the processor time the server spent before its first answers), so the server answers
`initialize` and `tools/list` about 16 ms after it is spawned; the SDK's own client is the conformance
harness of the tests instead.

One message is one line of UTF-8 JSON (the stdio transport). `Protocol.receive` takes the bytes of
one line and returns what to do: the answers to send now, and the tool calls to run. Every request
that carries a usable id gets an answer, whatever else its bytes hold: a line that is not JSON, not
UTF-8, holds a lone surrogate (`\\ud800`) or nests deeper than `MAX_DEPTH` gets a parse error, and a
line longer than the cap an invalid-request error, each carrying the request's id when it can still be
read and `null` when it cannot. Notifications (no id) never get one, as JSON-RPC says.
"""

from __future__ import annotations

from continuity import lightjson

TYPE_CHECKING = False  # nothing from `typing` at run time: see `stdio` on what loads before the first answer
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

JSONRPC = "2.0"
# The revisions reached through the `initialize` handshake, oldest to newest (the SDK's
# HANDSHAKE_PROTOCOL_VERSIONS). 2026-07-28 is the stateless per-request revision, which has no handshake:
# a client offering it in `initialize` is answered with the newest handshake revision, as the SDK does.
SUPPORTED_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# JSON no client of ours sends is nested more than a few levels (a tool call's arguments hold a list of
# strings); the standard library's parser would recurse until the interpreter's limit.
MAX_DEPTH = 64
# An id that can be read from a line too long to parse: the first `"id": value` in its first bytes.
_ID_PREFIX_BYTES = 64 * 1024
_ID_PATTERN = rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\r\n]|\\.){0,256}")'


class Reject(Exception):
    """A request answered with a JSON-RPC error rather than a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Call:
    """A `tools/call` to run: its request id, the tool's name and its arguments."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self, request_id: int | str, name: str, arguments: dict[str, Any]) -> None:
        self.id = request_id
        self.name = name
        self.arguments = arguments

    def __eq__(self, other: object) -> bool:
        mine = (self.id, self.name, self.arguments)
        return isinstance(other, Call) and mine == (other.id, other.name, other.arguments)

    def __repr__(self) -> str:
        return f"Call({self.id!r}, {self.name!r}, {self.arguments!r})"


class Step:
    """What one line asks for: answers to write now, calls to run, ids whose calls were cancelled.

    (Plain classes, not dataclasses or NamedTuples, here and in `handlers`, `catalog` and `meter`:
    `dataclasses` and `typing` cost more to import than the rest of the server's first answers.)"""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.calls: list[Call] = []
        self.cancelled: list[int | str] = []


def result(request_id: int | str | None, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": request_id, "result": value}


def error(request_id: int | str | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": JSONRPC, "id": request_id, "error": body}


def encode(message: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON; a message that cannot be encoded (it never should) becomes an error."""
    try:
        return (lightjson.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError):
        fallback = error(message.get("id"), INTERNAL_ERROR, "the answer could not be encoded as UTF-8 JSON")
        return (lightjson.dumps(fallback) + "\n").encode("ascii")


def valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _has_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return not value.isascii() and not _encodes(value)
    if isinstance(value, dict):
        return any(_has_surrogate(key) or _has_surrogate(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    return False


def _encodes(text: str) -> bool:
    """False when `text` holds a lone surrogate: the only code points UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _depth_capped(text: str) -> str:
    """`text` with every array or object deeper than MAX_DEPTH replaced by `null`, strings kept whole:
    what is left parses without recursing far, so the request's id can still be read."""
    out: list[str] = []
    depth = skip_from = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1:
                skip_from = len(out)
        elif char in "]}":
            depth -= 1
            if depth == MAX_DEPTH:
                del out[skip_from:]
                out.append("null")
                continue
        elif char == '"':
            in_string = True
        if depth <= MAX_DEPTH:
            out.append(char)
    return "".join(out)


def _id_of(value: object) -> int | str | None:
    if isinstance(value, dict):
        found = value.get("id")
        if valid_id(found) and not _has_surrogate(found):
            return found
    return None


def id_in_prefix(line: bytes) -> int | str | None:
    """The id of a line that cannot be parsed whole (too long): the first `"id": …` in its first bytes."""
    import re  # only for a line over the cap: `re` is not loaded before the first answers

    match = re.search(_ID_PATTERN, line[:_ID_PREFIX_BYTES])
    if match is None:
        return None
    try:
        found = lightjson.loads(match.group(1).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return found if valid_id(found) and not _has_surrogate(found) else None


def parse(line: bytes) -> tuple[Any, dict[str, Any] | None]:
    """The JSON value of one line, or None and the parse error to answer (with the id when readable)."""
    text = line.decode("utf-8", errors="surrogateescape")  # a bad byte becomes a lone surrogate
    capped = _depth_capped(text) if text.count("[") + text.count("{") > MAX_DEPTH else text
    deep = capped != text  # something nested deeper than MAX_DEPTH was left out
    try:
        value = lightjson.loads(capped)
    except (ValueError, RecursionError):
        return None, error(None, PARSE_ERROR, "Parse error: not one JSON value")
    if deep:
        return None, error(_id_of(value), PARSE_ERROR, f"Parse error: nested deeper than {MAX_DEPTH} levels")
    maybe = "\\u" in text or not text.isascii()  # a lone surrogate is escaped, or a byte that was not UTF-8
    if maybe and _has_surrogate(value):
        return None, error(_id_of(value), PARSE_ERROR, "Parse error: not valid UTF-8 (a lone surrogate)")
    return value, None


if TYPE_CHECKING:
    Handler = Callable[[dict[str, Any]], dict[str, Any]]


class Protocol:
    """The server's side of one session: the handshake, ping, the tool list, and tool calls handed on."""

    def __init__(
        self,
        server_info: dict[str, Any],
        instructions: str,
        tools: Callable[[], list[dict[str, Any]]],
        max_line_bytes: int,
    ) -> None:
        self.server_info = server_info
        self.max_line_bytes = max_line_bytes
        self.instructions = instructions
        self.tools = tools
        self.version: str | None = None  # the negotiated revision, once `initialize` was answered
        self.initialized = False  # the client's `notifications/initialized` arrived
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": self.tools()},
        }

    def receive(self, line: bytes) -> Step:
        step = Step()
        if not line.strip():
            return step
        if len(line) > self.max_line_bytes:
            message = f"Invalid Request: a message is at most {self.max_line_bytes} bytes"
            step.answers.append(error(id_in_prefix(line), INVALID_REQUEST, message))
            return step
        value, failure = parse(line)
        if failure is not None:
            step.answers.append(failure)
        elif isinstance(value, list):  # a batch: removed from MCP in 2025-06-18; each request is refused
            found = [_id_of(item) for item in value if isinstance(item, dict) and "method" in item]
            refused: list[int | str | None] = [request_id for request_id in found if request_id is not None]
            for request_id in refused or [None]:
                step.answers.append(error(request_id, INVALID_REQUEST, "Invalid Request: batches are not supported"))
        else:
            self._message(value, step)
        return step

    def _message(self, message: object, step: Step) -> None:
        if not isinstance(message, dict):
            step.answers.append(error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object"))
            return
        method = message.get("method")
        if "id" not in message:
            if isinstance(method, str):
                self._notification(method, message.get("params"), step)
            return  # a notification, or a response to a request this server never sends
        request_id = message["id"]
        if not valid_id(request_id):
            step.answers.append(error(None, INVALID_REQUEST, "Invalid Request: the id must be a string or an integer"))
            return
        if method is None and ("result" in message or "error" in message):
            return  # a response: this server sends no requests, so there is nothing to match it to
        if message.get("jsonrpc") != JSONRPC or not isinstance(method, str):
            step.answers.append(error(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request"))
            return
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            step.answers.append(error(request_id, INVALID_PARAMS, "Invalid params: params must be an object"))
            return
        try:
            if method == "tools/call":
                step.calls.append(self._call(request_id, params))
                return
            handler = self._methods.get(method)
            if handler is None:
                raise Reject(METHOD_NOT_FOUND, "Method not found", method[:200])
            step.answers.append(result(request_id, handler(params)))
        except Reject as exc:
            step.answers.append(error(request_id, exc.code, exc.message, exc.data))

    def _notification(self, method: str, params: object, step: Step) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict) and valid_id(params.get("requestId")):
            step.cancelled.append(params["requestId"])
        # every other notification (progress, roots changed, …) asks nothing of this server

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        offered = params.get("protocolVersion")
        if not isinstance(offered, str):
            raise Reject(INVALID_PARAMS, "Invalid params: initialize needs a protocolVersion string")
        self.version = offered if offered in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self.server_info,
            "instructions": self.instructions,
        }

    @staticmethod
    def _call(request_id: int | str, params: dict[str, Any]) -> Call:
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str):
            raise Reject(INVALID_PARAMS, "Invalid params: tools/call needs a tool name")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise Reject(INVALID_PARAMS, "Invalid params: a tool's arguments must be an object")
        return Call(request_id, name, arguments)


def lines(chunks: Iterable[bytes], max_bytes: int) -> Iterator[bytes]:
    """Split a byte stream into lines; a line longer than `max_bytes` is cut to its first `max_bytes`
    plus one (so it is known to be over, and its id may still be read) and the rest is dropped unkept."""
    buffer = bytearray()
    dropping = False
    for chunk in chunks:
        start = len(buffer)
        buffer += chunk
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                if not dropping and len(buffer) > max_bytes:
                    yield bytes(buffer[: max_bytes + 1])
                    dropping = True
                if dropping:
                    buffer.clear()
                break
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            start = 0
            if not dropping:
                yield line
            dropping = False
    if buffer and not dropping:
        yield bytes(buffer)
