"""The draft pane's labelling (no Qt): the pane's text split into sentences under their headings, and
each heading's sentences labelled as one document with its section kind (a background job's body)."""

from __future__ import annotations

from core.jobs import JobContext
from core.model_api import RoleModel
from core.taxonomy.labels import FunctionPrediction, RolePrediction

LabelledDraft = list[tuple[tuple[int, int], RolePrediction]]  # ((start, end) in the text, its role)
DraftLabels = tuple[LabelledDraft, list[FunctionPrediction] | None]  # and the functions, when known


def pane_sentences(text: str, markdown: bool = False) -> list[tuple[int, int, str | None, int, str]]:
    """(start, end, section kind, heading number, text to label) of each sentence of the pane's text.
    ``markdown``: the text is a Markdown draft (an opened ``.md``, or a LaTeX/Word draft's readable
    text): only ``#`` lines are headings and the labelled text is read without the markup."""
    if markdown:
        from core.draft_formats import parse_draft_text

        parsed = parse_draft_text(text, "md")
        return [(s.start, s.end, s.section_kind, h, s.text)
                for s, h in zip(parsed.sentences, parsed.sentence_headings, strict=True)]
    from core.drafts import draft_sections

    return [(start, end, kind, heading, text[start:end])
            for start, end, kind, heading in draft_sections(text)]


def label_draft(ctx: JobContext, text: str, model: RoleModel, markdown: bool = False) -> DraftLabels:
    """Split ``text`` into sentences and label them in context: ([((start, end), role)], functions or
    None when the model has no function head). Heading lines ("# Methods", "2 Results") are not
    labelled; the sentences under one heading are one document with its section kind (as a parsed
    paper's section is: neighbours and heading both count), and the sentences before any heading one
    document of unknown kind (as an abstract). ``markdown``: see :func:`pane_sentences`."""
    found = pane_sentences(text, markdown)
    spans = [(start, end) for start, end, _, _, _ in found]
    ctx.check()
    if not spans:
        return [], None
    ctx.progress(0, 1, f"labelling {len(spans)} draft sentences")
    documents: list[tuple[list[str], str | None]] = []
    last = None
    for _, _, kind, heading, sentence in found:
        if heading != last or not documents:
            documents.append(([], kind))
            last = heading
        documents[-1][0].append(sentence)
    roles: list[RolePrediction] = []
    functions: list[FunctionPrediction] | None = []
    for encoding in model.encode_documents(documents, with_embeddings=False):
        roles.extend(encoding.roles)
        if encoding.functions is None or functions is None:
            functions = None
        else:
            functions.extend(encoding.functions)
    ctx.progress(1, 1, "draft labelled")
    return list(zip(spans, roles, strict=True)), functions
