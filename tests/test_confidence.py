"""Honest confidence (issue 24.5) and isolated sentences (24.6), the parts without Qt: the uncertain-role
threshold and its wording, the gap report and the move checklist judged on confident labels only, the
context a draft sentence or a query is labelled in, and the bookkeeping of ``eval functions
--isolated`` / ``--confidence``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from core.alignment.align import AlignSentence, AlignSide, align
from core.alignment.align_export import (
    alignment_from_json,
    alignment_to_json,
    alignment_to_markdown,
    summary_text,
)
from core.labelling.sentence_context import SentenceContext, alone, context_in_paper, label_in_context
from core.taxonomy.labels import (
    ROLES,
    UNCERTAIN_BELOW,
    FunctionPrediction,
    RolePrediction,
    function_is_clear,
    is_confident,
    role_text,
    runner_up,
)
from core.taxonomy.moves import check_moves, describe_checks
from tests.paper_factory import make_paper


def role(label: str, p: float, second: str = "", q: float = 0.0) -> RolePrediction:
    rest = (1.0 - p - q) / (len(ROLES) - (2 if second else 1))
    probabilities = {r: rest for r in ROLES}
    probabilities[label] = p
    if second:
        probabilities[second] = q
    return RolePrediction(label, probabilities)


# -- the threshold and its wording -----------------------------------------------------------------
def test_the_threshold_is_defined_once_and_sits_above_chance() -> None:
    from core.taxonomy.labels import ROLES

    assert 1.0 / len(ROLES) < UNCERTAIN_BELOW < 1.0
    assert is_confident(role("method", UNCERTAIN_BELOW))
    assert not is_confident(role("method", UNCERTAIN_BELOW - 0.01, "result", 0.3))


def test_an_uncertain_role_names_its_runner_up() -> None:
    weak = role("method", 0.41, "result", 0.35)
    assert runner_up(weak) == ("result", pytest.approx(0.35))
    assert role_text(weak) == "uncertain: method 41% or result 35%"
    assert role_text(role("result", 0.93)) == "result 93%"


def test_a_function_below_the_threshold_is_not_clear() -> None:
    assert function_is_clear(FunctionPrediction("aim", (("aim", 0.6),)))
    assert not function_is_clear(FunctionPrediction("none", (("aim", 0.1),)))
    assert not function_is_clear(None)


# -- the gap report and the checklist count confident labels only ----------------------------------
def _side(rows: list[tuple[str, str, str, float]], title: str) -> AlignSide:
    """(section kind, role, function, role probability) rows; every sentence its own vector axis."""
    sentences = [AlignSentence(f"{title} {i}", kind, kind, r, f, p) for i, (kind, r, f, p) in enumerate(rows)]
    vectors = np.eye(len(rows), 16, dtype=np.float32)
    return AlignSide(title, sentences, vectors, vectors.copy())


def test_the_gap_report_uses_only_confident_labels_and_says_so() -> None:
    a = _side([("discussion", "conclusion", "limitation", 0.9),
               ("discussion", "result", "interpretation", 0.9),
               ("discussion", "result", "none", 0.3),  # an uncertain role, no clear function
               ("discussion", "method", "future-work", 0.4)], "A")  # an uncertain role, a clear function
    b = _side([("discussion", "result", "interpretation", 0.95),
               ("discussion", "conclusion", "none", 0.9)], "B")  # B's limitation was below the threshold
    gaps = align(a, b).gaps
    assert gaps.judged == {"a": {"sentences": 4, "functions": 3, "roles": 2, "evidence": 0},
                           "b": {"sentences": 2, "functions": 1, "roles": 2, "evidence": 0}}
    assert {g.function for g in gaps.items} == {"limitation", "future-work"}  # "none" never makes a gap
    (share,) = gaps.role_shares
    # A's shares over its two confident roles: the uncertain result and method are left out
    assert share.a["conclusion"] == pytest.approx(0.5) and share.a["result"] == pytest.approx(0.5)
    assert share.a["method"] == 0.0 and share.a_sentences == 4 and share.a_confident == 2
    assert gaps.note.startswith("Gaps judged on the 3 of 4 sentences whose function is clear (A) and 1 of 2 "
                                "(B), and on headings, figure and table mentions")
    assert gaps.note.endswith("Role shares on the 2 of 4 with a confident role (A) and 2 of 2 (B).")
    alignment = align(a, b)
    assert gaps.note in summary_text(alignment) and "judged" in alignment_to_markdown(alignment).lower()
    again = alignment_from_json(alignment_to_json(alignment))
    assert again.gaps.judged == gaps.judged and again.a.sentences[2].role_confidence == pytest.approx(0.3)


def test_an_alignment_file_without_confidences_still_reads() -> None:
    data = {"text": "x", "section": "", "section_kind": "method", "role": "method", "function": "none"}
    sentence = AlignSentence.from_dict(data)
    assert sentence.role_confidence == 1.0 and sentence.confident_role and not sentence.clear_function


def test_the_checklist_says_how_many_confident_sentences_it_judged() -> None:
    functions = [FunctionPrediction("aim", (("aim", 0.7),)),
                 FunctionPrediction("none", (("gap-neglected", 0.15),)),
                 FunctionPrediction("topic-importance", (("topic-importance", 0.5),))]
    found = [f.label for f in functions if function_is_clear(f)]
    checks = check_moves(found, "introduction")
    present = {c.move.name: c.present for c in checks}
    assert present["an aim statement"] and not present["a gap or problem"]  # the unclear gap is not counted
    text = describe_checks(checks, "introduction", judged=(len(found), len(functions)))
    assert text.endswith("(judged on the 2 of 3 sentences whose function is clear)")
    assert describe_checks(checks, "introduction") == text.rsplit(" (judged", 1)[0]


# -- the context a single sentence is labelled in --------------------------------------------------
def test_context_in_paper_takes_neighbours_from_its_own_section_only() -> None:
    paper = make_paper()  # abstract: s0-s2, method: s3-s4, conclusion: s5
    texts = [s.text for s in paper.sentences]
    context = context_in_paper(paper, 1)
    assert context == SentenceContext(texts[1], (texts[0],), (texts[2],), "abstract")
    assert context.sentences() == texts[:3] and context.position == 1
    method = context_in_paper(paper, 3, neighbours=2)
    assert method.before == () and method.after == (texts[4],) and method.section_kind == "method"
    assert context_in_paper(paper, 3, 0, with_kind=False) == alone(texts[3])
    assert "its heading (method)" in method.describe() and "alone" in alone("x").describe()


def test_a_sentence_read_with_its_whole_section_is_the_document_the_analysis_reads() -> None:
    from core.labelling.analysis import section_runs

    paper = make_paper()  # abstract: s0-s2, method: s3-s4, conclusion: s5
    texts = [s.text for s in paper.sentences]
    for section, start, end in section_runs(paper):
        for index in range(start, end):
            context = context_in_paper(paper, index, neighbours=None)
            assert context.document() == (texts[start:end], paper.sections[section].kind.value)
            assert context.position == index - start


def test_context_in_draft_reads_the_heading_and_the_neighbours_under_it() -> None:
    from core.drafts import context_in_draft, draft_sentences

    text = ("Intro one. Intro two.\n\n# Methods\nWe did A. We did B. We did C.\n\n"
            "## Data analysis\nWe fit a model. We used R. We tested it.\n\n2 Results\nX rose. Y fell.")
    at = text.index("We used R")
    context = context_in_draft(text, at)
    assert context == SentenceContext("We used R.", ("We fit a model.",), ("We tested it.",), "method")
    # the subsection without a decisive name takes its parent's kind; its neighbours stop at its heading
    assert context_in_draft(text, text.index("We did B"), neighbours=5) == SentenceContext(
        "We did B.", ("We did A.",), ("We did C.",), "method")
    assert context_in_draft(text, 0) == SentenceContext("Intro one.", (), ("Intro two.",), None)
    assert context_in_draft(text, text.index("Y fell")).section_kind == "result"
    assert context_in_draft("", 0) is None
    assert [kind for *_, kind in draft_sentences(text)] == [None, None, *["method"] * 6, "result", "result"]


@dataclass
class _Encoding:
    roles: list[RolePrediction]
    functions: list[FunctionPrediction] | None
    embeddings: np.ndarray
    function_vectors: np.ndarray | None = None


@dataclass
class RecordingModel:
    """A model that records the documents it is fed; each sentence's role is "method" when its
    document has a section kind, else "background" (confidence = 0.3 + 0.1 × document length)."""

    documents: list[tuple[list[str], object]] = field(default_factory=list)
    model_id: str = "recording@1"
    embedding_dim: int = 4

    def encode_documents(self, documents: Sequence[tuple[Sequence[str], object]],
                         with_embeddings: bool = True,
                         with_function_vectors: bool = False) -> list[_Encoding]:
        out = []
        for sentences, kinds in documents:
            self.documents.append((list(sentences), kinds))
            label = "method" if kinds else "background"
            p = min(0.95, 0.3 + 0.1 * len(sentences))
            n = len(sentences)
            out.append(_Encoding([role(label, p, "result", (1 - p) / 2)] * n,
                                 [FunctionPrediction("aim", (("aim", 0.5),))] * n,
                                 np.eye(n, 4, dtype=np.float32), np.eye(n, 4, dtype=np.float32)))
        return out


def test_label_in_context_feeds_each_sentence_inside_its_context() -> None:
    model = RecordingModel()
    contexts = [alone("A."), SentenceContext("B.", ("A.",), ("C.",), "method")]
    labels = label_in_context(model, contexts)  # type: ignore[arg-type]
    assert model.documents == [(["A."], None), (["A.", "B.", "C."], "method")]
    assert [r.label for r, _ in labels] == ["background", "method"]


def test_a_suggestion_query_is_labelled_with_its_heading_and_neighbours() -> None:
    from core.phrasing.suggest import suggest

    model = RecordingModel()
    context = SentenceContext("We used R.", ("We fit a model.",), ("We tested it.",), "method")
    result = suggest("We used R.", model, [], context=context)  # type: ignore[arg-type]
    assert model.documents == [(["We fit a model.", "We used R.", "We tested it."], "method")]
    assert result.query["role"] == "method" and "its heading (method)" in result.query["context"]
    assert result.query["role_text"] == role_text(role("method", 0.6, "result", 0.2))
    model.documents.clear()
    alone_result = suggest("We used R.", model, [])  # type: ignore[arg-type]
    assert model.documents == [(["We used R."], None)] and alone_result.query["role"] == "background"
    assert alone_result.query["role_text"].startswith("uncertain: background 40%")
    model.documents.clear()
    suggest("Another sentence.", model, [], context=context)  # type: ignore[arg-type]
    assert model.documents == [(["Another sentence."], None)]  # a context of another sentence is ignored


# -- eval functions --isolated / --confidence bookkeeping ------------------------------------------
@dataclass(frozen=True)
class _Gold:
    index: int
    text: str
    role: str
    function: str
    section_kind: str = ""
    domain: str = "cs"


def test_isolation_modes_feed_what_they_say() -> None:
    from app.commands.lab.eval_functions import ISOLATION_MODES, isolation_contexts

    paper = make_paper()
    texts = [s.text for s in paper.sentences]
    items = [_Gold(1, texts[1], "objective", "aim"), _Gold(3, texts[3], "method", "none")]
    fed = {mode: isolation_contexts(paper, items, mode, 1) for mode in ISOLATION_MODES}
    assert [c.document() for c in fed["isolated"]] == [([texts[1]], None), ([texts[3]], None)]
    assert [c.document() for c in fed["kind_only"]] == [([texts[1]], "abstract"), ([texts[3]], "method")]
    # no kind known: neighbours are read as a body section of unnamed kind, as the app reads them
    assert [c.document() for c in fed["neighbours_only"]] == [(texts[0:3], "other"), (texts[3:5], "other")]
    assert all(c.section_kind is None for c in fed["neighbours_only"])
    assert [c.document() for c in fed["neighbours_and_kind"]] == [(texts[0:3], "abstract"),
                                                                   (texts[3:5], "method")]
    with pytest.raises(ValueError):
        isolation_contexts(paper, items, "everything", 1)


def test_isolation_figures_score_each_mode_against_the_gold() -> None:
    from app.commands.lab.eval_functions import _isolation

    paper = make_paper()
    texts = [s.text for s in paper.sentences]
    items = [_Gold(1, texts[1], "background", "aim"), _Gold(3, texts[3], "method", "none")]
    model = RecordingModel()
    figures = _isolation(model, [(paper, items)], items, 1, ["background", "method"], ["aim", "none"],
                         ("aim",))
    assert figures["neighbours"] == 1
    modes = figures["modes"]
    assert list(modes) == ["in_context", "isolated", "kind_only", "neighbours_only", "neighbours_and_kind"]
    assert modes["in_context"]["role_accuracy"] == 1.0 and modes["in_context"]["function_accuracy"] == 1.0
    # alone or without a kind the recording model says "background" (right once); with a kind "method"
    assert modes["isolated"]["role_accuracy"] == 0.5 and modes["kind_only"]["role_accuracy"] == 0.5
    assert modes["isolated"]["role_agrees_with_in_context"] == 0.5
    assert modes["isolated"]["function_accuracy"] == 0.5  # "aim" everywhere: right on the first only
    assert modes["isolated"]["sentences_fed"] == 2 and modes["neighbours_and_kind"]["sentences_fed"] == 5
    assert len(model.documents) == 8  # one small document per sentence and mode


def test_confidence_table_and_the_rule_that_picks_the_threshold() -> None:
    from app.commands.lab.eval_functions import choose_threshold, confidence_table

    confidence = [0.95, 0.9, 0.85, 0.8, 0.7, 0.65, 0.55, 0.5]
    correct = [True, True, True, False, True, True, False, False]
    rows = confidence_table(confidence, correct, (0.5, 0.6, 0.75, 0.9))
    by = {r["threshold"]: r for r in rows}
    assert by[0.5]["coverage"] == 1.0 and by[0.5]["accuracy_confident"] == pytest.approx(5 / 8, abs=1e-4)
    assert by[0.6]["confident"] == 6 and by[0.6]["accuracy_uncertain"] == 0.0
    assert by[0.75]["confident"] == 4 and by[0.75]["accuracy_uncertain"] == pytest.approx(0.5)
    # 0.6 keeps 75 % and sets aside sentences that are always wrong; 0.75 keeps only half
    assert choose_threshold(rows) == 0.6
    assert choose_threshold(rows, min_share=0.5, max_uncertain=0.6) == 0.75


def test_neighbours_without_a_heading_are_read_as_a_body_section_a_lone_sentence_is_not() -> None:
    from core.labelling.sentence_context import NEIGHBOURS_WITHOUT_KIND, SentenceContext

    assert SentenceContext("We propose X.").document() == (["We propose X."], None)
    with_neighbours = SentenceContext("We propose X.", before=("Prior work fails.",), after=("It works.",))
    assert with_neighbours.document() == (["Prior work fails.", "We propose X.", "It works."],
                                          NEIGHBOURS_WITHOUT_KIND)
    assert SentenceContext("We propose X.", before=("A.",), section_kind="method").document()[1] == "method"


def test_eval_functions_reports_how_the_clear_functions_fare_against_the_rest() -> None:
    from app.commands.lab.eval_functions import clear_function_figures

    figures = clear_function_figures(["aim", "gap", "none", "result"], ["aim", "aim", "none", "gap"],
                                     [True, True, False, False])
    assert figures == {"clear": 2, "sentences": 4, "coverage": 0.5,
                       "accuracy_clear": 0.5, "accuracy_rest": 0.5}
    assert clear_function_figures([], [], [])["coverage"] == 0.0
