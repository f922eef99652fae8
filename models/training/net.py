"""RhetoricaNet: the sentence encoder plus a context-aware rhetorical-role head (torch).

One forward pass over ONE document (``input_ids``/``attention_mask`` [n, L], ``section_kind`` [n])
returns ``sentence_embedding`` [n, d] (mean pooling over the attention mask, L2-normalised) and
``role_logits`` [n, len(ROLES)].  Training feeds many documents at once through
:meth:`RhetoricaNet.forward_batch`, which runs the encoder on all sentences and the role head on
the documents padded to the longest one.

Role head, per sentence: a projection of the (unnormalised) pooled embedding, plus a
section-kind embedding (index ``len(SECTION_KINDS)`` = unknown), plus position embeddings
computed inside the graph from n (index from the start clamped to 15, index from the end clamped
to 15, relative position i/max(n-1, 1) in 10 buckets); then a small pre-norm transformer over the
document's sentences (written out with plain matmuls so the legacy ONNX exporter handles a dynamic
n), then a linear layer to the role logits.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from core.document import SectionKind
from models.roles import ROLES

SECTION_KINDS: tuple[str, ...] = tuple(kind.value for kind in SectionKind)
UNKNOWN_SECTION = len(SECTION_KINDS)
ABSTRACT_SECTION = SECTION_KINDS.index("abstract")
# The section kinds a body head (RhetoricaNet.enable_body_head) labels: every known kind but the
# abstract. Abstracts and sentences of unknown kind stay with the main role head.
BODY_SECTION_KINDS: tuple[str, ...] = tuple(k for k in SECTION_KINDS if k != "abstract")
MAX_POSITION = 15
REL_BUCKETS = 10


@dataclass
class HeadConfig:
    """Shape of the role head (saved in checkpoints and described in the manifest)."""

    dim: int = 256
    layers: int = 1
    heads: int = 4
    ffn: int = 512
    dropout: float = 0.1
    num_labels: int = len(ROLES)

    def describe(self) -> dict[str, object]:
        return {
            "type": "transformer-over-sentences",
            **asdict(self),
            "features": ["pooled-embedding projection", "section-kind embedding",
                         f"index from start (clamped to {MAX_POSITION})",
                         f"index from end (clamped to {MAX_POSITION})",
                         f"relative position ({REL_BUCKETS} buckets)"],
        }


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of token states over the attention mask: [n, L, h] x [n, L] -> [n, h]."""
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


def additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[n, L] attention mask (1 = token) -> the [n, 1, 1, L] additive mask a BERT layer adds to its
    attention scores (0 for tokens, a large negative number for padding)."""
    return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def bert_layers(encoder: nn.Module) -> nn.ModuleList:
    """The transformer layers of a Hugging Face BERT-like encoder."""
    return cast(nn.ModuleList, cast(Any, encoder).encoder.layer)


def position_indices(lengths: torch.Tensor,
                     idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(from-start, from-end, relative-bucket) indices [B, n] for documents of ``lengths`` [B];
    ``idx`` [1, n] holds 0..n-1 (computed from tensors so ONNX keeps n dynamic)."""
    last = (lengths.unsqueeze(1) - 1).clamp(min=0)  # [B, 1]
    start = idx.clamp(max=MAX_POSITION)
    end = (last - idx).clamp(min=0, max=MAX_POSITION)
    rel = idx.to(torch.float32) / last.clamp(min=1).to(torch.float32)
    bucket = (rel * (REL_BUCKETS - 1) + 0.5).floor().clamp(min=0, max=REL_BUCKETS - 1).to(torch.long)
    return start.expand_as(bucket), end, bucket


class ContextLayer(nn.Module):
    """Pre-norm self-attention + feed-forward block over a document's sentences."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.norm1 = nn.LayerNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.norm2 = nn.LayerNorm(cfg.dim)
        self.ff = nn.Sequential(nn.Linear(cfg.dim, cfg.ffn), nn.GELU(), nn.Dropout(cfg.dropout),
                                nn.Linear(cfg.ffn, cfg.dim))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` [B, n, d]; ``key_mask`` [B, n] (True = real sentence) or None (all real)."""
        b, n, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.reshape(b, n, h, d // h).transpose(1, 2)
        k = k.reshape(b, n, h, d // h).transpose(1, 2)
        v = v.reshape(b, n, h, d // h).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // h)  # [B, h, n, n]
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], -1e4)
        attn = self.drop(torch.softmax(scores, dim=-1))
        ctx = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.drop(self.out(ctx))
        return x + self.drop(self.ff(self.norm2(x)))


class RoleHead(nn.Module):
    """Per-sentence features + context layers + classifier."""

    def __init__(self, hidden: int, cfg: HeadConfig) -> None:
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(hidden, cfg.dim), nn.LayerNorm(cfg.dim))
        self.section = nn.Embedding(len(SECTION_KINDS) + 1, cfg.dim)
        self.pos_start = nn.Embedding(MAX_POSITION + 1, cfg.dim)
        self.pos_end = nn.Embedding(MAX_POSITION + 1, cfg.dim)
        self.pos_rel = nn.Embedding(REL_BUCKETS, cfg.dim)
        for table in (self.section, self.pos_start, self.pos_end, self.pos_rel):
            nn.init.normal_(table.weight, std=0.02)
        self.drop = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(ContextLayer(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.dim)
        self.classifier = nn.Linear(cfg.dim, cfg.num_labels)

    def forward(self, pooled: torch.Tensor, section_kind: torch.Tensor, lengths: torch.Tensor,
                key_mask: torch.Tensor | None) -> torch.Tensor:
        """``pooled`` [B, n, h], ``section_kind`` [B, n], ``lengths`` [B] -> logits [B, n, C]."""
        idx = torch.cumsum(torch.ones_like(section_kind[:1]), dim=1) - 1  # [1, n]: 0..n-1
        start, end, rel = position_indices(lengths, idx)
        x = (self.proj(pooled) + self.section(section_kind) + self.pos_start(start)
             + self.pos_end(end) + self.pos_rel(rel))
        x = self.drop(x)
        for layer in self.layers:
            x = layer(x, key_mask)
        return self.classifier(self.norm(x))


class HeadEnsemble(nn.Module):
    """Several heads of one shape read together (session 21): the mean of their log-probabilities, as
    logits [B, n, C] of the same call as :class:`RoleHead`'s. Heads trained from different seeds err
    differently; on the trainer's own dev data their mean was right 1–2 points more often than one head
    (session 21; not on the app's dev papers, so no shipped bundle has one). It exports as one graph output
    and costs the runtime a few small matrix products per member."""

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        if len(members) < 2:
            raise ValueError("an ensemble needs at least two heads")
        self.members = nn.ModuleList(members)

    def forward(self, pooled: torch.Tensor, section_kind: torch.Tensor, lengths: torch.Tensor,
                key_mask: torch.Tensor | None) -> torch.Tensor:
        logs = [F.log_softmax(member(pooled, section_kind, lengths, key_mask), dim=-1)
                for member in self.members]
        return torch.stack(logs).mean(dim=0)


MAX_MEMBERS = 16  # heads one ensemble may hold (training options and saved counts alike)


def member_count(value: object) -> int:
    """A saved member count as an int in 1..MAX_MEMBERS (True, as older files say "a head", is 1);
    ValueError for anything else, so a damaged file cannot ask for a million heads."""
    count = 1 if value is True else value
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_MEMBERS:
        raise ValueError(f"a head's member count must be 1 to {MAX_MEMBERS}, not {value!r}")
    return count


def head_members(head: nn.Module | None) -> int:
    """How many heads ``head`` reads with: 0 (none), 1, or an ensemble's members."""
    if head is None:
        return 0
    return len(head.members) if isinstance(head, HeadEnsemble) else 1


@dataclass
class FunctionConfig:
    """Shape of the function outputs (saved in checkpoints, described in the manifest).

    ``function_embedding`` = L2-normalised MLP of the pooled encoder output (``dim`` wide);
    ``function_logits`` = ``scale`` x cosine to one learnt vector per function (a normalised-softmax
    classifier: its cross-entropy is the "softmax" metric-learning loss of Sugimoto & Aizawa 2022).
    ``sentence_embedding`` becomes the content view: a linear map of the pooled output (initialised
    to the identity) trained to stay close to the frozen base model's embedding.
    """

    functions: list[str] = field(default_factory=list)  # taxonomy ids, in logit order
    dim: int = 128
    scale: float = 16.0
    taxonomy: str = ""  # "name@version" of the taxonomy the ids come from

    def describe(self) -> dict[str, object]:
        return {"type": "normalised-softmax over an MLP projection", **asdict(self)}


class FunctionHead(nn.Module):
    """Pooled sentence -> (function_embedding [n, dim], function_logits [n, F])."""

    def __init__(self, hidden: int, cfg: FunctionConfig) -> None:
        super().__init__()
        self.scale = cfg.scale
        self.proj = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, cfg.dim))
        self.classes = nn.Parameter(torch.randn(len(cfg.functions), cfg.dim) * 0.05)

    def forward(self, pooled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedding = F.normalize(self.proj(pooled), p=2.0, dim=-1)
        logits = self.scale * embedding @ F.normalize(self.classes, p=2.0, dim=-1).T
        return embedding, logits


class ContentHead(nn.Module):
    """Pooled sentence -> content embedding (a linear map initialised to the identity)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(hidden))
            self.linear.bias.zero_()

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.linear(pooled), p=2.0, dim=-1)


ADAPTER_EMBEDDING_SCALE = 10.0  # the unit-length embedding is scaled up to the log-probabilities' range


class LabelAdapter(nn.Module):
    """One dataset's own label scheme read off the model's two outputs: a linear layer on
    ``[ADAPTER_EMBEDDING_SCALE * sentence_embedding, centred role logits]`` (role logits minus their
    mean = log-probabilities minus their mean, so the runtime can use either, and a per-role logit
    bias fitted later folds into the adapter's bias: ``models.adapters``).

    It needs no extra graph output, so the runtime applies it in numpy (``models.adapters``).
    ``prior_shift`` (added in evaluation only) undoes per-label subsampling during training:
    a label kept with probability f gets log(1/f) added to its logit.
    """

    prior_shift: torch.Tensor  # a registered buffer

    def __init__(self, hidden: int, num_roles: int, labels: list[str]) -> None:
        super().__init__()
        self.labels = list(labels)
        self.linear = nn.Linear(hidden + num_roles, len(labels))
        self.register_buffer("prior_shift", torch.zeros(len(labels)))

    def forward(self, embedding: torch.Tensor, role_logits: torch.Tensor,
                corrected: bool = True) -> torch.Tensor:
        centred = role_logits - role_logits.mean(dim=-1, keepdim=True)
        features = torch.cat([embedding * ADAPTER_EMBEDDING_SCALE, centred], dim=-1)
        logits = self.linear(features)
        return logits + self.prior_shift if corrected else logits

    def set_keep_fractions(self, keep: dict[str, float]) -> None:
        with torch.no_grad():
            for label, fraction in keep.items():
                if label in self.labels and 0 < fraction < 1:
                    self.prior_shift[self.labels.index(label)] = math.log(1.0 / fraction)


def hf_config(encoder: nn.Module) -> Any:
    """A Hugging Face model's ``config`` (a ``PretrainedConfig`` whose fields are dynamic)."""
    return cast(Any, encoder).config


class RhetoricaNet(nn.Module):
    """Encoder (any Hugging Face BERT-like model) + mean pooling + context-aware role head."""

    def __init__(self, encoder: nn.Module, head: HeadConfig | None = None,
                 functions: FunctionConfig | None = None, content_fork: int = 0) -> None:
        super().__init__()
        self.encoder = encoder
        self.head_config = head or HeadConfig()
        self.hidden = int(hf_config(encoder).hidden_size)
        self.head = RoleHead(self.hidden, self.head_config)
        # Body head (optional): a second role head for the sentences of body sections.
        self.body_head: RoleHead | HeadEnsemble | None = None
        self.adapters = nn.ModuleDict()  # dataset key -> LabelAdapter (not part of the ONNX graph)
        # With functions: four outputs (content view, role logits, function embedding and logits).
        self.function_config: FunctionConfig | None = None
        self.content: ContentHead | None = None
        self.function_head: FunctionHead | None = None
        # Contextual function head (optional): function logits of each sentence read with its section,
        # a RoleHead-shaped head over the pooled vectors (enable_function_context_head).
        self.function_context_head: RoleHead | HeadEnsemble | None = None
        # Content fork: frozen copies of the base's top layers give the content view exactly.
        self.content_fork = 0
        self.content_layers: nn.ModuleList | None = None
        if functions is not None and functions.functions:
            self.enable_functions(functions)
        if content_fork:
            self.enable_content_fork(content_fork)

    def enable_content_fork(self, layers: int, base: nn.Module | None = None) -> None:
        """Fork the encoder's top ``layers`` layers: the content view runs frozen copies of the
        base model's top layers on the shared lower layers' states, so it IS the base model's
        embedding; the shared lower layers and the embeddings are frozen; the encoder's own top
        layers (the role/function branch) and the heads train freely.

        On a fresh net the copies come from its own (still untrained) encoder. On a trained net pass
        the untrained ``base`` encoder: the fork must then take every layer (``layers`` = all of
        them, forking right after the embeddings, which role training keeps frozen), and the copies
        and the embeddings come from ``base``."""
        encoder_layers = bert_layers(self.encoder)
        if not 0 < layers <= len(encoder_layers):
            raise ValueError(f"content fork of {layers} layers: the encoder has {len(encoder_layers)}")
        if base is not None and layers != len(encoder_layers):
            raise ValueError(f"a trained encoder can only fork at its embeddings ({len(encoder_layers)} "
                             f"layers), not {layers}: its lower layers are no longer the base's")
        source = bert_layers(base) if base is not None else encoder_layers
        self.content_fork = layers
        self.content_layers = nn.ModuleList(copy.deepcopy(layer) for layer in source[-layers:])
        self.content = None  # the fork is the content view
        if base is not None:
            cast(Any, self.encoder).embeddings.load_state_dict(cast(Any, base).embeddings.state_dict())
        for module in (self.content_layers, cast(Any, self.encoder).embeddings,
                       *encoder_layers[: len(encoder_layers) - layers]):
            for param in module.parameters():
                param.requires_grad = False
        self.train(self.training)

    def enable_body_head(self, members: int = 1) -> None:
        """Add a body head, a copy of the role head, that labels the sentences of body sections
        (:data:`BODY_SECTION_KINDS`); the role head keeps abstracts and unknown kinds, so what it
        learnt on abstracts is untouched by training the body head. ``members`` > 1: an ensemble of
        that many copies (:class:`HeadEnsemble`)."""
        if members < 1:
            raise ValueError(f"a body head has at least one member, not {members}")
        copies = [copy.deepcopy(self.head) for _ in range(members)]
        self.body_head = copies[0] if members == 1 else HeadEnsemble(copies)

    def enable_function_context_head(self, members: int = 1) -> None:
        """Add a contextual function head: the role head's shape (projection, section kind, positions,
        context layers) with one output per function id, so a sentence's function is read with its
        neighbours and its section, as its role is. It runs in the role graph beside the role heads.
        ``members`` > 1: an ensemble of that many such heads (:class:`HeadEnsemble`)."""
        if self.function_config is None:
            raise ValueError("a contextual function head needs the function ids (enable_functions first)")
        if members < 1:
            raise ValueError(f"a contextual function head has at least one member, not {members}")
        config = HeadConfig(**{**asdict(self.head_config), "num_labels": len(self.function_config.functions)})
        heads = [RoleHead(self.hidden, config) for _ in range(members)]
        self.function_context_head = heads[0] if members == 1 else HeadEnsemble(heads)

    def role_logits(self, pooled: torch.Tensor, section_kind: torch.Tensor, lengths: torch.Tensor,
                    key_mask: torch.Tensor | None) -> torch.Tensor:
        """Role logits [B, n, C] of padded documents: the role head's, or with a body head, the
        body head's for the sentences of body sections (both heads see the whole document)."""
        return routed_role_logits(self.head, self.body_head, pooled, section_kind, lengths, key_mask)

    def enable_functions(self, functions: FunctionConfig) -> None:
        """Add fresh content and function heads (e.g. to a net trained on roles only)."""
        self.function_config = functions
        self.content = None if self.content_fork else ContentHead(self.hidden)
        self.function_head = FunctionHead(self.hidden, functions)

    def train(self, mode: bool = True) -> RhetoricaNet:
        """As ``nn.Module.train``, but a content fork's frozen parts (embeddings, shared lower layers,
        content layers) stay in eval mode: no dropout, so the content view is the base's exactly."""
        super().train(mode)
        if self.content_layers is not None:
            encoder_layers = bert_layers(self.encoder)
            for module in (self.content_layers, cast(Any, self.encoder).embeddings,
                           *encoder_layers[: len(encoder_layers) - self.content_fork]):
                module.train(False)
        return self

    @property
    def has_functions(self) -> bool:
        return self.function_head is not None

    def add_adapter(self, dataset: str, labels: list[str]) -> LabelAdapter:
        """A label adapter for ``dataset``'s own labels (kept if one exists already)."""
        if dataset not in self.adapters:
            self.adapters[dataset] = LabelAdapter(self.hidden, self.head_config.num_labels, labels)
        return self.adapter(dataset)

    def adapter(self, dataset: str) -> LabelAdapter:
        """The label adapter of ``dataset`` (KeyError when there is none)."""
        return cast(LabelAdapter, self.adapters[dataset])

    def adapter_items(self) -> list[tuple[str, LabelAdapter]]:
        """(dataset, adapter) pairs in the order they were added."""
        return [(name, cast(LabelAdapter, adapter)) for name, adapter in self.adapters.items()]

    def adapter_labels(self) -> dict[str, list[str]]:
        return {name: list(adapter.labels) for name, adapter in self.adapter_items()}

    def adapter_input(self, embedding: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        """What label adapters read beside the role logits: the sentence embedding, or with a
        content fork the branch's normalised pooled vector (what the role head reads too; for a
        fork of a trained model it is that model's own sentence embedding, so its adapters carry
        over unchanged)."""
        return F.normalize(pooled, p=2.0, dim=-1) if self.content_fork else embedding

    def pooled(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The branch's pooled vector (what the role and function heads read)."""
        return self.pooled_views(input_ids, attention_mask)[0]

    def pooled_views(self, input_ids: torch.Tensor, attention_mask: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(branch pooled [n, h], content-fork pooled [n, h] or None without a fork)."""
        return encode_views(self.encoder, self.content_layers, input_ids, attention_mask)

    def sentence_outputs(self, pooled: torch.Tensor,
                         content_pooled: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        """Per-sentence outputs of pooled vectors: (sentence_embedding,) or, with functions,
        (content sentence_embedding, function_embedding, function_logits)."""
        return sentence_outputs(pooled, self.content, self.function_head, content_pooled)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                section_kind: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """One document in reading order -> (sentence_embedding [n, d], role_logits [n, C]) and,
        with functions, (function_embedding [n, k], function_logits [n, F]) after them."""
        pooled, content_pooled = self.pooled_views(input_ids, attention_mask)
        lengths = torch.ones_like(section_kind).sum().reshape(1)  # n, as a tensor (dynamic in ONNX)
        logits = self.role_logits(pooled.unsqueeze(0), section_kind.unsqueeze(0), lengths, None)[0]
        embedding, *function_outputs = self.sentence_outputs(pooled, content_pooled)
        return (embedding, logits, *function_outputs)

    def forward_batch(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      section_kind: torch.Tensor, doc_lengths: list[int]
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """Several documents' sentences concatenated ([N, L], N = sum(doc_lengths))
        -> (embeddings [N, d], role_logits [N, C]) in the same order."""
        embedding, logits, _, _ = self.forward_batch_all(input_ids, attention_mask, section_kind, doc_lengths)
        return embedding, logits

    def forward_batch_all(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                          section_kind: torch.Tensor, doc_lengths: list[int]
                          ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...], torch.Tensor]:
        """:meth:`forward_batch` plus the function outputs ((function_embedding, function_logits),
        or () without functions) and the branch's pooled vectors [N, h] (what the heads read)."""
        pooled, content_pooled = self.pooled_views(input_ids, attention_mask)
        n_max = max(doc_lengths)
        b = len(doc_lengths)
        device = pooled.device
        lengths = torch.tensor(doc_lengths, dtype=torch.long, device=device)
        key_mask = torch.arange(n_max, device=device).unsqueeze(0) < lengths.unsqueeze(1)  # [B, n]
        padded = pooled.new_zeros(b, n_max, pooled.shape[-1])
        padded[key_mask] = pooled
        kinds = torch.full((b, n_max), UNKNOWN_SECTION, dtype=torch.long, device=device)
        kinds[key_mask] = section_kind
        logits = self.role_logits(padded, kinds, lengths, key_mask if b > 1 or n_max > 1 else None)
        embedding, *function_outputs = self.sentence_outputs(pooled, content_pooled)
        return embedding, logits[key_mask], tuple(function_outputs), pooled

    def tie_untrained_section_kinds(self, trained: set[str]) -> list[str]:
        """Make section kinds never seen in training behave exactly like "unknown"
        (their embedding rows are copied from the unknown row).  Returns the kinds tied."""
        tied = [kind for kind in SECTION_KINDS if kind not in trained]
        with torch.no_grad():
            table = self.head.section.weight
            for kind in tied:
                table[SECTION_KINDS.index(kind)] = table[UNKNOWN_SECTION]
        return tied


def fork_states(encoder: nn.Module, fork_at: int, input_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(token states entering layer ``fork_at`` [n, L, h], the additive attention mask) of a BERT-like
    encoder, its layers run one by one."""
    hidden = cast(Any, encoder).embeddings(input_ids=input_ids)
    mask = additive_mask(attention_mask, hidden.dtype)
    for layer in bert_layers(encoder)[:fork_at]:
        hidden = layer(hidden, mask)
    return hidden, mask


def run_layers(layers: Any, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Token states after ``layers`` (BERT layers) with the additive ``mask``."""
    for layer in layers:
        hidden = layer(hidden, mask)
    return hidden


def encode_views(encoder: nn.Module, content_layers: nn.ModuleList | None, input_ids: torch.Tensor,
                 attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Mean-pooled last states of ``encoder`` and, with ``content_layers`` (a content fork), of
    those layers run on the states that enter the encoder's own top layers."""
    if content_layers is None:
        out = encoder(input_ids=input_ids, attention_mask=attention_mask)
        return mean_pool(out.last_hidden_state, attention_mask), None
    layers = bert_layers(encoder)
    fork_at = len(layers) - len(content_layers)
    shared, mask = fork_states(encoder, fork_at, input_ids, attention_mask)
    branch = run_layers(layers[fork_at:], shared, mask)
    content = run_layers(content_layers, shared, mask)
    return mean_pool(branch, attention_mask), mean_pool(content, attention_mask)


def sentence_outputs(pooled: torch.Tensor, content: ContentHead | None,
                     function_head: FunctionHead | None,
                     content_pooled: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    """(sentence_embedding,) or, with the function heads, (content view, function_embedding,
    function_logits) of pooled vectors [n, h].  With a content fork (``content_pooled``) the
    content view is the fork's normalised pooled vector, exactly the base model's embedding."""
    if content_pooled is not None:
        content_view = F.normalize(content_pooled, p=2.0, dim=-1)
        return (content_view,) if function_head is None else (content_view, *function_head(pooled))
    if content is None or function_head is None:
        return (F.normalize(pooled, p=2.0, dim=-1),)
    return (content(pooled), *function_head(pooled))


class SentenceGraph(nn.Module):
    """The per-sentence part of a net, as exported (``model.onnx`` of a bundle):
    tokens [n, L] -> (pooled [n, h], sentence_embedding[, function_embedding, function_logits]).
    With a content fork ``sentence_embedding`` is replaced by ``fork_states`` [n, L, h] (the token
    states where the fork starts), which the content graph (:class:`ContentGraph`) turns into the
    content view only when it is asked for: labelling a paper does not pay for it.

    Sentences are independent here, so the runtime feeds length-sorted batches. The attribute
    names match :class:`RhetoricaNet`'s, so the graph's node names map onto its state dict."""

    def __init__(self, net: RhetoricaNet) -> None:
        super().__init__()
        self.encoder = net.encoder
        self.content = net.content
        self.function_head = net.function_head
        self.content_fork = net.content_fork

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if not self.content_fork:
            out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
            pooled = mean_pool(out.last_hidden_state, attention_mask)
            return (pooled, *sentence_outputs(pooled, self.content, self.function_head))
        layers = bert_layers(self.encoder)
        fork_at = len(layers) - self.content_fork
        shared, mask = fork_states(self.encoder, fork_at, input_ids, attention_mask)
        pooled = mean_pool(run_layers(layers[fork_at:], shared, mask), attention_mask)
        functions = self.function_head(pooled) if self.function_head is not None else ()
        return (pooled, shared, *functions)


class ContentGraph(nn.Module):
    """A content fork's own graph (``content.onnx``): the fork states [n, L, h] and the attention
    mask [n, L] -> ``sentence_embedding`` [n, h] (the base model's embedding, L2-normalised)."""

    def __init__(self, net: RhetoricaNet) -> None:
        super().__init__()
        assert net.content_layers is not None
        self.content_layers = net.content_layers

    def forward(self, states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = additive_mask(attention_mask, states.dtype)
        hidden = run_layers(self.content_layers, states, mask)
        return F.normalize(mean_pool(hidden, attention_mask), p=2.0, dim=-1)


class RoleGraph(nn.Module):
    """The document half (``roles.onnx``): one document's pooled vectors [n, h] in reading order
    and section kinds [n] -> role_logits [n, C] (the context head runs on vectors, not tokens), and with
    a contextual function head also function_context_logits [n, F]."""

    def __init__(self, net: RhetoricaNet) -> None:
        super().__init__()
        self.head = net.head  # named as in the net, so net_from_bundle finds the weights by name
        self.body_head = net.body_head
        self.function_context_head = net.function_context_head

    def forward(self, pooled: torch.Tensor,
                section_kind: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        lengths = torch.ones_like(section_kind).sum().reshape(1)  # n, as a tensor (dynamic in ONNX)
        roles = routed_role_logits(self.head, self.body_head, pooled.unsqueeze(0),
                                   section_kind.unsqueeze(0), lengths, None)[0]
        if self.function_context_head is None:
            return roles
        functions = self.function_context_head(pooled.unsqueeze(0), section_kind.unsqueeze(0), lengths,
                                               None)[0]
        return roles, functions


def role_graph_outputs(net: RhetoricaNet) -> tuple[str, ...]:
    """The role graph's output names for ``net``."""
    return ("role_logits", "function_context_logits") if net.function_context_head is not None \
        else ("role_logits",)


def routed_role_logits(head: RoleHead, body_head: nn.Module | None, pooled: torch.Tensor,
                       section_kind: torch.Tensor, lengths: torch.Tensor,
                       key_mask: torch.Tensor | None) -> torch.Tensor:
    """``head``'s role logits [B, n, C], with ``body_head``'s (when there is one) for the
    sentences of body sections; both heads see the whole document."""
    logits = head(pooled, section_kind, lengths, key_mask)
    if body_head is None:
        return logits
    body = body_head(pooled, section_kind, lengths, key_mask)
    return torch.where(is_body_section(section_kind).unsqueeze(-1), body, logits)


def is_body_section(section_kind: torch.Tensor) -> torch.Tensor:
    """True where a section-kind index is a body kind (neither the abstract nor unknown)."""
    return (section_kind != ABSTRACT_SECTION) & (section_kind != UNKNOWN_SECTION)


def section_index(kind: str | None) -> int:
    """Index of a section kind for the ``section_kind`` input (unknown for None or unrecognised)."""
    if kind is None:
        return UNKNOWN_SECTION
    try:
        return SECTION_KINDS.index(str(kind))
    except ValueError:
        return UNKNOWN_SECTION
