"""A tiny but complete model bundle for fast tests, plus a numpy reference of its graph.

The ONNX graph has exactly the bundle interface (docs/architecture.md): inputs
``input_ids`` [n, L], ``attention_mask`` [n, L], ``section_kind`` [n] (int64);
outputs ``sentence_embedding`` [n, d] (masked mean pooling, L2-normalised) and
``role_logits`` [n, C].  Its role head looks at the previous and next sentence of
the document (a width-3 convolution over sentences) and at the section kind, so
tests can check that documents are fed in order and that windowing keeps context.
The tokenizer is a word-level ``tokenizers`` file; its saved padding is fixed at 128
like the real MiniLM tokenizer's, which the loader must override.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.bundle import Manifest, write_manifest
from models.roles import ROLES

_TEXT = (
    "we propose a new method for parsing scientific text results show that it works "
    "well previous work has studied this problem our goal is to improve accuracy "
    "experiments on two datasets demonstrate large gains in conclusion the approach "
    "is simple and fast"
)
WORDS = tuple(dict.fromkeys(_TEXT.split()))
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
DIM = 8
FUNCTION_DIM = 4
FUNCTIONS = ("aim", "proposal", "main-finding", "gap-prior-shortcoming", "future-work")  # taxonomy ids
SECTION_KINDS = ("abstract", "introduction", "related-work", "method", "result", "discussion",
                 "conclusion", "other")


def weights(seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    vocab = len(SPECIALS) + len(WORDS)
    c = len(ROLES)
    return {
        "E": rng.normal(size=(vocab, DIM)).astype(np.float32),
        "W0": rng.normal(size=(DIM, c)).astype(np.float32),
        "W1": rng.normal(size=(DIM, c)).astype(np.float32),  # previous sentence
        "W2": rng.normal(size=(DIM, c)).astype(np.float32),  # next sentence
        "K": rng.normal(size=(len(SECTION_KINDS) + 1, c)).astype(np.float32),  # + unknown
        "FE": rng.normal(size=(DIM, FUNCTION_DIM)).astype(np.float32),  # function embedding projection
        "FC": rng.normal(size=(FUNCTION_DIM, len(FUNCTIONS))).astype(np.float32),  # function logits
    }


def build_onnx(path: Path, w: dict[str, np.ndarray], functions: bool = False) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: np.ndarray) -> onnx.TensorProto:
        return numpy_helper.from_array(value, name)

    int_max = np.iinfo(np.int64).max
    inits = [
        const("E", w["E"]), const("W0", w["W0"]), const("W1", w["W1"]), const("W2", w["W2"]),
        const("K", w["K"]),
        const("axis1", np.array([1], dtype=np.int64)),
        const("axis2", np.array([2], dtype=np.int64)),
        const("eps", np.array(1e-9, dtype=np.float32)),
        const("pads_top", np.array([1, 0, 0, 0], dtype=np.int64)),
        const("pads_bottom", np.array([0, 0, 1, 0], dtype=np.int64)),
        const("zero", np.array([0], dtype=np.int64)),
        const("one", np.array([1], dtype=np.int64)),
        const("minus_one", np.array([-1], dtype=np.int64)),
        const("int_max", np.array([int_max], dtype=np.int64)),
    ]
    node = helper.make_node
    nodes = [
        node("Gather", ["E", "input_ids"], ["tok"], axis=0),  # [n, L, d]
        node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["maskf", "axis2"], ["mask3"]),  # [n, L, 1]
        node("Mul", ["tok", "mask3"], ["masked"]),
        node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),  # [n, d]
        node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),  # [n, 1]
        node("Max", ["count", "eps"], ["count_safe"]),
        node("Div", ["summed", "count_safe"], ["pooled"]),
        node("LpNormalization", ["pooled"], ["sentence_embedding"], axis=1, p=2),
        node("Pad", ["sentence_embedding", "pads_top"], ["pad_top"]),
        node("Slice", ["pad_top", "zero", "minus_one", "zero"], ["prev"]),
        node("Pad", ["sentence_embedding", "pads_bottom"], ["pad_bottom"]),
        node("Slice", ["pad_bottom", "one", "int_max", "zero"], ["next"]),
        node("MatMul", ["sentence_embedding", "W0"], ["l0"]),
        node("MatMul", ["prev", "W1"], ["l1"]),
        node("MatMul", ["next", "W2"], ["l2"]),
        node("Gather", ["K", "section_kind"], ["lk"], axis=0),
        node("Add", ["l0", "l1"], ["a01"]),
        node("Add", ["a01", "l2"], ["a012"]),
        node("Add", ["a012", "lk"], ["role_logits"]),
    ]
    outputs = [
        helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["n", DIM]),
        helper.make_tensor_value_info("role_logits", TensorProto.FLOAT, ["n", len(ROLES)]),
    ]
    if functions:  # function_embedding = normalise(emb @ FE); function_logits = function_embedding @ FC
        inits += [const("FE", w["FE"]), const("FC", w["FC"])]
        nodes += [node("MatMul", ["sentence_embedding", "FE"], ["fe_raw"]),
                  node("LpNormalization", ["fe_raw"], ["function_embedding"], axis=1, p=2),
                  node("MatMul", ["function_embedding", "FC"], ["function_logits"])]
        value = helper.make_tensor_value_info
        outputs += [value("function_embedding", TensorProto.FLOAT, ["n", FUNCTION_DIM]),
                    value("function_logits", TensorProto.FLOAT, ["n", len(FUNCTIONS)])]
    graph = helper.make_graph(
        nodes, "tiny_rhetorica",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["n", "L"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["n", "L"]),
            helper.make_tensor_value_info("section_kind", TensorProto.INT64, ["n"]),
        ],
        outputs=outputs,
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def build_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    vocab = {token: i for i, token in enumerate((*SPECIALS, *WORDS))}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=128)  # like MiniLM's file
    tokenizer.enable_truncation(max_length=128)
    tokenizer.save(str(path))


def make_tiny_bundle(directory: Path, *, max_length: int = 12, window: int = 8, seed: int = 7,
                     functions: bool = False, function_threshold: float = 0.3) -> Path:
    """Write a complete bundle into ``directory`` and return it (``functions``: with the two function
    outputs and ``manifest.context["functions"]``, like bundles from 0.3 on)."""
    directory.mkdir(parents=True, exist_ok=True)
    w = weights(seed)
    build_onnx(directory / "model.onnx", w, functions)
    context: dict[str, object] = {"kind": "conv3", "window": window}
    if functions:
        context["functions"] = {"ids": list(FUNCTIONS), "taxonomy": "rhetorica-functions@test",
                                "embedding_dim": FUNCTION_DIM, "threshold": function_threshold,
                                "views": {"content": "sentence_embedding", "function": "function_embedding"}}
    build_tokenizer(directory / "tokenizer.json")
    manifest = Manifest(
        name="tiny-test", version="0.0.1", base_model="none (test fixture)", labels=list(ROLES),
        section_kinds=list(SECTION_KINDS), max_length=max_length, embedding_dim=DIM,
        context=context, quantization="none",
        training={"command": "tests/tiny_bundle.py", "seed": seed},
    )
    write_manifest(directory, manifest, made=True)
    return directory


# -- numpy reference of the graph ----------------------------------------------------------
def reference_ids(sentence: str, max_length: int) -> list[int]:
    vocab = {token: i for i, token in enumerate((*SPECIALS, *WORDS))}
    import re

    words = re.findall(r"\w+|[^\w\s]+", sentence.lower())
    ids = [2, *[vocab.get(x, 1) for x in words], 3]
    if len(ids) > max_length:  # truncation keeps [CLS] ... [SEP]
        ids = [*ids[: max_length - 1], 3]
    return ids


def reference_outputs(sentences: list[str], kinds: list[int], *, max_length: int = 12,
                      seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings, role_logits) of ONE document run as a whole, computed with numpy."""
    w = weights(seed)
    pooled = np.stack([w["E"][reference_ids(s, max_length)].mean(axis=0) for s in sentences])
    emb = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    zero = np.zeros((1, DIM), dtype=np.float32)
    prev = np.concatenate([zero, emb[:-1]])
    nxt = np.concatenate([emb[1:], zero])
    logits = emb @ w["W0"] + prev @ w["W1"] + nxt @ w["W2"] + w["K"][kinds]
    return emb.astype(np.float32), logits.astype(np.float32)


def reference_function_outputs(sentences: list[str], *, max_length: int = 12, seed: int = 7
                               ) -> tuple[np.ndarray, np.ndarray]:
    """(function_embedding, function_logits) of the sentences, computed with numpy."""
    w = weights(seed)
    emb, _ = reference_outputs(sentences, [0] * len(sentences), max_length=max_length, seed=seed)
    raw = emb @ w["FE"]
    function_embedding = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    return function_embedding.astype(np.float32), (function_embedding @ w["FC"]).astype(np.float32)
