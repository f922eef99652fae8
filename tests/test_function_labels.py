"""Distant function labels: a marker counts only when it covers the sentence's dependency root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.taxonomy.functions import default_taxonomy, parse_taxonomy
from models.training.function_labels import DistantLabeller, ParsedSentence, root_covering_matches


def _parsed(lemmas: str, root: int) -> ParsedSentence:
    return ParsedSentence(lemmas, tuple(lemmas.split()), root)


def test_a_marker_must_cover_the_root() -> None:
    taxonomy = default_taxonomy()
    main = _parsed("we propose a new parser .", 1)  # root: propose
    embedded = _parsed("unlike the model we propose , theirs be fast .", 7)  # root: be
    assert [h.function_id for h in root_covering_matches(main, taxonomy)] == ["proposal"]
    assert root_covering_matches(embedded, taxonomy) == []


def _two_function_taxonomy():  # type: ignore[no-untyped-def]
    return parse_taxonomy({"name": "t", "version": "0", "sections": ["any"], "function": [
        {"id": "a", "name": "A", "description": "A.", "section": "any", "role": "method",
         "markers": ["we use", "we use * tool"]},
        {"id": "b", "name": "B", "description": "B.", "section": "any", "role": "result",
         "markers": ["use * tool", "we find"]},
    ]})


def test_conflicting_markers_are_dropped_and_the_rest_label() -> None:
    # "we use a tool": markers of a and b both cover the root (use). "use * tool" (b) and
    # "we use * tool" (a) co-fire every time; the less specific one (b's) goes first, after which
    # nothing conflicts any more and a labels those sentences with its longest marker.
    sentences = ([_parsed("we use a tool here", 1)] * 6 + [_parsed("we use it", 1)] * 4
                 + [_parsed("we find it", 1)] * 3)
    labels, report = DistantLabeller(_two_function_taxonomy(), max_conflict=0.5, min_hits=5).label(sentences)
    assert report.dropped == [("b", "use * tool")]
    assert report.marker_conflicts[("a", "we use")] == 6 and report.marker_hits[("a", "we use")] == 10
    assert [h.function_id if h else None for h in labels] == ["a"] * 10 + ["b"] * 3
    assert labels[0] is not None and labels[0].marker == "we use * tool"
    assert labels[6] is not None and labels[6].marker == "we use"
    assert report.labelled == {"a": 10, "b": 3} and report.ambiguous == 0


def test_without_dropping_the_ambiguous_ones_stay_unlabelled() -> None:
    sentences = [_parsed("we use a tool here", 1)] * 2
    labels, report = DistantLabeller(_two_function_taxonomy(), min_hits=5).label(sentences)
    assert labels == [None, None] and report.ambiguous == 2 and report.dropped == []


def test_a_proposal_marker_in_a_conclusion_labels_a_work_summary() -> None:
    sentence = _parsed("in this paper we propose a new parser .", 4)  # root: propose
    labeller = DistantLabeller(default_taxonomy())
    labels, report = labeller.label([sentence, sentence], ["abstract", "conclusion"])
    assert [h.function_id if h else None for h in labels] == ["proposal", "work-summary"]
    assert report.labelled == {"proposal": 1, "work-summary": 1}
    with pytest.raises(ValueError, match="1 section kinds for 2 sentences"):
        labeller.label([sentence, sentence], ["abstract"])


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    pytest.importorskip("spacy")
    from core.errors import ModelError
    from models.training.function_labels import load_parser

    try:
        return load_parser()
    except ModelError as error:
        pytest.skip(str(error))


def test_spacy_parse_gives_lemmas_and_the_root(nlp) -> None:  # type: ignore[no-untyped-def]
    from models.training.function_labels import parse_sentences

    (parsed,) = parse_sentences(["Little attention has been paid to citations."], nlp)
    assert parsed.lemmas[:5] == ("little", "attention", "have", "be", "pay")
    assert parsed.lemmas[parsed.root] == "pay"
    hits = root_covering_matches(parsed, default_taxonomy())
    assert [(h.function_id, h.marker) for h in hits] == [("gap-neglected", "little attention * pay to")]


def test_data_functions_command(nlp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from app.cli import main

    data = tmp_path / "mine.jsonl"
    rows = [("We propose a new parser for tweets.", "objective"),
            ("Unlike the model we propose, theirs is slow.", "background"),
            ("We plan to extend it to other languages.", "conclusion")]
    data.write_text("".join(json.dumps({"doc_id": "d", "text": t, "label": lab}) + "\n" for t, lab in rows),
                    encoding="utf-8")
    out, report = tmp_path / "labels.jsonl", tmp_path / "report.json"
    assert main(["data", "functions", "--source", f"jsonl:{data}", "--out", str(out),
                 "--report", str(report)]) == 0
    labelled = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["text"][:12], r["function"], r["role"]) for r in labelled] == [
        ("We propose a", "proposal", "objective"), ("We plan to e", "future-work", "conclusion")]
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["sentences"] == 3 and summary["per_function"] == {"proposal": 1, "future-work": 1}
    assert "2 of 3 sentences labelled" in capsys.readouterr().out


def test_test_splits_are_not_training_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["data", "functions", "--source", "csabstruct:test", "--out", str(tmp_path / "x")]) == 2
    assert "a test split cannot be used for distant function labels" in capsys.readouterr().err


def test_judged_precision_as_drawn_and_under_the_current_taxonomy() -> None:
    from models.training.function_labels import judged_precision

    rows = [
        {"function": "proposal", "marker": "we propose", "section_kind": "abstract", "correct": True,
         "better": ""},
        # switched to work-summary in a conclusion, which the judge named as better: now correct
        {"function": "proposal", "marker": "we propose", "section_kind": "conclusion", "correct": False,
         "better": "work-summary"},
        # a marker no longer in the taxonomy: left out of the kept figure
        {"function": "hypothesis", "marker": "we expect that", "section_kind": "method", "correct": False,
         "better": "future-work"},
        {"function": "aim", "marker": "we aim to", "section_kind": "method", "correct": False,
         "better": "none"},
    ]
    result = judged_precision(rows, default_taxonomy())
    assert (result.judged, result.correct, result.kept, result.kept_correct) == (4, 1, 3, 2)
    assert result.precision == 0.25 and result.kept_precision == pytest.approx(2 / 3)


def test_the_none_threshold_maximises_accuracy_with_none_as_a_class() -> None:
    import numpy as np

    from models.training.function_threshold import best_threshold

    best = np.array([0.9, 0.8, 0.3, 0.2, 0.6])
    right = np.array([True, False, False, False, True])  # the best function is the gold one
    gold_none = np.array([False, False, True, True, False])
    threshold, without, with_ = best_threshold(best, right, gold_none)
    # Below 0.6 everything is "none": sentences 3 and 4 become right, 1-2-5 keep their answers.
    assert threshold == pytest.approx(0.6) and without == pytest.approx(0.4) and with_ == pytest.approx(0.8)


def test_temperature_scaling_cools_an_overconfident_head() -> None:
    import numpy as np

    from models.training.function_threshold import fit_temperature

    rng = np.random.default_rng(0)
    gold = rng.integers(0, 5, size=400)
    # Logits 12 points apart: the best class gets ~1.0 of the probability but is right only ~40 %.
    best = np.where(rng.random(400) < 0.4, gold, (gold + 1) % 5)
    logits = np.zeros((400, 5))
    logits[np.arange(400), best] = 12.0
    t, before, after = fit_temperature(logits, gold)
    assert t > 4 and after < before  # cooled: the loss of the gold class falls
    confident = np.exp(12 / t) / (np.exp(12 / t) + 4)
    assert abs(confident - 0.4) < 0.05  # the best class's probability now matches its accuracy
    well = np.zeros((400, 5))
    well[np.arange(400), gold] = 3.0  # always right: a sharper head is better (T < 1)
    assert fit_temperature(well, gold)[0] < 1.0


def test_a_row_labelled_through_instead_in_stays_kept() -> None:
    from models.training.function_labels import judged_precision

    row = {"function": "work-summary", "marker": "we propose", "section_kind": "conclusion", "correct": True,
           "better": ""}
    result = judged_precision([row], default_taxonomy())
    assert (result.kept, result.kept_correct) == (1, 1)
