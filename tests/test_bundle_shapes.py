"""Bundle manifests of the wrong shape (a null, a list where an object belongs) are refused with one
``bad manifest`` line naming the field, never a TypeError or AttributeError when the model loads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from core.errors import ModelError
from models.bundle import read_manifest, verify_bundle
from models.encoder import load_model
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bundle(tmp_path_factory.mktemp("good") / "bundle", functions=True)


def _set(data: dict[str, Any], dotted: str, value: object) -> None:
    *parents, last = dotted.split("/")
    for key in parents:
        data = data[key]
    data[last] = value


# (field as a/b/c, value, what the message says)
CASES: list[tuple[str, object, str]] = [
    ("files", None, "'files' must be an object, not null"),
    ("context", None, "'context' must be an object, not null"),
    ("context/functions", None, "'context.functions' must be an object, not null"),
    ("context/functions/ids", None, "'context.functions.ids' must be a list, not null"),
    ("context/functions/threshold", "high", "'context.functions.threshold' must be a number, not a string"),
    ("context/window", None, "'context.window' must be a whole number, not null"),
    ("context/graphs", [], "'context.graphs' must be an object, not a list"),
    ("labels", None, "'labels' must be a list, not null"),
    ("max_length", "12", "'max_length' must be a whole number, not a string"),
    ("name", 3, "'name' must be a string, not a number"),
    ("metrics", [], "'metrics' must be an object, not a list"),
    ("files/model.onnx", None, "'files.model.onnx' must be a string, not null"),
]


def _damaged(good: Path, tmp_path: Path, dotted: str, value: object) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(good, bundle)
    path = bundle / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    _set(data, dotted, value)
    path.write_text(json.dumps(data), encoding="utf-8")
    return bundle


@pytest.mark.parametrize(("dotted", "value", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_wrong_shaped_manifest_is_one_bad_manifest_line(good: Path, tmp_path: Path, dotted: str,
                                                          value: object, message: str) -> None:
    bundle = _damaged(good, tmp_path, dotted, value)
    with pytest.raises(ModelError) as error:
        verify_bundle(bundle)
    text = str(error.value)
    assert text.startswith(f"bad manifest {bundle / 'manifest.json'}: ") and message in text
    assert "\n" not in text


@pytest.mark.parametrize("dotted", ["files", "context", "context/functions", "context/window"])
def test_load_model_refuses_a_null_field(good: Path, tmp_path: Path, dotted: str) -> None:
    with pytest.raises(ModelError, match="bad manifest"):
        load_model(_damaged(good, tmp_path, dotted, None), device="cpu", threads=1)


@pytest.mark.parametrize("dotted", ["files", "context"])
def test_analyze_with_a_null_manifest_field_says_one_line(good: Path, tmp_path: Path, dotted: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _damaged(good, tmp_path, dotted, None)
    draft = tmp_path / "draft.txt"
    draft.write_text("We propose a method. It works well.\n", encoding="utf-8")
    assert main(["analyze", str(draft), "--model", str(bundle), "--quiet", "--no-cache"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("rhetorica: error: bad manifest") and captured.err.count("\n") == 1
    assert f"'{dotted}' must be an object, not null" in captured.err


def test_the_shipped_and_tiny_manifests_pass(good: Path) -> None:
    from models.bundle import default_bundle_path

    assert read_manifest(good).context["functions"]["ids"]
    assert read_manifest(default_bundle_path()).context["window"] > 0
