"""``rhetorica lsp`` against broken and hostile input: frames with a bad ``Content-Length`` (refused,
then the reader resynchronises), frames larger than the limit, bodies that are no JSON, requests with
parameters of the wrong shape or out of range, requests before ``initialize``, ``exit`` without
``shutdown``, and a document with one very long line. Every request gets a response, no traceback
reaches a reply or stderr, and the server keeps serving.

The frame reader (:mod:`app.lsp.framing`) is driven in-process; the server as a process over raw
stdio bytes (the pygls client cannot send broken frames), every wait with a timeout."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")

from app.lsp.engine import MAX_LINE_CHARS, DraftEngine
from app.lsp.framing import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    FrameReader,
    Received,
    Refused,
    Skipped,
)

WAIT = 30.0  # seconds any one answer may take
INITIALIZE: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}


def _frame(message: object, length_off_by: int = 0) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + length_off_by) + body


def _request(msg_id: int | str, method: str, params: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


# -- the frame reader -----------------------------------------------------------------------------
def _events(data: bytes, max_bytes: int = 1000) -> list[Received | Refused | Skipped]:
    reader = FrameReader(io.BufferedReader(io.BytesIO(data), buffer_size=7), max_bytes)  # reads in bits
    events = []
    while (event := reader.read()) is not None:
        events.append(event)
    assert len(events) < 20
    return events


GOOD = _frame(_request(1, "after"))


@pytest.mark.parametrize(("broken", "code", "says"), [
    (b"Content-Length: -5\r\n\r\n{}", PARSE_ERROR, "'-5' (not a number of bytes)"),
    (b"Content-Length: abc\r\n\r\n{}", PARSE_ERROR, "'abc' (not a number of bytes)"),
    (_frame(_request(0, "cut"), -5), PARSE_ERROR, "not JSON"),  # the rest runs into the next header
    (_frame(_request(0, "over"), 5), PARSE_ERROR, "not JSON"),  # the body eats the next header's start
    (b"Content-Length: 99999999999999\r\n\r\n{}", INVALID_REQUEST, "larger than the limit"),
    (b"Content-Length: 10\r\n\r\n{not json}", PARSE_ERROR, "not JSON"),
    (b"Content-Length: 4\r\n\r\n\"\xff\xfe\"", PARSE_ERROR, "not UTF-8"),
    (b"Content-Length: 4\r\n\r\n[[]]", None, ""),  # JSON, just no message: not refused here
])
def test_a_broken_frame_is_refused_and_the_next_one_read(broken: bytes, code: int | None, says: str) -> None:
    *first, last = _events(broken + GOOD)
    assert last == Received(_request(1, "after"))
    if code is None:
        assert [type(e) for e in first] == [Received]
        return
    (refused,) = first
    assert isinstance(refused, Refused) and refused.code == code and says in refused.reason
    assert "\n" not in refused.reason


def test_bytes_that_are_no_frame_are_skipped_once() -> None:
    after = Received(_request(1, "after"))
    assert _events(b"garbage line without header\r\n\r\n" + GOOD) == [Skipped(31), after]
    assert _events(b"x" * 10_000 + GOOD) == [Skipped(10_000), after]
    with_type = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + GOOD
    assert _events(with_type) == [after]


def test_a_frame_over_the_limit_is_never_held_whole() -> None:
    big = _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": "a" * 50_000}})
    reader = FrameReader(io.BufferedReader(io.BytesIO(big + GOOD)), 1000)
    refused = reader.read()
    assert isinstance(refused, Refused) and refused.too_large
    assert reader.read() == Received(_request(1, "after"))
    assert reader.read() is None


# -- the server over stdio ------------------------------------------------------------------------
class RawServer:
    """``rhetorica lsp`` as a process, written to as bytes; what it writes is parsed frame by frame."""

    def __init__(self, tmp_path: Path) -> None:
        env = {**os.environ, "RHETORICA_HOME": str(tmp_path / "home")}
        self.process = subprocess.Popen([sys.executable, "-m", "app", "lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr = b""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stdout.read(1)
                if not byte:
                    return
                header += byte
            (length,) = [int(line.split(b":")[1]) for line in header.split(b"\r\n")
                         if line.lower().startswith(b"content-length:")]
            self.received.put(json.loads(stdout.read(length)))

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: object) -> None:
        self.send_raw(_frame(message))

    def answer(self, msg_id: int | str | None) -> dict[str, Any]:
        """The response to ``msg_id`` (None: an error for a message whose id is unknown)."""
        deadline = time.monotonic() + WAIT
        while True:
            for message in self.seen:
                if "method" not in message and message.get("id") == msg_id:
                    self.seen.remove(message)
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no response to {msg_id!r} in {WAIT:g} s; "
                                     f"stderr: {self.stderr[-500:]!r}")
            try:
                self.seen.append(self.received.get(timeout=remaining))
            except queue.Empty:
                continue

    def ask(self, msg_id: int | str, method: str, params: object = None) -> dict[str, Any]:
        self.send(_request(msg_id, method, params))
        return self.answer(msg_id)

    def initialize(self) -> None:
        assert "result" in self.ask("init", "initialize", INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def finish(self, shutdown: bool = True) -> int:
        """(shutdown,) exit, and the exit code (the process must end by itself)."""
        if shutdown:
            assert self.ask("bye", "shutdown") == {"jsonrpc": "2.0", "id": "bye", "result": None}
        self.send({"jsonrpc": "2.0", "method": "exit"})
        try:
            return self.process.wait(WAIT)
        finally:
            self.process.kill()
            assert self.process.stdin is not None
            self.process.stdin.close()

    def assert_no_traceback(self) -> None:
        time.sleep(0.2)  # the last lines on their way
        assert b"Traceback" not in self.stderr, self.stderr.decode(errors="replace")


@pytest.fixture
def server(tmp_path: Path) -> Any:
    started = RawServer(tmp_path)
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait(WAIT)


def _error(response: dict[str, Any]) -> tuple[int, str]:
    assert set(response) == {"jsonrpc", "id", "error"}, response
    assert set(response["error"]) == {"code", "message"}, response  # no "data": no traceback
    assert "\n" not in response["error"]["message"] and "Traceback" not in response["error"]["message"]
    return response["error"]["code"], response["error"]["message"]


@pytest.mark.parametrize("broken", [
    b"Content-Length: -5\r\n\r\n{}",
    b"Content-Length: abc\r\n\r\n{}",
    _frame(_request(99, "shutdown"), -5),
], ids=["negative", "not-a-number", "five-bytes-short"])
def test_a_bad_content_length_is_answered_and_the_server_reads_on(server: RawServer, broken: bytes) -> None:
    server.send_raw(broken)
    server.initialize()  # answered: the reader found the next header
    assert _error(server.answer(None))[0] == PARSE_ERROR
    assert server.finish() == 0
    server.assert_no_traceback()
    assert b"refused a message" in server.stderr


def test_a_huge_content_length_is_refused_not_allocated(server: RawServer) -> None:
    server.initialize()
    server.send_raw(b"Content-Length: 99999999999999\r\n\r\n{\"jsonrpc\":\"2.0\"}")
    code, message = _error(server.answer(None))
    assert code == INVALID_REQUEST and "99,999,999,999,999 bytes is larger than the limit" in message
    assert server.ask(5, "textDocument/hover", {"textDocument": {"uri": "file:///none.tex"},
                                                "position": {"line": 0, "character": 0}})["result"] is None
    assert server.finish() == 0
    server.assert_no_traceback()


def test_every_request_gets_a_response(server: RawServer) -> None:
    uri = "file:///tmp/d.tex"
    server.initialize()
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "latex", "version": 1,
        "text": "\\section{Introduction}\nProtein folding is hard. We propose a method.\n"}}})
    doc = {"uri": uri}
    wrong = [
        ("textDocument/hover", {"textDocument": doc, "position": {"line": -1, "character": -1}}),
        ("textDocument/hover", {"textDocument": doc, "position": {"line": 10**12, "character": 0}}),
        ("textDocument/hover", {"textDocument": doc, "position": {"line": 1, "character": 2**31}}),
        ("textDocument/hover", {"textDocument": 5, "position": "x"}),
        ("textDocument/hover", [1, 2, 3]),
        ("textDocument/inlayHint", {"textDocument": doc, "range": {"start": {"line": 10**9, "character": 0},
                                                                   "end": {"line": -5, "character": 0}}}),
        ("textDocument/codeAction", {"textDocument": doc, "range": {"start": {"line": -3, "character": 0},
                                                                    "end": {"line": 10**9, "character": 0}},
                                     "context": {"diagnostics": []}}),
        ("textDocument/codeAction", {"textDocument": doc, "range": "everywhere"}),
    ]
    for number, (method, params) in enumerate(wrong):
        code, message = _error(server.ask(f"bad{number}", method, params))
        assert code == INVALID_PARAMS and message.startswith(f"invalid params for {method}"), message
    # In range but past the text: nothing there, an empty answer.
    far = {"line": 2**31 - 1, "character": 2**31 - 1}
    assert server.ask(1, "textDocument/hover", {"textDocument": doc, "position": far})["result"] is None
    hints = server.ask(2, "textDocument/inlayHint", {"textDocument": doc, "range": {"start": far,
                                                                                    "end": far}})
    assert hints["result"] == []
    # A notification of the wrong shape has no one to answer; the server goes on.
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}})
    sentence = {"line": 1, "character": 2}
    assert "result" in server.ask(3, "textDocument/hover", {"textDocument": doc, "position": sentence})
    assert server.finish() == 0
    server.assert_no_traceback()


def test_a_request_before_initialize_is_server_not_initialized(server: RawServer) -> None:
    hover = {"textDocument": {"uri": "file:///a.tex"}, "position": {"line": 0, "character": 0}}
    code, message = _error(server.ask(1, "textDocument/hover", hover))
    assert code == -32002 and "before initialize" in message
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///a.tex", "languageId": "latex", "version": 1, "text": "Early."}}})  # dropped
    server.initialize()
    assert server.ask(2, "textDocument/hover", hover)["result"] is None  # a document it never opened
    assert server.finish() == 0
    server.assert_no_traceback()


def test_messages_that_are_no_json_rpc_are_answered_in_one_line(server: RawServer) -> None:
    server.initialize()
    server.send_raw(b"Content-Length: 10\r\n\r\n{not json}")
    assert _error(server.answer(None))[0] == PARSE_ERROR
    server.send_raw(b"Content-Length: 3\r\n\r\n\xff\xfe\xc3")
    assert _error(server.answer(None))[0] == PARSE_ERROR
    server.send_raw(_frame([1, 2, 3]))
    assert _error(server.answer(None)) == (INVALID_REQUEST, "a message must be a JSON object, not an array")
    server.send({"jsonrpc": "1.0", "id": 7, "method": "textDocument/hover"})
    assert _error(server.answer(7))[0] == INVALID_REQUEST
    assert _error(server.ask(8, "rhetorica/noSuchMethod"))[0] == -32601
    assert server.finish() == 0
    server.assert_no_traceback()
    refusals = [line for line in server.stderr.splitlines() if b"refused" in line]
    assert len(refusals) == 4


def test_after_shutdown_a_request_is_refused_not_ignored(server: RawServer) -> None:
    server.initialize()
    assert server.ask(1, "shutdown")["result"] is None
    assert _error(server.ask(2, "textDocument/hover", {"textDocument": {"uri": "file:///a.tex"},
                                                       "position": {"line": 0, "character": 0}}))[0] == -32600
    assert server.finish(shutdown=False) == 0


def test_exit_without_shutdown_is_exit_code_1(server: RawServer) -> None:
    server.initialize()
    assert server.finish(shutdown=False) == 1
    server.assert_no_traceback()


class NoModel:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the model was asked ({name}) for a text that is not labelled")


class Written:
    """A writer for the protocol that keeps each message the server sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


def test_a_failing_handler_is_answered_and_logged_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    from app.lsp.server import build_server

    server = build_server(NoModel())
    written = Written()
    server.protocol.set_writer(written)

    @server.feature("rhetorica/fail")
    def fail(ls: object, params: object) -> None:
        raise RuntimeError("broken\nin two lines")

    server.protocol.receive(_request(1, "initialize", INITIALIZE))
    server.protocol.receive(_request(2, "rhetorica/fail"))
    (reply,) = [m for m in written.messages if m.get("id") == 2]
    assert _error(reply) == (-32603, "RuntimeError: broken in two lines")  # no traceback in "data"
    logged = [r for r in caplog.records if r.name.startswith("pygls") and r.levelno >= 30]
    assert logged and all(r.exc_info is None and "\n" not in r.getMessage() for r in logged)
    assert "RuntimeError: broken in two lines" in logged[0].getMessage()


# -- a long line ----------------------------------------------------------------------------------

def test_a_document_with_a_very_long_line_is_not_read() -> None:
    long_line = "We use it. " + "word " * (MAX_LINE_CHARS // 5)
    text = "\\section{Introduction}\nA short line.\n" + long_line + "\nAnother line.\n"
    engine = DraftEngine(NoModel())
    started = time.perf_counter()
    labelled = engine.label(text, "tex")
    assert time.perf_counter() - started < 1.0  # not read: reading it takes seconds
    assert labelled.document is None and labelled.error is not None
    assert labelled.error.startswith(f"line 3 is too long to label ({len(long_line):,} characters")
    assert labelled.error_offset == text.index(long_line)  # the diagnostic sits on that line
    shorter = text.replace(long_line, long_line[:MAX_LINE_CHARS])
    with pytest.raises(AssertionError, match="the model was asked"):
        engine.label(shorter, "tex")  # at the limit it is read (and labelled)
