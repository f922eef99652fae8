"""The pygls language server around :class:`app.lsp.engine.DraftEngine` (stdio).

- ``didOpen``/``didChange`` (incremental sync) start labelling the document's newest text on the
  labelling thread; edits that arrive meanwhile are taken together by the next run, so a burst of
  keystrokes costs one run after the current one, never a queue. Only paragraphs whose text changed
  reach the model (:mod:`app.lsp.labeller`).
- After each run: ``publishDiagnostics`` (with the version labelled) holds the section summaries on
  their headings, a line saying why a document cannot be read, and, when ``labels`` is
  "diagnostics" or "both", one hint per sentence; with inlay hints on, the client is asked to refresh
  them (``workspace/inlayHint/refresh``) when it says it can.
- ``textDocument/inlayHint``, ``hover`` and ``codeAction`` answer from the labels of the text the
  client has now (they wait for the running labelling when it is behind); suggestions are searched on
  a second thread, which owns the suggestion sources.
- Bad input never stops the server nor leaves a request unanswered: stdin is read by
  :mod:`app.lsp.framing` (a broken frame is refused and the reader resynchronises; frames are at most
  ``MAX_FRAME_BYTES``), and :class:`RhetoricaProtocol` answers every request it cannot serve with a
  JSON-RPC error (-32700 for a frame that is no JSON, id null; -32600 for no JSON-RPC message; -32602
  for parameters of the wrong shape; -32002 before ``initialize``; -32600 after ``shutdown``), never
  with a traceback; each refusal is one log line. ``exit`` without ``shutdown`` ends with exit code 1.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

from app.lsp.drafts import format_of
from app.lsp.engine import MAX_CHARS, DraftEngine, LabelledDocument
from app.lsp.framing import (
    INVALID_REQUEST,
    SERVER_NOT_INITIALIZED,
    FrameReader,
    Received,
    Refused,
    Skipped,
    error_response,
    is_request,
    message_id,
    message_problem,
    one_line,
    unbuffered,
)
from app.lsp.positions import PositionMap
from app.lsp.presenting import hint_message, inlay_text, template_actions
from app.lsp.settings import LspSettings

if TYPE_CHECKING:  # pragma: no cover
    from core.model_api import RoleModel

logger = logging.getLogger("rhetorica.lsp")
SOURCE = "rhetorica"
WAIT_SECONDS = 30.0  # how long a request waits for the labels of the current text
TEMPLATE_KIND = types.CodeActionKind.RefactorRewrite
# A frame (one JSON-RPC message) at most this long: a document at the size limit with every
# character escaped (\uXXXX), and room for the rest; a longer one is refused unread.
MAX_FRAME_BYTES = 6 * MAX_CHARS + (1 << 20)
Arrival = Received | Refused | Skipped | None  # what the stdin thread hands the loop (None: the end)
# pygls's loggers that can log a traceback (``logger.exception``): one line each instead.
PYGLS_LOGGERS = ("pygls.protocol.json_rpc", "pygls.protocol.language_server", "pygls.server",
                 "pygls.feature_manager", "pygls.workspace.workspace", "pygls.workspace.text_document")


class RhetoricaProtocol(LanguageServerProtocol):
    """pygls's protocol, answering what it would drop: a message that is no JSON-RPC message, a
    request whose parameters have the wrong shape, a request before ``initialize`` or after
    ``shutdown``; and without the traceback pygls puts in an internal error's reply."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False
        self.shutdown_received = False

    def receive(self, message: object) -> None:
        """Handle one decoded message (JSON from a frame)."""
        problem = message_problem(message)
        if problem:
            self.refuse(message_id(message), INVALID_REQUEST, problem)
            return
        assert isinstance(message, dict)
        try:
            structured = self.structure_message(message)
        except JsonRpcException as error:
            if is_request(message):
                self.refuse(message_id(message), error.code, error.message)
            else:
                logger.warning("ignored %s: %s", message.get("method") or "a response", error.message)
            return
        self.handle_message(structured)

    def refuse(self, msg_id: int | str | None, code: int, reason: str) -> None:
        """Answer a request (id null: one whose id is unknown) with an error, and log it in one line."""
        logger.warning("refused %s: %s", "a message" if msg_id is None else f"request {msg_id!r}", reason)
        self._send_data(error_response(msg_id, code, reason))

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request or notification as its lsprotocol type (JsonRpcInvalidParams, one line, when its
        parameters do not fit it); a response as pygls pairs it with the request it answers."""
        method = data.get("method")
        if not isinstance(method, str):
            return super().structure_message(data)
        generic = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
        kind = self.get_message_type(method) or generic
        try:
            return self._converter.structure(data, kind)
        except Exception as error:
            raise JsonRpcInvalidParams(f"invalid params for {method}: {_structure_problem(error)}") from None

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        early = not self.initialize_received and method not in (types.INITIALIZE, types.EXIT)
        if method is not None and early:
            if msg_id is not None:
                self.refuse(msg_id, SERVER_NOT_INITIALIZED, f"{method} before initialize")
            else:
                logger.info("dropped %s: it came before initialize", method)
            return
        if method is not None and msg_id is not None and self.shutdown_received:
            self.refuse(msg_id, INVALID_REQUEST, f"{method} after shutdown")
            return
        self.initialize_received |= method == types.INITIALIZE
        self.shutdown_received |= method == types.SHUTDOWN
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None,
                       error: types.ResponseError | None = None) -> None:
        if error is not None:  # pygls's internal errors carry the traceback: one line is enough
            data = None if isinstance(error.data, dict) and "traceback" in error.data else error.data
            error = types.ResponseError(error.code, one_line(error.message), data)
        super()._send_response(msg_id, result, error)


def _structure_problem(error: Exception) -> str:
    """Where a message's parameters do not fit their type, in one line ("expected int @ $.params.…")."""
    from cattrs.v import transform_error

    try:
        found = transform_error(error, format_exception=_say_structure_error)
    except Exception:
        found = [str(error)]
    return one_line("; ".join(found[:3]) or type(error).__name__)


def _say_structure_error(error: BaseException, kind: type | None) -> str:
    from cattrs.v import format_exception

    said = format_exception(error, kind)
    return f"{said} ({error})" if said == "invalid value" else said  # a range check says which


class OneLineRecords(logging.Filter):
    """A warning or error logged with an exception (pygls's ``logger.exception``) as one line: the
    message and the exception's own line, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text = f"{text}: {type(error).__name__}: {error}"
        record.msg, record.args, record.exc_info, record.exc_text = one_line(text), None, None, None
        return True


def _one_line_pygls_logs() -> None:
    for name in PYGLS_LOGGERS:
        pygls_logger = logging.getLogger(name)
        if not any(isinstance(f, OneLineRecords) for f in pygls_logger.filters):
            pygls_logger.addFilter(OneLineRecords())


@dataclass
class OpenDocument:
    uri: str
    format: str
    labelled: LabelledDocument | None = None
    version: int | None = None
    generation: int = -1  # the settings generation it was labelled under
    task: asyncio.Task[None] | None = None
    closed: bool = False


class RhetoricaServer(LanguageServer):
    protocol: RhetoricaProtocol

    def __init__(self, model: RoleModel, settings: LspSettings | None = None, version: str = "0",
                 notes: list[str] | None = None) -> None:
        super().__init__("rhetorica", version, protocol_cls=RhetoricaProtocol)
        _one_line_pygls_logs()
        self.engine = DraftEngine(model, settings)
        self.documents: dict[str, OpenDocument] = {}
        self.label_pool = ThreadPoolExecutor(1, thread_name_prefix="rhetorica-labels")
        self.suggest_pool = ThreadPoolExecutor(1, thread_name_prefix="rhetorica-suggest")
        self.settings_errors: list[str] = list(notes or [])  # shown once the client can be told
        self.generation = 0  # counts settings changes: labels made under older settings are redone

    # -- documents ------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        kind = self.workspace.position_encoding
        return str(getattr(kind, "value", kind) or "utf-16")

    def text_of(self, uri: str) -> str | None:
        document = self.workspace.text_documents.get(unquote(uri))
        return None if document is None else document.source

    def version_of(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(unquote(uri))
        return None if document is None else document.version

    def open(self, uri: str, language_id: str | None) -> None:
        fmt = format_of(uri, language_id)
        if fmt is None:
            return  # not a draft: nothing to label
        self.documents[uri] = OpenDocument(uri, fmt)
        self.schedule(uri)

    def close(self, uri: str) -> None:
        state = self.documents.pop(uri, None)
        if state is not None:
            state.closed = True
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def schedule(self, uri: str) -> None:
        state = self.documents.get(uri)
        if state is not None and (state.task is None or state.task.done()):
            state.task = asyncio.ensure_future(self._label_until_current(state))

    async def _label_until_current(self, state: OpenDocument) -> None:
        loop = asyncio.get_running_loop()
        while not state.closed:
            text = self.text_of(state.uri)
            if text is None:
                return
            version, generation = self.version_of(state.uri), self.generation
            if self.is_current(state, text):
                if version != state.version:  # the same text again (an edit undone): same labels, new version
                    state.version = version
                    self.publish(state)
                return
            try:
                labelled = await loop.run_in_executor(self.label_pool, self.engine.label, text, state.format,
                                                      self.encoding, state.labelled)
            except Exception as error:  # a bug or a model failure: said once, as this version's warning
                reason = one_line(str(error)) or type(error).__name__
                logger.error("labelling %s failed: %s", state.uri, reason)
                logger.debug("labelling %s failed", state.uri, exc_info=True)
                self.show_error(f"rhetorica: labelling failed: {reason}")
                labelled = LabelledDocument(text, state.format, PositionMap(text, self.encoding),
                                            error=f"labelling failed: {reason}")
            if state.closed:
                return
            state.labelled, state.version, state.generation = labelled, version, generation
            if labelled.run is not None:
                logger.info("labelled %s v%s (%s): %d paragraphs, %d through the model; read %.1f ms, "
                            "in all %.1f ms", state.uri, version, "spliced" if labelled.spliced else "whole",
                            labelled.run.paragraphs, labelled.run.relabelled, 1000 * labelled.read_seconds,
                            1000 * labelled.seconds)
            self.publish(state)

    async def current(self, uri: str) -> LabelledDocument | None:
        """The labels of the text the client has now (None: not a draft, or not labelled in time)."""
        deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
        while True:
            state = self.documents.get(uri)
            text = self.text_of(uri)
            if state is None or text is None:
                return None
            if state.labelled is not None and self.is_current(state, text):
                return state.labelled
            self.schedule(uri)
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0 or state.task is None:
                return None
            try:
                await asyncio.wait_for(asyncio.shield(state.task), remaining)
            except TimeoutError:
                return None

    def is_current(self, state: OpenDocument, text: str) -> bool:
        return (state.labelled is not None and state.generation == self.generation
                and state.labelled.text == text)

    # -- output ---------------------------------------------------------------------------------
    def publish(self, state: OpenDocument) -> None:
        labelled = state.labelled
        if labelled is None:
            return
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=state.uri, diagnostics=self.diagnostics(labelled), version=state.version))
        if self.engine.settings.inlay_hints and self._client_refreshes_inlay_hints():
            self.workspace_inlay_hint_refresh(None)

    def diagnostics(self, labelled: LabelledDocument) -> list[types.Diagnostic]:
        out: list[types.Diagnostic] = []
        if labelled.error:
            at = self.range(labelled, labelled.error_offset, labelled.error_offset)
            out.append(types.Diagnostic(at, f"cannot read this document: {labelled.error}",
                                        severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                                        code="unreadable"))
        for check in labelled.checks:
            headline = check.headline()
            if not headline:
                continue
            start, end = (check.heading.start, check.heading.end) if check.heading is not None else (0, 0)
            out.append(types.Diagnostic(self.range(labelled, start, end), f"{headline}\n{check.checklist()}",
                                        severity=types.DiagnosticSeverity.Information, source=SOURCE,
                                        code="checklist"))
        if self.engine.settings.label_diagnostics and labelled.document is not None:
            for sentence, label in zip(labelled.document.sentences, labelled.labels, strict=True):
                function = label.function.label if label.function is not None else ""
                out.append(types.Diagnostic(self.range(labelled, sentence.start, sentence.end),
                                            hint_message(label), severity=types.DiagnosticSeverity.Hint,
                                            source=SOURCE, code=f"{label.role.label}/{function or '-'}"))
        return out

    @staticmethod
    def range(labelled: LabelledDocument, start: int, end: int) -> types.Range:
        positions = labelled.positions
        return types.Range(types.Position(*positions.position(start)),
                           types.Position(*positions.position(end)))

    def show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def show_settings_errors(self) -> None:
        """One ``window/showMessage`` per refused setting (and start-up option), once."""
        errors, self.settings_errors = self.settings_errors, []
        for message in errors:
            self.show_error(message)

    def _client_refreshes_inlay_hints(self) -> bool:
        workspace = self.client_capabilities.workspace
        inlay = workspace.inlay_hint if workspace is not None else None
        return bool(inlay is not None and inlay.refresh_support)

    # -- settings -------------------------------------------------------------------------------
    def configure(self, options: object) -> None:
        """Apply a client's settings: every good value; each bad one is a line in ``settings_errors``
        (shown by :meth:`show_settings_errors`) and keeps its previous value."""
        settings, errors = self.engine.settings.apply(options)
        self.settings_errors.extend(errors)
        if errors and settings == self.engine.settings:
            return
        self.engine.settings = settings
        self.generation += 1  # label again (the cache answers) and publish in the new mode
        for state in self.documents.values():
            self.schedule(state.uri)

    # -- requests -------------------------------------------------------------------------------
    async def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        if not self.engine.settings.inlay_hints:
            return []
        labelled = await self.current(params.text_document.uri)
        if labelled is None or labelled.document is None:
            return None
        positions = labelled.positions
        first = positions.offset(params.range.start.line, params.range.start.character)
        last = positions.offset(params.range.end.line, params.range.end.character)
        hints = []
        for sentence, label in zip(labelled.document.sentences, labelled.labels, strict=True):
            if first <= sentence.end <= last:
                at = types.Position(*positions.position(sentence.end))
                hints.append(types.InlayHint(at, inlay_text(label), tooltip=hint_message(label),
                                             padding_left=True))
        return hints

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        labelled, index = await self._sentence_at(params.text_document.uri, params.position)
        if labelled is None or index is None:
            return None
        text = await asyncio.get_running_loop().run_in_executor(self.suggest_pool, self.engine.hover,
                                                                labelled, index)
        assert labelled.document is not None
        sentence = labelled.document.sentences[index]
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text),
                           self.range(labelled, sentence.start, sentence.end))

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        if params.context.only and not any(_includes(kind, TEMPLATE_KIND) for kind in params.context.only):
            return None
        labelled, index = await self._sentence_at(params.text_document.uri, params.range.start)
        if labelled is None or index is None:
            return None
        result, _ = await asyncio.get_running_loop().run_in_executor(
            self.suggest_pool, self.engine.suggestions, labelled, index)
        assert labelled.document is not None
        end = labelled.document.sentences[index].end
        at = self.range(labelled, end, end)
        return [types.CodeAction(action.title, kind=TEMPLATE_KIND, edit=types.WorkspaceEdit(
                    changes={params.text_document.uri: [types.TextEdit(at, action.text)]}))
                for action in template_actions(result)]

    async def _sentence_at(self, uri: str, position: types.Position
                           ) -> tuple[LabelledDocument | None, int | None]:
        labelled = await self.current(uri)
        if labelled is None:
            return None, None
        offset = labelled.positions.offset(position.line, position.character)
        return labelled, labelled.sentence_at(offset)

    # -- stdio ----------------------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve on stdin/stdout until ``exit`` or the end of stdin (pygls's loop, with
        :mod:`app.lsp.framing` reading). SystemExit(1) after an ``exit`` that came without
        ``shutdown``, as the LSP says."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        frames = FrameReader(unbuffered(stdin or sys.stdin.buffer), MAX_FRAME_BYTES)
        code: object = 0
        try:
            asyncio.run(self._serve(frames))
        except BrokenPipeError:
            logger.warning("the client closed the connection")
        except SystemExit as stop:  # pygls's exit handler: 0 after shutdown, else 1
            code = stop.code
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()
        if code:
            raise SystemExit(code)

    async def _serve(self, frames: FrameReader) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_log_loop_error)
        arrived: asyncio.Queue[Arrival] = asyncio.Queue()
        taken = threading.Semaphore(0)
        threading.Thread(target=_read_frames, args=(frames, loop, arrived, taken), name="rhetorica-stdin",
                         daemon=True).start()
        assert self._stop_event is not None
        while not self._stop_event.is_set():
            event = await arrived.get()
            taken.release()
            if event is None:
                return
            try:
                self._take(event)
            except Exception as error:  # a bug: one line, and the next message is served
                logger.error("could not handle a message: %s: %s", type(error).__name__, one_line(str(error)))

    def _take(self, event: Received | Refused | Skipped) -> None:
        if isinstance(event, Received):
            self.protocol.receive(event.message)
        elif isinstance(event, Refused):
            self.protocol.refuse(None, event.code, event.reason)
            if event.too_large:
                self.show_error(f"rhetorica: {event.reason}; such a document is not read")
        else:
            logger.warning("skipped %s bytes of input that were no message", f"{event.size:,}")

    def shut_down_workers(self) -> None:
        self.suggest_pool.submit(self.engine.close).result(timeout=10)
        self.suggest_pool.shutdown(wait=False)
        self.label_pool.shutdown(wait=False)


def _read_frames(frames: FrameReader, loop: asyncio.AbstractEventLoop, arrived: asyncio.Queue[Arrival],
                 taken: threading.Semaphore) -> None:
    """The stdin thread (a daemon: a read that never returns does not keep the process alive): each
    frame into ``arrived``, the next read once the loop has taken it; None at the end."""
    while True:
        try:
            event = frames.read()
        except Exception as error:  # stdin broken (or a bug): the server ends, saying why in one line
            logger.error("cannot read the client's messages: %s: %s", type(error).__name__,
                         one_line(str(error)))
            event = None
        try:
            loop.call_soon_threadsafe(arrived.put_nowait, event)
        except RuntimeError:  # the loop has ended
            return
        if event is None:
            return
        taken.acquire()


def _log_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of an exception nobody awaited (a client gone while a reply was sent), in one
    line."""
    error = context.get("exception")
    text = f"{type(error).__name__}: {error}" if error is not None else context.get("message", "")
    logger.error("%s", one_line(str(text)))


def _includes(wanted: object, kind: types.CodeActionKind) -> bool:
    """Whether a requested kind ("refactor") covers ``kind`` ("refactor.rewrite"): kinds are dotted
    hierarchies (the client may send a kind this lsprotocol does not know, as a plain string)."""
    asked = str(getattr(wanted, "value", wanted))
    return kind.value == asked or kind.value.startswith(asked + ".")


def build_server(model: RoleModel, settings: LspSettings | None = None,
                 version: str = "0", notes: list[str] | None = None) -> RhetoricaServer:
    """A server with its features registered (start it with ``start_io()``); ``notes``: lines about the
    start-up options, shown to the client once it is initialized."""
    server = RhetoricaServer(model, settings, version, notes)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RhetoricaServer, params: types.InitializeParams) -> None:
        ls.configure(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: RhetoricaServer, params: types.InitializedParams) -> None:
        ls.show_settings_errors()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RhetoricaServer, params: types.DidChangeConfigurationParams) -> None:
        ls.configure(params.settings)
        ls.show_settings_errors()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RhetoricaServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.open(params.text_document.uri, params.text_document.language_id)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RhetoricaServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RhetoricaServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hint(ls: RhetoricaServer, params: types.InlayHintParams) -> Any:
        return await ls.inlay_hints(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RhetoricaServer, params: types.HoverParams) -> Any:
        return await ls.hover(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[TEMPLATE_KIND]))
    async def code_action(ls: RhetoricaServer, params: types.CodeActionParams) -> Any:
        return await ls.code_actions(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RhetoricaServer, *args: object) -> None:
        ls.shut_down_workers()

    return server
