"""The hand-labelled full-paper gold set: role and communicative function of body sentences.

Twelve of the shared PDFs, half CS/NLP and half biomedical/other, split *by paper* into dev (4)
and test (8).  The labelled rows live in ``models/datasets/gold_data/{dev,test}.jsonl`` and point
at sentences of the parsed PDFs (``pdf`` + sentence ``sid`` + ``sha1`` of the text); the text of
a sentence is written into the row only for papers under an open (CC BY) licence, and is always
read back from ``../shared/pdfs`` by parsing, so a changed parser is noticed (the hash no longer
matches) instead of silently scoring other sentences.  How the set was made:
``gold_data/README.md``.

Neither split is training data: these twelve papers are also kept out of the distant function
labels (``EXCLUDED_FROM_TRAINING``).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from core.document import Paper, Sentence
from core.errors import DatasetError
from models.datasets.documents import LabelledDocument
from models.roles import ROLES

GOLD_DIR = Path(__file__).resolve().parent / "gold_data"
# The dev set v5 (session 23): fresh papers no batch or gold set reads, for judging candidates (split dev).
DEV5_DIR = GOLD_DIR / "dev5"

#: paper (PDF stem in ../shared/pdfs) -> (domain, split, licence tier)
GOLD_PAPERS: dict[str, tuple[str, str, str]] = {
    # CS / NLP
    "acl2020-main-207": ("cs", "test", "open"),
    "acl2020-main-447_S2ORC": ("cs", "test", "open"),
    "papermage_emnlp2023demo": ("cs", "test", "open"),
    "emnlp2011-fader11": ("cs", "test", "acl_nc"),
    "naacl2018-N18-3011": ("cs", "dev", "open"),
    "acl2014-P14-1059": ("cs", "dev", "acl_nc"),
    # biomedical / other sciences
    "peerj-webb2017": ("bio", "test", "open"),
    "bmc-agyemanduah2014": ("bio", "test", "open"),
    "intpsychogeriatrics-2014": ("bio", "test", "open_nc"),
    "arxiv-2201.13352v1_StrainSensor": ("other", "test", "arxiv"),
    "hindawi-rerp-157939": ("bio", "dev", "open"),
    "iop-jpcs-2188-012011": ("other", "dev", "open"),
}
EXCLUDED_FROM_TRAINING = frozenset(GOLD_PAPERS)
SPLITS = ("dev", "test")


def dev5_papers() -> frozenset[str]:
    """The dev set v5's papers (PDF stems): never training data (empty before its rows exist)."""
    path = DEV5_DIR / "dev.jsonl"
    if not path.is_file():
        return frozenset()
    return frozenset(json.loads(line)["pdf"] for line in path.read_text(encoding="utf-8").splitlines()
                     if line.strip())
BODY_KINDS = ("introduction", "related-work", "method", "result", "discussion", "conclusion", "other")


def text_sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class GoldSentence:
    pdf: str
    sid: str
    index: int  # in the parsed paper's sentences
    text: str
    section_kind: str
    role: str
    function: str  # a taxonomy id, or "none"
    domain: str  # "cs", "bio" or "other"
    split: str


def _section_kind(paper: Paper, sentence: Sentence) -> str:
    index = sentence.section_index
    return paper.sections[index].kind.value if 0 <= index < len(paper.sections) else "other"


def sample_candidates(pdf_dir: Path, per_paper: int = 45, seed: int = 11) -> list[dict[str, object]]:
    """Body sentences drawn at random from each gold paper, in reading order, with context.

    Used once, to write the sheets that were labelled by hand; kept so that how the sample was
    drawn can be checked.
    """
    from core.pdf import parse_pdf

    rows: list[dict[str, object]] = []
    for name in GOLD_PAPERS:
        path = pdf_dir / f"{name}.pdf"
        if not path.is_file():
            raise DatasetError(f"{path}: gold paper missing")
        paper = parse_pdf(path)
        body = [s for s in paper.sentences if _section_kind(paper, s) in BODY_KINDS]
        picked = sorted(random.Random(f"{seed}:{name}").sample(body, min(per_paper, len(body))),
                        key=lambda s: s.index)
        for s in picked:
            section = paper.sections[s.section_index]
            rows.append({
                "pdf": name, "sid": s.id, "sha1": text_sha1(s.text),
                "section_heading": section.heading, "section_kind": section.kind.value,
                "previous": paper.sentences[s.index - 1].text if s.index > 0 else "",
                "text": s.text,
                "next": paper.sentences[s.index + 1].text if s.index + 1 < len(paper.sentences) else "",
            })
    return rows


def _read_rows(split: str, gold_dir: Path) -> list[dict[str, str]]:
    if split not in SPLITS:
        raise DatasetError(f"gold has splits {', '.join(SPLITS)}, not {split!r}")
    path = gold_dir / f"{split}.jsonl"
    if not path.is_file():
        raise DatasetError(f"{path}: gold split missing")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sentences_by_sha1(paper: Paper) -> dict[str, list[Sentence]]:
    """The paper's sentences by the hash of their text (a gold row whose sentence moved is found again by
    its text when that text occurs once)."""
    by_sha1: dict[str, list[Sentence]] = {}
    for sentence in paper.sentences:
        by_sha1.setdefault(text_sha1(sentence.text), []).append(sentence)
    return by_sha1


def load_gold_papers(split: str, pdf_dir: Path, gold_dir: Path = GOLD_DIR
                     ) -> list[tuple[Paper, list[GoldSentence]]]:
    """Each gold paper of one split, freshly parsed, with its gold rows joined to its sentences. A row may
    name its PDF's ``folder`` beside ``pdf_dir`` ("pdfs", "pdfs2": the dev set v5 reads both)."""
    from core.pdf import parse_pdf

    grouped: dict[str, list[dict[str, str]]] = {}
    for row in _read_rows(split, gold_dir):
        grouped.setdefault(row["pdf"], []).append(row)
    out: list[tuple[Paper, list[GoldSentence]]] = []
    for name, rows in grouped.items():
        folder = rows[0].get("folder")
        if folder not in (None, "pdfs", "pdfs2"):
            raise DatasetError(f"gold {name}: unknown folder {folder!r} (pdfs or pdfs2)")
        path = (pdf_dir.parent / folder if folder else pdf_dir) / f"{name}.pdf"
        if not path.is_file():
            raise DatasetError(f"{path}: the gold set needs the shared PDFs")
        paper = parse_pdf(path)
        by_id = {s.id: s for s in paper.sentences}
        by_sha1 = sentences_by_sha1(paper)
        items = []
        for row in rows:
            sentence = by_id.get(row["sid"])
            if sentence is None or text_sha1(sentence.text) != row["sha1"]:
                # a parser change moved the sentence (a caption or heading found or lost before it):
                # the same text, found once in the paper, is the same sentence; anything else fails
                same = by_sha1.get(row["sha1"], [])
                if len(same) != 1:
                    raise DatasetError(f"gold {name} {row['sid']}: the parsed sentence no longer matches "
                                       "(parser changed?); re-check the gold rows")
                sentence = same[0]
            items.append(GoldSentence(name, row["sid"], sentence.index, sentence.text,
                                      _section_kind(paper, sentence), row["role"], row["function"],
                                      row.get("domain") or GOLD_PAPERS[name][0], split))
        out.append((paper, items))
    return out


def load_gold(split: str, pdf_dir: Path, gold_dir: Path = GOLD_DIR) -> list[GoldSentence]:
    """The gold rows of one split, each joined to its sentence in the freshly parsed PDF."""
    return [item for _, items in load_gold_papers(split, pdf_dir, gold_dir) for item in items]


def gold_documents(split: str, pdf_dir: Path, gold_dir: Path = GOLD_DIR) -> list[LabelledDocument]:
    """Gold sentences as role-labelled documents (one per paper, in reading order).

    Only the sampled sentences, without their neighbours: for dev-set uses (early stopping,
    calibration). Scoring a model on gold goes through whole parsed papers instead
    (``rhetorica eval functions``), as the app sees them."""
    by_paper: dict[str, list[GoldSentence]] = {}
    for item in load_gold(split, pdf_dir, gold_dir):
        by_paper.setdefault(item.pdf, []).append(item)
    return [LabelledDocument(f"gold-{name}", [g.text for g in items], [g.role for g in items],
                             [frozenset({g.role}) for g in items], [g.section_kind for g in items])
            for name, items in by_paper.items()]


UNLABELLED = ""  # a gold paper's sentence that was not sampled: context for its neighbours, never scored


def gold_paper_documents(split: str, pdf_dir: Path, gold_dir: Path = GOLD_DIR) -> list[LabelledDocument]:
    """The gold papers as the app labels them: every section run (``core.labelling.analysis.section_runs``)
    that holds a gold sentence is one document with ALL its sentences in reading order and the
    section's kind; gold sentences carry their role, the others :data:`UNLABELLED` (every role
    allowed). A dev score on these (``gold-papers:dev``) measures what ``rhetorica eval functions``
    measures, so model selection looks at sentences in their sections, not alone."""
    from core.labelling.analysis import section_runs

    documents: list[LabelledDocument] = []
    for paper, items in load_gold_papers(split, pdf_dir, gold_dir):
        role_of = {item.index: item.role for item in items}
        for section_index, start, end in section_runs(paper):
            if not any(start <= index < end for index in role_of):
                continue
            kind = (paper.sections[section_index].kind.value
                    if 0 <= section_index < len(paper.sections) else "other")
            labels = [role_of.get(i, UNLABELLED) for i in range(start, end)]
            documents.append(LabelledDocument(
                f"gold-{Path(paper.source_path).stem}-{start}",
                [s.text for s in paper.sentences[start:end]], labels,
                [frozenset({label}) if label else frozenset(ROLES) for label in labels],
                [kind] * (end - start)))
    return documents
