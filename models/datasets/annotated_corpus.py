"""The hand-annotated full-paper corpus (issue 24): agreement between annotators, the committed rows,
and the readers that join them back to their sentences.

Committed files (``models/datasets/annotated/``): ``train.jsonl.gz`` (the training corpus, JSON Lines),
and the new gold test in ``models/datasets/gold_data/gold2/test.jsonl`` (pdfs2 papers, the gold set's format:
``pdf``, ``domain``, ``sid``, ``sha1``, ``section_kind``, ``role``, ``function``, ``note`` and ``text`` only
for open papers). A training row: ``uid``, ``source``, ``paper_id``, ``field``, ``section``, ``position``,
``section_kind``, ``sha1``, ``role``, ``function``, ``annotator``, ``note``, and ``text`` / ``heading`` only
where the source's licence allows quoting (:attr:`SourcePaper.open_text`). Rows without text are joined
back by re-reading their source (:mod:`models.datasets.annotation_sources`) and checking the sha1.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.errors import DatasetError
from models.datasets.annotation import Unit, text_sha1
from models.datasets.annotation_sources import SourcePaper
from models.datasets.documents import LabelledDocument
from models.datasets.gold import DEV5_DIR

ANNOTATED_DIR = Path(__file__).resolve().parent / "annotated"
ANNOTATED_CORPUS = ANNOTATED_DIR / "train.jsonl.gz"  # the committed corpus (JSON Lines, gzip)
GOLD2_DIR = Path(__file__).resolve().parent / "gold_data" / "gold2"
GOLD3_DIR = Path(__file__).resolve().parent / "gold_data" / "gold3"  # more sentences of gold2's papers
GOLD4_DIR = Path(__file__).resolve().parent / "gold_data" / "gold4"  # further sentences of gold2's papers
# The pdfs2 gold tests by name (`rhetorica eval functions --data NAME`, role dataset NAME-papers:test).
GOLD_TESTS = {"gold2": GOLD2_DIR, "gold3": GOLD3_DIR, "gold4": GOLD4_DIR}
# The gold tests' batch-name prefixes and where each test's rows are committed.
GOLD_BATCHES = {"dev5-": DEV5_DIR, "gold4-": GOLD4_DIR, "gold3-": GOLD3_DIR, "gold-": GOLD2_DIR}


def gold_test_dir(batch: str) -> Path | None:
    """Where the rows of annotation batch ``batch`` are committed when it is a gold test's (None: a training
    batch, committed to the annotated corpus)."""
    return next((folder for prefix, folder in GOLD_BATCHES.items() if batch.startswith(prefix)), None)


@dataclass(frozen=True)
class Label:
    uid: str
    role: str
    function: str
    note: str = ""


def read_labels(path: Path) -> dict[str, Label]:
    """An annotator's labels by uid, or a one-line error naming the file and the first bad line."""
    from models.datasets.annotation import read_jsonl_objects

    what = "annotation labels (JSON Lines of uid, role, function)"
    out: dict[str, Label] = {}
    for number, row in read_jsonl_objects(path, what):
        bad = [name for name in ("uid", "role", "function") if not isinstance(row.get(name), str | int)
               or isinstance(row.get(name), bool)]
        if bad or not isinstance(row.get("note", ""), str):
            names = ", ".join(bad) or "note"
            raise DatasetError(f"{path}:{number}: not a label row (no text for {names}); expected {what}")
        out[str(row["uid"])] = Label(str(row["uid"]), str(row["role"]), str(row["function"]),
                                     str(row.get("note", "")))
    return out


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa of two label sequences (1 = perfect, 0 = chance); 1.0 for identical constant input."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two label sequences of the same, non-zero length")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[k] * count_b.get(k, 0) for k in count_a) / (n * n)
    return 1.0 if expected >= 1.0 else (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class Agreement:
    group: str
    sentences: int
    role_agreement: float
    role_kappa: float
    function_agreement: float
    function_kappa: float

    def as_row(self) -> str:
        return (f"| {self.group} | {self.sentences} | {100 * self.role_agreement:.1f} | "
                f"{self.role_kappa:.3f} | {100 * self.function_agreement:.1f} | {self.function_kappa:.3f} |")


def agreement(units: Sequence[Unit], first: Mapping[str, Label], second: Mapping[str, Label],
              group_of: str = "field") -> list[Agreement]:
    """Raw agreement and Cohen's kappa for roles and functions, overall and per ``group_of`` value
    (``field``: the five coarse fields of :func:`coarse_field`)."""
    from models.datasets.annotation_sources import coarse_field

    both = [u for u in units if u.uid in first and u.uid in second]
    groups: dict[str, list[Unit]] = {"all": both}
    for unit in both:
        value = str(getattr(unit, group_of))
        groups.setdefault(coarse_field(value) if group_of == "field" else value, []).append(unit)
    out = []
    for name, chosen in groups.items():
        if not chosen:
            continue
        roles = ([first[u.uid].role for u in chosen], [second[u.uid].role for u in chosen])
        functions = ([first[u.uid].function for u in chosen], [second[u.uid].function for u in chosen])
        out.append(Agreement(name, len(chosen), _share_equal(*roles), cohen_kappa(*roles),
                             _share_equal(*functions), cohen_kappa(*functions)))
    return out


def _share_equal(a: Sequence[str], b: Sequence[str]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def training_row(unit: Unit, label: Label, annotator: str) -> dict[str, object]:
    row: dict[str, object] = {
        "uid": unit.uid, "source": unit.source, "paper_id": unit.paper_id, "field": unit.field,
        "section": unit.section, "position": unit.position, "section_kind": unit.section_kind,
        "sha1": unit.sha1, "role": label.role, "function": label.function, "annotator": annotator,
        "note": label.note}
    if unit.open_text:
        row["heading"] = unit.heading
        row["text"] = unit.text
    return row


def write_jsonl(path: Path, rows: Iterable[Mapping[str, object]]) -> int:
    """JSON Lines, gzip-compressed when ``path`` ends in ``.gz`` (byte-identical for the same rows: no
    file name or time in the gzip header)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(dict(r), ensure_ascii=False) + "\n" for r in rows]
    data = "".join(lines).encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(data)
    return len(lines)


def read_rows(path: Path) -> list[dict[str, object]]:
    """The rows of a JSON Lines file (``.gz``: gzip-compressed)."""
    if not path.is_file():
        raise DatasetError(f"{path}: annotated corpus file missing")
    try:
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as error:
        raise DatasetError(f"{path}: not a readable annotated corpus file ({type(error).__name__})") from None


# -- reading the corpus back as training documents ----------------------------------------------------
def source_papers(keys: set[tuple[str, str]], shared: Path | None) -> dict[tuple[str, str], SourcePaper]:
    """The source papers of ``keys`` with every section, read again from the shared data: for rows stored
    without text, and for whole sections (abstract-only sources are never needed: their rows carry
    their text and their runs are whole already)."""
    from models.datasets import annotation_sources as src

    root = src.shared_root(shared)
    sources = {s for s, _ in keys}
    readers = {"oa-stm": lambda: src.read_oa_stm(root), "unarxive": lambda: src.read_unarxive(root),
               "pmc-jats": lambda: src.read_pmc_jats(root), "scirex": lambda: src.read_scirex(root),
               "pdfs2": lambda: src.read_pdfs2(root.parent, {p for s, p in keys if s == "pdfs2"})}
    papers: dict[tuple[str, str], SourcePaper] = {}
    for source, read in readers.items():
        if source in sources:
            papers.update({(p.source, p.paper_id): p for p in read() if (p.source, p.paper_id) in keys})
    return papers


@dataclass(frozen=True)
class AnnotatedSentence:
    source: str
    paper_id: str
    section: int
    position: int
    text: str
    role: str
    function: str
    section_kind: str


SOURCES = ("oa-stm", "pmc-jats", "arxiv-abs", "csabstruct", "scirex", "unarxive", "pdfs2")


def document_source(doc_id: str) -> str | None:
    """The corpus source of an annotated document id (a whole section's or a run's), or None for another
    dataset's document."""
    for source in sorted(SOURCES, key=len, reverse=True):
        if doc_id.startswith((f"annotated-section-{source}-", f"annotated-{source}-")):
            return source
    return None


def is_dev_paper(source: str, paper_id: str) -> bool:
    """The annotated corpus's dev papers: those whose key hashes into one tenth (model selection)."""
    import hashlib

    return hashlib.sha1(f"{source}:{paper_id}".encode()).digest()[0] % 10 == 0


def annotated_sentences(split: str = "train", shared: Path | None = None,
                        path: Path | None = None) -> list[AnnotatedSentence]:
    """The corpus's sentences with their labels, in corpus order. ``split``: ``train`` (all but the dev
    papers), ``dev`` (:func:`is_dev_paper`: model selection), or ``all``. Rows without text are read
    again from their source and kept only when the sha1 still matches."""
    if split not in {"train", "dev", "all"}:
        raise DatasetError(f"annotated has splits train, dev, all, not {split!r}")
    rows = [r for r in read_rows(path or ANNOTATED_CORPUS)
            if split == "all" or (split == "dev") == is_dev_paper(str(r["source"]), str(r["paper_id"]))]
    missing = {(str(r["source"]), str(r["paper_id"])) for r in rows if "text" not in r}
    papers = source_papers(missing, shared) if missing else {}
    out: list[AnnotatedSentence] = []
    for row in rows:
        source, paper_id = str(row["source"]), str(row["paper_id"])
        section, position = int(str(row["section"])), int(str(row["position"]))
        text = row.get("text")
        kind = str(row["section_kind"])
        if text is None:
            paper = papers.get((source, paper_id))
            place = locate(paper, section, position, str(row["sha1"]),
                           str(row.get("heading") or "")) if paper is not None else None
            if paper is None or place is None:
                continue  # the source (or the parser) changed: never train on another sentence
            if place != (section, position):  # a parser change moved it: its section's kind is the new one
                section, position = place
                kind = paper.sections[section].kind
            text = paper.sections[section].sentences[position]
        out.append(AnnotatedSentence(source, paper_id, section, position, str(text), str(row["role"]),
                                     str(row["function"]), kind))
    return out


def locate(paper: SourcePaper, section: int, position: int, sha1: str,
           heading: str | None = None) -> tuple[int, int] | None:
    """Where an annotated sentence is in ``paper`` as read now: at its recorded (section, position) when
    the text there still has its ``sha1``; else at the one place in the paper with that hash (a parser
    change found or lost a heading before it), or, where the text is there twice (an abstract's sentence
    repeated in the conclusions), the one place under the recorded ``heading``; else None (never another
    sentence)."""
    if section < len(paper.sections) and position < len(paper.sections[section].sentences) \
            and text_sha1(paper.sections[section].sentences[position]) == sha1:
        return section, position
    places = [(s, p) for s, part in enumerate(paper.sections) for p, text in enumerate(part.sentences)
              if text_sha1(text) == sha1]
    if len(places) > 1 and heading:
        places = [(s, p) for s, p in places if paper.sections[s].heading == heading]
    return places[0] if len(places) == 1 else None


def annotated_runs(split: str = "train", shared: Path | None = None,
                   path: Path | None = None) -> list[list[AnnotatedSentence]]:
    """Each run of consecutive annotated sentences of one section, in reading order (splits as
    :func:`annotated_sentences`), runs sorted by (source, paper, section, first position)."""
    by_section: dict[tuple[str, str, int], list[AnnotatedSentence]] = {}
    for item in annotated_sentences(split, shared, path):
        by_section.setdefault((item.source, item.paper_id, item.section), []).append(item)
    return [run for _, items in sorted(by_section.items()) for run in annotated_runs_of(items)]


def run_id(run: Sequence[AnnotatedSentence]) -> str:
    """A run's document id: its source, paper, section and first position."""
    return f"annotated-{run[0].source}-{run[0].paper_id}-{run[0].section}-{run[0].position}"


def annotated_documents(split: str = "train", shared: Path | None = None,
                        path: Path | None = None) -> list[LabelledDocument]:
    """The annotated runs (:func:`annotated_runs`) as role-labelled documents, each with its section's
    kind."""
    return [LabelledDocument(run_id(run), [c.text for c in run], [c.role for c in run],
                             [frozenset({c.role}) for c in run], [c.section_kind for c in run])
            for run in annotated_runs(split, shared, path)]


@dataclass(frozen=True)
class AnnotatedSection:
    """One WHOLE section that holds annotated sentences, as the app reads it: every sentence's text, the
    section's kind, and each sentence's annotation (None for the context sentences)."""

    doc_id: str
    kind: str
    texts: list[str]
    annotated: list[AnnotatedSentence | None]
    source: str = ""  # the corpus source ("oa-stm", "pdfs2", …)


def annotated_sections(split: str = "train", shared: Path | None = None,
                       path: Path | None = None) -> list[AnnotatedSection]:
    """The annotated sentences inside their whole sections (splits as :func:`annotated_sentences`). A
    section whose source text can no longer be matched (sha1 of every annotated sentence at its place)
    falls back to its annotated runs, one "section" each."""
    items = annotated_sentences(split, shared, path)
    by_section: dict[tuple[str, str, int], list[AnnotatedSentence]] = {}
    for item in items:
        by_section.setdefault((item.source, item.paper_id, item.section), []).append(item)
    papers = source_papers({(s, p) for s, p, _ in by_section}, shared)
    out: list[AnnotatedSection] = []
    for (source, paper_id, section), labelled in sorted(by_section.items()):
        paper = papers.get((source, paper_id))
        texts = (paper.sections[section].sentences if paper is not None and section < len(paper.sections)
                 else [])
        at = {c.position: c for c in labelled}
        if not texts or any(p >= len(texts) or texts[p] != c.text for p, c in at.items()):
            out += [AnnotatedSection(run_id(r), r[0].section_kind, [c.text for c in r], list(r), source)
                    for r in annotated_runs_of(labelled)]
            continue
        out.append(AnnotatedSection(f"annotated-section-{source}-{paper_id}-{section}",
                                    labelled[0].section_kind, list(texts),
                                    [at.get(i) for i in range(len(texts))], source))
    return out


def annotated_section_documents(split: str = "train", shared: Path | None = None,
                                path: Path | None = None) -> list[LabelledDocument]:
    """:func:`annotated_sections` as role-labelled documents: the annotated sentences labelled and the
    others context only (no label, an empty allowed set)."""
    out: list[LabelledDocument] = []
    for section in annotated_sections(split, shared, path):
        roles = [c.role if c is not None else "" for c in section.annotated]
        allowed = [frozenset({r}) if r else frozenset() for r in roles]
        out.append(LabelledDocument(section.doc_id, list(section.texts), roles, allowed,
                                    [section.kind] * len(section.texts)))
    return out


def annotated_runs_of(items: Sequence[AnnotatedSentence]) -> list[list[AnnotatedSentence]]:
    """One section's annotated sentences split into runs of consecutive positions."""
    ordered = sorted(items, key=lambda i: i.position)
    runs: list[list[AnnotatedSentence]] = []
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i].position != ordered[i - 1].position + 1:
            runs.append(ordered[start:i])
            start = i
    return runs
