"""``rhetorica train average``: model soups and WiSE-FT interpolation of checkpoints of one shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from core.errors import ModelError  # noqa: E402
from models.training.weight_average import average_weights, parse_sources  # noqa: E402


def _checkpoint(path: Path, weight: float, steps: int = 7, **extra: object) -> Path:
    state = {"encoder.w": torch.full((2, 3), weight), "content_layers.0.w": torch.full((2,), 5.0),
             "head.steps": torch.tensor([steps])}
    torch.save({"format": 2, "state_dict": state, "head": {"hidden": 3},
                "meta_json": json.dumps({"seed": int(weight)}), **extra}, path)
    return path


def _pack(folder: Path, weight: float) -> Path:
    folder.mkdir()
    # a pack's starting net: fp16, without the content fork's frozen copies
    start = {"encoder.w": torch.full((2, 3), weight, dtype=torch.float16), "head.steps": torch.tensor([7])}
    torch.save(start, folder / "start.pt")
    return folder


def _state(path: Path) -> dict:
    return torch.load(path, weights_only=True)["state_dict"]


def test_a_uniform_soup_is_the_mean_and_keeps_what_is_not_a_float(tmp_path: Path) -> None:
    sources = [_checkpoint(tmp_path / f"s{i}.pt", w) for i, w in enumerate((1.0, 2.0, 6.0))]
    report = average_weights(parse_sources(sources, None), tmp_path / "soup.pt")
    state = _state(tmp_path / "soup.pt")
    assert torch.allclose(state["encoder.w"], torch.full((2, 3), 3.0))
    assert state["encoder.w"].dtype == torch.float32
    assert torch.equal(state["head.steps"], torch.tensor([7]))
    assert (report.averaged, report.kept) == (2, 1)
    meta = json.loads(torch.load(tmp_path / "soup.pt", weights_only=True)["meta_json"])
    assert meta["seed"] == 1  # the first checkpoint's record, with where the weights came from
    assert [s["weight"] for s in meta["averaged_from"]] == [1.0, 1.0, 1.0]


def test_wise_ft_between_a_packs_start_and_a_run_keeps_the_frozen_copies(tmp_path: Path) -> None:
    start = _pack(tmp_path / "pack", 0.0)
    tuned = _checkpoint(tmp_path / "tuned.pt", 4.0)
    average_weights(parse_sources([start, tuned], [1.0, 3.0]), tmp_path / "w.pt")
    state = _state(tmp_path / "w.pt")
    assert torch.allclose(state["encoder.w"], torch.full((2, 3), 3.0))  # (1·0 + 3·4) / 4
    assert torch.equal(state["content_layers.0.w"], torch.full((2,), 5.0))  # not in the pack: the run's


@pytest.mark.parametrize("case, message", [
    ("one", "at least two sources"),
    ("weights", "one weight per source"),
    ("zero", "above 0"),
    ("missing", "no such checkpoint"),
    ("shape", "another shape"),
    ("steps", "differs between the sources"),
    ("packs only", "at least one checkpoint file"),
    ("foreign", "not a Rhetorica training checkpoint"),
    ("unknown", "weights the first checkpoint has not"),
])
def test_what_cannot_be_averaged_is_refused_in_one_line(tmp_path: Path, case: str, message: str) -> None:
    a = _checkpoint(tmp_path / "a.pt", 1.0)
    paths, weights = {
        "one": ([a], None),
        "weights": ([a, a], [1.0]),
        "zero": ([a, a], [1.0, 0.0]),
        "missing": ([a, tmp_path / "nowhere.pt"], None),
        "packs only": ([_pack(tmp_path / "p1", 0.0), _pack(tmp_path / "p2", 1.0)], None),
    }.get(case, ([a, tmp_path / "b.pt"], None))
    if case == "shape":
        torch.save({"state_dict": {"encoder.w": torch.zeros(3, 2)}, "head": {}}, tmp_path / "b.pt")
    elif case == "steps":
        _checkpoint(tmp_path / "b.pt", 2.0, steps=9)
    elif case == "unknown":
        torch.save({"state_dict": {"encoder.w": torch.zeros(2, 3), "extra.w": torch.zeros(1)}, "head": {}},
                   tmp_path / "b.pt")
    elif case == "foreign":
        torch.save({"weights": {}}, tmp_path / "b.pt")
    with pytest.raises(ModelError, match=message):
        average_weights(parse_sources(paths, weights), tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_a_file_that_would_run_code_is_refused_not_run(tmp_path: Path, capsys) -> None:
    import pickle

    class Boom:
        def __reduce__(self) -> tuple:
            return (print, ("ran",))

    (tmp_path / "evil.pt").write_bytes(pickle.dumps({"state_dict": Boom()}))
    with pytest.raises(ModelError, match="refusing checkpoint"):
        average_weights(parse_sources([_checkpoint(tmp_path / "a.pt", 1.0), tmp_path / "evil.pt"], None),
                        tmp_path / "out.pt")
    assert "ran" not in capsys.readouterr().out


def test_the_command_writes_the_average_and_refuses_bad_input_in_one_line(tmp_path: Path, capsys) -> None:
    from app.cli import main

    a, b = _checkpoint(tmp_path / "a.pt", 1.0), _checkpoint(tmp_path / "b.pt", 3.0)
    assert main(["train", "average", str(a), str(b), "--weights", "1", "1", "--out",
                 str(tmp_path / "out" / "avg.pt")]) == 0
    assert json.loads(capsys.readouterr().out)["averaged_tensors"] == 2
    assert torch.allclose(_state(tmp_path / "out" / "avg.pt")["encoder.w"], torch.full((2, 3), 2.0))
    missing = tmp_path / "nowhere.pt"
    assert main(["train", "average", str(a), str(missing), "--out", str(tmp_path / "x.pt")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such checkpoint" in err[0]


@pytest.mark.parametrize("case, message", [
    ("meta", "cannot read checkpoint .*b.pt: its meta_json is not JSON"),
    ("string", "cannot read checkpoint .*b.pt: weight extra.w is not a tensor"),
    ("nan", "cannot read checkpoint .*b.pt: weight encoder.w holds NaN or infinite values"),
    ("inf", "cannot read checkpoint .*b.pt: weight encoder.w holds NaN or infinite values"),
])
def test_damaged_or_diverged_checkpoints_are_refused_in_one_line(tmp_path: Path, case: str,
                                                                  message: str) -> None:
    """Hostile test D, problem 9: a bad meta_json was a JSONDecodeError, NaN weights were averaged in."""
    a = _checkpoint(tmp_path / "a.pt", 1.0)
    b = _checkpoint(tmp_path / "b.pt", 3.0)
    data = torch.load(b, weights_only=True)
    if case == "meta":
        data["meta_json"] = "{not json"
    elif case == "string":
        data["state_dict"]["extra.w"] = "hello"
    else:
        data["state_dict"]["encoder.w"][0, 0] = float(case)
    torch.save(data, b)
    sources = [b, a] if case in ("meta", "string") else [a, b]
    with pytest.raises(ModelError, match=message):
        average_weights(parse_sources(sources, None), tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_the_average_is_never_written_over_one_of_its_sources(tmp_path: Path, capsys) -> None:
    """Hostile test D, problem 10: ``--out src_b.pt`` replaced the source with the average."""
    from app.cli import main
    from core.fileio import file_sha256

    a, b = _checkpoint(tmp_path / "a.pt", 1.0), _checkpoint(tmp_path / "b.pt", 3.0)
    before = file_sha256(b)
    assert main(["train", "average", str(b), str(a), "--out", str(tmp_path / "." / "b.pt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is also an input; write --out to another file" in err[0]
    assert file_sha256(b) == before
