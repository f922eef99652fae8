"""Role temperatures (issue 24, item 5): fitted on dev, applied by the runtime, never to adapters."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from models.role_calibration import apply_temperatures, fit_temperature


def test_an_overconfident_head_gets_a_temperature_above_one_that_lowers_nll_and_ece() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 6, size=400)
    logits = rng.normal(size=(400, 6))
    logits[np.arange(400), gold] += 1.0  # right more often than chance ...
    sharp = np.exp(4 * logits)  # ... but far too sure of itself
    fitted = fit_temperature(sharp / sharp.sum(-1, keepdims=True), gold)
    assert fitted.temperature > 1.5
    assert fitted.nll_after < fitted.nll_before and fitted.ece_after < fitted.ece_before


def test_temperatures_never_change_the_best_role() -> None:
    logits = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]])
    scaled = apply_temperatures(logits, np.array([0, 1]), np.array([2.0, 0.5]))
    assert (scaled.argmax(-1) == logits.argmax(-1)).all()
    assert np.allclose(scaled[0], logits[0] / 2.0) and np.allclose(scaled[1], logits[1] / 0.5)


def test_the_shipped_bundle_applies_its_temperatures_but_adapters_read_the_raw_probabilities(
        tmp_path: Path) -> None:
    from models.bundle import default_bundle_path, read_manifest, write_manifest
    from models.encoder import load_model

    shipped = default_bundle_path()
    assert "role_calibration" in read_manifest(shipped).context
    raw = tmp_path / "raw"
    shutil.copytree(shipped, raw)
    manifest = read_manifest(raw)
    manifest.context = {k: v for k, v in manifest.context.items() if k != "role_calibration"}
    write_manifest(raw, manifest, tuple(manifest.files))
    sentences = ["Deep learning has transformed vision.", "We propose a new parser.",
                 "Accuracy rose by 4 points."]
    calibrated = load_model(shipped, threads=1).encode_documents([(sentences, "introduction")])[0]
    uncalibrated = load_model(raw, threads=1).encode_documents([(sentences, "introduction")])[0]
    assert (calibrated.probabilities.argmax(-1) == uncalibrated.probabilities.argmax(-1)).all()
    assert calibrated.probabilities.max() < uncalibrated.probabilities.max()  # softer (temperature > 1)
    assert np.allclose(calibrated.adapter_probabilities, uncalibrated.probabilities, atol=1e-6)
