"""A scripted stand-in for the model provider, for the tests that drive the real Codex and Claude Code.

The only proof of what a model was given is the request the client sent, so this server records every
request body it receives (one JSON line each, written before it answers) and answers from a script:

- `POST …/responses`: the OpenAI Responses API, streamed as server-sent events the way Codex reads
  them (`response.created`, `response.output_item.added`, `response.output_text.delta`,
  `response.output_item.done`, `response.completed`), with `function_call` items for tool calls.
- `POST …/messages`: the Anthropic Messages API, streamed (`message_start`, `content_block_start`,
  `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`), with `tool_use`
  blocks for tool calls; `…/messages/count_tokens` gets a token count.

The script is a JSON object `{"rules": [...]}`. Each rule is `{"match": TEXT?, "reply": REPLY}` and
answers one request: the first unused rule whose `match` occurs in the request's last input item
(Responses) or last message (Messages), serialized as JSON, wins (system and developer messages
are passed over: both clients add context after the prompt); a rule without `match` takes any
request. So a subagent's first request (whose last item is its task) can be told apart from the
parent's. A rule may also `"await": TEXT` (see `Script`). A REPLY is `{"text": TEXT}` or
`{"tool": NAME, "input": OBJECT}` (plus `"namespace"` for a Codex namespaced tool such as
`multi_agent_v1`); with no rule left the answer is the text "Done.", which ends the turn.

Run as a program, it is the one process started inside a network namespace with only a loopback
interface: it brings `lo` up, serves on 127.0.0.1, runs the client command with a time limit, ends
the client's whole process group, and exits with the client's status (124 on timeout). `read_log`,
`text_of`, `with_text` and `occurrences` read the record afterwards.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_REPLY: dict[str, Any] = {"text": "Done."}
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "cookie"})


class Script:
    """The rules of one run, each used once, chosen under a lock (requests may arrive concurrently).

    A rule with `"await": TEXT` holds its answer until some request's last item contained TEXT (at
    most `AWAIT_SECONDS`): the parent's turn then ends only after its subagent has asked the model.
    """

    AWAIT_SECONDS = 90.0

    def __init__(self, rules: list[dict[str, Any]]) -> None:
        self._rules = list(rules)
        self._seen: list[str] = []
        self._changed = threading.Condition()

    def reply_for(self, last_item: str) -> dict[str, Any]:
        with self._changed:
            self._seen.append(last_item)
            self._changed.notify_all()
            for index, rule in enumerate(self._rules):
                match = rule.get("match")
                if match is None or match in last_item:
                    del self._rules[index]
                    break
            else:
                return DEFAULT_REPLY
            awaited = rule.get("await")
            if awaited:
                self._changed.wait_for(lambda: any(awaited in seen for seen in self._seen), self.AWAIT_SECONDS)
            reply: dict[str, Any] = rule["reply"]
            return reply


def sse(events: list[dict[str, Any]]) -> Iterator[bytes]:
    for event in events:
        yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def responses_events(reply: dict[str, Any], serial: int) -> list[dict[str, Any]]:
    """One Responses API stream holding one output item: a message or a function call."""
    rid, iid = f"resp_{serial}", f"item_{serial}"
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}  # fmt: skip
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress", "output": []}}
    ]
    if "tool" in reply:
        item = {"type": "function_call", "id": iid, "call_id": f"call_{serial}", "name": reply["tool"],
                "arguments": json.dumps(reply["input"]), "status": "completed"}  # fmt: skip
        if "namespace" in reply:
            item["namespace"] = reply["namespace"]
        events.append({"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": ""}})
    else:
        text = str(reply["text"])
        item = {"type": "message", "id": iid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
        added = {**item, "status": "in_progress", "content": []}
        events.append({"type": "response.output_item.added", "output_index": 0, "item": added})
        events.append({"type": "response.output_text.delta", "item_id": iid, "output_index": 0,
                       "content_index": 0, "delta": text})  # fmt: skip
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    done = {"id": rid, "status": "completed", "output": [item], "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return events


def messages_events(reply: dict[str, Any], serial: int, model: str) -> list[dict[str, Any]]:
    """One Messages API stream holding one content block: text or a tool use."""
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {"id": f"msg_{serial}", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    if "tool" in reply:
        block = {"type": "tool_use", "id": f"toolu_{serial:04d}", "name": reply["tool"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": str(reply["text"])}
        stop = "end_turn"
    events += [
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return events


class Handler(BaseHTTPRequestHandler):
    server: MockServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the log file is the record."""

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, chunks: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}

    def do_GET(self) -> None:
        self.server.record(self.command, self.path, self._headers(), None)
        if self.path.split("?")[0].endswith("/models"):
            self._send(200, json.dumps({"models": [], "data": []}).encode())
        else:
            self._send(404, b'{"error": {"type": "not_found", "message": "not here"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        serial = self.server.record(self.command, self.path, self._headers(), body)
        path = self.path.split("?")[0]
        doc = body if isinstance(body, dict) else {}
        if path.endswith("/responses"):
            reply = self.server.script.reply_for(json.dumps(last_turn(doc.get("input"))))
            self._stream(sse(responses_events(reply, serial)))
        elif path.endswith("/messages/count_tokens"):
            self._send(200, json.dumps({"input_tokens": len(raw) // 4}).encode())
        elif path.endswith("/messages"):
            reply = self.server.script.reply_for(json.dumps(last_turn(doc.get("messages"))))
            events = messages_events(reply, serial, str(doc.get("model", "mock")))
            if doc.get("stream"):
                self._stream(sse(events))
            else:
                self._send(200, json.dumps(collapse(events)).encode())
        else:
            self._send(404, b'{"error": {"type": "not_found", "message": "not here"}}')


def last_turn(items: object) -> object:
    """The last item that is not a system or developer message: what the model is answering now.

    Both clients append context after the prompt (Claude Code a `system` message, Codex `developer`
    ones), so the rules match on the prompt, tool result or task before it."""
    if not isinstance(items, list):
        return None
    for item in reversed(items):
        if not (isinstance(item, dict) and item.get("role") in ("system", "developer")):
            return item
    return None


def collapse(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming Messages answer equal to a stream from `messages_events`."""
    message = dict(events[0]["message"])
    block = dict(events[1]["content_block"])
    delta = events[2]["delta"]
    if block["type"] == "tool_use":
        block["input"] = json.loads(delta["partial_json"])
    else:
        block["text"] = delta["text"]
    message.update(content=[block], stop_reason=events[4]["delta"]["stop_reason"])
    return message


class MockServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, script: Script, log: Path) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.script = script
        self._log = log.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._serial = itertools.count(1)

    def record(self, method: str, path: str, headers: dict[str, str], body: object) -> int:
        """Write down one request before it is answered; its serial number names the answer's ids."""
        with self._lock:
            serial = next(self._serial)
            entry = {"serial": serial, "time": time.time(), "method": method, "path": path, "headers": headers,
                     "body": body}  # fmt: skip
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()
            return serial


def read_log(log: Path) -> list[dict[str, Any]]:
    """The recorded requests, in the order they arrived."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def text_of(item: object) -> str:
    """All the text in one input item or message: content blocks, tool results, call arguments."""
    if isinstance(item, str):
        return item
    if isinstance(item, list):
        return "\n".join(text_of(part) for part in item)
    if not isinstance(item, dict):
        return ""
    for key in ("text", "output", "arguments"):
        if isinstance(item.get(key), str):
            return str(item[key])
    return text_of(item.get("content"))


def with_text(items: list[dict[str, Any]], needle: str) -> list[int]:
    """The positions of the items whose text contains `needle`."""
    return [index for index, item in enumerate(items) if needle in text_of(item)]


def occurrences(value: object, needle: str) -> int:
    """How often `needle` occurs in all the strings of a request body, however deeply nested."""
    if isinstance(value, str):
        return value.count(needle)
    if isinstance(value, dict):
        return sum(occurrences(item, needle) for item in value.values())
    if isinstance(value, list):
        return sum(occurrences(item, needle) for item in value)
    return 0


def run_client(argv: list[str], timeout: float, cwd: str | None, output: Path, launched: Path | None = None) -> int:
    """Run the client in its own process group and end that whole group afterwards, whatever happened.

    Its output goes to a file, not a pipe: a hook process left behind cannot hold the caller up. With
    `launched`, the wall-clock time of the launch is written there (on the clock of the log's `time`),
    for bench/bench_clients.py."""
    with output.open("wb") as sink:
        if launched is not None:
            launched.write_text(repr(time.time()), encoding="utf-8")
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        proc.wait()


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--cwd")
    parser.add_argument("--output", type=Path, required=True, help="the client's stdout and stderr")
    parser.add_argument("--launched", type=Path, help="where to write the time the client was launched")
    parser.add_argument("argv", nargs="+", help="the client command, after --")
    opts = parser.parse_args(args)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    rules = json.loads(opts.script.read_text(encoding="utf-8"))["rules"]
    server = MockServer(opts.port, Script(rules), opts.log)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return run_client(opts.argv, opts.timeout, opts.cwd, opts.output, opts.launched)
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
