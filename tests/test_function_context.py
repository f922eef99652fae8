"""Contextual function head: functions read with their section. It learns what only the neighbours tell,
survives checkpoint, export (the role graph's second output) and read-back, and the runtime reads it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow

HIDDEN = 384
FUNCTIONS = ["limitation", "gap-neglected", "aim"]


@pytest.fixture(scope="module")
def net():
    from models.training.checkpoint import build_net
    from models.training.net import FunctionConfig

    torch.manual_seed(0)
    built, _ = build_net(None, functions=FunctionConfig(FUNCTIONS, dim=16))
    return built.eval()


def _windows(rng, count: int):
    """Sections whose middle sentence's vector is the same noise in both kinds: only the neighbours (a
    strong direction of their own) tell a limitation (discussion) from a gap (introduction)."""
    from models.training.function_context import FunctionWindow

    directions = {0: rng.normal(size=HIDDEN) * 3, 1: rng.normal(size=HIDDEN) * 3}
    texts, vectors, windows = [], [], []
    for i in range(count):
        target = i % 2
        sentences = [f"s{i}.{j}" for j in range(3)]
        texts += sentences
        vectors += [directions[target] + rng.normal(size=HIDDEN), rng.normal(size=HIDDEN),
                    directions[target] + rng.normal(size=HIDDEN)]
        windows.append(FunctionWindow("other", sentences, [-1, target, -1]))
    return texts, np.array(vectors, dtype=np.float32), windows


def _cached_windows(tmp_path, seed: int, count: int):
    """:func:`_windows`' sections with their vectors in a feature cache."""
    from models.vector_cache import FeatureCache

    texts, vectors, windows = _windows(np.random.default_rng(seed), count)
    cache = FeatureCache(tmp_path / "features.npz", "test-model")
    cache.add(texts, vectors)
    return cache, windows


def test_the_contextual_head_learns_what_only_the_neighbours_tell(net, tmp_path) -> None:
    import copy

    from models.training.function_context import (
        FunctionContextConfig,
        context_accuracy,
        train_function_context_head,
    )

    cache, windows = _cached_windows(tmp_path, seed=0, count=160)
    trained = copy.deepcopy(net)
    result = train_function_context_head(trained, windows[:120], windows[120:], cache,
                                         FunctionContextConfig(epochs=6, lr=3e-3, batch_windows=16,
                                                               fp32_share=0.0, feature_noise=0.0))
    assert trained.function_context_head is not None
    assert result.best_dev >= 0.9 and result.counts["dev_labelled"] == 40
    assert context_accuracy(trained, windows[120:], cache) == pytest.approx(result.best_dev)
    # the function head (one sentence alone) cannot: the middle vectors are noise in both kinds
    with torch.no_grad():
        _, logits = trained.function_head(torch.from_numpy(cache.of([w.sentences[1] for w in windows[120:]])))
    alone = float((logits.argmax(-1).numpy() == np.array([w.targets[1] for w in windows[120:]])).mean())
    assert alone < 0.8


def test_the_contextual_head_can_start_from_the_body_heads_reading(net) -> None:
    import copy

    from models.training.function_context import FunctionContextConfig, train_function_context_head
    from models.vector_cache import FeatureCache

    with_body = copy.deepcopy(net)
    with_body.enable_body_head()
    assert with_body.body_head is not None
    with torch.no_grad():
        for param in with_body.body_head.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    cache = FeatureCache(Path("/nonexistent/features.npz"), "test-model")
    cache.add(["a", "b"], np.zeros((2, HIDDEN), dtype=np.float32))
    from models.training.function_context import FunctionWindow

    windows = [FunctionWindow("other", ["a", "b"], [0, -1])]
    train_function_context_head(with_body, windows, windows, cache,
                                FunctionContextConfig(epochs=0, fp32_share=0.0, init_from_body_head=True))
    head = with_body.function_context_head
    assert head is not None
    assert torch.equal(head.proj[0].weight, with_body.body_head.proj[0].weight)
    assert torch.equal(head.layers[0].qkv.weight, with_body.body_head.layers[0].qkv.weight)
    assert head.classifier.weight.shape[0] == len(FUNCTIONS)  # its own classifier, one row per function


def test_heads_from_several_seeds_are_read_as_the_mean_of_their_log_probabilities(net, tmp_path) -> None:
    import copy

    from models.training.function_context import (
        FunctionContextConfig,
        context_accuracy,
        train_function_context_head,
    )
    from models.training.net import HeadEnsemble, head_members

    cache, windows = _cached_windows(tmp_path, seed=2, count=80)
    trained = copy.deepcopy(net)
    result = train_function_context_head(trained, windows[:60], windows[60:], cache,
                                         FunctionContextConfig(epochs=2, lr=3e-3, batch_windows=16, members=3,
                                                               fp32_share=0.0, feature_noise=0.0))
    ensemble = trained.function_context_head
    assert isinstance(ensemble, HeadEnsemble) and head_members(ensemble) == 3
    first, second = (member.classifier.weight for member in list(ensemble.members)[:2])
    assert not torch.equal(first, second)  # each member from its own seed
    assert {row["member"] for row in result.history} == {0, 1, 2}
    assert result.best_dev == pytest.approx(context_accuracy(trained, windows[60:], cache))
    pooled = torch.randn(1, 3, HIDDEN)
    kinds, lengths = torch.zeros(1, 3, dtype=torch.long), torch.tensor([3])
    with torch.no_grad():
        expected = torch.stack([member(pooled, kinds, lengths, None).log_softmax(-1)
                                for member in ensemble.members]).mean(0)
        assert torch.allclose(ensemble(pooled, kinds, lengths, None), expected)
    with pytest.raises(ValueError):
        HeadEnsemble([ensemble.members[0]])


@pytest.mark.parametrize("members", [1, 2])
def test_a_contextual_head_survives_checkpoint_export_read_back_and_the_runtime(net, tmp_path,
                                                                                members) -> None:
    import copy

    import onnxruntime as ort

    from models.training.base import resolve_base_dir
    from models.training.checkpoint import load_checkpoint, save_checkpoint
    from models.training.export import ExportOptions, export_bundle
    from models.training.from_bundle import net_from_bundle
    from models.training.net import head_members, section_index

    with_head = copy.deepcopy(net)
    with_head.enable_function_context_head(members)
    assert with_head.function_context_head is not None
    with torch.no_grad():  # as after training: no two weights equal (the exporter merges equal ones)
        for param in [*with_head.head.parameters(), *with_head.function_context_head.parameters()]:
            param.add_(torch.randn_like(param) * 0.05)
    base = resolve_base_dir(None)
    save_checkpoint(tmp_path / "best.pt", with_head, base, {"function_context": {"test": True}})
    loaded, _, meta = load_checkpoint(tmp_path / "best.pt")
    assert loaded.function_context_head is not None and meta["function_context"] == {"test": True}
    documents = [["We study parsing.", "We train a model.", "It works well."]] * 4
    manifest = export_bundle(loaded, base, tmp_path / "bundle",
                             ExportOptions(parity_sentences=12, function_context={"test": True},
                                           enforce_parity=False), documents)
    assert manifest.context["functions"]["context_head"]["test"] is True
    assert manifest.context["functions"]["context_head"]["members"] == members
    assert head_members(loaded.function_context_head) == members
    back, _ = net_from_bundle(tmp_path / "bundle")
    assert head_members(back.function_context_head) == members
    assert back.function_context_head is not None
    for key, value in loaded.function_context_head.state_dict().items():
        assert torch.allclose(back.function_context_head.state_dict()[key], value, atol=2e-3), key
    session = ort.InferenceSession(str(tmp_path / "bundle" / "roles.onnx"),
                                   providers=["CPUExecutionProvider"])
    pooled = np.random.default_rng(1).normal(size=(2, HIDDEN)).astype(np.float32)
    kinds = np.array([section_index("discussion"), section_index("method")], dtype=np.int64)
    roles, functions = session.run(["role_logits", "function_context_logits"],
                                   {"pooled": pooled, "section_kind": kinds})
    with torch.no_grad():
        reference = loaded.function_context_head(torch.from_numpy(pooled)[None],
                                                 torch.from_numpy(kinds)[None], torch.tensor([2]),
                                                 None)[0].numpy()
    assert roles.shape == (2, 6) and functions.shape == (2, len(FUNCTIONS))
    assert np.abs(functions - reference).max() < 0.5  # int8 role graph

    from models.encoder import load_model

    model = load_model(tmp_path / "bundle", device="cpu", threads=1)
    assert model.has_function_context
    encoding = model.encode_documents([(["One limitation is the sample.", "It is small."], "discussion")])[0]
    assert encoding.function_context_probabilities is not None
    assert encoding.function_context_probabilities.shape == (2, len(FUNCTIONS))
    assert np.allclose(encoding.function_context_probabilities.sum(-1), 1.0, atol=1e-5)
    # a bundle without the head: no second output, nothing to mix
    plain = export_bundle(copy.deepcopy(net), base, tmp_path / "plain",
                          ExportOptions(parity_sentences=12, enforce_parity=False), documents)
    assert "context_head" not in plain.context["functions"]
    assert not load_model(tmp_path / "plain", device="cpu", threads=1).has_function_context


def test_a_saved_member_count_is_checked() -> None:
    from models.training.net import MAX_MEMBERS, member_count

    assert member_count(True) == 1 and member_count(3) == 3 and member_count(MAX_MEMBERS) == MAX_MEMBERS
    for bad in (0, MAX_MEMBERS + 1, 10**9, "3", 2.0, None, False):
        with pytest.raises(ValueError):
            member_count(bad)
