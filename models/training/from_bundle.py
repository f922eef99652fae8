"""Rebuild a trainable torch net from a shipped model bundle (its ONNX graph's weights).

Bundles ship ONNX only (int8 per-channel for most MatMuls), so a user who wants to fine-tune the
model they have, or a new training recipe that starts where the shipped model is, would otherwise
begin at the untrained base. :func:`net_from_bundle` reads every weight back out of ``model.onnx``
(and, in a two-graph bundle, the role head's out of ``roles.onnx``):
fp32 initialisers by name, int8 MatMul weights dequantised (``(q - zero_point) * scale`` per output
channel) and mapped to their ``nn.Linear`` by the MatMul node's name, int8 embedding tables likewise.
The quantisation error stays in the weights (the shipped graph's own parity figures bound it);
training on from there recovers fp32 precision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from core.errors import ModelError
from models.training.checkpoint import build_net
from models.training.net import FunctionConfig, HeadConfig, RhetoricaNet, member_count


def _dequantise(values: dict[str, np.ndarray], stem: str) -> np.ndarray:
    q = values[f"{stem}_quantized"].astype(np.float32)
    return (q - values[f"{stem}_zero_point"].astype(np.float32)) * values[f"{stem}_scale"].astype(np.float32)


def _module_of(node_name: str) -> str:
    """The module path of a MatMul node: "/encoder/encoder/layer.0/attention/self/query/MatMul_quant"
    -> "encoder.encoder.layer.0.attention.self.query" (and "/layer.0/..." of a content-fork graph,
    whose layers are called one by one, likewise); an ``nn.Sequential`` child is scoped as
    "proj/proj.0" by the exporter -> "proj.0"."""
    parts: list[str] = []
    for part in node_name.strip("/").split("/")[:-1]:
        head, _, tail = part.partition(".")
        if parts and tail and head == parts[-1]:
            parts.append(tail)
        else:
            parts.append(part)
    path = ".".join(parts)
    # A content-fork graph calls the encoder's layers one by one, so their scopes lose the prefix.
    if path.startswith("layer."):
        return f"encoder.encoder.{path}"
    if path.startswith("embeddings."):
        return f"encoder.{path}"
    return path


def bundle_weights(model_path: Path) -> dict[str, np.ndarray]:
    """State-dict-named float32 arrays of every weight in an exported (possibly int8) graph."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_path)).graph
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    weights: dict[str, np.ndarray] = {k: v.astype(np.float32) for k, v in values.items()
                                      if not k.startswith("onnx::") and not k.endswith(
                                          ("_scale", "_zero_point", "_quantized"))}
    for stem in {k[: -len("_quantized")] for k in values if k.endswith("_quantized")}:
        if not stem.startswith("onnx::"):  # an embedding table quantised per tensor
            weights[f"{stem}"] = _dequantise(values, stem)
    for node in graph.node:
        matrix = None
        if node.op_type == "MatMulInteger":
            stem = node.input[1][: -len("_quantized")]
            matrix = _dequantise(values, stem)
        elif node.op_type == "MatMul" and node.input[1] in values:
            matrix = values[node.input[1]].astype(np.float32)
        if matrix is not None:
            weights[f"{_module_of(node.name)}.weight"] = matrix.T.copy()  # [in, out] -> Linear [out, in]
    return weights


def _function_config(functions: dict[str, object]) -> FunctionConfig | None:
    """The function head's config from a manifest's ``context.functions`` (None without one)."""
    if not functions:
        return None
    head = dict(functions.get("head", {}))  # type: ignore[call-overload]
    return FunctionConfig(list(functions.get("ids", [])), int(functions.get("embedding_dim", 128)),  # type: ignore[call-overload]
                          float(head.get("scale", 16.0)), str(functions.get("taxonomy", "")))


def net_from_bundle(bundle_dir: str | Path, base: str | Path | None = None) -> tuple[RhetoricaNet, Path]:
    """A :class:`RhetoricaNet` holding a bundle's encoder, role head, label adapters and, when it
    has them, its content and function heads."""
    bundle = Path(bundle_dir)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    context = manifest.get("context", {})
    head = dict(context.get("head", {}))
    config = HeadConfig(**{k: head[k] for k in ("dim", "layers", "heads", "ffn", "dropout", "num_labels")
                           if k in head})
    fork = int(dict(context.get("content_fork", {})).get("layers", 0))
    net, base_dir = build_net(base, config, _function_config(dict(context.get("functions", {}))), fork)
    try:
        if context.get("body_head"):
            net.enable_body_head(member_count(dict(context["body_head"]).get("members", 1)))
        context_head = dict(dict(context.get("functions", {})).get("context_head", {}))
        if context_head:
            net.enable_function_context_head(member_count(context_head.get("members", 1)))
    except (TypeError, ValueError) as error:
        raise ModelError(f"{bundle}: its manifest describes its heads wrongly ({error})") from None
    weights = bundle_weights(bundle / "model.onnx")
    role_graph = manifest.get("context", {}).get("graphs", {}).get("roles")
    if role_graph:  # a two-graph bundle: the role head's weights are in the role graph
        weights |= bundle_weights(bundle / str(role_graph))
    content_graph = manifest.get("context", {}).get("graphs", {}).get("content")
    if content_graph:  # a content fork: its frozen layers are in the content graph
        weights |= bundle_weights(bundle / str(content_graph))
    state = net.state_dict()
    skipped = ("adapters.", "encoder.pooler.")  # not in the graph
    wanted = [k for k in state if not k.startswith(skipped) and not k.endswith("position_ids")]
    missing = [k for k in wanted if k not in weights]
    if missing:
        raise ModelError(f"{bundle}: model.onnx lacks {len(missing)} weights the net needs "
                         f"(e.g. {missing[0]}); is it a Rhetorica bundle?")
    for key in wanted:
        if tuple(weights[key].shape) != tuple(state[key].shape):
            raise ModelError(f"{bundle}: weight {key} has shape {weights[key].shape}, "
                             f"the net expects {tuple(state[key].shape)}")
        state[key] = torch.from_numpy(weights[key])
    net.load_state_dict(state)
    _restore_adapters(net, bundle, dict(context.get("adapters", {})))
    return net, base_dir


def _restore_adapters(net: RhetoricaNet, bundle: Path, described: dict[str, object]) -> None:
    """The bundle's label adapters as trainable torch adapters (their prior shift stays folded into
    the bias, so the shift itself is zero)."""
    from models.adapters import load_adapters

    for name, adapter in load_adapters(bundle, described).items():
        module = net.add_adapter(name, list(adapter.labels))
        if tuple(module.linear.weight.shape) != adapter.weight.shape:
            raise ModelError(f"{bundle}: label adapter {name!r} has shape {adapter.weight.shape}, "
                             f"the net expects {tuple(module.linear.weight.shape)}")
        with torch.no_grad():
            module.linear.weight.copy_(torch.from_numpy(adapter.weight))
            module.linear.bias.copy_(torch.from_numpy(adapter.bias))
