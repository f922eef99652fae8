"""Parity of an exported graph pair (models.training.export) with the torch model it came from,
on real sentences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.errors import DatasetError
from models.encoder import pad_batch, softmax
from models.training.graphs import GraphPair, graph_outputs, sentence_graph_outputs
from models.training.net import SECTION_KINDS, UNKNOWN_SECTION, RhetoricaNet, is_body_section


def _adapter_agreement(adapter: torch.nn.Module, reference: tuple[np.ndarray, np.ndarray],
                       exported: tuple[np.ndarray, np.ndarray]) -> float:
    with torch.no_grad():
        ref = adapter(*(torch.from_numpy(x).float() for x in reference)).argmax(-1)
        got = adapter(*(torch.from_numpy(x).float() for x in exported)).argmax(-1)
    return float((ref == got).float().mean())


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def _compare(ref_e: np.ndarray, e: np.ndarray, ref_l: np.ndarray, lg: np.ndarray,
             labels: str) -> dict[str, float]:
    """Cosine of embeddings and argmax agreement of logits, torch reference vs graph."""
    cos = (ref_e * e).sum(-1) / (np.linalg.norm(ref_e, axis=-1) * np.linalg.norm(e, axis=-1))
    agreement = f"{labels}_agreement" if labels else "agreement"
    return {
        "mean_cosine": round(float(cos.mean()), 5),
        "min_cosine": round(float(cos.min()), 5),
        agreement: round(float((ref_l.argmax(-1) == lg.argmax(-1)).mean()), 5),
        "max_abs_logit_diff": round(float(np.abs(ref_l - lg).max()), 5),
    }


def _shown_labels(logits: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(label [n], top-3 [n, 3]) as the app shows them: the best function, or "none" (-1) when its
    probability is below ``threshold``, and the three best candidates."""
    probabilities = softmax(logits)
    labels = np.where(probabilities.max(-1) >= threshold, probabilities.argmax(-1), -1)
    return labels, np.argsort(-probabilities, axis=-1)[:, :3]


def _label_agreement(ref_logits: np.ndarray, logits: np.ndarray, threshold: float) -> float:
    """Agreement of the function label a user sees: the best function, or "none" when its
    probability is below ``threshold``."""
    return float((_shown_labels(ref_logits, threshold)[0] == _shown_labels(logits, threshold)[0]).mean())


def _top3_agreement(ref_logits: np.ndarray, logits: np.ndarray) -> float:
    """How often the reference's best function is among the graph's three best, which the
    inspector shows with their probabilities (as the label and two runners-up, or as the best guess
    under a "none" whose probability sits at the threshold: that decision's flips are counted by
    :func:`_label_agreement`)."""
    ref = ref_logits.argmax(-1)
    top3 = np.argsort(-logits, axis=-1)[:, :3]
    return float((top3 == ref[:, None]).any(-1).mean())


def parity_check(net: RhetoricaNet, tokenizer_path: Path, graphs: dict[str, GraphPair],
                 documents: list[list[str]], min_sentences: int = 200,
                 function_threshold: float | None = None) -> dict[str, Any]:
    """Run torch fp32 and each graph pair on the same documents, as the runtime does (the role
    graph reads the sentence graph's pooled vectors, a content graph its fork states); compare per
    sentence.

    Returns ``{"sentences": n, "documents": m, name: {"mean_cosine", "min_cosine", "role_agreement",
    "max_abs_logit_diff"[, "adapter_agreement": {dataset: agreement}]}}``.  Documents are used whole
    (with context) until ``min_sentences`` is reached; their section kind cycles through every kind
    the graph knows and "unknown", so a graph that is wrong for one section kind only is caught.
    """
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_padding()
    chosen: list[list[str]] = []
    total = 0
    for doc in documents:
        if total >= min_sentences:
            break
        chosen.append(doc)
        total += len(doc)
    if total == 0:
        raise DatasetError("the parity check needs sentences: its data has none")
    def session(path: Path) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, torch.get_num_threads())
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    sessions = {name: (session(pair.sentences), session(pair.roles),
                       session(pair.content) if pair.content is not None else None)
                for name, pair in graphs.items()}
    net = net.to("cpu").eval()
    names = list(graph_outputs(net))
    sentence_names = list(sentence_graph_outputs(net))
    reference: list[list[np.ndarray]] = [[] for _ in names]
    out: dict[str, list[list[np.ndarray]]] = {name: [[] for _ in names] for name in graphs}
    # A fork's adapters read the normalised pooled vector (net.adapter_input), not the embedding.
    ref_pooled: list[np.ndarray] = []
    out_pooled: dict[str, list[np.ndarray]] = {name: [] for name in graphs}
    kind_of_sentence: list[np.ndarray] = []
    for index, doc in enumerate(chosen):
        ids, mask = pad_batch([e.ids for e in tokenizer.encode_batch(doc)], 0)
        kind_value = index % (UNKNOWN_SECTION + 1)  # every section kind, then unknown
        section = np.full((len(doc),), kind_value, dtype=np.int64)
        kind_of_sentence.append(section)
        with torch.no_grad():
            torch_outputs = net(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(section))
        for slot, value in zip(reference, torch_outputs, strict=True):
            slot.append(value.numpy())
        if net.content_fork:
            with torch.no_grad():
                ref_pooled.append(net.pooled(torch.from_numpy(ids), torch.from_numpy(mask)).numpy())
        for name, (sentences, roles, content) in sessions.items():
            pooled, embedding, *functions = sentences.run(sentence_names, {"input_ids": ids,
                                                                           "attention_mask": mask})
            if content is not None:  # a content fork: the sentence graph gave the fork states
                (embedding,) = content.run(["sentence_embedding"], {"fork_states": embedding,
                                                                    "attention_mask": mask})
            (role_logits,) = roles.run(["role_logits"], {"pooled": pooled, "section_kind": section})
            out_pooled[name].append(pooled)
            for slot, value in zip(out[name], [embedding, role_logits, *functions], strict=True):
                slot.append(value)
    ref = [np.concatenate(x) for x in reference]
    ref_e, ref_l = ref[0], ref[1]
    result: dict[str, Any] = {"sentences": int(ref_e.shape[0]), "documents": len(chosen)}
    for name in graphs:
        mine = [np.concatenate(x) for x in out[name]]
        e, lg = mine[0], mine[1]
        result[name] = {**_compare(ref_e, e, ref_l, lg, "role")}
        kinds = np.concatenate(kind_of_sentence)
        names_of_kinds = [*SECTION_KINDS, "unknown"]
        same = ref_l.argmax(-1) == lg.argmax(-1)
        result[name]["role_agreement_by_kind"] = {names_of_kinds[k]: round(float(same[kinds == k].mean()), 5)
                                                  for k in sorted(set(kinds.tolist()))}
        if net.body_head is not None:  # each head on its own sentences (see export._passes)
            body = is_body_section(torch.from_numpy(kinds)).numpy()
            result[name]["role_agreement_role_head"] = round(float(
                (ref_l[~body].argmax(-1) == lg[~body].argmax(-1)).mean()), 5)
            result[name]["role_agreement_body_head"] = round(float(
                (ref_l[body].argmax(-1) == lg[body].argmax(-1)).mean()), 5)
            top2 = np.argsort(-lg[body], axis=-1)[:, :2]
            result[name]["role_top2_agreement_body_head"] = round(float(
                (top2 == ref_l[body].argmax(-1)[:, None]).any(-1).mean()), 5)
        if len(names) == 4:  # function_embedding, function_logits: gated like the others
            result[name].update({f"function_{k}": v for k, v in
                                 _compare(ref[2], mine[2], ref[3], mine[3], "").items()})
            if function_threshold is not None:  # what users see: the label after the "none" threshold
                result[name]["function_label_agreement"] = round(
                    _label_agreement(ref[3], mine[3], function_threshold), 5)
                result[name]["function_top3_agreement"] = round(_top3_agreement(ref[3], mine[3]), 5)
        if net.adapters:  # informational: label adapters read the graph's two outputs
            ref_in, graph_in = ref_e, e
            if net.content_fork:
                ref_in = _unit(np.concatenate(ref_pooled))
                graph_in = _unit(np.concatenate(out_pooled[name]))
            result[name]["adapter_agreement"] = {
                key: round(_adapter_agreement(adapter, (ref_in, ref_l), (graph_in, lg)), 5)
                for key, adapter in net.adapter_items()}
    return result
