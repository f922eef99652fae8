"""Content fork: frozen copies of the base's top layers make the content view the base embedding exactly,
while the role/function branch trains; the fork survives checkpoint, export and read-back."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.conftest import shared_path, write_function_training_files  # noqa: E402

pytestmark = [pytest.mark.shared, pytest.mark.slow]

SENTENCES = ["We propose a new parser for scientific text.", "Results show that the parser is accurate.",
             "In future work we will study other domains.", "Little is known about citation intent.",
             "We trained the model for three epochs on one GPU with a batch size of 32 sentences."]


def _batch(tokenizer, texts):
    from models.encoder import pad_batch

    ids, mask = pad_batch([e.ids for e in tokenizer.encode_batch(texts)], 0)
    return torch.from_numpy(ids), torch.from_numpy(mask)


@pytest.fixture(scope="module")
def fork_run(tmp_path_factory):
    from models.training.trainer import TrainConfig, train

    tmp = tmp_path_factory.mktemp("fork")
    functions = ["proposal", "main-finding", "future-work", "gap-neglected", "proposal"]
    labels, _ = write_function_training_files(tmp, list(zip(SENTENCES, functions)))
    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=["gold-papers:dev"], out=str(tmp / "work"),
                      max_steps=4,
                      epochs=3, batch_size=24, max_length=32, threads=2, log_every=1, lr_encoder=1e-3,
                      function_data=[str(labels)], function_dev="gold:dev", function_dim=32, content_fork=2)
    return train(cfg), tmp


def test_fork_keeps_the_base_embedding_exactly_and_trains_the_branch(fork_run):
    from models.training.base import load_tokenizer
    from models.training.checkpoint import build_net, load_checkpoint
    from models.training.net import bert_layers

    result, _ = fork_run
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    base, _ = build_net(base_dir)
    assert net.content_fork == 2 and net.content_layers is not None
    ids, mask = _batch(load_tokenizer(base_dir, 32), SENTENCES)
    net.eval()
    base.eval()
    with torch.no_grad():
        branch, content = net.pooled_views(ids, mask)
        reference = base.pooled(ids, mask)
    assert content is not None
    assert torch.allclose(content, reference, atol=1e-5)  # the content view is the base's
    assert not torch.allclose(branch, reference, atol=1e-3)  # the branch has trained
    # Frozen: the embeddings and the shared lower layers are the base's; the top layers moved.
    trained, untrained = bert_layers(net.encoder), bert_layers(base.encoder)
    for low, ref in zip(trained[:4], untrained[:4]):
        assert all(torch.equal(a, b) for a, b in zip(low.parameters(), ref.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(trained[5].parameters(), untrained[5].parameters()))


def test_fork_exports_and_reads_back(fork_run, tmp_path):
    from models import load_model
    from models.training.base import load_tokenizer
    from models.training.checkpoint import build_net, load_checkpoint
    from models.training.export import ExportOptions, export_bundle
    from models.training.from_bundle import net_from_bundle

    result, _ = fork_run
    net, base_dir, meta = load_checkpoint(result.checkpoint)
    options = ExportOptions(name="tiny-fork", max_length=32, quantize=False, parity_sentences=5,
                            trained_section_kinds=meta["trained_section_kinds"])
    manifest = export_bundle(net, base_dir, tmp_path / "bundle", options, [SENTENCES])
    assert manifest.context["content_fork"]["layers"] == 2
    assert manifest.context["graphs"]["content"] == "content.onnx" and "content.onnx" in manifest.files
    assert manifest.context["parity"]["fp32"]["mean_cosine"] > 0.9999  # the content view, via its graph
    model = load_model(tmp_path / "bundle")
    assert model.content_session is not None
    assert "fork_states" in {o.name for o in model.session.get_outputs()}
    # Labelling without embeddings skips the content graph and gives the same labels.
    documents = [(SENTENCES[:3], "introduction"), (SENTENCES[3:], None)]
    full = model.encode_documents(documents)
    fast = model.encode_documents(documents, with_embeddings=False)
    for a, b in zip(full, fast, strict=True):
        assert np.allclose(a.probabilities, b.probabilities, atol=1e-6)
        assert not b.embeddings.any() and np.allclose(np.linalg.norm(a.embeddings, axis=-1), 1.0, atol=1e-4)
    base, _ = build_net(base_dir)
    base.eval()
    ids, mask = _batch(load_tokenizer(base_dir, 32), SENTENCES)
    with torch.no_grad():
        reference = torch.nn.functional.normalize(base.pooled(ids, mask), dim=-1).numpy()
    assert np.allclose(model.embed(SENTENCES, view="content"), reference, atol=1e-4)
    rebuilt, _ = net_from_bundle(tmp_path / "bundle")
    assert rebuilt.content_fork == 2
    rebuilt.eval()
    net.eval()
    with torch.no_grad():
        assert torch.allclose(rebuilt.pooled_views(ids, mask)[0], net.pooled_views(ids, mask)[0], atol=1e-4)


def test_a_trained_encoder_forks_at_its_embeddings_with_the_base_layers() -> None:
    """From a trained net (here: a fresh one whose layers were changed) the fork takes every layer:
    the content view is the base's, the branch keeps the trained encoder; a partial fork is refused."""
    from models.training.base import load_encoder, load_tokenizer
    from models.training.checkpoint import build_net

    trained, base_dir = build_net(None)
    base, _ = build_net(base_dir)
    with torch.no_grad():
        for param in trained.encoder.parameters():
            param.add_(0.01 * torch.randn_like(param))
    trained.eval()
    base.eval()
    ids, mask = _batch(load_tokenizer(base_dir, 32), SENTENCES)
    with torch.no_grad():
        before = trained.pooled(ids, mask)
        with pytest.raises(ValueError, match="only fork at its embeddings"):
            trained.enable_content_fork(3, load_encoder(base_dir))
        trained.enable_content_fork(6, load_encoder(base_dir))
        trained.eval()
        branch, content = trained.pooled_views(ids, mask)
        reference = base.pooled(ids, mask)
    assert torch.allclose(content, reference, atol=1e-5)
    # The branch is the trained encoder on the base's embeddings (which role training never changes).
    assert torch.nn.functional.cosine_similarity(branch, before).min() > 0.95
    assert not torch.allclose(branch, reference, atol=1e-3)


def test_fork_refusals_and_a_frozen_encoder(fork_run):
    from core.errors import ModelError
    from models.training.checkpoint import load_checkpoint
    from models.training.trainer import TrainConfig, train

    result, tmp = fork_run
    cfg = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[], out=str(tmp / "again"), max_steps=1,
                      init=str(result.checkpoint), content_fork=3)
    with pytest.raises(ModelError, match="fork of 2 layers already"):
        train(cfg)
    frozen = TrainConfig(data=[f"jsonl:{tmp / 'train.jsonl'}"], dev=[], out=str(tmp / "frozen"), max_steps=2,
                         init=str(result.checkpoint), freeze_encoder=True, lr_head=1e-2, threads=2,
                         max_length=32, batch_size=24)
    after = train(frozen)
    start, _, _ = load_checkpoint(result.checkpoint)
    end, _, _ = load_checkpoint(after.checkpoint)
    assert all(torch.equal(a, b) for a, b in zip(start.encoder.parameters(), end.encoder.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(start.head.parameters(), end.head.parameters()))


def test_dev_scores_only_the_gold_sentences_of_whole_sections(fork_run):
    """``gold-papers:dev`` feeds whole sections but scores only the hand-labelled sentences."""
    from models.datasets.gold import UNLABELLED
    from models.roles import ROLES
    from models.training.base import load_tokenizer
    from models.training.checkpoint import load_checkpoint
    from models.training.trainer import evaluate_dev, load_corpora, predict_documents

    result, _ = fork_run
    assert "gold-papers:dev" in result.history[-1]["dev_f1_micro"]
    net, base_dir, _ = load_checkpoint(result.checkpoint)
    corpus = load_corpora(["gold-papers:dev"], load_tokenizer(base_dir, 32), shared_path())
    documents = corpus["gold-papers:dev"]
    probs, _ = predict_documents(net, documents, torch.device("cpu"))
    pairs = [(label, ROLES[int(p.argmax())]) for d, doc_probs in zip(documents, probs)
             for label, p in zip(d.doc.labels, doc_probs) if label != UNLABELLED]
    assert len(pairs) < sum(len(d.doc) for d in documents)
    accuracy = sum(gold == predicted for gold, predicted in pairs) / len(pairs)
    score = evaluate_dev(net, corpus, torch.device("cpu")).scores["gold-papers:dev"]
    assert score == pytest.approx(accuracy)
