"""Batches for hand annotation of roles and functions on full papers (issue 24), and reading them back.

``make_batches`` draws papers from :mod:`models.datasets.annotation_sources`, samples from each its
abstract (up to ``ABSTRACT_MAX`` sentences) and ``WINDOWS`` runs of ``WINDOW`` consecutive body
sentences from different sections (the annotator reads each sentence with its heading and neighbours),
and writes, per batch:

* ``batch-NN.txt``: what the annotator reads (no model output, no marker rule: only the papers' text);
* ``batch-NN.key.jsonl``: one row per sentence to label (uid, source, paper, field, heading, section
  kind, position, sha1, open_text, text), kept beside the batch, never shown to the annotator.

The new gold test (``split = "gold-test"``) is a fixed set of pdfs2 papers of all four fields; no other
batch holds a sentence of those papers. Everything is deterministic for a seed.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from models.datasets.annotation_sources import SourcePaper

ABSTRACT_MAX = 8
WINDOW = 8
WINDOWS = 5
BODY_KINDS_FIRST = ("introduction", "method", "result", "discussion", "conclusion", "related_work",
                    "other", "unknown")


def text_sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Unit:
    """One sentence to label, with what locates it again."""

    uid: str
    split: str  # "train" or "gold-test"
    batch: str
    source: str
    paper_id: str
    field: str
    heading: str
    section_kind: str
    section: int  # section index in the paper as read
    position: int  # sentence index within that section
    sha1: str
    open_text: bool
    text: str


@dataclass(frozen=True)
class Window:
    section: int
    start: int
    end: int  # exclusive


def sample_windows(paper: SourcePaper, rng: random.Random, *, abstract_max: int = ABSTRACT_MAX,
                   window: int = WINDOW, windows: int = WINDOWS,
                   skip_sections: frozenset[int] = frozenset()) -> list[Window]:
    """The abstract's first ``abstract_max`` sentences and up to ``windows`` body runs of ``window``
    sentences, one per section, sections of different kinds first (introduction, method, results …).
    Sections in ``skip_sections`` (already annotated in an earlier round) are never drawn."""
    chosen: list[Window] = []
    body: list[int] = []
    for index, section in enumerate(paper.sections):
        if index in skip_sections:
            continue
        if section.kind == "abstract":
            if not any(paper.sections[w.section].kind == "abstract" for w in chosen):
                chosen.append(Window(index, 0, min(abstract_max, len(section.sentences))))
        elif len(section.sentences) >= 2:
            body.append(index)
    by_kind: dict[str, list[int]] = {}
    for index in body:
        by_kind.setdefault(paper.sections[index].kind, []).append(index)
    order: list[int] = []
    rounds = max((len(v) for v in by_kind.values()), default=0)
    shuffled = {kind: rng.sample(v, len(v)) for kind, v in by_kind.items()}
    for turn in range(rounds):
        for kind in sorted(by_kind, key=lambda k: BODY_KINDS_FIRST.index(k) if k in BODY_KINDS_FIRST else 99):
            if turn < len(shuffled[kind]):
                order.append(shuffled[kind][turn])
    for index in order[:windows]:
        size = len(paper.sections[index].sentences)
        start = rng.randrange(0, max(1, size - window + 1))
        chosen.append(Window(index, start, min(size, start + window)))
    return sorted(chosen, key=lambda w: (w.section, w.start))


def paper_units(paper: SourcePaper, windows: Sequence[Window], *, split: str, batch: str,
                first_uid: int) -> list[Unit]:
    units: list[Unit] = []
    for win in windows:
        section = paper.sections[win.section]
        for position in range(win.start, win.end):
            text = section.sentences[position]
            units.append(Unit(f"u{first_uid + len(units):05d}", split, batch, paper.source, paper.paper_id,
                              paper.field, section.heading, section.kind, win.section, position,
                              text_sha1(text), paper.open_text, text))
    return units


def render_batch(papers: Sequence[tuple[SourcePaper, Sequence[Window], Sequence[Unit]]]) -> str:
    """The annotator's view: each paper's title and field, each sampled run under its heading, with one
    sentence of context before and after the run (not to be labelled)."""
    lines: list[str] = []
    for number, (paper, windows, units) in enumerate(papers, 1):
        lines.append(f"### PAPER {number} ({paper.key}) | field: {paper.field} | title: {paper.title or '-'}")
        by_place = {(u.section, u.position): u for u in units}
        for win in windows:
            section = paper.sections[win.section]
            lines.append(f"## Section: {section.heading}")
            if win.start > 0:
                lines.append(f"   (context before) {section.sentences[win.start - 1]}")
            for position in range(win.start, win.end):
                unit = by_place[(win.section, position)]
                lines.append(f"[{unit.uid}] {unit.text}")
            if win.end < len(section.sentences):
                lines.append(f"   (context after) {section.sentences[win.end]}")
            lines.append("")
        lines.append("")
    return "\n".join(lines)


def write_batch(folder: Path, name: str,
                papers: Sequence[tuple[SourcePaper, Sequence[Window], Sequence[Unit]]]) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text(render_batch(papers), encoding="utf-8")
    units = [u for _, _, us in papers for u in us]
    (folder / f"{name}.key.jsonl").write_text("".join(json.dumps(asdict(u), ensure_ascii=False) + "\n"
                                                      for u in units), encoding="utf-8")
    return len(units)


def free_runs(paper: SourcePaper, rng: random.Random, annotated_sha1: set[str], *, window: int = WINDOW,
              windows: int = WINDOWS, kinds: frozenset[str] | None = None) -> list[Window]:
    """Up to ``windows`` body runs of ``window`` consecutive sentences none of which an earlier round
    labelled (by text hash), also inside sections that hold labelled runs elsewhere; at most one run per
    section until every section with room has one, sections in random order. With ``kinds``, only
    sections of those kinds."""
    spans: dict[int, list[int]] = {}  # section -> the starts of its free runs
    for index, section in enumerate(paper.sections):
        if section.kind == "abstract" or (kinds is not None and section.kind not in kinds):
            continue
        free = [text_sha1(text) not in annotated_sha1 for text in section.sentences]
        starts = [i for i in range(0, len(free) - window + 1) if all(free[i:i + window])]
        if starts:
            spans[index] = starts
    chosen: list[Window] = []
    order = rng.sample(sorted(spans), len(spans))
    while order and len(chosen) < windows:
        for index in list(order):
            starts = [s for s in spans[index]
                      if all(s >= w.end or s + window <= w.start for w in chosen if w.section == index)]
            if not starts:
                order.remove(index)
                continue
            start = rng.choice(starts)
            chosen.append(Window(index, start, start + window))
            if len(chosen) == windows:
                break
    return sorted(chosen, key=lambda w: (w.section, w.start))


def annotated_sections(paper: SourcePaper, annotated_sha1: set[str]) -> frozenset[int]:
    """Indices of the paper's sections that hold a sentence an earlier round labelled (by text hash)."""
    return frozenset(index for index, section in enumerate(paper.sections)
                     if any(text_sha1(text) in annotated_sha1 for text in section.sentences))


def pack_batches(papers: Iterable[SourcePaper], *, split: str, prefix: str, target: int, rng: random.Random,
                 first_uid: int, annotated_sha1: set[str] | None = None, windows: int = WINDOWS,
                 free_runs_only: bool = False, kinds: frozenset[str] | None = None,
                 ) -> list[tuple[str, list[tuple[SourcePaper, list[Window], list[Unit]]]]]:
    """Papers (in the given order) sampled and packed into batches of about ``target`` sentences; with
    ``annotated_sha1``, sections holding an already-labelled sentence are left out, or, with
    ``free_runs_only``, only its labelled sentences (:func:`free_runs`, of sections of ``kinds`` if given)."""
    from core.errors import DatasetError
    from models.datasets.gold import dev5_papers

    held_out = dev5_papers() if split == "train" else frozenset()
    batches: list[tuple[str, list[tuple[SourcePaper, list[Window], list[Unit]]]]] = []
    current: list[tuple[SourcePaper, list[Window], list[Unit]]] = []
    size, uid = 0, first_uid
    for paper in papers:
        if paper.paper_id in held_out:  # stop, not skip: a skip would silently change what the round draws
            raise DatasetError(f"{paper.key}: a paper of the dev set v5 cannot go into a training batch; "
                               "leave it out of the round's papers")
        if free_runs_only:
            chosen = free_runs(paper, rng, annotated_sha1 or set(), windows=windows, kinds=kinds)
        else:
            skip = annotated_sections(paper, annotated_sha1) if annotated_sha1 else frozenset()
            chosen = sample_windows(paper, rng, skip_sections=skip, windows=windows)
        name = f"{prefix}{len(batches) + 1:02d}"
        units = paper_units(paper, chosen, split=split, batch=name, first_uid=uid)
        abstract_only = all(s.kind == "abstract" for s in paper.sections)
        if len(units) < (3 if abstract_only else 10):
            continue
        uid += len(units)
        current.append((paper, chosen, units))
        size += len(units)
        if size >= target:
            batches.append((name, current))
            current, size = [], 0
    if current:
        name = f"{prefix}{len(batches) + 1:02d}"
        batches.append((name, [(p, w, [Unit(**{**asdict(u), "batch": name}) for u in us])
                               for p, w, us in current]))
    return batches


ANNOTATION_FILE_LIMIT = 1_000_000_000  # a batch's key or labels: a few MB; more is not one of them


def read_jsonl_objects(path: Path, what: str) -> Iterable[tuple[int, dict]]:
    """(line number, object) of an annotation JSON Lines file (:func:`core.fileio.read_jsonl_objects`,
    at most :data:`ANNOTATION_FILE_LIMIT` bytes)."""
    from core.fileio import read_jsonl_objects as read_objects

    return read_objects(path, what, max_bytes=ANNOTATION_FILE_LIMIT)


_UNIT_TYPES = {name: (int if kind == "int" else bool if kind == "bool" else str)
               for name, kind in Unit.__annotations__.items()}


def read_key(path: Path) -> list[Unit]:
    """A batch's key (its units), or a one-line error naming the file and the first bad line."""
    from core.errors import DatasetError

    what = "an annotation batch key (.key.jsonl)"
    units = []
    for number, row in read_jsonl_objects(path, what):
        missing = [name for name in _UNIT_TYPES if name not in row]
        extra = [name for name in row if name not in _UNIT_TYPES]
        wrong = [name for name, kind in _UNIT_TYPES.items() if name in row
                 and (type(row[name]) is not kind)]
        if missing or extra or wrong:
            said = "; ".join(part for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unexpected {', '.join(extra)}" if extra else "",
                f"wrong type of {', '.join(wrong)}" if wrong else "") if part)
            raise DatasetError(f"{path}:{number}: not a key row ({said}); expected {what}")
        units.append(Unit(**row))
    return units
