"""The analysis pipeline: the rhetorical role of every sentence of a paper (or a draft).

:func:`analyze_paper` runs the model section by section: each section's sentences
go in as one document (in reading order) with the section's :class:`SectionKind`,
so the role head sees its neighbours and knows where it is.  The result,
:class:`PaperAnalysis`, is JSON-serialisable both ways and keyed by the paper's
sha256 and the model id (``core.cache`` keys analyses on those).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.document import Paper, Section
from core.jobs import JobContext, ensure_context
from core.json_shapes import as_list, as_number, as_object, as_string, entry, loads
from core.model_api import RoleModel, StagedEncodingLike
from core.taxonomy.labels import ROLES, FunctionPrediction, RolePrediction

if TYPE_CHECKING:  # the model is passed in; core does not load it
    import numpy as np

ANALYSIS_SCHEMA_VERSION = 1


@dataclass
class PaperAnalysis:
    """Roles for every sentence of a paper, in ``Paper.sentences`` order."""

    paper_sha256: str
    model_id: str
    roles: list[RolePrediction]
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step
    # Communicative functions (top-3 each) when the model has a function head, else None.
    functions: list[FunctionPrediction] | None = None
    # Sentence embeddings from the same runs (n x d, L2-normalised) when asked for; not in JSON.
    embeddings: np.ndarray | None = field(default=None, repr=False, compare=False)
    # The function view from the same runs (n x k) when asked for; not in JSON.
    function_vectors: np.ndarray | None = field(default=None, repr=False, compare=False)
    # Texts of the paper that are not body sentences, embedded (content view) in the same runs by
    # label_paper: its title and its figures' caption sentences (what core.figures.figure_rank embeds).
    figure_texts: list[str] = field(default_factory=list, repr=False, compare=False)
    figure_vectors: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def embedded(self) -> bool:
        """True when both views of every sentence (and of the figure texts) are here: what the
        panels and the library read instead of running the model again."""
        return (self.embeddings is not None and self.function_vectors is not None
                and len(self.embeddings) == len(self.roles) == len(self.function_vectors)
                and (self.figure_vectors is not None and len(self.figure_vectors) == len(self.figure_texts)))

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.roles]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": ANALYSIS_SCHEMA_VERSION,
            "paper_sha256": self.paper_sha256,
            "model_id": self.model_id,
            "roles": [r.to_dict() for r in self.roles],
            **({"functions": [f.to_dict() for f in self.functions]} if self.functions is not None else {}),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }

    @classmethod
    def from_dict(cls, data: object) -> PaperAnalysis:
        """An analysis from its JSON, every field checked (a ``ValueError``, a
        :class:`~core.json_shapes.ShapeError` naming a bad field)."""
        where = "the analysis"
        data = as_object(data, where)
        version = data.get("schema_version", ANALYSIS_SCHEMA_VERSION)
        if version != ANALYSIS_SCHEMA_VERSION or isinstance(version, bool):
            raise ValueError(f"unsupported analysis schema version {version!r} "
                             f"(expected {ANALYSIS_SCHEMA_VERSION})")
        roles = as_list(entry(data, "roles", where), f"{where}: 'roles'")
        functions = entry(data, "functions", where, None)
        timings = as_object(entry(data, "timings", where, {}), f"{where}: 'timings'")
        return cls(
            paper_sha256=as_string(entry(data, "paper_sha256", where), f"{where}: 'paper_sha256'"),
            model_id=as_string(entry(data, "model_id", where), f"{where}: 'model_id'"),
            roles=[RolePrediction.from_dict(r, f"role {i}") for i, r in enumerate(roles)],
            timings={k: as_number(v, f"{where}: timing {k!r}") for k, v in timings.items()},
            functions=(None if functions is None else
                       [FunctionPrediction.from_dict(f, f"function {i}")
                        for i, f in enumerate(as_list(functions, f"{where}: 'functions'"))]),
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> PaperAnalysis:
        return cls.from_dict(loads(text))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> PaperAnalysis:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


def section_runs(paper: Paper) -> list[tuple[int, int, int]]:
    """Contiguous runs of sentences with the same section: (section_index, start, end)."""
    runs: list[tuple[int, int, int]] = []
    for i, sentence in enumerate(paper.sentences):
        if runs and runs[-1][0] == sentence.section_index and runs[-1][2] == i:
            runs[-1] = (runs[-1][0], runs[-1][1], i + 1)
        else:
            runs.append((sentence.section_index, i, i + 1))
    return runs


def _section(paper: Paper, index: int) -> Section | None:
    """The section a sentence's ``section_index`` names (None: text outside any section)."""
    return paper.sections[index] if 0 <= index < len(paper.sections) else None


ENCODE_CHUNK = 256  # sentences encoded together (length-sorted across sections) between cancel checks


def _chunks(runs: list[tuple[int, int, int]], size: int | None = None) -> list[list[tuple[int, int, int]]]:
    """Consecutive section runs grouped into chunks of about ``size`` sentences (default
    :data:`ENCODE_CHUNK`; a run is never split)."""
    size = size or ENCODE_CHUNK
    chunks: list[list[tuple[int, int, int]]] = []
    count = size
    for run in runs:
        if count >= size:
            chunks.append([])
            count = 0
        chunks[-1].append(run)
        count += run[2] - run[1]
    return chunks


def analyze_paper(paper: Paper, model: RoleModel, ctx: JobContext | None = None, *,
                  with_embeddings: bool = False, with_function_vectors: bool = False) -> PaperAnalysis:
    """Label every sentence: each section is one document with its kind, and the sections are
    encoded a chunk (~256 sentences) at a time, so the model can share batches across sections.

    Reports progress in sentences and stops with :class:`core.errors.Cancelled` when
    ``ctx`` is cancelled (checked between chunks).
    """
    ctx = ensure_context(ctx)
    started = time.perf_counter()
    total = len(paper.sentences)
    roles: list[RolePrediction] = []
    functions: list[FunctionPrediction] = []
    has_functions = True  # until a section comes back without functions (no function head)
    chunks: list[np.ndarray] = []
    function_chunks: list[np.ndarray] = []
    ctx.progress(0, total, "Labelling sentence roles")
    for chunk in _chunks(section_runs(paper)):
        ctx.check()
        documents = []
        for section_index, start, end in chunk:
            section = _section(paper, section_index)
            documents.append(([s.text for s in paper.sentences[start:end]],
                              section.kind.value if section is not None else None))
        for encoding in model.encode_documents(documents, with_embeddings=with_embeddings,
                                               with_function_vectors=with_function_vectors):
            roles.extend(encoding.roles)
            found = encoding.functions
            if found is None:
                has_functions = False
            elif has_functions:
                functions.extend(found)
            if with_embeddings:
                chunks.append(encoding.embeddings)
            if with_function_vectors and encoding.function_vectors is not None:
                function_chunks.append(encoding.function_vectors)
        last_index, _, end = chunk[-1]
        last = _section(paper, last_index)
        ctx.progress(end, total, f"Labelled {(last.heading if last is not None else '') or 'section'}")
    embeddings = None
    if with_embeddings:
        import numpy as np

        embeddings = (np.concatenate(chunks) if chunks
                      else np.zeros((0, model.embedding_dim), dtype=np.float32))
    function_vectors = None
    if function_chunks:
        import numpy as np

        function_vectors = np.concatenate(function_chunks)
    return PaperAnalysis(paper.sha256, model.model_id, roles, {"roles": time.perf_counter() - started},
                         functions if has_functions and paper.sentences else None, embeddings,
                         function_vectors)


def figure_texts(paper: Paper) -> list[str]:
    """The paper's texts the graphical-abstract ranking embeds beside its body sentences: the title
    and every sentence of every figure's and table's caption (distinct, stripped, in order)."""
    from core.figures.figure_rank import caption_body
    from core.text.sentences import split_sentence_texts

    captions = [s for figure in paper.figures for s in split_sentence_texts(caption_body(figure.caption))]
    texts = [paper.title, *captions]
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


@dataclass
class LabelledPaper:
    """:func:`label_paper`'s result: ``analysis`` has the roles, functions and function view; its
    content view (and the figure texts') comes from :meth:`embed`, from the same sentence-graph run."""

    analysis: PaperAnalysis
    staged: list[StagedEncodingLike]  # one staged run per chunk of sentences, then the figure texts' run

    def embed(self, ctx: JobContext | None = None) -> PaperAnalysis:
        """Compute the content view (cancel checked between chunks) and return the whole analysis."""
        import numpy as np

        ctx = ensure_context(ctx)
        started = time.perf_counter()
        analysis = self.analysis
        runs: list[np.ndarray] = []
        for done, staged in enumerate(self.staged):
            ctx.check()
            ctx.progress(done, len(self.staged), "Embedding the sentences")
            runs.append(np.asarray(staged.content(), dtype=np.float32))
        *sentences, figures = runs  # the last run is the figure texts'
        analysis.embeddings = (np.concatenate(sentences) if sentences
                               else np.zeros((0, figures.shape[1]), np.float32))
        analysis.figure_vectors = figures
        if analysis.function_vectors is None:  # a model without a function head: one view serves both
            analysis.function_vectors = analysis.embeddings
        analysis.timings["vectors"] = time.perf_counter() - started
        ctx.progress(len(self.staged), len(self.staged), "Embedded")
        return analysis


def label_paper(paper: Paper, model: RoleModel, ctx: JobContext | None = None) -> LabelledPaper:
    """The embedded analysis, first step: every sentence labelled (exactly as :func:`analyze_paper`
    does) with its function view, and the title and caption sentences (:func:`figure_texts`) run too;
    ``.embed()`` then adds the content view from those same runs, so the sentence graph sees each text
    once (a content fork's graph runs on the kept states; see ``EncoderModel.encode_documents_staged``)."""
    import numpy as np

    ctx = ensure_context(ctx)
    started = time.perf_counter()
    total = len(paper.sentences)
    extra = figure_texts(paper)
    roles: list[RolePrediction] = []
    functions: list[FunctionPrediction] | None = []
    vectors: list[np.ndarray] = []
    staged: list[StagedEncodingLike] = []
    ctx.progress(0, total, "Labelling sentence roles")
    for chunk in _chunks(section_runs(paper)):
        ctx.check()
        documents: list[tuple[list[str], str | None]] = []
        for section_index, start, end in chunk:
            section = _section(paper, section_index)
            documents.append(([s.text for s in paper.sentences[start:end]],
                              section.kind.value if section is not None else None))
        run = model.encode_documents_staged(documents, with_function_vectors=True)
        for encoding in run.encodings:
            roles.extend(encoding.roles)
            found = encoding.functions
            functions = None if found is None or functions is None else functions + found
            if encoding.function_vectors is not None:
                vectors.append(encoding.function_vectors)
        staged.append(run)
        ctx.progress(len(roles), total, "Labelled")
    # The figure texts run on their own (batches of their own: the sentences' batches, and so their
    # labels, are exactly analyze_paper's); their roles are not used.
    staged.append(model.encode_documents_staged([(extra, None)]))
    function_vectors = np.concatenate(vectors) if vectors and sum(map(len, vectors)) == total else None
    analysis = PaperAnalysis(paper.sha256, model.model_id, roles, {"roles": time.perf_counter() - started},
                             functions if functions and total else None, None, function_vectors,
                             figure_texts=extra)
    return LabelledPaper(analysis, staged)


def analyze_texts(sentences: Sequence[str], model: RoleModel, *, section_kind: str | None = None,
                  ctx: JobContext | None = None) -> PaperAnalysis:
    """Label a draft's sentences as ONE document; ``paper_sha256`` is the text's hash."""
    ctx = ensure_context(ctx)
    started = time.perf_counter()
    ctx.progress(0, len(sentences), "Labelling sentence roles")
    digest = hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()
    encoding = model.encode_document(list(sentences), section_kind)
    ctx.progress(len(sentences), len(sentences), "Labelled")
    return PaperAnalysis(digest, model.model_id, encoding.roles, {"roles": time.perf_counter() - started},
                         encoding.functions, encoding.embeddings)


def role_mix(paper: Paper, analysis: PaperAnalysis) -> list[tuple[int, Counter[str]]]:
    """Per section (index into ``paper.sections``), how many sentences got each role."""
    if len(analysis.roles) != len(paper.sentences):
        raise ValueError(f"analysis has {len(analysis.roles)} roles for {len(paper.sentences)} sentences")
    mix: dict[int, Counter[str]] = {}
    for sentence, role in zip(paper.sentences, analysis.roles, strict=True):
        mix.setdefault(sentence.section_index, Counter())[role.label] += 1
    return sorted(mix.items())


__all__ = ["ROLES", "LabelledPaper", "PaperAnalysis", "analyze_paper", "analyze_texts", "figure_texts",
           "label_paper", "role_mix"]
