"""The JSON-RPC base protocol on a byte stream (stdin): ``Content-Length`` framed messages read one
at a time, with what a broken stream needs. No pygls here; :mod:`app.lsp.server` answers and logs.

A frame is header lines (``Name: value`` and CRLF), an empty line, then ``Content-Length`` bytes of
UTF-8 JSON. :meth:`FrameReader.read` gives each message decoded (:class:`Received`), or says why a
frame was refused (:class:`Refused`: its header has no usable length, it is larger than the limit, or
its body is no UTF-8 JSON) or that bytes which were no frame were skipped (:class:`Skipped`). After
any of these the reader resynchronises: it drops bytes up to the next ``Content-Length:`` (a body cut
short is followed by the rest of itself and then the next frame's header on the same line; a frame
larger than the limit is never held in memory, only scanned through), so one bad frame costs that
frame, never the connection.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol, cast

PARSE_ERROR = -32700  # JSON-RPC error codes (lsprotocol.types.ErrorCodes, without the import)
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

MAX_HEADER_BYTES = 4096  # a header block longer than this is no header
CHUNK = 1 << 16  # bytes asked for at a time (more for a long body, up to MAX_READ)
MAX_READ = 1 << 20
HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")


class ByteStream(Protocol):
    def read1(self, size: int = ..., /) -> bytes: ...


class DescriptorStream:
    """A file descriptor read directly (``os.read``): a read left waiting in a daemon thread holds no
    lock the interpreter needs at exit, as a ``BufferedReader``'s would (Python aborts on it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read1(self, size: int = CHUNK, /) -> bytes:
        return os.read(self.fd, size if size > 0 else CHUNK)


def unbuffered(stream: BinaryIO) -> ByteStream:
    """``stream``'s file descriptor read directly when it has one (stdin), else ``stream`` itself (an
    in-memory stream, which has ``read1``)."""
    try:
        return DescriptorStream(stream.fileno())
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return cast(ByteStream, stream)


@dataclass(frozen=True)
class Received:
    message: Any  # the body's JSON value (not yet known to be a JSON-RPC message)


@dataclass(frozen=True)
class Refused:
    code: int  # the JSON-RPC error the server answers with (the id is unknown: null)
    reason: str  # one line
    too_large: bool = False  # a frame over the limit (an open document too large, say)


@dataclass(frozen=True)
class Skipped:
    size: int  # bytes dropped that were not a frame (not following a refused frame)


class BadHeader(ValueError):
    """A ``Content-Length`` header whose value is no length (one line)."""


class NotAHeader(ValueError):
    """Bytes where a header should start that are no header lines, or no ``Content-Length``."""


class FrameReader:
    """Frames from ``stream`` (a buffered binary stream: ``read1`` returns what has arrived), each body
    at most ``max_bytes``. One thread reads; :meth:`read` blocks until a frame is complete."""

    def __init__(self, stream: ByteStream, max_bytes: int) -> None:
        self._stream = stream
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._ended = False
        self._after_refusal = False  # the bytes up to the next header are the refused frame's rest

    def read(self) -> Received | Refused | Skipped | None:
        """The next message, refused frame or skipped run of bytes; None when the stream has ended."""
        while True:
            end = self._header_end()
            if end is None:
                return None
            try:
                length = content_length(bytes(self._buffer[:end])) if end else -1
            except NotAHeader:
                length = -1
            except BadHeader as bad:
                del self._buffer[:end]
                return self._refuse(PARSE_ERROR, str(bad))
            if length < 0:  # no header here: drop up to the next one
                skipped = self._skip_to_next_header()
                quiet, self._after_refusal = self._after_refusal, False
                if skipped and not quiet:
                    return Skipped(skipped)
                continue
            del self._buffer[:end]
            if length > self.max_bytes:
                return self._refuse(INVALID_REQUEST, f"a message of {length:,} bytes is larger than the "
                                                     f"limit of {self.max_bytes:,} bytes", too_large=True)
            body = self._take(length)
            if body is None:
                return None
            self._after_refusal = False
            return self._decoded(body)

    # -- steps ----------------------------------------------------------------------------------
    def _header_end(self) -> int | None:
        """Where the header block at the buffer's start ends (after its empty line); 0 when the buffer
        holds no header end within ``MAX_HEADER_BYTES`` (junk); None at the end of the stream."""
        searched = 0
        while True:
            found = self._buffer.find(HEADER_END, max(0, searched - len(HEADER_END) + 1))
            if found >= 0:
                return found + len(HEADER_END) if found + len(HEADER_END) <= MAX_HEADER_BYTES else 0
            if len(self._buffer) > MAX_HEADER_BYTES:
                return 0
            searched = len(self._buffer)
            if not self._fill():
                return None

    def _skip_to_next_header(self) -> int:
        """Drop bytes up to the next ``Content-Length:`` after the buffer's first byte (all of them
        when the stream ends first); how many were dropped."""
        dropped, start = 0, 1
        keep = len(_CONTENT_LENGTH.pattern) - 1  # a header cut in two by a read stays
        while True:
            found = _CONTENT_LENGTH.search(self._buffer, start)
            if found is not None:
                del self._buffer[:found.start()]
                return dropped + found.start()
            cut = max(start, len(self._buffer) - keep)
            dropped += cut
            del self._buffer[:cut]
            start = 0
            if not self._fill():
                dropped += len(self._buffer)
                self._buffer.clear()
                return dropped

    def _take(self, length: int) -> bytes | None:
        """The next ``length`` bytes (None when the stream ends before them)."""
        while len(self._buffer) < length:
            if not self._fill(length - len(self._buffer)):
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def _decoded(self, body: bytes) -> Received | Refused:
        try:
            return Received(decode_body(body))
        except ValueError as error:
            self._resume_inside(body)
            return self._refuse(PARSE_ERROR, str(error))

    def _resume_inside(self, body: bytes) -> None:
        """A body that is no JSON may have run into the next frame (its length too large): read on from
        a ``Content-Length:`` inside it, or from the start of one it ends with."""
        found = _CONTENT_LENGTH.search(body)
        if found is not None:
            self._buffer[:0] = body[found.start():]
            return
        name = _CONTENT_LENGTH.pattern
        for size in range(min(len(name) - 1, len(body)), 0, -1):
            if body[-size:].lower() == name[:size]:
                self._buffer[:0] = body[-size:]
                return

    def _refuse(self, code: int, reason: str, too_large: bool = False) -> Refused:
        self._after_refusal = True
        return Refused(code, reason, too_large)

    def _fill(self, wanted: int = CHUNK) -> bool:
        """Read what has arrived (at least one byte, blocking); False at the end of the stream."""
        if self._ended:
            return False
        chunk = self._stream.read1(max(CHUNK, min(wanted, MAX_READ)))
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True


def content_length(header: bytes) -> int:
    """The ``Content-Length`` of a header block (its lines and the empty line that ends it);
    :class:`NotAHeader` when a line is no header line or none is ``Content-Length``,
    :class:`BadHeader` when the length is not a whole number of bytes."""
    lengths = []
    for line in header.split(b"\r\n")[:-2]:
        found = _HEADER_LINE.fullmatch(line)
        if found is None:
            raise NotAHeader(line)
        if found.group(1).lower() == b"content-length":
            lengths.append(found.group(2))
    if not lengths:
        raise NotAHeader(header)
    if len(set(lengths)) > 1:
        raise BadHeader("a message header with two different Content-Length values")
    digits = lengths[0]
    if not digits.isdigit():
        shown = digits[:40].decode("ascii", "backslashreplace")
        raise BadHeader(f"a message header with Content-Length {shown!r} (not a number of bytes)")
    digits = digits.lstrip(b"0") or b"0"
    return int(digits) if len(digits) <= 18 else 10 ** 18


def decode_body(body: bytes) -> Any:
    """A body's JSON value; ValueError (one line) when it is not UTF-8 JSON."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"a message that is not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("a message nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"a message that is not JSON: {one_line(str(error))}") from None


# -- messages -------------------------------------------------------------------------------------
def message_id(message: object) -> int | str | None:
    """A message's id when it has one a response can carry (None otherwise)."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def message_problem(message: object) -> str:
    """Why a JSON value is not a JSON-RPC 2.0 request, notification or response ("" when it is one)."""
    if not isinstance(message, dict):
        return f"a message must be a JSON object, not {_json_kind(message)}"
    if message.get("jsonrpc") != "2.0":
        return 'a message without "jsonrpc": "2.0"'
    if "id" in message and message_id(message) is None and message["id"] is not None:
        return "a message id must be a number or a string"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method must be a string"
        if "result" in message or "error" in message:
            return "a message with both a method and a result or error"
        return ""
    if "id" not in message or ("result" in message) == ("error" in message):
        return "a message that is neither a request, a notification nor a response"
    return ""


def is_request(message: dict[str, Any]) -> bool:
    return "method" in message and message_id(message) is not None


def error_response(msg_id: int | str | None, code: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error response (``"id": null`` when the request's id is unknown)."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}


def one_line(text: str, limit: int = 300) -> str:
    """``text`` as one line of at most ``limit`` characters (whitespace runs become one space)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")
