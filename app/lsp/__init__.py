"""``rhetorica lsp``: Rhetorica as a language server for any editor with an LSP client.

The parts, one job each (no Qt; pygls only in :mod:`app.lsp.server`):

- :mod:`app.lsp.drafts`: an open document's sentences, headings and paragraphs, with their
  character ranges in the source (the one place that decides how a ``.tex``/``.md``/``.txt`` text
  is read);
- :mod:`app.lsp.labeller`: role and function of each sentence, paragraph by paragraph, with a cache
  keyed by the paragraph's text, so an edit re-labels only the paragraphs it touched;
- :mod:`app.lsp.summary`: the draft checklist per section, the draft pane's own
  (``core.draft_checklist``), placed on each section's heading;
- :mod:`app.lsp.presenting`: the words the editor shows (hints, hover, template actions);
- :mod:`app.lsp.positions`: character offsets to LSP positions and back (UTF-16 by default);
- :mod:`app.lsp.settings`: what the client may configure (``initializationOptions`` / settings);
- :mod:`app.lsp.engine`: the model, the suggestion sources and the above, without the protocol;
- :mod:`app.lsp.framing`: JSON-RPC frames read from stdin (a broken frame is refused and the reader
  resynchronises) and the checks a message passes before pygls sees it;
- :mod:`app.lsp.server`: the pygls server (stdio) around the engine.
"""
