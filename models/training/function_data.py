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

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from core.errors import DatasetError
from core.taxonomy.labels import ROLES
from models.datasets import LabelledDocument
from models.encoder import pad_batch
from models.training.batching import EncodedDocument
from models.training.function_labels import read_function_rows
from models.training.net import mean_pool

NO_ROLE_LABEL = "function-only"


def _role_label(row: dict[str, Any], function_roles: Mapping[str, str] | None) -> tuple[str, frozenset[str]]:
    """(label, allowed roles) of a function-labelled sentence: its function's role when
    ``function_roles`` knows one, else no role supervision (every role allowed)."""
    role = function_roles.get(row["function"]) if function_roles else None
    if role is not None and role in ROLES:
        return str(role), frozenset({str(role)})
    return NO_ROLE_LABEL, frozenset(ROLES)


def read_function_labels(paths: Sequence[str | Path], function_ids: Sequence[str],
                         function_roles: Mapping[str, str] | None = None
                         ) -> tuple[list[LabelledDocument], list[int]]:
    """One single-sentence document per labelled line, and its function index.

    ``function_roles`` (function id -> role): label each sentence with its function's role;
    without it every role is allowed (the sentence trains the function head only)."""
    index = {f: i for i, f in enumerate(function_ids)}
    docs: list[LabelledDocument] = []
    functions: list[int] = []
    for number, row in enumerate(read_function_rows(paths, function_ids), 1):
        label, allowed = _role_label(row, function_roles)
        docs.append(LabelledDocument(f"functions-{number}", [str(row["text"])], [label], [allowed],
                                     [str(row.get("section_kind", "unknown"))]))
        functions.append(index[row["function"]])
    return docs, functions


def attach_functions(corpus: list[EncodedDocument], functions: Sequence[int | Sequence[int]]) -> None:
    """Give each document its function indices (in place): one index for a single-sentence document,
    or one per sentence (-1 = a context sentence without a function label)."""
    if len(corpus) != len(functions):
        raise ValueError(f"{len(functions)} function labels for {len(corpus)} documents")
    for doc, function in zip(corpus, functions, strict=True):
        if isinstance(function, int):
            doc.functions = torch.full((len(doc.doc),), function, dtype=torch.long)
        else:
            if len(function) != len(doc.doc):
                raise ValueError(f"{len(function)} function labels for a {len(doc.doc)}-sentence document")
            doc.functions = torch.tensor(list(function), dtype=torch.long)


SourceSentences = Callable[[str], dict[str, list[tuple[str, str]]]]


def _source_sentences(source: str) -> dict[str, list[tuple[str, str]]]:
    """doc_id -> [(section kind, text)] in reading order, for one source of the labels."""
    from models.training.function_corpus import corpus_sentences

    name = "scitldr" if source.startswith("scitldr") else source
    documents: dict[str, list[tuple[str, str]]] = {}
    for sentence in corpus_sentences(name):
        documents.setdefault(sentence.doc_id, []).append((sentence.section_kind, sentence.text))
    return documents


def function_documents_in_context(rows: Sequence[dict[str, Any]], function_ids: Sequence[str],
                                  function_roles: Mapping[str, str] | None, window: int,
                                  sentences_of: SourceSentences = _source_sentences
                                  ) -> tuple[list[LabelledDocument], list[list[int]]]:
    """The labelled sentences with up to ``window`` neighbours on each side (same document, same
    section kind), so the role head sees them in a section as the app does. Neighbours carry no
    label (every role allowed, function -1); overlapping windows merge. A row whose sentence is not
    found in its source stays a single-sentence document; a sentence that occurs twice in one
    document is placed once (on v3: 8,175 of 8,198 rows placed, 5,462 documents, 38,111 sentences
    with window 3)."""
    index = {f: i for i, f in enumerate(function_ids)}
    by_doc: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_doc.setdefault((str(row.get("source", "")), str(row.get("doc_id", ""))), []).append(row)
    cache: dict[str, dict[str, list[tuple[str, str]]]] = {}
    docs: list[LabelledDocument] = []
    functions: list[list[int]] = []

    for (source, doc_id), doc_rows in by_doc.items():
        if source not in cache:
            try:
                cache[source] = sentences_of(source)
            except DatasetError:
                cache[source] = {}
        sentences = cache[source].get(doc_id, [])
        position: dict[str, int] = {}
        for i, (_, text) in enumerate(sentences):
            position.setdefault(text, i)
        found = {position[r["text"]]: r for r in doc_rows if r["text"] in position}
        for row in doc_rows:
            if row["text"] not in position:  # not found: alone, as without context
                label, allowed = _role_label(row, function_roles)
                docs.append(LabelledDocument(f"{source}-{doc_id}-{len(docs)}", [row["text"]], [label],
                                             [allowed], [str(row.get("section_kind", "unknown"))]))
                functions.append([index[row["function"]]])
        spans: list[list[int]] = []
        for i in sorted(found):
            kind = sentences[i][0]
            start, end = i, i + 1
            while start > 0 and i - start < window and sentences[start - 1][0] == kind:
                start -= 1
            while end < len(sentences) and end - 1 - i < window and sentences[end][0] == kind:
                end += 1
            if spans and start <= spans[-1][1] and sentences[spans[-1][0]][0] == kind:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        for start, end in spans:
            labels, allowed_sets, indices = [], [], []
            for i in range(start, end):
                if i in found:
                    label, allowed = _role_label(found[i], function_roles)
                    indices.append(index[found[i]["function"]])
                else:
                    label, allowed = NO_ROLE_LABEL, frozenset(ROLES)
                    indices.append(-1)
                labels.append(label)
                allowed_sets.append(allowed)
            docs.append(LabelledDocument(f"{source}-{doc_id}-{start}", [t for _, t in sentences[start:end]],
                                         labels, allowed_sets, [k for k, _ in sentences[start:end]]))
            functions.append(indices)
    return docs, functions


def annotated_split(spec: str, purpose: str, expected: str = "annotated:SPLIT") -> str:
    """The split of an ``annotated:SPLIT`` spec (``train`` when none is named), refusing a test split
    (``purpose`` says what the data is for) and any other dataset with one line."""
    from models.datasets import refuse_test_split

    refuse_test_split(spec, purpose)
    name, _, split = spec.partition(":")
    if name != "annotated":
        raise DatasetError(f"{purpose} {spec!r}: expected {expected}")
    return split or "train"


def annotated_function_documents(spec: str, function_ids: Sequence[str], path: Path | None = None
                                 ) -> tuple[list[LabelledDocument], list[list[int]]]:
    """The hand-annotated corpus (``annotated:train`` / ``annotated:dev``) as role-labelled section runs
    with each sentence's function index (-1 for ``none`` or a function the taxonomy no longer has):
    hand supervision for the encoder, both heads and the function head in one pass."""
    from models.datasets.annotated_corpus import annotated_runs, run_id

    split = annotated_split(spec, "function training data", "annotated:SPLIT or a JSON Lines file")
    index = {f: i for i, f in enumerate(function_ids)}
    docs: list[LabelledDocument] = []
    functions: list[list[int]] = []
    for run in annotated_runs(split, path=path):
        docs.append(LabelledDocument(run_id(run), [s.text for s in run], [s.role for s in run],
                                     [frozenset({s.role}) for s in run], [s.section_kind for s in run]))
        functions.append([index.get(s.function, -1) for s in run])
    return docs, functions


def is_function_spec(value: str) -> bool:
    """True for a named function dataset (``annotated:SPLIT``) rather than a JSON Lines path."""
    return value.startswith("annotated:")


def function_dev_set(function_ids: Sequence[str], split: str = "dev") -> tuple[list[str], list[int]]:
    """Texts and function indices of the gold split's sentences that have a function, or of the
    annotated corpus's dev papers with ``split="annotated:dev"``."""
    from core.paths import shared_dir
    from models.datasets import refuse_test_split
    from models.datasets.gold import load_gold

    index = {f: i for i, f in enumerate(function_ids)}
    if split.startswith("annotated:"):
        from models.datasets.annotated_corpus import annotated_sentences

        refuse_test_split(split, "model selection on functions")
        chosen = [s for s in annotated_sentences(split.split(":", 1)[1]) if s.function in index]
        return [s.text for s in chosen], [index[s.function] for s in chosen]
    refuse_test_split(f"gold:{split}", "model selection on functions")
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
