"""The language server's parts without the protocol: positions, settings, formats, paragraphs, the
incremental re-read (spliced == whole read), the paragraph cache (with the shipped model), the
section checklist and the words shown."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from app.lsp.drafts import MAX_PARAGRAPH, Document, Sentence, format_of, paragraphs, read_document
from app.lsp.incremental import reread
from app.lsp.labeller import ParagraphLabeller, SentenceLabel
from app.lsp.positions import PositionMap
from app.lsp.presenting import hint_message, hover_markdown, inlay_text, markdown_text, template_actions
from app.lsp.settings import LspSettings, SettingsError
from app.lsp.summary import section_checks
from core.phrasing.suggest import Suggestion, SuggestionResult
from core.taxonomy.labels import FunctionPrediction, RolePrediction

DRAFT = Path(__file__).parent / "fixtures" / "lsp" / "draft.tex"
MARKDOWN = """# A study of drafts

## Abstract

Authors revise their drafts many times. We followed 40 authors for a year. Most revisions changed the
order of moves.

## Introduction

Writing is a central part of research. Little is known about how drafts change. Prior studies looked at
published papers only.

We therefore ask how the moves of a draft change over time.

## Methods

We collected 1,200 versions of 40 drafts. Two annotators labelled every sentence (kappa 0.71).

```
code fences are not prose. Nor is this.
```

## Results

Moves were reordered in 62% of revisions. The aim moved forward most often.
"""


# -- positions ------------------------------------------------------------------------------------
def test_positions_count_utf16_units_and_every_line_ending() -> None:
    text = "ab\r\ncd\ref\n🙂x\u2028y"
    positions = PositionMap(text)
    assert positions.line_count == 4  # \r\n, \r, \n; U+2028 is no LSP line break
    assert positions.position(text.index("x")) == (3, 2)  # 🙂 is a surrogate pair
    assert positions.position(text.index("y")) == (3, 4)
    assert positions.offset(3, 2) == text.index("x")
    assert positions.offset(3, 1) == text.index("🙂")  # inside the pair: before the character
    assert positions.offset(0, 99) == 2  # past the line's end: its end
    assert positions.offset(99, 0) == len(text)
    assert PositionMap(text, "utf-8").position(text.index("x")) == (3, 4)
    assert PositionMap(text, "utf-32").position(text.index("x")) == (3, 1)
    for encoding in ("utf-16", "utf-8", "utf-32"):
        mapped = PositionMap(text, encoding)
        for offset in range(len(text) + 1):
            if text[offset - 1:offset + 1] != "\r\n":
                assert mapped.offset(*mapped.position(offset)) == offset, (encoding, offset)
    with pytest.raises(ValueError):
        PositionMap(text, "latin-1")


# -- settings -------------------------------------------------------------------------------------
def test_settings_from_a_client(tmp_path: Path) -> None:
    from core.library.store import DATABASE_NAME

    settings = LspSettings().with_options({"rhetorica": {"labels": "both", "checklistKind": "introduction",
                                                         "suggestions": 0, "unknown": 1}})
    assert (settings.labels, settings.checklist_kind, settings.suggestions) == ("both", "introduction", 0)
    assert settings.inlay_hints and settings.label_diagnostics
    assert LspSettings().with_options(None) == LspSettings()
    (tmp_path / DATABASE_NAME).write_bytes(b"")  # a library folder (what has_sentences looks for)
    library = LspSettings().with_options({"checklist_kind": None, "library": str(tmp_path)}).library
    assert library == str(tmp_path)


@pytest.mark.parametrize("options", [{"labels": "loud"}, {"suggestions": 11}, {"suggestions": True},
                                     {"suggestions": "3"}, {"sources": 1}, {"checklist": "yes"},
                                     {"checklistKind": "method"}, {"corpus": ""}, {"library": 3}, [1, 2]])
def test_bad_settings_are_one_line(options: Any) -> None:
    with pytest.raises(SettingsError) as caught:
        LspSettings().with_options(options)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("rhetorica setting")


def test_format_of() -> None:
    assert format_of("file:///a/b.TEX") == "tex"
    assert format_of("file:///a/my%20notes.md") == "md"
    assert format_of("untitled:1", "markdown") == "md"
    assert format_of("file:///a/b.txt", "latex") == "tex"  # the language id wins
    assert format_of("file:///a/b.py", "python") is None


# -- paragraphs -----------------------------------------------------------------------------------
def _sentences_of(words: list[str]) -> tuple[str, list[Sentence]]:
    text, sentences = "", []
    for word in words:
        sentence = f"The {word} result was measured again."
        sentences.append(Sentence(sentence, len(text), len(text) + len(sentence), -1, None))
        text += sentence + " "
    return text, sentences


def test_long_paragraphs_are_cut_where_their_sentences_say() -> None:
    words = [f"w{n}" for n in range(60)]
    text, sentences = _sentences_of(words)
    pieces = paragraphs(text, sentences)
    assert pieces[0][0] == 0 and pieces[-1][1] == 60
    assert all(4 <= end - first <= MAX_PARAGRAPH for first, end in pieces[:-1])
    # A sentence added at the start moves the cuts near it only: the later pieces keep their sentences.
    text2, sentences2 = _sentences_of(["new", *words])
    pieces2 = paragraphs(text2, sentences2)
    texts = {tuple(s.text for s in sentences[a:b]) for a, b in pieces}
    texts2 = [tuple(s.text for s in sentences2[a:b]) for a, b in pieces2]
    assert sum(t in texts for t in texts2) >= len(texts2) - 2


def test_blank_lines_and_headings_end_paragraphs() -> None:
    document = read_document(MARKDOWN, "md")
    shown = [[s.text.split()[0] for s in document.sentences[a:b]] for a, b in document.paragraphs]
    assert shown == [["Authors", "We", "Most"], ["Writing", "Little", "Prior"], ["We"], ["We", "Two"],
                     ["Moves", "The"]]
    assert [h.section_kind for h in document.headings][1:] == ["abstract", "introduction", "method", "result"]


# -- the incremental re-read ----------------------------------------------------------------------
def _same(spliced: Document, whole: Document) -> None:
    masked = re.compile(r"\d+|\?\?")
    assert [(s.start, s.end, s.heading, s.section_kind) for s in spliced.sentences] == [
        (s.start, s.end, s.heading, s.section_kind) for s in whole.sentences]
    assert [masked.sub("#", s.text) for s in spliced.sentences] == [
        masked.sub("#", s.text) for s in whole.sentences]
    assert spliced.headings == whole.headings
    assert spliced.paragraphs == whole.paragraphs


@pytest.mark.parametrize("fmt", ["tex", "md"])
def test_a_spliced_read_is_the_whole_read(fmt: str) -> None:
    text = DRAFT.read_text(encoding="utf-8") if fmt == "tex" else MARKDOWN
    rng = random.Random(7)
    document = read_document(text, fmt)
    spliced_count = 0
    for _ in range(60):
        editable = [(s, found) for s in document.sentences
                    if (found := list(re.finditer(r"(?<![\\A-Za-z])[a-z]{4,}\b", text[s.start:s.end])))]
        sentence, words = rng.choice(editable)
        word = rng.choice(words)
        start, end = sentence.start + word.start(), sentence.start + word.end()
        change = rng.choice([word.group().upper(), "", word.group() + ". Then we tested it again", "x"])
        new = text[:start] + change + text[end:]
        spliced = reread(document, text, new)
        whole = read_document(new, fmt)
        if spliced is not None:
            spliced_count += 1
            _same(spliced, whole)
        text, document = new, spliced or whole
    assert spliced_count >= 45  # edits inside a paragraph are spliced, not read whole


@pytest.mark.parametrize(("old", "new"), [
    ("\\section{Method}", "\\section{Discussion}"),  # a heading
    ("Disagreements were resolved", "Disagreements were\n\nresolved"),  # a paragraph split
    ("Disagreements were resolved", "Disagreements \\emph{were resolved"),  # unbalanced while typing
    ("\\usepackage{amsmath}", "\\usepackage{amssymb}"),  # the preamble
    ("Disagreements were resolved", "Disagreements \\begin{comment} were resolved"),  # an environment opened
])
def test_edits_the_splice_cannot_vouch_for(old: str, new: str) -> None:
    text = DRAFT.read_text(encoding="utf-8")
    assert old in text
    assert reread(read_document(text, "tex"), text, text.replace(old, new, 1)) is None


def test_markdown_fences_are_read_whole() -> None:
    document = read_document(MARKDOWN, "md")
    assert reread(document, MARKDOWN, MARKDOWN.replace("Two annotators", "```\nTwo annotators", 1)) is None
    assert reread(document, MARKDOWN, MARKDOWN.replace("not prose", "not poetry", 1)) is None


# -- labelling with the paragraph cache -------------------------------------------------------------
class CountingModel:
    """The shipped model, counting the documents (paragraphs) it is asked to encode."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.documents = 0

    def encode_documents(self, documents: Any, **options: Any) -> Any:
        self.documents += len(documents)
        return self.model.encode_documents(documents, **options)


@pytest.fixture(scope="module")
def shipped_model() -> Any:
    from models.encoder import load_model

    return load_model(None, device="cpu", threads=1)


def test_only_changed_paragraphs_reach_the_model(shipped_model: Any) -> None:
    model = CountingModel(shipped_model)
    labeller = ParagraphLabeller(model)  # type: ignore[arg-type]
    document = read_document(MARKDOWN, "md")
    first = labeller.label(document)
    assert (first.paragraphs, first.relabelled, model.documents) == (5, 5, 5)
    assert labeller.label(document).relabelled == 0
    edited = MARKDOWN.replace("62%", "64%")
    run = labeller.label(read_document(edited, "md"))
    assert run.relabelled == 1 and model.documents == 6
    # Moving a paragraph elsewhere (same heading) costs nothing; its labels are the same.
    moved = MARKDOWN.replace("We therefore ask how the moves of a draft change over time.\n\n", "")
    moved = moved.replace("## Methods",
                          "We therefore ask how the moves of a draft change over time.\n\n## Methods")
    assert labeller.label(read_document(moved, "md")).relabelled == 0
    # Unchanged paragraphs keep their labels; the edited one has what the model gives it now.
    assert run.labels[:-2] == first.labels[:-2]
    (encoding,) = shipped_model.encode_documents([(["Moves were reordered in 64% of revisions.",
                                                    "The aim moved forward most often."], "result")],
                                                 with_embeddings=False)
    assert [x.role for x in run.labels[-2:]] == encoding.roles
    assert [x.function for x in run.labels[-2:]] == encoding.functions


def test_the_cache_is_bounded(shipped_model: Any) -> None:
    labeller = ParagraphLabeller(shipped_model, capacity=2)
    labeller.label(read_document(MARKDOWN, "md"))
    assert len(labeller) == 2


# -- the section checklist ---------------------------------------------------------------------------
def _label(function: str, p: float = 0.6, role: str = "background") -> SentenceLabel:
    best = function if function != "none" else "aim"  # "none": the best candidate below the threshold
    return SentenceLabel(RolePrediction(role, {role: 0.8, "method": 0.2}),
                         FunctionPrediction(function, ((best, p),)))


def test_checklist_per_section() -> None:
    text = "# Introduction\n\nA matters. B is unknown.\n\n## Scope\n\nC is open.\n\n# Methods\n\nWe did D.\n"
    document = read_document(text, "md")
    labels = (_label("topic-importance"), _label("gap-neglected"), _label("none"), _label("data-source"))
    (intro,) = section_checks(document, labels)  # "Scope" takes its parent's kind: one section
    assert intro.heading is not None and intro.heading.title == "Introduction"
    assert [m.name for m in intro.missing] == ["an aim statement", "the contributions or an outline"]
    assert intro.headline() == ("No sentence of your introduction clearly makes these moves: "
                                "an aim statement, the contributions or an outline")
    assert intro.checklist().endswith("(judged on the 2 of 3 sentences whose function or move is clear)")
    labels = (*labels[:2], _label("aim"), labels[3])
    (intro,) = section_checks(document, labels)
    assert intro.headline() == ("No sentence of your introduction clearly makes this move: "
                                "the contributions or an outline")
    # No headings: only when a kind is set; no function head: nothing.
    plain = read_document("We did D. We found E.\n", "txt")
    both = (_label("data-source"), _label("main-finding"))
    assert section_checks(plain, both) == []
    (checked,) = section_checks(plain, both, default_kind="abstract")
    assert checked.heading is None and checked.kind == "abstract"
    no_head = tuple(SentenceLabel(x.role, None) for x in both)
    assert section_checks(plain, no_head, default_kind="abstract") == []


# -- words shown ---------------------------------------------------------------------------------------
def test_labels_in_words() -> None:
    sure = SentenceLabel(RolePrediction("method", {"method": 0.83, "result": 0.17}),
                         FunctionPrediction("data-source", (("data-source", 0.64),)))
    unsure = SentenceLabel(RolePrediction("method", {"method": 0.41, "result": 0.35, "other": 0.24}),
                           FunctionPrediction("none", (("aim", 0.22),)))
    assert inlay_text(sure).startswith("method · ") and inlay_text(unsure) == "method?"
    assert hint_message(sure).startswith("method 83% · ")
    assert hint_message(unsure).startswith(
        "uncertain: method 41% or result 35% · no clear function (top: ")
    assert markdown_text("a*b_[c]\n\n d") == "a\\*b\\_\\[c\\] d"
    result = SuggestionResult({"text": "q"}, [
        Suggestion("We used data from X.", {"kind": "corpus", "paper_id": "p1", "title": "A *bold* title",
                                            "section": "Methods"}, 0.91, "method", "data-source",
                   template="We used data from [CONTENT]."),
        Suggestion("We used data from Y.", {"kind": "library", "paper_id": "p2", "title": "", "section": ""},
                   0.9, "method", "data-source", template="We used data from [CONTENT]."),
        Suggestion("No template here.", {"kind": "corpus", "paper_id": "p3", "title": "T", "section": ""},
                   0.8, "method", "none")])
    actions = template_actions(result)
    assert [a.title for a in actions] == [
        "Insert template: We used data from [CONTENT]. (from: A *bold* title)"]
    assert actions[0].text == " We used data from [CONTENT]."
    shown = hover_markdown(sure, "in its paragraph (2 sentences)", result)
    assert "**method** (83%)" in shown
    assert "*A \\*bold\\* title* (Methods) · corpus · similarity 0.91" in shown
    assert "template: `We used data from [CONTENT].`" in shown
    assert "no suggestions: x" in hover_markdown(unsure, "alone", None, note="no suggestions: x")
