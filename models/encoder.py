"""The ONNX sentence encoder with its role head (onnxruntime + tokenizers, no torch).

One class, three separate steps (the fastembed ``onnx_model`` pattern):

1. pre-processing: :meth:`EncoderModel.tokenize` (truncate to the manifest's
   ``max_length``) and :func:`pad_batch` (pad to the longest sentence of a batch);
2. the onnxruntime runs: :meth:`EncoderModel.run` (the sentence graph) and, in a two-graph
   bundle, :meth:`EncoderModel.run_roles` (the role graph on pooled vectors);
3. post-processing: L2 normalisation of embeddings, softmax of role logits.

Two bundle layouts are read. A two-graph bundle (0.3 on; manifest ``context.graphs``) splits the
net: the sentence graph (``model.onnx``) runs on length-sorted batches of any sentences, and the
small role graph (``roles.onnx``) runs on one document's pooled vectors in reading order, so no
sentence is padded to its section's longest. A one-graph bundle (0.1, 0.2) takes one document's
tokens at once, padded to the longest sentence. Either way :meth:`EncoderModel.classify_roles`
feeds the role head a document as a whole, in overlapping windows when it is longer than the
manifest's context window, and :meth:`EncoderModel.embed` feeds length-sorted batches and restores
the caller's order.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from core.errors import ModelError
from core.jobs import JobContext
from core.taxonomy.labels import NO_FUNCTION, FunctionPrediction
from models.adapters import LabelAdapter, load_adapters
from models.bundle import Manifest, check_graph_inputs, default_bundle_path, model_id, verify_bundle
from models.function_prior import RolePrior
from models.none_detector import NONE_DETECTOR_FILE, load_none_detector
from models.role_calibration import MAX_BIAS, apply_temperatures
from models.roles import RolePrediction

if TYPE_CHECKING:  # tokenizers loads with the model, not at import
    from tokenizers import Tokenizer

MAX_TOKENIZED_CHARS = 20_000  # far past where any bundle's max_length of tokens ends in real text

T = TypeVar("T")
B = TypeVar("B")

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"


# Sentences per sentence-graph run when labelling documents: measured on the sample paper's 263
# sentences (2 threads, int8), length-sorted batches of 8/16/32/64 took 1.07/1.05/1.24/1.39 s.
DOCUMENT_BATCH = 16
MAX_WORKERS = 16  # parallel one-sentence runs at most (one onnxruntime thread each)
VIEWS = ("content", "function")  # embed(view=...): what "similar" means (docs/architecture.md)
FUNCTION_TOP = 3  # runners-up kept in a FunctionPrediction


@dataclass
class DocumentEncoding:
    """The outputs of one run over a document."""

    embeddings: np.ndarray  # (n, d) float32, L2-normalised (the content view)
    probabilities: np.ndarray  # (n, len(labels)) float32, rows sum to 1
    labels: tuple[str, ...]
    function_probabilities: np.ndarray | None = None  # (n, F) float32, rows sum to 1
    function_ids: tuple[str, ...] = ()
    function_threshold: float = 0.0
    # What label adapters read, when it is not the embeddings (a content fork's normalised pooled vectors).
    adapter_features: np.ndarray | None = None
    # The function view (n, k), L2-normalised: only when asked for (encode_documents(with_function_vectors)).
    function_vectors: np.ndarray | None = None
    # The role probabilities before the bundle's role temperatures (what label adapters were fitted on);
    # None when the bundle has no role calibration (then they are ``probabilities``).
    uncalibrated_probabilities: np.ndarray | None = None
    # The contextual function head's own probabilities (n, F), before any mixing; None without that head.
    function_context_probabilities: np.ndarray | None = None
    # (n,) True where the label is "none": decided before the function prior's temperature, which changes
    # the probabilities shown, not the labels (None: decided by ``function_threshold`` on the probabilities).
    function_none: np.ndarray | None = None

    @property
    def adapter_probabilities(self) -> np.ndarray:
        """The role probabilities a label adapter reads (uncalibrated, as when it was fitted)."""
        raw = self.uncalibrated_probabilities
        return self.probabilities if raw is None else raw

    @property
    def adapter_input(self) -> np.ndarray:
        """The vectors a label adapter reads beside the role probabilities."""
        return self.embeddings if self.adapter_features is None else self.adapter_features

    @property
    def roles(self) -> list[RolePrediction]:
        return predictions_from_probabilities(self.probabilities, self.labels)

    @property
    def functions(self) -> list[FunctionPrediction] | None:
        if self.function_probabilities is None:
            return None
        return function_predictions(self.function_probabilities, self.function_ids, self.function_threshold,
                                    none=self.function_none)


@dataclass(frozen=True)
class DeferredBatch:
    """One sentence-graph batch whose content view is still to compute: the rows it fills (positions
    in the run's order), the content fork's states [b, L, h] and the attention mask [b, L]."""

    rows: np.ndarray
    states: np.ndarray
    mask: np.ndarray


@dataclass(frozen=True)
class StagedEncoding:
    """:meth:`EncoderModel.encode_documents_staged`: the documents' encodings (their ``embeddings``
    are zeros until the content view is computed) and the content view on demand."""

    encodings: list[DocumentEncoding]
    compute_content: Callable[[], np.ndarray]

    def content(self) -> np.ndarray:
        """The content view (n, d) of every sentence of the documents, in their order."""
        return self.compute_content()


def function_predictions(probabilities: np.ndarray, ids: Sequence[str], threshold: float,
                         top: int = FUNCTION_TOP, none: np.ndarray | None = None) -> list[FunctionPrediction]:
    """Top candidates per row; the label is the best one, or "none" below ``threshold`` (or, given
    ``none``, where it is True)."""
    order = np.argsort(-probabilities, axis=-1)[:, :top]
    out = []
    for index, (row, best) in enumerate(zip(probabilities.tolist(), order.tolist(), strict=True)):
        ranked = tuple((ids[i], float(row[i])) for i in best)
        below = bool(none[index]) if none is not None else not (ranked and ranked[0][1] >= threshold)
        label = ranked[0][0] if ranked and not below else NO_FUNCTION
        out.append(FunctionPrediction(label, ranked))
    return out


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def predictions_from_probabilities(probabilities: np.ndarray, labels: Sequence[str]) -> list[RolePrediction]:
    winners = probabilities.argmax(axis=-1)
    rows = probabilities.tolist()
    return [
        RolePrediction(label=labels[int(w)], probabilities=dict(zip(labels, row, strict=True)))
        for w, row in zip(winners, rows, strict=True)
    ]


def pad_batch(token_ids: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad to the longest sequence: (input_ids, attention_mask), both int64 [n, L]."""
    length = max((len(ids) for ids in token_ids), default=0)
    input_ids = np.full((len(token_ids), length), pad_id, dtype=np.int64)
    mask = np.zeros((len(token_ids), length), dtype=np.int64)
    for row, ids in enumerate(token_ids):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return input_ids, mask


def window_plan(n: int, window: int) -> list[tuple[int, int, int, int]]:
    """Overlapping windows over ``n`` sentences: (start, end, keep_start, keep_end) each.

    Windows of ``window`` sentences step by half a window; each sentence is kept from
    the window where it sits most centrally, so every kept prediction had at least a
    quarter window of context on both sides (except at the document's ends).
    """
    if n <= window:
        return [(0, n, 0, n)]
    stride = max(1, window // 2)
    starts = [*list(range(0, n - window, stride)), n - window]
    plan = []
    for k, start in enumerate(starts):
        end = start + window
        # Boundaries halfway between consecutive windows' centres.
        keep_start = 0 if k == 0 else (starts[k - 1] + start + window) // 2
        keep_end = n if k == len(starts) - 1 else (start + starts[k + 1] + window) // 2
        plan.append((start, end, keep_start, keep_end))
    return plan


class EncoderModel:
    """A loaded model bundle: ``embed``, ``classify_roles``, ``encode_document``."""

    def __init__(self, bundle_dir: Path, manifest: Manifest, session: object, tokenizer: Tokenizer,
                 pad_id: int = 0, load_seconds: float = 0.0, role_session: object | None = None,
                 content_session: object | None = None,
                 content_loader: Callable[[], object] | None = None, *,
                 sentence_batch: int = DOCUMENT_BATCH, workers: int = 1) -> None:
        self.bundle_dir = bundle_dir
        self.manifest = manifest
        self.session = session
        self.role_session = role_session  # a two-graph bundle's role graph (None: one graph)
        # A content fork's graph: the sentence graph's fork_states -> sentence_embedding, run only
        # when the content view is asked for, and loaded then (``content_loader``), so labelling a
        # paper never waits for it. Neither given: the sentence graph has sentence_embedding.
        self._content_session = content_session
        self._content_loader = content_loader
        self._content_lock = threading.Lock()
        self.has_content_graph = content_session is not None or content_loader is not None
        self.tokenizer = tokenizer
        self.load_seconds = load_seconds
        # Sentences per sentence-graph run, and how many runs go at once (each on its own thread):
        # an int8 bundle reads one sentence per run (see :func:`runs_one_sentence_at_a_time`).
        self.sentence_batch = int(sentence_batch)
        self.workers = max(1, int(workers))
        self.labels: tuple[str, ...] = tuple(manifest.labels)
        self.model_id = model_id(manifest)
        self.provider: str = session.get_providers()[0]  # type: ignore[attr-defined]
        self._input_names = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]
        self._pad_id = pad_id
        self._kind_index = {kind: i for i, kind in enumerate(manifest.section_kinds)}
        self._adapters: dict[str, LabelAdapter] | None = None
        functions = dict(manifest.context.get("functions", {}))
        self.function_ids: tuple[str, ...] = tuple(functions.get("ids", ()))
        self.function_threshold = float(functions.get("threshold", 0.0))
        self.function_dim = int(functions.get("embedding_dim", 0))
        self._role_temperatures = self._temperatures_by_kind(manifest)
        self._role_biases = self._role_biases_by_kind(manifest, len(self.labels))
        # Functions reweighted by the contextual role probabilities (models/function_prior.py).
        self._function_prior = RolePrior.from_manifest(functions, self.labels, manifest.section_kinds)
        if self._function_prior is not None and self._function_prior.active:
            self.function_threshold = self._function_prior.threshold
        # "none" read from the words (models/none_detector.py): where a bundle has one, not the threshold.
        record = functions.get("none_detector")
        if isinstance(record, dict) and NONE_DETECTOR_FILE not in manifest.files:
            raise ModelError(f"{bundle_dir}: the manifest describes a none detector but does not pin "
                             f"{NONE_DETECTOR_FILE} in 'files'")
        self._none_detector = load_none_detector(bundle_dir, record) if isinstance(record, dict) else None
        # A contextual function head in the role graph (function_context_logits), mixed in by the prior.
        self.has_function_context = bool(
            role_session is not None and self.function_ids and "function_context_logits" in
            {o.name for o in role_session.get_outputs()})  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"EncoderModel({self.model_id}, provider={self.provider})"

    @staticmethod
    def _temperatures_by_kind(manifest: Manifest) -> np.ndarray | None:
        """Per section-kind index (unknown last), the temperature of the head that labels that kind
        (``context.role_calibration``: the body head's for body kinds, the role head's for the rest);
        None when the bundle has no role calibration."""
        calibration = dict(manifest.context.get("role_calibration", {}))
        if not calibration:
            return None
        role_t = float(dict(calibration.get("role_head", {})).get("temperature", 1.0))
        body_t = float(dict(calibration.get("body_head", {})).get("temperature", 1.0))
        return np.array([body_t if body else role_t for body in EncoderModel._body_head_by_kind(manifest)],
                        dtype=np.float32)

    @staticmethod
    def _body_head_by_kind(manifest: Manifest) -> list[bool]:
        """Per section-kind index (unknown last): whether the body head labels that kind (else the role
        head does)."""
        body_kinds = set(dict(manifest.context.get("body_head", {})).get("section_kinds", []))
        return [kind in body_kinds for kind in [*manifest.section_kinds, "unknown"]]

    @staticmethod
    def _role_biases_by_kind(manifest: Manifest, roles: int) -> np.ndarray | None:
        """Per section-kind index (unknown last), the per-role logit biases of the head that labels that kind
        (``context.role_calibration``'s optional ``bias``, session 26); None when neither head has them. A
        bias of the wrong length or beyond :data:`MAX_BIAS` (a damaged manifest) counts as none."""
        calibration = dict(manifest.context.get("role_calibration", {}))

        def head_bias(head: str) -> np.ndarray | None:
            raw = dict(calibration.get(head, {})).get("bias")
            try:
                bias = np.asarray(raw, dtype=np.float32) if raw is not None else None
            except (TypeError, ValueError):
                return None
            if bias is None or bias.shape != (roles,) or not np.isfinite(bias).all() \
                    or np.abs(bias).max() > MAX_BIAS:
                return None
            return bias

        role_b, body_b = head_bias("role_head"), head_bias("body_head")
        if role_b is None and body_b is None:
            return None
        zero = np.zeros(roles, dtype=np.float32)
        heads = [body_b if body else role_b for body in EncoderModel._body_head_by_kind(manifest)]
        return np.stack([zero if bias is None else bias for bias in heads])

    @property
    def content_session(self) -> object | None:
        """The content graph's session, created on first use (None: the bundle has none)."""
        if self._content_session is None and self._content_loader is not None:
            with self._content_lock:
                if self._content_session is None:
                    self._content_session = self._content_loader()
        return self._content_session

    def with_graph(self, model_path: str | Path, *, device: str = "cpu", threads: int | None = None,
                   profile_prefix: str | Path | None = None) -> EncoderModel:
        """The same bundle (manifest, tokenizer) running another graph, e.g. the fp32 reference
        of an int8 bundle, or the same graph with profiling on (``profile_prefix``)."""
        session = create_session(Path(model_path), device, threads, profile_prefix=profile_prefix)
        return EncoderModel(self.bundle_dir, self.manifest, session, self.tokenizer, self._pad_id,
                            role_session=self.role_session, content_session=self._content_session,
                            content_loader=self._content_loader)

    def _each(self, run: Callable[[B], T], batches: Sequence[B]) -> Iterable[T]:
        """``run`` of every batch, in order: on :attr:`workers` threads at once when there are
        several (onnxruntime releases the GIL while a graph runs), else one after another."""
        if self.workers < 2 or len(batches) < 2:
            return map(run, batches)
        return _map_on_threads(run, batches, min(self.workers, len(batches)))

    @property
    def embedding_dim(self) -> int:
        return int(self.manifest.embedding_dim)

    @property
    def has_functions(self) -> bool:
        """True when the graph has the function outputs (bundles from 0.3 on)."""
        return bool(self.function_ids)

    @property
    def two_graphs(self) -> bool:
        """True for a two-graph bundle (sentence graph + role graph on pooled vectors)."""
        return self.role_session is not None

    def _document_outputs(self) -> tuple[str, ...]:
        base = ("sentence_embedding", "role_logits")
        return (*base, "function_logits") if self.has_functions else base

    @property
    def adapters(self) -> dict[str, LabelAdapter]:
        """Label adapters shipped in the bundle (dataset key -> adapter; see ``models.adapters``)."""
        if self._adapters is None:
            self._adapters = load_adapters(self.bundle_dir, dict(self.manifest.context.get("adapters", {})))
        return self._adapters

    def adapter(self, dataset: str) -> LabelAdapter:
        """The bundle's label adapter for ``dataset``; :class:`ModelError` when it has none."""
        if dataset not in self.adapters:
            have = ", ".join(sorted(self.adapters)) or "none"
            raise ModelError(f"model {self.model_id} has no label adapter for {dataset!r} (it has: {have})")
        return self.adapters[dataset]

    # -- 1. pre-processing -------------------------------------------------------------
    def tokenize(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids per sentence, special tokens added, truncated to ``max_length``. A "sentence" longer than
        ``MAX_TOKENIZED_CHARS`` is cut first: the model reads only its first ``max_length`` tokens, and the
        tokenizer would need memory in proportion to the whole (a 200 MB run-on text aborted the process)."""
        encodings = self.tokenizer.encode_batch([s[:MAX_TOKENIZED_CHARS] for s in sentences])
        return [e.ids for e in encodings]

    def section_kind_ids(self, section_kinds: Sequence[str] | str | None, n: int) -> np.ndarray:
        """Indices into the manifest's ``section_kinds`` (unknown kinds → ``len(section_kinds)``)."""
        unknown = self.manifest.unknown_section_kind
        if section_kinds is None:
            return np.full(n, unknown, dtype=np.int64)
        if isinstance(section_kinds, str):
            section_kinds = [section_kinds] * n
        if len(section_kinds) != n:
            raise ValueError(f"got {len(section_kinds)} section kinds for {n} sentences")
        return np.array([self._kind_index.get(str(k), unknown) for k in section_kinds], dtype=np.int64)

    # -- 2. the run ------------------------------------------------------------------------
    def run(self, input_ids: np.ndarray, attention_mask: np.ndarray, section_kind: np.ndarray,
            outputs: Sequence[str] = ("sentence_embedding", "role_logits")) -> list[np.ndarray]:
        """One onnxruntime run over one document (or one batch of unrelated sentences)."""
        feed = {"input_ids": input_ids, "attention_mask": attention_mask, "section_kind": section_kind}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        feed = {k: v for k, v in feed.items() if k in self._input_names}
        return self._run_graph(self.session, "model.onnx", list(outputs), feed)

    def _run_graph(self, session: object, name: str, outputs: list[str],
                   feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """``session.run`` with onnxruntime's errors (a graph that cannot read what the bundle feeds it)
        as a one-line :class:`ModelError`."""
        try:
            return session.run(outputs, feed, quiet_run())  # type: ignore[attr-defined]
        except Exception as error:  # onnxruntime raises its own exception types
            raise ModelError(f"model bundle {self.bundle_dir}: {name} failed to run "
                             f"({_first_line(error)}); re-export or reinstall the model") from None

    def run_roles(self, pooled: np.ndarray, section_kind: np.ndarray) -> np.ndarray:
        """Role logits [n, C] of one document's pooled vectors (two-graph bundles only)."""
        return self.run_role_graph(pooled, section_kind)[0]

    def run_role_graph(self, pooled: np.ndarray,
                       section_kind: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(role logits [n, C], contextual function logits [n, F] or None when the bundle has no contextual
        function head) of one document's pooled vectors (two-graph bundles only)."""
        if self.role_session is None:
            raise ModelError(f"model {self.model_id} has one graph: its roles come from run()")
        feed = {"pooled": pooled.astype(np.float32, copy=False), "section_kind": section_kind}
        names = ["role_logits", "function_context_logits"] if self.has_function_context else ["role_logits"]
        graph = str(dict(self.manifest.context.get("graphs", {})).get("roles", "roles.onnx"))
        outputs = self._run_graph(self.role_session, graph, names, feed)
        return outputs[0], (outputs[1] if self.has_function_context else None)

    def run_content(self, states: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """The content view [n, h] of a content fork's ``fork_states`` [n, L, h]."""
        if self.content_session is None:
            raise ModelError(f"model {self.model_id} has no content graph")
        feed = {"fork_states": states, "attention_mask": attention_mask}
        graph = str(dict(self.manifest.context.get("graphs", {})).get("content", "content.onnx"))
        return self._run_graph(self.content_session, graph, ["sentence_embedding"], feed)[0]

    def run_sentences(self, ids: Sequence[Sequence[int]], outputs: Sequence[str],
                      batch_size: int | None = None, *,
                      deferred: list[DeferredBatch] | None = None,
                      ctx: JobContext | None = None) -> list[np.ndarray]:
        """Per-sentence outputs of token ids, in the order given: the sentences run in
        length-sorted batches of ``batch_size`` (default :attr:`sentence_batch`), each padded to its
        own longest sentence, on :attr:`workers` threads. With a content graph,
        ``sentence_embedding`` comes from it (fed the sentence graph's fork states); with
        ``deferred`` given, the content graph does not run now: each batch's fork states are
        appended to it (for :meth:`content_of_deferred`) and ``sentence_embedding`` is left zero.
        ``ctx``: checked before every batch, so a cancelled run stops after the batches under way."""
        n = len(ids)
        size = self.sentence_batch if batch_size is None else batch_size
        order = np.argsort([len(x) for x in ids], kind="stable")
        unknown = self.manifest.unknown_section_kind
        forked = self.has_content_graph and "sentence_embedding" in outputs
        graph_outputs = [("fork_states" if forked and name == "sentence_embedding" else name)
                         for name in outputs]

        def run_batch(chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
            if ctx is not None:
                ctx.check()  # on the batch's own thread: batches queued on the others stop too
            input_ids, mask = pad_batch([ids[i] for i in chosen], self._pad_id)
            kinds = np.full(len(chosen), unknown, dtype=np.int64)
            values = self.run(input_ids, mask, kinds, outputs=graph_outputs)
            if forked and deferred is None:
                values = [self.run_content(v, mask) if name == "fork_states" else v
                          for name, v in zip(graph_outputs, values, strict=True)]
            return chosen, mask, values

        batches = [order[start : start + size] for start in range(0, n, size)]
        results: list[np.ndarray] = []
        for chosen, mask, values in self._each(run_batch, batches):
            if forked and deferred is not None:
                named = list(zip(graph_outputs, values, strict=True))
                deferred += [DeferredBatch(chosen, v, mask) for name, v in named if name == "fork_states"]
                values = [np.zeros((len(chosen), self.embedding_dim), dtype=np.float32)
                          if name == "fork_states" else v for name, v in named]
            if not results:
                results = [np.zeros((n, v.shape[-1]), dtype=np.float32) for v in values]
            for result, value in zip(results, values, strict=True):
                result[chosen] = value
        return results

    # -- 3. post-processing and public API ---------------------------------------------------
    def embed(self, sentences: Sequence[str], batch_size: int | None = None,
              view: str = "content") -> np.ndarray:
        """(n, d) float32 L2-normalised embeddings, in the order given.

        ``view``: "content" (the default: what the sentence is about, kept close to the base
        model) or "function" (what the sentence does: sentences with the same communicative
        function are near). A bundle without a function head has one embedding that serves both.
        Sentences are sorted by token length and run in batches padded to their own
        longest sentence, which is much faster than corpus order (one sentence per run for an int8
        graph: :attr:`sentence_batch`); ``batch_size`` overrides that (benchmarks).
        """
        if view not in VIEWS:
            raise ValueError(f"unknown embedding view {view!r}: use one of {', '.join(VIEWS)}")
        output = "function_embedding" if view == "function" and self.has_functions else "sentence_embedding"
        width = self.function_dim if output == "function_embedding" else self.embedding_dim
        if not sentences:
            return np.zeros((0, width), dtype=np.float32)
        (embeddings,) = self.run_sentences(self.tokenize(sentences), (output,), batch_size)
        return l2_normalise(embeddings)

    def classify_functions(self, sentences: Sequence[str],
                           section_kinds: Sequence[str] | str | None = None) -> list[FunctionPrediction]:
        """The communicative function of every sentence of ONE document (top-3 with probabilities;
        "none" when the best is below the bundle's calibrated threshold)."""
        functions = self.encode_document(sentences, section_kinds).functions
        if functions is None:
            raise ModelError(f"model {self.model_id} has no function head (bundles from 0.3 on have one)")
        return functions

    def role_probabilities(self, sentences: Sequence[str],
                           section_kinds: Sequence[str] | str | None = None) -> np.ndarray:
        """(n, len(labels)) softmax probabilities for one document's sentences in order."""
        return self.encode_document(sentences, section_kinds).probabilities

    def classify_roles(self, sentences: Sequence[str],
                       section_kinds: Sequence[str] | str | None = None) -> list[RolePrediction]:
        """The role of every sentence of ONE document (sentences in reading order)."""
        return self.encode_document(sentences, section_kinds).roles

    def encode_documents_staged(self, documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]],
                                with_function_vectors: bool = False) -> StagedEncoding:
        """:meth:`encode_documents` with the content view, in two steps over ONE sentence-graph run:
        the encodings (roles, functions, function view) now, the content view when
        :meth:`StagedEncoding.content` is called (a content fork's graph then runs on the kept fork
        states; other bundles computed it already). The GUI shows the labels before it."""
        deferrable = self.two_graphs and self.has_content_graph
        if not deferrable or (with_function_vectors and not self.has_functions):
            encodings = self.encode_documents(documents, True, with_function_vectors)
            rows = [e.embeddings for e in encodings]
            content = (np.concatenate(rows) if rows else np.zeros((0, self.embedding_dim), dtype=np.float32))
            return StagedEncoding(encodings, lambda: content)
        deferred: list[DeferredBatch] = []
        encodings = self.encode_documents(documents, True, with_function_vectors, _deferred=deferred)
        n = sum(len(sentences) for sentences, _ in documents)
        return StagedEncoding(encodings, lambda: self.content_of_deferred(deferred, n))

    def content_of_deferred(self, deferred: Sequence[DeferredBatch], n: int) -> np.ndarray:
        """The content view (n, d), L2-normalised, of the batches :meth:`run_sentences` deferred."""
        out = np.zeros((n, self.embedding_dim), dtype=np.float32)
        batches = list(deferred)
        for batch, content in zip(batches, self._each(lambda b: self.run_content(b.states, b.mask),
                                                      batches), strict=True):
            out[batch.rows] = content
        return l2_normalise(out)

    def encode_documents(self, documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]],
                         with_embeddings: bool = True,
                         with_function_vectors: bool = False, *,
                         ctx: JobContext | None = None,
                         _deferred: list[DeferredBatch] | None = None) -> list[DocumentEncoding]:
        """:meth:`encode_document` of several documents ((sentences, section kinds) each).

        With two graphs all their sentences go through the sentence graph together, length-sorted
        across documents (short sentences of every section share batches: little padding), then the
        role graph runs on each document's pooled vectors. ``with_embeddings=False`` lets a bundle
        with a content graph skip it (the encodings' embeddings are then zeros);
        ``with_function_vectors`` adds the function view from the same run (bundles with functions).
        ``ctx``: cancellation is checked between sentence-graph batches and between documents (a long
        document stops within a batch; :class:`core.errors.Cancelled` is raised); the results do not
        depend on it."""
        if not self.two_graphs:
            encodings = [self.encode_document(sentences, kinds, ctx=ctx) for sentences, kinds in documents]
            if with_function_vectors:
                for encoding, (sentences, _) in zip(encodings, documents, strict=True):
                    encoding.function_vectors = (self.embed(sentences, view="function") if self.has_functions
                                                 else encoding.embeddings)
            return encodings
        return self._with_none_decided(
            self._encode_two_graphs(documents, with_embeddings, with_function_vectors, _deferred, ctx),
            documents)

    def _with_none_decided(self, encodings: list[DocumentEncoding],
                           documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]]
                           ) -> list[DocumentEncoding]:
        """The encodings with "none" decided by the bundle's none detector from each sentence's words and
        section kind (unchanged without one)."""
        if self._none_detector is None:
            return encodings
        for encoding, (sentences, kinds) in zip(encodings, documents, strict=True):
            if encoding.function_probabilities is None or not len(sentences):
                continue
            per_sentence: list[str | None] = (
                [kinds] * len(sentences) if kinds is None or isinstance(kinds, str) else list(kinds))
            encoding.function_none = self._none_detector.none(sentences, per_sentence,
                                                              encoding.function_probabilities)
        return encodings

    def _encode_two_graphs(self, documents: Sequence[tuple[Sequence[str], Sequence[str] | str | None]],
                           with_embeddings: bool, with_function_vectors: bool,
                           _deferred: list[DeferredBatch] | None,
                           ctx: JobContext | None = None) -> list[DocumentEncoding]:
        if with_function_vectors and not self.has_functions:
            with_embeddings = True  # one embedding serves both views
        flat = [s for sentences, _ in documents for s in sentences]
        vectors = with_function_vectors and self.has_functions
        wanted = (("function_logits", *(("function_embedding",) if vectors else ()))
                  if self.has_functions else ())
        skip = not with_embeddings and self.has_content_graph
        names = ("pooled", *(() if skip else ("sentence_embedding",)), *wanted)
        outputs = (self.run_sentences(self.tokenize(flat), names, deferred=_deferred, ctx=ctx)
                   if flat else [])
        if skip and outputs:
            outputs.insert(1, np.zeros((len(flat), self.embedding_dim), dtype=np.float32))
        encodings = []
        cursor = 0
        for sentences, kinds in documents:
            if ctx is not None:
                ctx.check()
            n = len(sentences)
            parts = [o[cursor: cursor + n] for o in outputs]
            encoding = self._encode_pooled(parts[:3] if vectors else parts, kinds, n)
            if vectors:
                encoding.function_vectors = l2_normalise(parts[3]) if n else np.zeros((0, 0), np.float32)
            elif with_function_vectors:
                encoding.function_vectors = encoding.embeddings
            encodings.append(encoding)
            cursor += n
        return encodings

    def _encode_pooled(self, outputs: list[np.ndarray], section_kinds: Sequence[str] | str | None,
                       n: int) -> DocumentEncoding:
        """A document's encoding from its sentence-graph outputs (pooled, embedding[, function
        logits]): the role graph runs on the pooled vectors, window by window."""
        kinds = self.section_kind_ids(section_kinds, n)
        logits = np.zeros((n, len(self.labels)), dtype=np.float32)
        context_logits = (np.zeros((n, len(self.function_ids)), dtype=np.float32)
                          if self.has_function_context else None)
        if n == 0:
            embeddings = np.zeros((0, self.embedding_dim), dtype=np.float32)
            width = len(self.function_ids)
            function_logits = np.zeros((0, width), dtype=np.float32) if self.has_functions else None
        else:
            pooled, embeddings, *rest = outputs
            function_logits = rest[0] if self.has_functions else None
            for start, end, keep_start, keep_end in window_plan(n, self.manifest.context_window):
                keep = slice(keep_start - start, keep_end - start)
                role_part, context_part = self.run_role_graph(pooled[start:end], kinds[start:end])
                logits[keep_start:keep_end] = role_part[keep]
                if context_logits is not None and context_part is not None:
                    context_logits[keep_start:keep_end] = context_part[keep]
            if self.manifest.context.get("adapter_input") == "pooled":
                return self._encoding(embeddings, logits, function_logits, l2_normalise(pooled), kinds,
                                      context_logits)
        return self._encoding(embeddings, logits, function_logits, None, kinds, context_logits)

    def _encoding(self, embeddings: np.ndarray, logits: np.ndarray, function_logits: np.ndarray | None,
                  adapter_features: np.ndarray | None = None,
                  kinds: np.ndarray | None = None,
                  function_context_logits: np.ndarray | None = None) -> DocumentEncoding:
        """Post-processing of a document's raw outputs (normalised embeddings, softmaxes; the role
        logits divided by the bundle's role temperatures when it has them; the function probabilities
        mixed with the contextual function head's and reweighted by the function prior)."""
        uncalibrated = None
        probabilities = softmax(logits)
        if self._role_temperatures is not None and kinds is not None and len(logits):
            uncalibrated = probabilities
            probabilities = softmax(apply_temperatures(logits, kinds, self._role_temperatures,
                                                       self._role_biases))
        function_probabilities = None if function_logits is None else softmax(function_logits)
        context = None if function_context_logits is None else softmax(function_context_logits)
        none = None
        if function_probabilities is not None and self._function_prior is not None:
            function_probabilities = self._function_prior.apply(function_probabilities, probabilities, kinds,
                                                                context)
            if self._function_prior.temperature != 1.0 and len(function_probabilities):
                none = function_probabilities.max(-1) < self.function_threshold  # decided before tempering
                function_probabilities = self._function_prior.shown(function_probabilities)
        for what, values in (("role", probabilities), ("function", function_probabilities)):
            if values is not None and not np.isfinite(values).all():
                raise ModelError(f"model bundle {self.bundle_dir} gave {what} probabilities that are not "
                                 "numbers (NaN); re-export or reinstall the model")
        return DocumentEncoding(l2_normalise(embeddings), probabilities, self.labels, function_probabilities,
                                self.function_ids, self.function_threshold, adapter_features,
                                uncalibrated_probabilities=uncalibrated,
                                function_context_probabilities=context, function_none=none)

    def encode_document(self, sentences: Sequence[str],
                        section_kinds: Sequence[str] | str | None = None, *,
                        ctx: JobContext | None = None) -> DocumentEncoding:
        """Embeddings and role probabilities of one document from the same runs.

        Documents longer than the context window go through overlapping windows and
        keep each sentence's prediction from the window where it is most central.
        ``ctx``: cancellation is checked before every run (see :meth:`encode_documents`).
        """
        if self.two_graphs:
            return self.encode_documents([(sentences, section_kinds)], ctx=ctx)[0]
        n = len(sentences)
        kinds = self.section_kind_ids(section_kinds, n)
        embeddings = np.zeros((n, self.embedding_dim), dtype=np.float32)
        logits = np.zeros((n, len(self.labels)), dtype=np.float32)
        function_logits = (np.zeros((n, len(self.function_ids)), dtype=np.float32)
                           if self.has_functions else None)
        if n > 0:
            ids = self.tokenize(sentences)
            for start, end, keep_start, keep_end in window_plan(n, self.manifest.context_window):
                if ctx is not None:
                    ctx.check()
                input_ids, mask = pad_batch(ids[start:end], self._pad_id)
                emb, lg, *rest = self.run(input_ids, mask, kinds[start:end], self._document_outputs())
                keep = slice(keep_start - start, keep_end - start)
                embeddings[keep_start:keep_end] = emb[keep]
                logits[keep_start:keep_end] = lg[keep]
                if function_logits is not None:
                    function_logits[keep_start:keep_end] = rest[0][keep]
        return self._with_none_decided([self._encoding(embeddings, logits, function_logits, None, kinds)],
                                       [(sentences, section_kinds)])[0]


def _map_on_threads(run: Callable[[B], T], items: Sequence[B], workers: int) -> Iterator[T]:
    """``run`` of every item, in order, on ``workers`` threads (the pool lives for this call only)."""
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rhetorica-encoder") as pool:
        yield from pool.map(run, items)


def runs_one_sentence_at_a_time(manifest: Manifest) -> bool:
    """True for a bundle whose sentence graph is dynamically quantised to int8. onnxruntime's dynamic
    quantisation scales each activation tensor with one scale per run, so in a batch a sentence's vectors
    and labels would depend on the sentences (and padding) beside it. Such a graph reads one sentence per
    run, on several single-thread runs at once, so a sentence reads the same in a paper, a draft, a query
    or the corpus (docs/benchmarks.md, "One sentence, one reading")."""
    return str(manifest.quantization).startswith("int8-dynamic")


def default_workers() -> int:
    """The CPUs this process may use (at most :data:`MAX_WORKERS`): parallel one-sentence runs."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        count = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, count))


def _pad_id(tokenizer: Tokenizer) -> int:
    padding = tokenizer.padding
    if padding and padding.get("pad_id") is not None:
        return int(padding["pad_id"])
    for token in ("[PAD]", "<pad>"):
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return int(token_id)
    return 0


def load_tokenizer(path: Path, max_length: int) -> tuple[Tokenizer, int]:
    """The bundle's tokenizer with truncation on and padding off (we pad per batch), and its pad id."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a bare Exception on bad files
        raise ModelError(f"cannot read tokenizer {path}: {str(error).splitlines()[0]}") from None
    pad_id = _pad_id(tokenizer)
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer, pad_id


def session_options(threads: int | None, quiet: bool = False, *,
                    profile_prefix: str | Path | None = None) -> object:
    """onnxruntime session options as Rhetorica runs them (``profile_prefix``: profile the runs)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 4 if quiet else 3  # 3 = errors only, 4 = fatal only
    # Idle threads sleep instead of spinning: on a desktop sharing its cores (GUI, other jobs)
    # spinning costs far more than it saves (measured 114 vs 163 sent/s on 2 busy cores).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads is not None:
        if threads < 1:
            raise ModelError(f"threads must be at least 1 (got {threads})")
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
    return options


def create_session(model_path: Path, device: str = "cpu", threads: int | None = None, *,
                   profile_prefix: str | Path | None = None) -> object:
    """An onnxruntime session for ``model_path`` on ``device`` ("auto", "cpu" or "cuda").

    "auto" uses CUDA when it really loads, else the CPU. Errors are one-line :class:`ModelError`.
    """
    import onnxruntime as ort

    if device not in ("auto", "cpu", "cuda"):
        raise ModelError(f"unknown device {device!r}: use auto, cpu or cuda")
    available = ort.get_available_providers()
    want_cuda = device == "cuda" or (device == "auto" and CUDA in available)
    if device == "cuda" and CUDA not in available:
        raise ModelError("device 'cuda' requested but this onnxruntime has no CUDA provider "
                         "(install onnxruntime-gpu, or use --device cpu)")
    try:
        if want_cuda:
            if device == "auto":
                # onnxruntime-gpu lists CUDA even without a GPU and logs loud errors when it
                # falls back: keep that quiet, then check what really loaded.
                ort.set_default_logger_severity(4)
            options = session_options(threads, device == "auto", profile_prefix=profile_prefix)
            session = ort.InferenceSession(str(model_path), options, providers=[CUDA, CPU])
            if session.get_providers()[0] != CUDA and device == "cuda":
                raise ModelError("device 'cuda' requested but CUDA could not be initialised "
                                 "(no GPU or driver?): use --device cpu")
            return session
        options = session_options(threads, False, profile_prefix=profile_prefix)
        return ort.InferenceSession(str(model_path), options, providers=[CPU])
    except ModelError:
        raise
    except Exception as error:  # onnxruntime raises its own exception types
        raise ModelError(f"cannot load {model_path}: {_first_line(error)}") from None


def quiet_run() -> object:
    """onnxruntime run options that leave a failed run's error to the exception (no log line of its own
    on stderr, so the CLI says it in one line)."""
    import onnxruntime as ort

    options = ort.RunOptions()
    options.log_severity_level = 4  # fatal only
    return options


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def threads_from_environment(text: str) -> int:
    """``RHETORICA_THREADS`` as a number of threads (a one-line :class:`ModelError` when it is not one)."""
    try:
        return int(text.strip())
    except ValueError:
        raise ModelError(f"RHETORICA_THREADS must be a whole number of threads, not {text[:40]!r}") from None


def check_tokens_fit(bundle: Path, session: object, tokenizer: Tokenizer, max_length: int,
                     pad_id: int) -> None:
    """Refuse a sentence graph that cannot read what the tokenizer gives it: token ids past its embedding
    table (a tokenizer of another model) or ``max_length`` positions past its position table. Two probe
    runs of one sentence each: onnxruntime does not show a graph's table sizes."""
    inputs = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]
    names = [o.name for o in session.get_outputs()]  # type: ignore[attr-defined]
    output = next((n for n in ("pooled", "sentence_embedding") if n in names), names[0])
    largest = max([*tokenizer.get_vocab(with_added_tokens=True).values(), pad_id, 0])
    probes = (([largest, largest], f"tokenizer.json has token ids up to {largest}, more than model.onnx's "
               "embedding table holds (a tokenizer of another model?)"),
              ([pad_id] * max_length, f"the manifest's max_length {max_length} is more token positions than "
               "model.onnx reads"))
    for ids, problem in probes:
        input_ids = np.array([ids], dtype=np.int64)
        feed = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids),
                "section_kind": np.zeros(1, dtype=np.int64), "token_type_ids": np.zeros_like(input_ids)}
        try:
            session.run([output], {k: v for k, v in feed.items() if k in inputs},  # type: ignore[attr-defined]
                        quiet_run())
        except Exception as error:  # onnxruntime raises its own exception types
            raise ModelError(f"incompatible model bundle {bundle}: {problem} "
                             f"({_first_line(error)})") from None


def load_model(path: str | Path | None = None, *, device: str = "auto",
               threads: int | None = None) -> EncoderModel:
    """Load a bundle (default: ``resources/models/default``), verifying every file's sha256.

    ``device``: "auto" (CUDA when it really works, else CPU), "cpu" or "cuda".
    ``threads``: onnxruntime intra-op threads (default: onnxruntime's choice);
    the ``RHETORICA_THREADS`` environment variable sets it when not given. For an int8 bundle it is
    the number of single-thread sentence runs at once instead (default: the CPUs this process may
    use; :func:`runs_one_sentence_at_a_time`).
    """
    started = time.perf_counter()
    bundle = Path(path) if path is not None else default_bundle_path()
    manifest = verify_bundle(bundle)
    if threads is None and os.environ.get("RHETORICA_THREADS"):
        threads = threads_from_environment(os.environ["RHETORICA_THREADS"])
    tokenizer, pad_id = load_tokenizer(bundle / "tokenizer.json", int(manifest.max_length))
    one_at_a_time = runs_one_sentence_at_a_time(manifest)
    workers = (threads or default_workers()) if one_at_a_time else 1
    sentence_threads = 1 if one_at_a_time else threads  # the sentence and content graphs
    session = create_session(bundle / "model.onnx", device, sentence_threads)
    check_graph_inputs(bundle, "sentences", "model.onnx",
                       {i.name for i in session.get_inputs()})  # type: ignore[attr-defined]
    outputs = {o.name: o.shape for o in session.get_outputs()}  # type: ignore[attr-defined]
    check_tokens_fit(bundle, session, tokenizer, int(manifest.max_length), pad_id)
    graphs = dict(manifest.context.get("graphs", {}))
    role_graph = graphs.get("roles")
    role_session = None
    content_loader = None
    if graphs.get("content"):
        if "fork_states" not in outputs:
            raise ModelError(f"model bundle {bundle}: model.onnx has no output 'fork_states' for "
                             f"{graphs['content']}")
        content_path = bundle / str(graphs["content"])

        def content_loader() -> object:
            session = create_session(content_path, device, sentence_threads)
            check_graph_inputs(bundle, "content", content_path.name,
                               {i.name for i in session.get_inputs()})  # type: ignore[attr-defined]
            if "sentence_embedding" not in {o.name for o in session.get_outputs()}:  # type: ignore[attr-defined]
                raise ModelError(f"model bundle {bundle}: {content_path.name} has no output "
                                 "'sentence_embedding'")
            return session

        outputs["sentence_embedding"] = [None, int(manifest.embedding_dim)]  # checked when it loads
    if role_graph:
        role_session = create_session(bundle / str(role_graph), device, threads)
        check_graph_inputs(bundle, "roles", str(role_graph),
                           {i.name for i in role_session.get_inputs()})  # type: ignore[attr-defined]
        outputs |= {o.name: o.shape for o in role_session.get_outputs()}  # type: ignore[attr-defined]
        if "pooled" not in outputs:
            raise ModelError(f"model bundle {bundle}: model.onnx has no output 'pooled' for {role_graph}")
    expected = {"sentence_embedding": int(manifest.embedding_dim), "role_logits": len(manifest.labels)}
    functions = dict(manifest.context.get("functions", {}))
    if functions:
        expected |= {"function_embedding": int(functions.get("embedding_dim", 0)),
                     "function_logits": len(functions.get("ids", ()))}
        if "function_context_logits" in outputs:  # a contextual function head: one logit per function too
            expected["function_context_logits"] = len(functions.get("ids", ()))
    for name, width in expected.items():
        if name not in outputs:
            raise ModelError(f"model bundle {bundle}: model.onnx has no output '{name}'")
        shape = outputs[name]
        if len(shape) == 2 and isinstance(shape[1], int) and shape[1] != width:
            raise ModelError(f"model bundle {bundle}: output '{name}' has width {shape[1]} but the "
                             f"manifest says {width}")
    return EncoderModel(bundle, manifest, session, tokenizer, pad_id, time.perf_counter() - started,
                        role_session, content_loader=content_loader,
                        sentence_batch=1 if one_at_a_time else DOCUMENT_BATCH, workers=workers)
