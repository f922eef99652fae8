"""The role prior on function probabilities (models/function_prior.py): reweighting, its fit on dev
sentences, and reading it from a manifest."""

from __future__ import annotations

import numpy as np
import pytest

from models.function_prior import RolePrior, best_threshold, fit_role_prior, kind_log_ratios, kind_table

IDS = ["limitation", "gap-neglected", "aim"]
LABELS = ("background", "objective", "conclusion")
COLUMNS = np.array([2, 0, 1])  # limitation: conclusion, gap: background, aim: objective


def test_the_contextual_role_decides_between_functions_the_head_confuses() -> None:
    head = np.array([[0.45, 0.50, 0.05]])  # the head leans to "gap in earlier work"
    roles = np.array([[0.1, 0.1, 0.8]])  # the context says conclusion (a discussion)
    out = RolePrior(1.0, 0.0, COLUMNS).apply(head, roles)
    assert out.argmax() == 0 and out.sum() == pytest.approx(1.0)
    assert np.allclose(RolePrior(0.0, 0.0, COLUMNS).apply(head, roles), head)  # alpha 0: unchanged


def test_the_fit_prefers_the_prior_when_roles_carry_the_evidence() -> None:
    rng = np.random.default_rng(0)
    n = 200
    gold_index = rng.integers(0, 2, n)  # limitation or gap, which the head cannot tell apart
    head = np.tile([0.48, 0.47, 0.05], (n, 1))
    roles = np.where(gold_index[:, None] == 0, [0.1, 0.1, 0.8], [0.8, 0.1, 0.1])
    gold = [IDS[i] for i in gold_index]
    prior, record = fit_role_prior(head, roles, gold, IDS, COLUMNS)
    assert prior.alpha > 0 and record["dev_accuracy"] == 1.0 and record["dev_accuracy_alpha0"] < 0.6
    _, useless = fit_role_prior(head, np.full((n, 3), 1 / 3), gold, IDS, COLUMNS)
    assert useless["alpha"] == 0.0  # flat roles: ties go to the smaller alpha


def test_the_none_threshold_is_chosen_for_accuracy() -> None:
    probabilities = np.array([[0.9, 0.05, 0.05], [0.3, 0.35, 0.35], [0.2, 0.5, 0.3]])
    threshold, accuracy = best_threshold(probabilities, IDS, ["limitation", "none", "gap-neglected"])
    assert 0.35 < threshold <= 0.5 and accuracy == 1.0


def test_a_manifest_prior_is_read_only_when_it_matches_the_bundle() -> None:
    record = {"alpha": 1.0, "threshold": 0.3, "roles": ["conclusion", "background", "objective"]}
    prior = RolePrior.from_manifest({"ids": IDS, "role_prior": record}, LABELS)
    assert prior is not None and list(prior.role_columns) == [2, 0, 1] and prior.threshold == 0.3
    assert RolePrior.from_manifest({"ids": IDS}, LABELS) is None
    assert RolePrior.from_manifest({"ids": IDS[:2], "role_prior": record}, LABELS) is None  # length
    bad = {**record, "roles": ["conclusion", "background", "mystery"]}
    assert RolePrior.from_manifest({"ids": IDS, "role_prior": bad}, LABELS) is None


def test_the_runtime_applies_the_shipped_prior_to_every_encoding() -> None:
    from models.encoder import load_model

    model = load_model(None, device="cpu", threads=1)
    prior = model._function_prior
    if prior is None or prior.alpha == 0:
        pytest.skip("the shipped bundle has no role prior")
    sentences = ["One limitation of this study is the small sample.", "Future work should test more sites."]
    encoding = model.encode_document(sentences, "discussion")
    manifest_free = load_model(None, device="cpu", threads=1)
    manifest_free._function_prior = None
    raw = manifest_free.encode_document(sentences, "discussion")
    assert raw.function_probabilities is not None and encoding.function_probabilities is not None
    expected = prior.shown(prior.apply(raw.function_probabilities, raw.probabilities,
                                       model.section_kind_ids("discussion", len(sentences)),
                                       raw.function_context_probabilities))
    assert np.allclose(encoding.function_probabilities, expected, atol=1e-5)
    assert encoding.function_threshold == pytest.approx(prior.threshold)


def test_the_section_kind_moves_functions_and_an_unknown_kind_does_not() -> None:
    kinds = ["introduction", "discussion"]
    ratios = kind_log_ratios(["discussion"] * 8 + ["introduction"] * 8,
                             ["limitation"] * 8 + ["gap-neglected"] * 8, IDS, kinds)
    assert ratios["discussion"][0] > 0 > ratios["discussion"][1]  # limitations are discussion's
    table = kind_table(ratios, kinds, len(IDS))
    assert table is not None and table.shape == (3, 3) and not table[2].any()  # unknown: no prior
    prior = RolePrior(0.0, 0.0, COLUMNS, 1.0, table)
    head = np.array([[0.45, 0.50, 0.05], [0.45, 0.50, 0.05]])
    flat = np.full((2, 3), 1 / 3)
    out = prior.apply(head, flat, np.array([1, 2]))  # a discussion sentence, then a query of unknown kind
    assert out[0].argmax() == 0 and np.allclose(out[1], head[1])
    assert kind_table({"discussion": [0.1]}, kinds, len(IDS)) is None  # wrong width: no table
    record = {"alpha": 0.0, "threshold": 0.2, "roles": ["conclusion", "background", "objective"],
              "kind_prior": {"beta": 1.0, "log_ratio": ratios}}
    read = RolePrior.from_manifest({"ids": IDS, "role_prior": record}, LABELS, kinds)
    assert read is not None and read.beta == 1.0 and read.kind_log_ratio is not None
    assert np.allclose(read.apply(head, flat, np.array([1, 2])), out)


def test_the_contextual_head_is_mixed_in_except_for_sentences_read_alone() -> None:
    head = np.array([[0.45, 0.50, 0.05], [0.45, 0.50, 0.05]])
    context = np.array([[0.90, 0.05, 0.05], [0.90, 0.05, 0.05]])  # read with its section: a limitation
    unknown = 2  # two section kinds, unknown last
    kinds = np.array([0, unknown])
    prior = RolePrior(0.0, 0.0, COLUMNS, context_weight=0.5, unknown_kind=unknown)
    assert prior.active
    out = prior.apply(head, np.full((2, 3), 1 / 3), kinds, context)
    assert out[0].argmax() == 0 and out[0].sum() == pytest.approx(1.0)
    assert np.allclose(out[1], head[1])  # a sentence of unknown kind keeps the function head alone
    assert np.allclose(RolePrior(0.0, 0.0, COLUMNS).apply(head, np.full((2, 3), 1 / 3), kinds, context), head)
    assert not RolePrior(0.0, 0.0, COLUMNS).active
    whole = RolePrior(0.0, 0.0, COLUMNS, context_weight=1.0, unknown_kind=unknown)
    full = whole.mix_context(head, context, None)
    assert np.allclose(full, context, atol=1e-6)  # weight 1: the contextual head alone


def test_the_fit_chooses_the_context_weight_when_the_context_head_knows_better() -> None:
    rng = np.random.default_rng(1)
    n = 200
    gold_index = rng.integers(0, 2, n)
    head = np.tile([0.48, 0.47, 0.05], (n, 1))  # the sentence alone cannot tell them apart
    context = np.where(gold_index[:, None] == 0, [0.7, 0.2, 0.1], [0.2, 0.7, 0.1])
    gold = [IDS[i] for i in gold_index]
    flat = np.full((n, 3), 1 / 3)
    prior, record = fit_role_prior(head, flat, gold, IDS, COLUMNS, context_probabilities=context,
                                   unknown_kind=3, kinds=np.zeros(n, dtype=np.int64))
    assert prior.context_weight > 0 and record["context_weight"] == prior.context_weight
    assert record["dev_accuracy"] == 1.0
    _, without = fit_role_prior(head, flat, gold, IDS, COLUMNS)
    assert "context_weight" not in without  # no contextual head: nothing recorded
    manifest = {"ids": IDS, "role_prior": {**record, "roles": ["conclusion", "background", "objective"]}}
    again = RolePrior.from_manifest(manifest, LABELS, ["introduction", "discussion", "method"])
    assert again is not None and again.context_weight == prior.context_weight and again.unknown_kind == 3


def test_a_temperature_calibrates_overconfident_probabilities_without_changing_the_best_function() -> None:
    from models.function_prior import fit_temperature, tempered

    rng = np.random.default_rng(3)
    n = 400
    sharp = np.tile([0.9, 0.08, 0.02], (n, 1))  # says 90 % ...
    gold = [IDS[0] if rng.random() < 0.6 else IDS[1] for _ in range(n)]  # ... and is right 60 % of the time
    temperature = fit_temperature(sharp, IDS, gold)
    assert temperature > 1.5
    soft = tempered(sharp, temperature)
    assert abs(float(soft[0, 0]) - 0.6) < 0.08 and (soft.argmax(-1) == 0).all()
    assert np.allclose(soft.sum(-1), 1.0, atol=1e-5)
    assert fit_temperature(sharp, IDS, ["none"] * n) == 1.0  # nothing to fit on
    prior, record = fit_role_prior(sharp, np.full((n, 3), 1 / 3), gold, IDS, COLUMNS, fit_temperatures=True)
    assert prior.temperature == record["temperature"] == temperature
    assert record["dev_ece_after"] < record["dev_ece_before"]
    applied = prior.apply(sharp[:1], np.full((1, 3), 1 / 3))
    assert np.allclose(applied, sharp[:1])  # the labels' probabilities: untempered
    assert float(prior.shown(applied)[0, 0]) == pytest.approx(float(soft[0, 0]), abs=1e-5)
    assert record["threshold"] == prior.threshold  # decided on the untempered ones, as without
    stored = {"alpha": 0.0, "threshold": 0.3, "roles": ["conclusion", "background", "objective"],
              "temperature": temperature}
    assert RolePrior.from_manifest({"ids": IDS, "role_prior": stored}, LABELS).temperature == temperature
    broken = RolePrior.from_manifest({"ids": IDS, "role_prior": {**stored, "temperature": 1e9}}, LABELS)
    assert broken is not None and broken.temperature == 1.0


def test_a_tempered_prior_changes_the_probabilities_shown_not_the_labels() -> None:
    """With a temperature the runtime shows tempered probabilities but keeps the labels (and "none")
    the untempered ones give: the threshold is applied before tempering."""
    import dataclasses

    from models.encoder import load_model

    model = load_model(None, device="cpu", threads=1)
    prior = model._function_prior
    if prior is None:
        pytest.skip("the shipped bundle has no role prior")
    sentences = ["One limitation of this study is the small sample.", "Future work should test more sites.",
                 "Table 2 lists the parameters.", "The results are shown in Figure 3.",
                 "We thank the reviewers."]
    plain = dataclasses.replace(prior, temperature=1.0)
    hot = dataclasses.replace(prior, temperature=3.0, threshold=0.0)
    model._none_detector = None  # this is about the threshold (a none detector decides on the shown ones)
    model._function_prior = plain
    model.function_threshold = 0.5
    before = model.encode_document(sentences, "discussion")
    model._function_prior = hot
    after = model.encode_document(sentences, "discussion")
    assert before.function_probabilities is not None and after.function_probabilities is not None
    assert after.function_probabilities.max(-1).mean() < before.function_probabilities.max(-1).mean()
    assert np.array_equal(after.function_probabilities.argmax(-1), before.function_probabilities.argmax(-1))
    assert after.function_none is not None
    assert [f.label for f in after.functions] == [f.label for f in before.functions]
    # ... which the same threshold on the tempered probabilities would not keep.
    from models.encoder import function_predictions

    on_tempered = function_predictions(after.function_probabilities, model.function_ids, 0.5)
    assert [f.label for f in on_tempered] != [f.label for f in before.functions]
