"""Label adapters at run time (numpy): features, prediction, bundle round trip, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelError
from models import load_model
from models.adapters import ADAPTERS_FILE, LabelAdapter, load_adapters, write_adapters
from models.bundle import read_manifest, verify_bundle, write_manifest
from models.roles import ROLES
from tests.tiny_bundle import DIM, make_tiny_bundle

LABELS = ("other", "objective", "methods", "results", "background")


def _adapter(seed: int = 3) -> LabelAdapter:
    rng = np.random.default_rng(seed)
    return LabelAdapter("pmc-sents-full", LABELS, rng.normal(size=(len(LABELS), DIM + len(ROLES))),
                        rng.normal(size=len(LABELS)), 10.0)


def _with_adapter(directory: Path) -> Path:
    bundle = make_tiny_bundle(directory)
    manifest = read_manifest(bundle)
    manifest.context["adapters"] = write_adapters(bundle, [_adapter()])
    manifest.files[ADAPTERS_FILE] = ""
    write_manifest(bundle, manifest)
    return bundle


def test_logits_are_linear_in_scaled_embedding_and_centred_log_probabilities():
    adapter = _adapter()
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(4, DIM))
    role_logits = rng.normal(size=(4, len(ROLES))) * 3
    probs = np.exp(role_logits) / np.exp(role_logits).sum(-1, keepdims=True)
    centred = role_logits - role_logits.mean(-1, keepdims=True)
    expected = np.concatenate([10.0 * emb, centred], -1) @ adapter.weight.T + adapter.bias
    assert np.allclose(adapter.logits(emb, probs), expected, atol=1e-6)
    # A constant added to every role logit changes nothing (only centred logits are used).
    assert adapter.predict(emb, probs) == [LABELS[i] for i in expected.argmax(-1)]
    assert adapter.predict(np.zeros((0, DIM)), np.zeros((0, len(ROLES)))) == []
    with pytest.raises(ModelError, match="expects"):
        adapter.logits(emb[:, :3], probs)


def test_bundle_round_trip_and_model_api(tmp_path):
    bundle = _with_adapter(tmp_path / "b")
    manifest = verify_bundle(bundle)
    assert ADAPTERS_FILE in manifest.files
    assert manifest.context["adapters"]["pmc-sents-full"]["labels"] == list(LABELS)
    model = load_model(bundle, device="cpu", threads=1)
    adapter = model.adapter("pmc-sents-full")
    assert np.allclose(adapter.weight, _adapter().weight, atol=1e-6)  # stored as float32
    encoding = model.encode_document(["we propose a new method", "results show that it works"])
    assert len(adapter.predict(encoding.embeddings, encoding.probabilities)) == 2
    with pytest.raises(ModelError, match=r"no label adapter for 'csabstruct'.*pmc-sents-full"):
        model.adapter("csabstruct")


def test_bundle_without_adapters_says_so(tmp_path):
    model = load_model(make_tiny_bundle(tmp_path / "b"), device="cpu", threads=1)
    assert model.adapters == {}
    with pytest.raises(ModelError, match=r"has: none"):
        model.adapter("pmc-sents-full")


def test_altered_or_mismatched_adapter_file_is_refused(tmp_path):
    bundle = _with_adapter(tmp_path / "b")
    np.savez(bundle / ADAPTERS_FILE, **{"pmc-sents-full/weight": np.zeros((2, 3)),
                                         "pmc-sents-full/bias": np.zeros(2)})
    with pytest.raises(ModelError, match="altered"):
        load_model(bundle)
    described = read_manifest(bundle).context["adapters"]
    with pytest.raises(ModelError, match="shapes do not match"):
        load_adapters(bundle, described)
    with pytest.raises(ModelError, match="no weights"):
        load_adapters(bundle, {"csabstruct": {"labels": ["a"]}})
