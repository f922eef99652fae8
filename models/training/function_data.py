"""Function supervision for training: distant labels as documents, gold dev, content targets.

- :func:`read_function_labels` turns the JSON Lines of ``rhetorica data functions`` into single-
  sentence documents and their function indices. By default every role is allowed (no role
  supervision); with ``function_roles`` each sentence also gets the role its function belongs to,
  with its real section kind: role supervision for body sections, which the role datasets
  (abstracts) never give.
- :func:`function_dev_set` is the hand-labelled gold dev split's sentences with a function, for
  model selection (the gold test split is never read here).
- :func:`attach_content_targets` runs the frozen base encoder once over every training sentence:
  the targets that keep the content view close to the base model (distillation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from core.errors import DatasetError
from core.labels import ROLES
from models.datasets import LabelledDocument
from models.encoder import pad_batch
from models.training.batching import EncodedDocument
from models.training.net import mean_pool

NO_ROLE_LABEL = "function-only"


def read_function_labels(paths: Sequence[str | Path], function_ids: Sequence[str],
                         function_roles: Mapping[str, str] | None = None
                         ) -> tuple[list[LabelledDocument], list[int]]:
    """One single-sentence document per labelled line, and its function index.

    ``function_roles`` (function id -> role): label each sentence with its function's role;
    without it every role is allowed (the sentence trains the function head only)."""
    index = {f: i for i, f in enumerate(function_ids)}
    docs: list[LabelledDocument] = []
    functions: list[int] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: function labels not found "
                               "(write them with 'rhetorica data functions')")
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    text, function = str(row["text"]), str(row["function"])
                except (ValueError, KeyError) as error:
                    raise DatasetError(f"{path}:{number}: not a function-label line ({error})") from None
                if function not in index:
                    raise DatasetError(f"{path}:{number}: function {function!r} is not in the model's "
                                       "taxonomy")
                role = function_roles.get(function) if function_roles else None
                supervised = role is not None and role in ROLES
                label = str(role) if supervised else NO_ROLE_LABEL
                allowed = frozenset({label}) if supervised else frozenset(ROLES)
                docs.append(LabelledDocument(f"{path.stem}-{number}", [text], [label], [allowed],
                                             [str(row.get("section_kind", "unknown"))]))
                functions.append(index[function])
    return docs, functions


def attach_functions(corpus: list[EncodedDocument], functions: Sequence[int]) -> None:
    """Give each single-sentence document its function index (in place)."""
    if len(corpus) != len(functions):
        raise ValueError(f"{len(functions)} function labels for {len(corpus)} documents")
    for doc, function in zip(corpus, functions, strict=True):
        doc.functions = torch.full((len(doc.doc),), function, dtype=torch.long)


def function_dev_set(function_ids: Sequence[str], split: str = "dev") -> tuple[list[str], list[int]]:
    """Texts and function indices of the gold split's sentences that have a function."""
    from core.paths import shared_dir
    from models.datasets import refuse_test_split
    from models.datasets.gold import load_gold

    refuse_test_split(f"gold:{split}", "model selection on functions")
    index = {f: i for i, f in enumerate(function_ids)}
    items = [g for g in load_gold(split, shared_dir() / "pdfs") if g.function in index]
    return [g.text for g in items], [index[g.function] for g in items]


@torch.no_grad()
def base_embeddings(encoder: torch.nn.Module, token_ids: list[list[int]], device: torch.device,
                    batch_size: int = 128) -> torch.Tensor:
    """L2-normalised mean-pooled embeddings [n, h] of the (frozen) ``encoder``, length-sorted batches."""
    encoder.eval()
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    out: torch.Tensor | None = None
    for start in range(0, len(order), batch_size):
        chosen = order[start: start + batch_size]
        ids, mask = pad_batch([token_ids[i] for i in chosen], 0)
        ids_t, mask_t = torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)
        pooled = mean_pool(encoder(input_ids=ids_t, attention_mask=mask_t).last_hidden_state, mask_t)
        vectors = torch.nn.functional.normalize(pooled.float(), dim=-1).cpu()
        if out is None:
            out = torch.zeros(len(token_ids), vectors.shape[1])
        out[torch.tensor(chosen)] = vectors
    return out if out is not None else torch.zeros(0, 0)


def attach_content_targets(corpus: list[EncodedDocument], encoder: torch.nn.Module,
                           device: torch.device) -> None:
    """Store the frozen base encoder's embedding of every sentence on its document (in place)."""
    flat = [ids for doc in corpus for ids in doc.token_ids]
    targets = base_embeddings(encoder, flat, device)
    cursor = 0
    for doc in corpus:
        n = len(doc.token_ids)
        doc.content_target = targets[cursor: cursor + n]
        cursor += n
