"""Checkpoints of the wrong shape are refused in one line (hostile test D, problem 9), not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from core.errors import ModelError  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    from models.training.checkpoint import build_net, save_checkpoint
    from models.training.net import HeadConfig

    try:
        net, base_dir = build_net(None, HeadConfig(dim=16, ffn=32))
    except ModelError as error:  # the base encoder package is not installed
        pytest.skip(str(error))
    path = tmp_path_factory.mktemp("ck") / "good.pt"
    save_checkpoint(path, net, base_dir, {"seed": 0})
    return path


def _tampered(saved: Path, folder: Path, case: str) -> Path:
    data = torch.load(saved, weights_only=True)
    state = dict(data["state_dict"])
    key = next(k for k in state if k.startswith("head.") and state[k].dim() == 2)
    if case == "shape":
        state[key] = torch.zeros(3, 3)
    elif case == "extra":
        state["extra.weight"] = torch.zeros(2)
    elif case == "string":
        state[key] = "hello"
    elif case == "negative-dim":
        data["head"] = dict(data["head"], dim=-5)
    elif case == "dropout":
        data["head"] = dict(data["head"], dropout=7.0)
    data["state_dict"] = state
    path = folder / f"{case}.pt"
    torch.save(data, path)
    return path


@pytest.mark.parametrize("case", ["shape", "extra", "string", "negative-dim", "dropout"])
def test_a_checkpoint_whose_weights_do_not_fit_is_refused_in_one_line(saved: Path, tmp_path: Path,
                                                                       case: str) -> None:
    from models.training.checkpoint import load_checkpoint

    path = _tampered(saved, tmp_path, case)
    with pytest.raises(ModelError, match=r"cannot read checkpoint .*: its weights do not fit") as error:
        load_checkpoint(path)
    assert "\n" not in str(error.value) and len(str(error.value)) < 400
    load_checkpoint(saved)  # the untampered one loads


def _pack_and_parts(folder: Path, case: str) -> tuple[Path, Path]:
    import json

    pack = folder / "pack"
    pack.mkdir()
    (pack / "pack.json").write_text(json.dumps({"config": {}, "shape": {}}), encoding="utf-8")
    weights: dict[str, object] = {"head.proj.0.weight": torch.zeros(2, 2)}
    meta = "{}"
    if case == "string":
        weights["head.proj.0.weight"] = "hello"
    elif case == "nan":
        weights["head.proj.0.weight"] = torch.full((2, 2), float("nan"))
    elif case == "meta":
        meta = "{not json"
    part = folder / "run-part0.pt"
    torch.save({"weights": weights, "meta_json": meta, "parts": 1}, part)
    return pack, part


@pytest.mark.parametrize("case, message", [
    ("string", "run-part0.pt: weight head.proj.0.weight is not a tensor of numbers"),
    ("nan", "run-part0.pt: weight head.proj.0.weight holds NaN or infinite values"),
    ("meta", "Expecting property name"),
])
def test_a_bad_trained_part_is_refused_in_one_line(tmp_path: Path, case: str, message: str) -> None:
    from models.training.pack import checkpoint_from_parts

    pack, part = _pack_and_parts(tmp_path, case)
    with pytest.raises(ModelError, match=f"cannot merge the packed run's parts: .*{message}"):
        checkpoint_from_parts(pack, [part], tmp_path / "best.pt")
    assert not (tmp_path / "best.pt").exists()


def test_pack_merge_never_writes_over_a_part(tmp_path: Path, capsys) -> None:
    """Hostile test D, problem 10: ``pack-merge pk part.pt --out part.pt`` replaced the trained part."""
    from app.cli import main
    from core.fileio import file_sha256

    pack, part = _pack_and_parts(tmp_path, "ok")
    before = file_sha256(part)
    assert main(["train", "pack-merge", str(pack), str(part), "--out", str(part)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is also an input; write --out to another file" in err[0]
    assert file_sha256(part) == before
