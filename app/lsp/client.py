"""A small LSP client (pygls) that starts ``rhetorica lsp`` over stdio and records what it publishes:
what ``rhetorica bench lsp`` measures with and what the protocol tests drive the server with.

Use inside ``asyncio.run``::

    client = await start_client([sys.executable, "-m", "app", "lsp"], {"labels": "both"})
    client.open("file:///d.md", text, "markdown")
    published = await client.diagnostics_for("file:///d.md", version=1)
    await client.stop_server()
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient


class RecordingClient(LanguageClient):
    """A language client that keeps every ``publishDiagnostics`` and ``showMessage`` it receives and
    answers ``workspace/inlayHint/refresh`` (counting them)."""

    def __init__(self) -> None:
        super().__init__("rhetorica-test-client", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.messages: list[str] = []
        self.inlay_refreshes = 0
        self._arrived = asyncio.Event()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
            client.published.setdefault(params.uri, []).append(params)
            client._arrived.set()

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(client: RecordingClient, params: types.ShowMessageParams) -> None:
            client.messages.append(params.message)
            client._arrived.set()

        @self.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
        def on_refresh(client: RecordingClient, params: None) -> None:
            client.inlay_refreshes += 1

    async def diagnostics_for(self, uri: str, version: int, timeout: float = 60.0
                              ) -> types.PublishDiagnosticsParams:
        """The first diagnostics published for ``version`` of ``uri`` (waits for them)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for params in self.published.get(uri, []):
                if params.version == version:
                    return params
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for {uri} version {version} in {timeout:g} s "
                                   f"(messages: {self.messages})")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                continue

    async def publication(self, uri: str, number: int,
                          timeout: float = 60.0) -> types.PublishDiagnosticsParams:
        """The ``number``-th (1-based) diagnostics published for ``uri`` (waits for it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.published.get(uri, [])) < number:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"only {len(self.published.get(uri, []))} publications for {uri}, "
                                   f"not {number}, in {timeout:g} s (messages: {self.messages})")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                continue
        return self.published[uri][number - 1]

    async def message(self, number: int, timeout: float = 60.0) -> str:
        """The ``number``-th (1-based) ``showMessage`` text (waits for it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.messages) < number:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"only {len(self.messages)} messages, not {number}, in {timeout:g} s")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                continue
        return self.messages[number - 1]

    def open(self, uri: str, text: str, language_id: str, version: int = 1) -> None:
        self.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))

    def replace(self, uri: str, version: int, start: tuple[int, int], end: tuple[int, int],
                text: str) -> None:
        """An incremental change: the range (line, character) .. (line, character) becomes ``text``."""
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*start), types.Position(*end)), text=text)
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change]))

    async def stop_server(self) -> None:
        """shutdown, exit, and wait for the process to end."""
        await self.shutdown_async(None)
        self.exit(None)
        await self.stop()


def client_capabilities() -> types.ClientCapabilities:
    """What an editor with inlay hints, Markdown hovers and code-action literals says it can do."""
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            inlay_hint=types.InlayHintClientCapabilities(),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    types.ClientCodeActionKindOptions(value_set=[types.CodeActionKind.RefactorRewrite])))),
        workspace=types.WorkspaceClientCapabilities(
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True)))


async def start_client(command: Sequence[str], options: Mapping[str, Any] | None = None,
                       env: Mapping[str, str] | None = None, cwd: str | None = None) -> RecordingClient:
    """Start the server ``command`` and initialise it with ``options`` as ``initializationOptions``."""
    client = RecordingClient()
    await client.start_io(command[0], *command[1:], env={**os.environ, **(env or {})}, cwd=cwd)
    await client.initialize_async(types.InitializeParams(
        capabilities=client_capabilities(), process_id=os.getpid(),
        initialization_options=dict(options or {})))
    client.initialized(types.InitializedParams())
    return client
