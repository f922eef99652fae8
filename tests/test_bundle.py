"""Bundle manifests: hashes, and clear one-line errors for missing or altered files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import ModelError
from models.bundle import (
    Manifest,
    default_bundle_path,
    file_sha256,
    files_digest,
    read_manifest,
    verify_bundle,
    write_manifest,
)
from tests.tiny_bundle import make_tiny_bundle


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return make_tiny_bundle(tmp_path / "bundle")


def one_line(error: pytest.ExceptionInfo[ModelError]) -> str:
    message = str(error.value)
    assert "\n" not in message and message
    return message


def test_manifest_round_trip(bundle: Path) -> None:
    manifest = verify_bundle(bundle)
    assert manifest.format == 1
    assert set(manifest.files) == {"model.onnx", "tokenizer.json"}
    assert manifest.files["model.onnx"] == file_sha256(bundle / "model.onnx")
    assert manifest.context_window == 8 and manifest.unknown_section_kind == 8
    data = json.loads((bundle / "manifest.json").read_text())
    assert next(iter(data)) == "format"
    assert Manifest.from_dict(data) == manifest
    assert manifest.created.endswith("Z")


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="model bundle not found") as error:
        verify_bundle(tmp_path / "nowhere")
    one_line(error)


def test_missing_file(bundle: Path) -> None:
    (bundle / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"tokenizer\.json is missing") as error:
        verify_bundle(bundle)
    one_line(error)


def test_altered_file(bundle: Path) -> None:
    with open(bundle / "model.onnx", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ModelError, match=r"altered: model.onnx does not match its sha256") as error:
        verify_bundle(bundle)
    one_line(error)


def test_missing_manifest(bundle: Path) -> None:
    (bundle / "manifest.json").unlink()
    with pytest.raises(ModelError, match=r"has no manifest\.json"):
        verify_bundle(bundle)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text[:-10], "not valid JSON"),
        (lambda text: json.dumps({**json.loads(text), "format": 2}), "format 2 is not supported"),
        (lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "labels"}),
         "missing field.*labels"),
        (lambda text: json.dumps({**json.loads(text), "files": {"model.onnx": "0" * 64}}),
         "does not list tokenizer.json"),
        (lambda text: "[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_manifest(bundle: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path = bundle / "manifest.json"
    path.write_text(edit(path.read_text()))
    with pytest.raises(ModelError, match=message) as error:
        verify_bundle(bundle)
    assert "bad manifest" in one_line(error)


def test_write_manifest_updates_hashes_and_digest(bundle: Path) -> None:
    manifest = read_manifest(bundle)
    before = files_digest(manifest)
    (bundle / "tokenizer.json").write_text((bundle / "tokenizer.json").read_text() + "\n")
    with pytest.raises(ModelError):
        verify_bundle(bundle)
    manifest.metrics["csabstruct-test-f1-micro"] = {"value": 0.5, "data": "x", "command": "y"}
    write_manifest(bundle, manifest)
    again = verify_bundle(bundle)
    assert again.metrics["csabstruct-test-f1-micro"]["value"] == 0.5
    assert files_digest(again) != before


def test_write_manifest_needs_the_files(tmp_path: Path) -> None:
    manifest = Manifest(name="x", version="1", base_model="b", labels=["a"], section_kinds=[],
                        max_length=8, embedding_dim=4)
    with pytest.raises(ModelError, match=r"model\.onnx is missing"):
        write_manifest(tmp_path, manifest)


def test_default_bundle_path() -> None:
    assert default_bundle_path().parts[-3:] == ("resources", "models", "default")
