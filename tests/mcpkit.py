"""Driving `lifecycle mcp` as a client does: a real subprocess, spoken to with the SDK's own stdio client
(the conformance harness: the server itself is written on the standard library), or byte by byte
(`RawServer`) for what no well-behaved client sends.

`McpRun` starts the server in a checkout, initializes the session and keeps it open while a test
makes calls, so a test sees one server process (one session, one meter) from its first call to its
last. Each call returns the tool result's text and its `isError` flag.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from briefkit import write
from hookkit import LIFECYCLE, hook_env
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from continuity.hook import receipts, warm
from continuity.local.repo import find_repo_root


class Reply:
    def __init__(self, text: str, is_error: bool) -> None:
        self.text = text
        self.is_error = is_error

    def __repr__(self) -> str:
        return f"Reply(is_error={self.is_error}, text={self.text[:200]!r})"


class McpRun:
    """One open client session with a server; `call` and `tools` are synchronous for the tests."""

    def __init__(self, portal: Any, session: ClientSession) -> None:
        self._portal = portal
        self._session = session

    def tools(self) -> list[Any]:
        return list(self._portal.call(self._session.list_tools).tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Reply:
        result = self._portal.call(self._session.call_tool, name, arguments or {})
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        assert len(texts) == len(result.content) == 1, result
        return Reply(texts[0], bool(result.is_error))


@contextmanager
def mcp_server(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[McpRun]:
    """`lifecycle mcp ARGS` started in `cwd`, with an initialized client session on it."""
    params = StdioServerParameters(command=str(LIFECYCLE), args=["mcp", *args], cwd=str(cwd), env=env or hook_env())
    ready = threading.Event()
    holder: dict[str, Any] = {}

    with anyio.from_thread.start_blocking_portal() as portal:
        stop = portal.call(anyio.Event)

        async def run() -> None:
            async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
                await session.initialize()
                holder["session"] = session
                ready.set()
                await stop.wait()

        future = portal.start_task_soon(run)
        while not ready.wait(0.05):
            if future.done():
                future.result()  # raises what went wrong
        try:
            yield McpRun(portal, holder["session"])
        finally:
            portal.call(stop.set)
            future.result(timeout=30)


def record_startup(
    checkout: Path, size: int, *, harness: str = "codex", event: str = "SessionStart", now: float | None = None
) -> None:
    """A delivery receipt as the startup hook leaves it, for this checkout (the meter's startup brief)."""
    digest = receipts.checkout_digest(find_repo_root(checkout))
    warm.write_receipt(
        {"harness": harness, "event": event, "source": "startup", "status": "restored", "bytes": size,
         "tokens_estimate": -(-size // 4), "sha256": "0" * 64, "recovery_note": False, "checkout": digest},
        now,
    )  # fmt: skip


def approved_note(vault: Path, note_id: str, body: str, **meta: Any) -> Path:
    fields: dict[str, Any] = {
        "id": note_id,
        "type": "fact",
        "status": "approved",
        "title": note_id,
        "verified": "2026-11-01",
        "revalidate_by": "2099-01-01",
        **meta,
    }
    head = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    return write(vault, f"30-memory/facts/{note_id}.md", f"---\n{head}---\n{body}\n")


class RawServer:
    """`lifecycle mcp` spoken to byte by byte, as a broken or hostile client would: `send` writes one
    line (any bytes), `answer` waits for the next line the server writes and parses it."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(LIFECYCLE), "mcp", *args], cwd=cwd, env=hook_env(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self._lines: queue.Queue[bytes] = queue.Queue()
        self.errors: queue.Queue[bytes] = queue.Queue()
        for stream, sink in ((self.proc.stdout, self._lines), (self.proc.stderr, self.errors)):
            threading.Thread(target=_pump, args=(stream, sink), daemon=True).start()

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        assert line, "the server closed its stdout"
        parsed: dict[str, Any] = json.loads(line.decode("utf-8"))
        return parsed

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer()

    def initialize(self, version: str = "2025-06-18") -> dict[str, Any]:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        answer = self.request(0, "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        return self.proc.wait(timeout=60)

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)


def _pump(stream: Any, sink: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        sink.put(line)
    sink.put(b"")
