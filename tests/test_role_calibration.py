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


def _under_read_rare_role(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities of a head that finds role 1 (rare) only when it is sure: its logit is pushed down."""
    rng = np.random.default_rng(seed)
    gold = rng.choice(6, size=n, p=[0.3, 0.06, 0.3, 0.2, 0.09, 0.05])
    logits = rng.normal(size=(n, 6))
    logits[np.arange(n), gold] += 2.0
    logits[:, 1] -= 1.5
    probs = np.exp(logits)
    return probs / probs.sum(-1, keepdims=True), gold


def test_a_bias_fitted_with_the_temperature_finds_the_rare_role_more_often() -> None:
    from models.role_calibration import fit_temperature_and_bias

    probs, gold = _under_read_rare_role()
    plain = fit_temperature(probs, gold)
    fitted = fit_temperature_and_bias(probs, gold)
    assert len(fitted.bias) == 6 and abs(sum(fitted.bias)) < 1e-6  # centred
    assert fitted.bias[1] == max(fitted.bias)  # the under-read role is raised most
    assert fitted.nll_after < plain.nll_after
    logits = np.log(probs)
    before = logits.argmax(-1)
    after = apply_temperatures(logits, np.zeros(len(gold), dtype=np.int64), np.array([fitted.temperature]),
                               np.array([fitted.bias]))
    recall = lambda pred: float(((pred == 1) & (gold == 1)).sum() / (gold == 1).sum())  # noqa: E731
    assert recall(after.argmax(-1)) > recall(before) + 0.1
    assert (after.argmax(-1) == gold).mean() > (before == gold).mean()
    assert fitted.to_dict()["bias"] == [round(b, 4) for b in fitted.bias]
    assert "bias" not in plain.to_dict()


def test_biases_are_applied_per_kind_after_the_temperature() -> None:
    logits = np.array([[2.0, 1.0, 0.0], [2.0, 1.0, 0.0]])
    bias = np.array([[0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    scaled = apply_temperatures(logits, np.array([0, 1]), np.array([1.0, 2.0]), bias)
    assert np.allclose(scaled[0], logits[0]) and np.allclose(scaled[1], logits[1] / 2.0 + bias[1])
    assert scaled[1].argmax() == 1  # unlike a temperature, a bias can change the best role


def _with_body_bias(shipped: Path, folder: Path, bias: object) -> Path:
    from models.bundle import read_manifest, write_manifest

    shutil.copytree(shipped, folder)
    manifest = read_manifest(folder)
    calibration = dict(manifest.context.get("role_calibration", {}))
    calibration["body_head"] = {**dict(calibration.get("body_head", {})), "bias": bias}
    manifest.context = {**manifest.context, "role_calibration": calibration}
    write_manifest(folder, manifest, tuple(manifest.files))
    return folder


def test_role_biases_move_the_body_sections_and_a_damaged_bias_counts_as_none(tmp_path: Path) -> None:
    from models.bundle import default_bundle_path
    from models.encoder import load_model

    shipped = default_bundle_path()
    labels = list(load_model(shipped, threads=1).labels)
    push = [0.0] * len(labels)
    push[labels.index("objective")] = 8.0
    sentences = ["Deep learning has transformed vision.", "We trained the model for ten epochs.",
                 "Accuracy rose by 4 points."]

    def read(bundle: Path, kind: str = "method") -> np.ndarray:
        return load_model(bundle, threads=1).encode_documents([(sentences, kind)])[0].probabilities

    base = read(shipped)
    pushed = read(_with_body_bias(shipped, tmp_path / "pushed", push))
    assert (pushed.argmax(-1) == labels.index("objective")).all()  # a body kind reads the body head's bias
    assert np.allclose(read(tmp_path / "pushed", "abstract"), read(shipped, "abstract"), atol=1e-6)
    for name, damaged in (("short", [1.0, 2.0]), ("huge", [50.0] * len(labels)), ("text", "objective")):
        assert np.allclose(read(_with_body_bias(shipped, tmp_path / name, damaged)), base, atol=1e-6)


def test_calibrate_roles_with_bias_writes_a_bias_per_head(tmp_path: Path) -> None:
    import json

    from app.cli import main
    from models.bundle import default_bundle_path, read_manifest

    bundle = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), bundle)
    texts = [("Deep learning has transformed vision.", "background"),
             ("We aim to show that parsers can be fast.", "objective"),
             ("We trained the model for ten epochs.", "method"),
             ("Accuracy rose by 4 points.", "result"),
             ("Parsers can therefore be both fast and exact.", "conclusion")]
    rows = [{"doc_id": f"d{i}", "sentences": [t for t, _ in texts], "labels": [r for _, r in texts],
             "section_kinds": [kind] * len(texts)} for i, kind in enumerate(["abstract", "method"])]
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["train", "calibrate-roles", "--bundle", str(bundle), "--dev", f"jsonl:{dev}", "--bias",
                 "--threads", "1"]) == 0
    calibration = read_manifest(bundle).context["role_calibration"]
    assert "bias" in calibration["role_head"] and "bias" in calibration["body_head"]
    assert len(calibration["body_head"]["bias"]) == len(read_manifest(bundle).labels)
