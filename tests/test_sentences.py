"""Rule-based sentence splitter: tricky scientific cases, spans, scoring, CSAbstruct quality."""

from __future__ import annotations

import itertools

import pytest

from core.text import split_sentence_texts, split_sentences
from core.text.split_eval import compare_spans, evaluate_splitter, join_gold, load_csabstruct, prf
from tests.conftest import shared_path

# Each case: the gold sentences; the text is them joined with one space.
CASES = {
    "et al. before year": ["As shown by Smith et al. (2020), the model works.", "We agree."],
    "et al. lowercase": ["Smith et al. proposed this.", "It works."],
    "et al. inside citation": ["This was shown (Smith et al., 2020).", "Next we go."],
    "Fig.": ["See Fig. 3 for details.", "It is clear."],
    "Figs.": ["Figs. 2 and 3 show the rest.", "Fig. S1 has more."],
    "Eq. with parenthesis": ["We use Eq. (2) here.", "Eqs. 3-5 follow."],
    "Sec.": ["Sec. 4.1 describes it.", "Tab. 2 lists them."],
    "e.g. i.e.": ["Many methods, e.g. BERT, work well.", "Others, i.e. RNNs, do not."],
    "cf. vs.": ["Compare cf. Table 2 with ours.", "Ours vs. theirs is close."],
    "approx. resp.": ["It costs approx. 5 dollars.", "Results (resp. 3 and 4) hold."],
    "ca. viz.": ["We sampled ca. 100 items.", "Two kinds, viz. A and B, exist."],
    "Dr. Prof.": ["Dr. Smith and Prof. Jones met.", "They talked."],
    "No. Vol. pp.": ["No. 5 is listed in Vol. 3, pp. 12-15.", "It is old."],
    "months": ["It was published in Jan. 2020.", "Later in Sept. 2021 it was updated."],
    "initials": ["J. Smith and A. B. Jones wrote it.", "They agree."],
    "initial P. vs p.": ["Results were significant (p < 0.05).", "P. Smith disagreed.", "See p. 5 of it."],
    "decimals and percent": ["The value is 3.14 and 0.5% of cases.", "We use 12.5 mm."],
    "version numbers": ["We use version 2.1.3 now.", "Version v1.2 is older."],
    "URL": ["See https://example.org/a.b for code.", "It is free."],
    "email": ["Mail me at a.b@c.com for data.", "Thanks."],
    "DOI": ["DOI 10.1000/xyz.123 is cited.", "Read it."],
    "ellipsis": ["It was unclear...", "Then it worked."],
    "unicode ellipsis": ["Wait…", "Really?"],
    "question and exclamation": ["Does it work?", "Yes!", "It does."],
    "bracket citation before period": ["This was shown [12, 14].", "Next we go."],
    "bracket citation after period": ["This was shown. [3]", "Next we go."],
    "glued citation after period": ["This was shown.[3-5]", "Next we go."],
    "citation as subject of next sentence": ["This was shown.", "[3] proposed another method."],
    "superscript footnote": ["It works well.1", "Finally we conclude."],
    "closing quote": ['He said "it works."', "Then he left."],
    "closing parenthesis": ["(This is an aside.)", "The end."],
    "closing curly quote": ["She wrote “done.”", "We agree."],
    "lowercase after abbreviation": ["We consider e.g. three cases and cf. prior work.", "Done."],
    "lowercase after period is no boundary": ["The i.i.d. samples and etc. items stay.", "Ok."],
    "numbered list after colon": ["The steps are: 1. Collect data.", "2. Train the model.", "3. Evaluate."],
    "numbered items as sentences": ["We make two contributions.", "1. A new dataset.", "2. A new model."],
    "number ends sentence": ["It is in Section 4.", "We then discuss."],
    "table number ends sentence": ["Results are in Table 1.", "The numbers differ."],
    "year ends sentence": ["It was released in 2020.", "Many use it."],
    "dotted acronym ends sentence": ["We studied the U.S.", "The results vary."],
    "dotted acronym mid sentence": ["Samples were i.i.d. Gaussian noise.", "Ok."],
    "etc. ends sentence": ["We use cats, dogs, etc.", "The rest is ignored."],
    "appendix letter": ["Experiments are in Appendix A.", "We show more."],
    "single letter then opener": ["Add vitamin C.", "The effect was large."],
    "et al. then opener": ["This follows Jones et al.", "However, we differ."],
    "Ltd. copyright": ["© 2020 Elsevier Ltd.", "All rights reserved."],
    "trailing attribution in parentheses": ["I was happy then. (Centre A, R4).", "It helped."],
    "trailing citation in parentheses": ["This was shown. (Smith et al., 2020).", "Next we go."],
    "aside in parentheses is its own sentence": ["It works.", "(This is an aside.)", "The end."],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tricky_case(name):
    gold = CASES[name]
    assert split_sentence_texts(" ".join(gold)) == gold


@pytest.mark.parametrize("name", sorted(CASES))
def test_spans_map_back_to_text(name):
    text = "  " + "\n".join(CASES[name]) + "  \n"
    spans = split_sentences(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        piece = text[start:end]
        assert piece == piece.strip()
        previous_end = end
    # Nothing but whitespace lies between or around the sentences.
    gaps = [text[:spans[0][0]], text[spans[-1][1]:]]
    gaps += [text[a_end:b_start] for (_, a_end), (b_start, _) in itertools.pairwise(spans)]
    assert all(not gap.strip() for gap in gaps)
    assert [text[s:e].replace("\n", " ") for s, e in spans] == CASES[name]


def test_newlines_are_spaces_and_blank_lines_end_sentences():
    text = "This line\nis joined. And this\nis another.\n\nA heading without period\n\nThird."
    assert split_sentence_texts(text) == [
        "This line\nis joined.", "And this\nis another.", "A heading without period", "Third.",
    ]


def test_empty_and_whitespace_input():
    assert split_sentences("") == []
    assert split_sentences("   \n\t  \n\n ") == []
    assert split_sentence_texts("No final period") == ["No final period"]
    assert split_sentence_texts(" . ") == ["."]


def test_very_long_input_is_exact_and_complete():
    """20,000 sentences (~1 MB) in one text: every sentence found, each span exact.  Speed is
    measured by `rhetorica eval split` (docs/benchmarks.md), not asserted here."""
    unit = ["As shown in Fig. 3, Smith et al. (2020) found 3.14 (p < 0.05).", "Next, see Eq. (2) [4].",
            "Why?", "It works, e.g. on U.S. data."]
    gold = unit * 5000
    text = " ".join(gold)
    assert split_sentence_texts(text) == gold
    starts = list(itertools.accumulate((len(g) + 1 for g in gold[:-1]), initial=0))
    assert split_sentences(text) == [(a, a + len(g)) for a, g in zip(starts, gold, strict=True)]


def test_text_without_any_terminator_is_one_sentence():
    text = "word " * 20000
    assert split_sentences(text) == [(0, len(text) - 1)]


# --- scoring -----------------------------------------------------------------------------------

def _brute_force_counts(gold_sentences, predicted_texts):
    """Boundaries by walking characters: a boundary is the offset right after a sentence but the last."""
    text = " ".join(gold_sentences)
    offset = 0
    gold_spans = []
    for sentence in gold_sentences:
        gold_spans.append((offset, offset + len(sentence)))
        offset += len(sentence) + 1
    gold_bounds = {end for _, end in gold_spans[:-1]}
    pred_spans, cursor = [], 0
    for piece in predicted_texts:
        start = text.index(piece, cursor)
        pred_spans.append((start, start + len(piece)))
        cursor = start + len(piece)
    pred_bounds = {end for _, end in pred_spans[:-1]}
    return text, gold_spans, pred_spans, gold_bounds, pred_bounds


def test_join_gold_and_compare_against_brute_force():
    gold = ["A b c.", "D e.", "F g h i.", "J."]
    predicted = ["A b c. D e.", "F g h", "i.", "J."]
    text, gold_spans, pred_spans, gold_bounds, pred_bounds = _brute_force_counts(gold, predicted)
    joined, spans = join_gold(["  A b c. ", "D e.", "", "F g h i.", "J."])
    assert joined == text and spans == gold_spans
    counts = compare_spans(spans, pred_spans)
    assert counts.boundary_gold == len(gold_bounds) == 3
    assert counts.boundary_pred == len(pred_bounds) == 3
    assert counts.boundary_tp == len(gold_bounds & pred_bounds) == 2  # after "D e." and after "i."
    assert counts.sentence_tp == 1  # only "J." matches exactly
    assert prf(2, 3, 3) == pytest.approx((2 / 3, 2 / 3, 2 / 3))


def test_prf_edge_cases():
    assert prf(0, 0, 0) == (1.0, 1.0, 1.0)
    assert prf(0, 2, 0) == (0.0, 1.0, 0.0)
    assert prf(0, 0, 2) == (1.0, 0.0, 0.0)


def test_evaluate_splitter_perfect_and_no_split():
    docs = [["One.", "Two here.", "Three."], ["Alone."]]
    perfect = evaluate_splitter(docs, split_sentences)
    assert perfect.boundary_f1 == 1.0 and perfect.sentence_f1 == 1.0
    never = evaluate_splitter(docs, lambda text: [(0, len(text))])
    assert never.boundary_recall == 0.0 and never.boundary_f1 == 0.0
    assert never.sentence_precision == 0.5  # of the 2 predicted sentences only "Alone." matches


# --- real data -------------------------------------------------------------------------------------

@pytest.mark.shared
@pytest.mark.parametrize("split", ["test", "dev"])
def test_csabstruct_boundary_f1(split):
    path = shared_path("data", "csabstruct", f"{split}.jsonl")
    scores = evaluate_splitter(load_csabstruct(path), split_sentences)
    assert scores.documents > 200
    assert scores.boundary_f1 >= 0.98, scores
    assert scores.sentence_f1 >= 0.96, scores


@pytest.mark.shared
def test_eval_split_command_writes_json(tmp_path, capsys):
    import json

    from app.cli import main

    shared_path("data", "csabstruct", "test.jsonl")
    out = tmp_path / "split.json"
    assert main(["eval", "split", "--data", "csabstruct", "--split", "test", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["split"] == "test" and figures["gold_sentences"] == 1349
    assert figures["boundary_f1"] >= 0.98
    assert "boundary" in capsys.readouterr().out


def test_eval_split_command_missing_data_is_a_typed_error(tmp_path, capsys):
    from app.cli import main

    assert main(["eval", "split", "--split", "dev", "--data-dir", str(tmp_path)]) == 2
    assert "dataset file not found" in capsys.readouterr().err
