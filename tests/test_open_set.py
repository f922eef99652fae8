"""Open-set function splits (``rhetorica data open-set``) and retrieval among held-out functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from models.training.open_set import open_set_split
from tests.tiny_bundle import make_tiny_bundle


def _rows() -> list[dict[str, str]]:
    sizes = {"aim": 30, "gap": 12, "method-step": 40, "finding": 25, "limit": 3}
    return [{"text": f"{f} sentence number {i}", "function": f} for f, n in sizes.items() for i in range(n)]


def test_split_holds_out_every_eligible_function_not_seen() -> None:
    split = open_set_split(_rows(), 2, seed=5, min_count=10, max_unseen_per_function=20)
    assert len(split.seen) == 2 and set(split.seen) | set(split.unseen) == {"aim", "gap", "method-step",
                                                                            "finding"}
    assert not set(split.seen) & set(split.unseen)  # "limit" (3 rows) takes no part
    assert {r["function"] for r in split.train_rows} == set(split.seen)
    assert {r["function"] for r in split.unseen_rows} == set(split.unseen)
    assert len(split.train_rows) == sum(1 for r in _rows() if r["function"] in split.seen)
    per_function = {f: sum(r["function"] == f for r in split.unseen_rows) for f in split.unseen}
    assert all(n <= 20 for n in per_function.values())  # capped
    assert open_set_split(_rows(), 2, seed=5, min_count=10).seen == split.seen  # the seed decides
    with pytest.raises(ValueError, match="cannot hold any out"):
        open_set_split(_rows(), 4, seed=5, min_count=10)


def test_open_set_files_and_retrieval_among_unseen_functions(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    out = tmp_path / "open"
    assert main(["data", "open-set", str(labels), "--seen", "1", "2", "--min-count", "10",
                 "--out", str(out)]) == 0
    split = json.loads((out / "split-2.json").read_text())
    unseen_rows = [json.loads(x) for x in (out / "unseen-2.jsonl").read_text().splitlines()]
    assert {r["function"] for r in unseen_rows} == set(split["unseen"]) and len(split["seen"]) == 2
    bundle = make_tiny_bundle(tmp_path / "bundle")
    result = tmp_path / "ret.json"
    # Retrieval among all rows, then only among the functions the 2-function split held out.
    assert main(["eval", "retrieval", "--data", "labels", "--labels", str(labels), "--model", str(bundle),
                 "--unseen-of", str(out / "split-2.json"), "--json", str(result)]) == 0
    data = json.loads(result.read_text())
    assert data["sentences"] == sum(1 for r in _rows() if r["function"] in split["unseen"])
    assert data["labels"] == "function" and "--unseen-of" in data["command"]
    assert "MAP@R" in capsys.readouterr().out
    assert main(["eval", "retrieval", "--data", "labels", "--model", str(bundle)]) == 2
    assert "needs --labels FILE" in capsys.readouterr().err
