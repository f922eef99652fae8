"""Tokenised corpora and training batches (context dropout, dynamic padding)."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import torch
from tokenizers import Tokenizer

from models.datasets import DATASET_LABELS, PARTIAL_ONLY, DatasetError, LabelledDocument, dataset_key
from models.roles import ROLES
from models.training.net import UNKNOWN_SECTION, section_index


@dataclass
class EncodedDocument:
    """A labelled document with its sentences tokenised once."""

    doc: LabelledDocument
    source: str  # the dataset spec it came from, e.g. "csabstruct:train"
    token_ids: list[list[int]]
    allowed: torch.Tensor  # [n, len(ROLES)] bool
    kinds: list[int]  # section-kind indices (unknown when not known)
    primary: torch.Tensor  # [n] the role the dataset label names (see primary_role); -1 = none
    dataset: str = ""  # dataset key ("csabstruct", "pmc-sents-full", "user", ...)
    native: torch.Tensor | None = None  # [n] index of each label in DATASET_LABELS[dataset]
    functions: torch.Tensor | None = None  # [n] function index (-1 = no function label)
    content_target: torch.Tensor | None = None  # [n, d] the frozen base model's embeddings
    # A teacher's probabilities (models.training.distil); a row of zeros: a sentence it did not read.
    teacher_roles: torch.Tensor | None = None  # [n, len(ROLES)]
    teacher_functions: torch.Tensor | None = None  # [n, F]


@dataclass(frozen=True)
class Piece:
    """A contiguous run of one document's sentences fed to the model as one document."""

    doc: int
    start: int
    end: int
    hide_section: bool = False

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class Batch:
    input_ids: torch.Tensor  # [N, L] padded to the longest sentence in the batch
    attention_mask: torch.Tensor  # [N, L]
    section_kind: torch.Tensor  # [N]
    doc_lengths: list[int]
    allowed: torch.Tensor  # [N, C] bool
    primary: torch.Tensor  # [N] long, -1 = the label names no single role
    datasets: list[str] | None = None  # [N] dataset key of each sentence
    native: torch.Tensor | None = None  # [N] long, label index in its dataset's own labels
    functions: torch.Tensor | None = None  # [N] long, function index, -1 = none
    content_target: torch.Tensor | None = None  # [N, d] base-model embeddings (all rows or None)
    teacher_roles: torch.Tensor | None = None  # [N, len(ROLES)], zero rows where the teacher read nothing
    teacher_functions: torch.Tensor | None = None  # [N, F], likewise

    def to(self, device: torch.device) -> Batch:
        def move(x: torch.Tensor | None) -> torch.Tensor | None:
            return None if x is None else x.to(device)

        return Batch(self.input_ids.to(device), self.attention_mask.to(device), self.section_kind.to(device),
                     self.doc_lengths, self.allowed.to(device), self.primary.to(device), self.datasets,
                     move(self.native), move(self.functions), move(self.content_target),
                     move(self.teacher_roles), move(self.teacher_functions))

    def soft_targets(self, primary_weight: float, logits: torch.Tensor | None = None) -> torch.Tensor:
        """Allowed sets as target distributions: ``primary_weight`` on the primary role, the rest
        shared by the other allowed roles (a singleton set gets 1.0).

        Rows without a primary role (-1) get the model's own distribution restricted to the allowed
        set (detached): soft cross-entropy against it has exactly the gradient of the pure
        partial-label loss -log sum_{allowed} p.  Without ``logits`` they are spread uniformly."""
        allowed = self.allowed.float()
        others = (allowed.sum(-1, keepdim=True) - 1).clamp(min=1)
        one_hot = torch.nn.functional.one_hot(self.primary.clamp(min=0), allowed.shape[-1]).float()
        multi = (allowed.sum(-1, keepdim=True) > 1).float()
        spread = (allowed - one_hot) * (1 - primary_weight) / others
        targets = one_hot * (1 - multi * (1 - primary_weight)) + spread
        free = self.primary < 0
        if bool(free.any()):
            own = allowed if logits is None else torch.softmax(logits.detach().float(), dim=-1) * allowed
            own = own / own.sum(-1, keepdim=True).clamp(min=1e-12)
            targets = torch.where(free.unsqueeze(-1), own, targets)
        return targets


_ALIASES = {"methods": "method", "results": "result"}


def primary_role(label: str, allowed: frozenset[str], dataset: str = "") -> str | None:
    """The role a dataset label names (e.g. CSAbstruct "result" -> result), else the first allowed
    role in ROLES order; None for labels that name no single role (``data.PARTIAL_ONLY``)."""
    if label in PARTIAL_ONLY.get(dataset, ()):
        return None
    role = _ALIASES.get(label, label)
    return role if role in allowed else min(allowed, key=ROLES.index)


def _primary_index(label: str, allowed: frozenset[str], dataset: str) -> int:
    if len(allowed) == len(ROLES):  # every role allowed: no role supervision at all
        return -1
    role = primary_role(label, allowed, dataset)
    return -1 if role is None else ROLES.index(role)


def allowed_tensor(allowed: list[frozenset[str]]) -> torch.Tensor:
    out = torch.zeros(len(allowed), len(ROLES), dtype=torch.bool)
    for row, roles in enumerate(allowed):
        for role in roles:
            out[row, ROLES.index(role)] = True
    return out


def encode_documents(docs: list[LabelledDocument], tokenizer: Tokenizer,
                     source: str) -> list[EncodedDocument]:
    """Tokenise every sentence once (the tokenizer truncates at max_length)."""
    flat = [s for d in docs for s in d.sentences]
    ids = [e.ids for e in tokenizer.encode_batch(flat)] if flat else []
    try:
        key = dataset_key(source)
    except DatasetError:  # a free-form source name (tests, ad-hoc corpora): no dataset labels
        key = ""
    names = DATASET_LABELS.get(key, ())
    out = []
    cursor = 0
    for d in docs:
        n = len(d.sentences)
        kinds = [section_index(k) for k in d.section_kinds] if d.section_kinds else [UNKNOWN_SECTION] * n
        primary = torch.tensor([_primary_index(lab, a, key) for lab, a in zip(d.labels, d.allowed)],
                               dtype=torch.long)
        native = torch.tensor([names.index(lab) if lab in names else -1 for lab in d.labels],
                              dtype=torch.long)
        out.append(EncodedDocument(d, source, ids[cursor: cursor + n], allowed_tensor(d.allowed), kinds,
                                   primary, key, native))
        cursor += n
    return out


@dataclass
class ContextDropout:
    """How whole documents are cut during training so short contexts and single sentences work too."""

    p_single: float = 0.10  # the document is fed as single sentences
    p_window: float = 0.20  # the document is cut into 2-3 contiguous windows
    p_hide_section: float = 0.30  # section kinds are replaced by "unknown"

    def pieces(self, index: int, n: int, rng: random.Random) -> list[Piece]:
        hide = rng.random() < self.p_hide_section
        if n <= 1:
            return [Piece(index, 0, n, hide)]
        draw = rng.random()
        if draw < self.p_single:
            return [Piece(index, i, i + 1, hide) for i in range(n)]
        if draw < self.p_single + self.p_window:
            cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.choice((1, 2)))))
            bounds = [0, *cuts, n]
            return [Piece(index, a, b, hide) for a, b in itertools.pairwise(bounds)]
        return [Piece(index, 0, n, hide)]


def collate(pieces: list[Piece], corpus: list[EncodedDocument], pad_id: int = 0) -> Batch:
    """Concatenate the pieces' sentences, padded to the longest one (dynamic padding)."""
    ids: list[list[int]] = []
    kinds: list[int] = []
    allowed = []
    primary = []
    datasets: list[str] = []
    native = []
    functions = []
    targets: list[torch.Tensor] = []
    for p in pieces:
        doc = corpus[p.doc]
        ids.extend(doc.token_ids[p.start: p.end])
        kinds.extend([UNKNOWN_SECTION] * p.size if p.hide_section else doc.kinds[p.start: p.end])
        allowed.append(doc.allowed[p.start: p.end])
        primary.append(doc.primary[p.start: p.end])
        datasets.extend([doc.dataset] * p.size)
        native.append(doc.native[p.start: p.end] if doc.native is not None
                      else torch.full((p.size,), -1, dtype=torch.long))
        functions.append(doc.functions[p.start: p.end] if doc.functions is not None
                         else torch.full((p.size,), -1, dtype=torch.long))
        if doc.content_target is not None:
            targets.append(doc.content_target[p.start: p.end])
    length = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), length), dtype=torch.long)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    content = torch.cat(targets) if len(targets) == len(pieces) else None  # all pieces have targets, or none
    return Batch(input_ids, mask, torch.tensor(kinds, dtype=torch.long), [p.size for p in pieces],
                 torch.cat(allowed), torch.cat(primary), datasets, torch.cat(native), torch.cat(functions),
                 content, _teacher_rows(pieces, corpus, "teacher_roles"),
                 _teacher_rows(pieces, corpus, "teacher_functions"))


def _teacher_rows(pieces: list[Piece], corpus: list[EncodedDocument], name: str) -> torch.Tensor | None:
    """The pieces' teacher rows of one kind, zeros for documents the teacher did not read; None when no
    piece has any."""
    found = [getattr(corpus[p.doc], name) for p in pieces]
    width = next((t.shape[1] for t in found if t is not None), None)
    if width is None:
        return None
    return torch.cat([t[p.start: p.end] if t is not None else torch.zeros(p.size, width)
                      for p, t in zip(pieces, found, strict=True)])
