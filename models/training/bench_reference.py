"""The torch side of ``rhetorica bench encode`` and ``rhetorica bench gemm``.

The benches compare the shipped onnxruntime encoder with plain torch fp32 doing the same work;
torch is imported only in ``models.training``, so the reference lives here and the bench
commands call these functions in their worker processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from transformers import AutoModel

from models.bundle import read_manifest
from models.encoder import load_tokenizer, pad_batch
from models.training.net import hf_config


@dataclass
class TorchEncoder:
    """A torch fp32 sentence encoder with the bundle's tokenizer and mean pooling."""

    model: torch.nn.Module
    tokenizer: Tokenizer
    pad_id: int
    hidden_size: int
    load_seconds: float

    def embed(self, texts: Sequence[str], batch_size: int = 32, sort: bool = True) -> np.ndarray:
        """(n, d) L2-normalised mean-pooled embeddings; ``sort``: length-sorted batches."""
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        order = np.argsort([len(x) for x in ids], kind="stable") if sort else np.arange(len(ids))
        out = np.zeros((len(ids), self.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(ids), batch_size):
                chosen = order[start : start + batch_size]
                input_ids, mask = pad_batch([ids[i] for i in chosen], self.pad_id)
                input_ids_t, mask_t = torch.from_numpy(input_ids), torch.from_numpy(mask)
                hidden = self.model(input_ids=input_ids_t, attention_mask=mask_t).last_hidden_state
                m = mask_t.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
                out[chosen] = F.normalize(pooled, dim=-1).numpy()
        return out


def load_torch_encoder(model_dir: str | Path, bundle: str | Path, threads: int, *,
                       checkpoint: bool = False) -> TorchEncoder:
    """The encoder of ``model_dir`` (a Hugging Face folder, or a training checkpoint when
    ``checkpoint``) with the tokenizer of ``bundle``, on ``threads`` CPU threads."""
    torch.set_num_threads(threads)
    manifest = read_manifest(bundle)
    tokenizer, pad_id = load_tokenizer(Path(bundle) / "tokenizer.json", int(manifest.max_length))
    started = time.perf_counter()
    if checkpoint:  # a training checkpoint: its encoder holds the bundle's weights
        from models.training.checkpoint import load_checkpoint

        model = load_checkpoint(model_dir)[0].encoder.float().eval()
    else:
        model = AutoModel.from_pretrained(str(model_dir), dtype=torch.float32, local_files_only=True).eval()
    return TorchEncoder(model, tokenizer, pad_id, int(hf_config(model).hidden_size),
                        time.perf_counter() - started)


def torch_linear_calls(rows: int, threads: int,
                       shapes: Sequence[tuple[int, int]]) -> list[Callable[[], None]]:
    """One call per (k, n) shape: ``F.linear`` of a (rows, k) input by an (n, k) weight, fp32."""
    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    calls: list[Callable[[], None]] = []
    for k, n in shapes:
        x = torch.randn(rows, k, generator=generator)
        w = torch.randn(n, k, generator=generator) * 0.05
        b = torch.randn(n, generator=generator)

        def call(x: torch.Tensor = x, w: torch.Tensor = w, b: torch.Tensor = b) -> None:
            with torch.no_grad():
                F.linear(x, w, b)

        calls.append(call)
    return calls


def torch_version() -> str:
    return str(torch.__version__)
