"""The draft pane's labelling (no Qt): the pane's text split into sentences under their headings, and
each heading's sentences labelled as one document with its section kind (a background job's body); the
draft's outline (headings and their kinds) comes back with the labels for the checklist
(``core.draft_checklist``, the language server's too)."""

from __future__ import annotations

from core.draft_checklist import DraftOutline
from core.jobs import JobContext
from core.model_api import RoleModel
from core.taxonomy.labels import FunctionPrediction, RolePrediction

LabelledDraft = list[tuple[tuple[int, int], RolePrediction]]  # ((start, end) in the text, its role)
DraftLabels = tuple[LabelledDraft, list[FunctionPrediction] | None]  # and the functions, when known
PaneSentence = tuple[int, int, str | None, int, str]  # (start, end, section kind, heading number, text)


def pane_sentences(text: str, markdown: bool = False) -> list[PaneSentence]:
    """(start, end, section kind, heading number, text to label) of each sentence of the pane's text.
    ``markdown``: the text is a Markdown draft (an opened ``.md``, or a LaTeX/Word draft's readable
    text): only ``#`` lines are headings and the labelled text is read without the markup."""
    return pane_parts(text, markdown)[0]


def pane_parts(text: str, markdown: bool = False) -> tuple[list[PaneSentence], list[str | None]]:
    """:func:`pane_sentences` and the section kind of each heading (subsections inherit theirs)."""
    if markdown:
        from core.draft_formats import parse_draft_text

        parsed = parse_draft_text(text, "md")
        return ([(s.start, s.end, s.section_kind, h, s.text)
                 for s, h in zip(parsed.sentences, parsed.sentence_headings, strict=True)],
                [kind for _, _, kind in parsed.headings])
    from core.drafts import draft_headings, draft_sections

    headings = draft_headings(text)
    return ([(start, end, kind, heading, text[start:end])
             for start, end, kind, heading in draft_sections(text, headings)],
            [kind for _, _, kind in headings])


def label_draft_outlined(ctx: JobContext, text: str, model: RoleModel,
                         markdown: bool = False) -> tuple[DraftLabels, DraftOutline]:
    """:func:`label_draft` and the draft's outline (for ``core.draft_checklist.draft_checklist``)."""
    found, kinds = pane_parts(text, markdown)
    outline = DraftOutline(tuple(kinds), tuple(heading for _, _, _, heading, _ in found))
    return label_sentences(ctx, found, model), outline


#: sentences labelled at most between two cancellation checks; a longer document (a section, or a long draft
#: without headings) is labelled alone and checked by the model between its batches
CHUNK_SENTENCES = 64

Document = tuple[list[str], str | None]  # one heading's sentences and its section kind


def label_draft(ctx: JobContext, text: str, model: RoleModel, markdown: bool = False) -> DraftLabels:
    """Split ``text`` into sentences and label them in context: ([((start, end), role)], functions or
    None when the model has no function head). Heading lines ("# Methods", "2 Results") are not
    labelled; the sentences under one heading are one document with its section kind (as a parsed
    paper's section is: neighbours and heading both count), and the sentences before any heading one
    document of unknown kind (as an abstract). ``markdown``: see :func:`pane_sentences`.

    The documents go to the model in chunks of whole documents (:func:`document_chunks`), with
    ``ctx.check()``/``ctx.progress()`` between them, so Stop (and quitting) takes about one chunk; each
    document is still labelled whole, as when all are labelled at once."""
    return label_sentences(ctx, pane_sentences(text, markdown), model)


def label_sentences(ctx: JobContext, found: list[PaneSentence], model: RoleModel) -> DraftLabels:
    """:func:`label_draft` of sentences already found (:func:`pane_sentences`)."""
    spans = [(start, end) for start, end, _, _, _ in found]
    ctx.check()
    if not spans:
        return [], None
    message = f"labelling {len(spans)} draft sentence{'' if len(spans) == 1 else 's'}"
    ctx.progress(0, len(spans), message)
    documents: list[Document] = []
    last = None
    for _, _, kind, heading, sentence in found:
        if heading != last or not documents:
            documents.append(([], kind))
            last = heading
        documents[-1][0].append(sentence)
    roles: list[RolePrediction] = []
    functions: list[FunctionPrediction] | None = []
    for chunk in document_chunks(documents):
        size = sum(len(sentences) for sentences, _ in chunk)
        # one long document: the model checks between its batches (a short chunk is checked here)
        encodings = (model.encode_documents(chunk, with_embeddings=False, ctx=ctx) if size > CHUNK_SENTENCES
                     else model.encode_documents(chunk, with_embeddings=False))
        for encoding in encodings:
            roles.extend(encoding.roles)
            if encoding.functions is None or functions is None:
                functions = None
            else:
                functions.extend(encoding.functions)
        ctx.progress(len(roles), len(spans), message)
    return list(zip(spans, roles, strict=True)), functions


def document_chunks(documents: list[Document], limit: int = CHUNK_SENTENCES) -> list[list[Document]]:
    """Consecutive ``documents`` in chunks of at most ``limit`` sentences; a longer document is a chunk
    of its own (never split: its sentences are read in each other's context)."""
    chunks: list[list[Document]] = []
    size = 0
    for document in documents:
        n = len(document[0])
        if not chunks or size + n > limit:
            chunks.append([])
            size = 0
        chunks[-1].append(document)
        size += n
    return chunks
