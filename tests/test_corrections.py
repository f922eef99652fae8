"""Corrections of sentence labels: the library table, JSONL round trip, the command line, and the
pieces of training on them that need no model (held-out choice, runs, the polite refusal)."""

from __future__ import annotations

import json

import pytest

from core.library.corrections import Correction, CorrectionError, Corrections
from core.library.store import open_store


def _correction(text: str = "We conclude that it works.", label: str = "conclusion", **kw) -> Correction:
    return Correction(doc_id="paper-1", text=text, field="role", corrected=label, predicted="result",
                      section_kind="discussion", context_before="It worked.", context_after="Next.",
                      model_id="tiny@1#abc", **kw)


def test_a_correction_is_stored_and_a_second_one_replaces_it(tmp_path) -> None:
    with open_store(tmp_path) as store:
        corrections = Corrections(store)
        first = corrections.add(_correction())
        again = corrections.add(_correction(label="result"))
        assert first.id == again.id
        stored = corrections.all()
        assert len(stored) == 1 and stored[0].corrected == "result"
        assert stored[0].context_before == "It worked."
        assert stored[0].model_id == "tiny@1#abc" and stored[0].section_kind == "discussion"
        corrections.add(Correction(doc_id="paper-1", text="We conclude that it works.", field="function",
                                   corrected="stating-the-aim"))
        assert corrections.counts().role == 1 and corrections.counts().function == 1
        assert set(corrections.of_document("paper-1")) == {("We conclude that it works.", "role"),
                                                           ("We conclude that it works.", "function")}
        assert corrections.remove(stored[0].id) and not corrections.remove(stored[0].id)
    with open_store(tmp_path) as store:  # it survives reopening
        assert Corrections(store).counts().function == 1


def test_bad_corrections_are_refused_with_a_reason(tmp_path) -> None:
    with open_store(tmp_path) as store:
        corrections = Corrections(store)
        with pytest.raises(CorrectionError, match="not a role"):
            corrections.add(_correction(label="finding"))
        with pytest.raises(CorrectionError, match="not a function"):
            corrections.add(Correction(doc_id="d", text="x y z", field="function", corrected="nope"),
                            known_functions=frozenset({"stating-the-aim"}))
        with pytest.raises(CorrectionError, match="text"):
            corrections.add(_correction(text="  "))


def test_jsonl_export_is_the_training_format_and_imports_back(tmp_path) -> None:
    from models.datasets.user import load_jsonl

    with open_store(tmp_path / "a") as store:
        corrections = Corrections(store)
        corrections.add(_correction())
        corrections.add(_correction(text="We measured accuracy.", label="method"))
        assert corrections.export_jsonl(tmp_path / "out.jsonl") == 2
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rows[0]["label"] == "conclusion" and rows[0]["context_after"] == "Next."
    docs = load_jsonl(tmp_path / "out.jsonl")  # the generic training format reads it
    assert docs[0].sentences == ["We conclude that it works.", "We measured accuracy."]
    with open_store(tmp_path / "b") as store:
        assert Corrections(store).import_jsonl(tmp_path / "out.jsonl") == 2
        assert {c.corrected for c in Corrections(store).all()} == {"conclusion", "method"}
    (tmp_path / "bad.jsonl").write_text('{"text": "x"}\n', encoding="utf-8")
    with open_store(tmp_path / "c") as store, pytest.raises(CorrectionError, match=r"bad\.jsonl:1"):
        Corrections(store).import_jsonl(tmp_path / "bad.jsonl")


@pytest.mark.parametrize(("row", "reason"), [
    ('{"text": "x y", "label": "method", "position": Infinity}', "'position' must be a whole number"),
    ('{"text": "x y", "label": "method", "position": 1e300}', "'position' is out of range"),
    ('{"text": "x y", "label": "method", "created": Infinity}', "'created' must be a time"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ('["text", "label"]', "a row must be a JSON object"),
])
def test_a_bad_row_stops_the_import_before_anything_is_added(tmp_path, row: str, reason: str) -> None:
    path = tmp_path / "in.jsonl"
    good = json.dumps({"text": "We measured accuracy.", "label": "method"})
    path.write_text(f"{good}\n{row}\n", encoding="utf-8")
    with open_store(tmp_path / "lib") as store:
        corrections = Corrections(store)
        with pytest.raises(CorrectionError, match=r"in\.jsonl:2: not a correction \(.*" + reason):
            corrections.import_jsonl(path)
        assert corrections.all() == []  # not the good first row either


def test_the_command_line_adds_lists_exports_and_imports(tmp_path, capsys) -> None:
    from app.cli import main

    library = ["--library", str(tmp_path / "lib")]
    assert main(["corrections", "add", "We conclude that it works.", "conclusion", *library]) == 0
    assert main(["corrections", "add", "Some text here.", "finding", *library]) == 2
    assert "not a role" in capsys.readouterr().err
    assert main(["corrections", "list", *library]) == 0
    assert "1 role correction(s) (conclusion 1)" in capsys.readouterr().out
    assert main(["corrections", "export", str(tmp_path / "c.jsonl"), *library]) == 0
    other = ["--library", str(tmp_path / "other")]
    assert main(["corrections", "import", str(tmp_path / "c.jsonl"), *other]) == 0
    assert "1 correction(s) added" in capsys.readouterr().out
    assert main(["corrections", "remove", "99", *library]) == 2


def test_training_pieces_without_a_model() -> None:
    pytest.importorskip("torch")
    from models.training.corrections import TooFewCorrections, correction_runs, held_out, need_enough

    runs = correction_runs([_correction(), Correction(doc_id="d", text="t u v", field="function",
                                                      corrected="stating-the-aim")])
    assert len(runs) == 1  # function corrections are not role training runs
    assert runs[0].sentences == ["It worked.", "We conclude that it works.", "Next."]
    assert runs[0].allowed == [frozenset(), frozenset({"conclusion"}), frozenset()]
    assert runs[0].kind == "discussion"
    many = [_correction(text=f"Sentence number {i} here.") for i in range(400)]
    share = sum(held_out(c, 0.25) for c in many) / len(many)
    assert 0.15 < share < 0.35 and held_out(many[0], 0.25) == held_out(many[0], 0.25)
    with pytest.raises(TooFewCorrections, match=r"at least 20.*correct 19 more"):
        need_enough([_correction()], 20)
    need_enough(many, 20)
