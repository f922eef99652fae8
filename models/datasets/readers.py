"""Readers for the public labelled role datasets in ``../shared/data`` (pure Python + pyarrow).

Each ``load_*`` takes the data root and a split name and returns :class:`LabelledDocument` objects;
:mod:`models.datasets.registry` maps dataset names to them.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import OrderedDict
from pathlib import Path

from core.text.sentences import split_sentence_texts
from models.datasets.documents import LabelledDocument, bad_split, need_file
from models.datasets.labels import DATASET_LABELS, ROLE_MAPPINGS, SCIARG_FINE_ROLES, labelled_document

# --- CSAbstruct -------------------------------------------------------------------------------

def load_csabstruct(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "dev", "test", "test-dedup", "dev-dedup")
    if split not in known:
        raise bad_split("csabstruct", split, known)
    folder = root / "csabstruct"

    def read(part: str) -> list[dict]:
        with need_file(folder / f"{part}.jsonl").open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    # Every abstract_id in the files is 0: documents are named by their line number instead.
    part = split.split("-")[0]
    rows = list(enumerate(read(part)))
    # The files repeat abstracts across splits: 26 test abstracts are in train, 6 in dev.
    # test-dedup drops those from test; dev-dedup drops the test ones from dev, so that early
    # stopping and calibration on it never see a test abstract.
    repeats = {"test-dedup": ("train", "dev"), "dev-dedup": ("test",)}.get(split, ())
    if repeats:
        seen = {tuple(r["sentences"]) for other in repeats for r in read(other)}
        rows = [(i, r) for i, r in rows if tuple(r["sentences"]) not in seen]
    return [
        labelled_document("csabstruct", f"csabstruct-{part}-{i}", list(r["sentences"]),
                          list(r["labels"]), ["abstract"] * len(r["sentences"]))
        for i, r in rows
    ]


# --- PMC-Sents-FULL ---------------------------------------------------------------------------

def _holdout(key: str, percent: int = 10) -> bool:
    digest = hashlib.sha1(key.encode("utf-8")).digest()
    return digest[0] * 100 // 256 < percent


def load_pmc(root: Path, split: str) -> list[LabelledDocument]:
    """One document per row: the rows are shuffled sentences, so no context is available.

    ``dev-fit`` / ``dev-holdout`` split dev by article (PMCID hash, ~10% held out), so a model
    trained on dev-fit can early-stop on dev-holdout while ``test`` stays the reported split.
    """
    known = ("dev", "test", "dev-fit", "dev-holdout")
    if split not in known:
        raise bad_split("pmc-sents-full", split, known)
    import pyarrow.parquet as pq

    part = split.split("-")[0]
    table = pq.read_table(need_file(root / "pmc_sents_full" / f"pmc_sents_full_{part}.parquet"),
                          columns=["id", "text", "label_id"])
    names = DATASET_LABELS["pmc-sents-full"]
    docs = []
    for row, (pmcid, text, label_id) in enumerate(zip(table.column("id").to_pylist(),
                                                      table.column("text").to_pylist(),
                                                      table.column("label_id").to_pylist())):
        if (split == "dev-fit" and _holdout(pmcid)) or (split == "dev-holdout" and not _holdout(pmcid)):
            continue
        docs.append(labelled_document("pmc-sents-full", f"{pmcid}#{part}{row}", [text],
                                      [names[int(label_id)]], None))
    return docs


# --- PubMedQA ---------------------------------------------------------------------------------

# PubMedQA heading keywords, matched in order as whole words on the upper-cased heading.
_PUBMEDQA_HEADINGS: tuple[tuple[str, str], ...] = (
    (r"BACKGROUND|INTRODUCTION|CONTEXT|RATIONALE|SUMMARY OF BACKGROUND", "background"),
    (r"OBJECTIVES?|PURPOSES?|AIMS?|GOALS?|HYPOTHES[IE]S|OBJECT", "objective"),
    (
        r"METHODS?|METHODOLOGY|MATERIALS?|DESIGN|SETTINGS?|PATIENTS?|PARTICIPANTS|SUBJECTS|"
        r"POPULATION|SAMPLE|INTERVENTIONS?|MEASURES?|MEASUREMENTS?|OUTCOMES? MEASURE[SD]?|"
        r"MAIN OUTCOMES?|DATA SOURCES?|DATA EXTRACTION|STUDY SELECTION|PROBANDS|LOCATION|"
        r"CASE (?:REPORTS?|PRESENTATION|DESCRIPTION|DEFINITION)|COLLECTION|END POINT|"
        r"EXTRACTION METHODS|MAIN RESEARCH VARIABLES|TRIAL REGISTRATION",
        "method",
    ),
    (r"RESULTS?|FINDINGS|OBSERVATIONS|DATA SYNTHESIS|OUTCOMES", "result"),
    (r"CONCLUSIONS?|DISCUSSION|LIMITATIONS|INTERPRETATION", "conclusion"),
)


def _split_paragraph(text: str) -> list[str]:
    return [p.strip() for p in split_sentence_texts(text) if p.strip()]


def pubmedqa_heading_roles(heading: str) -> list[str]:
    """Canonical roles named by a structured-abstract heading, in the order they appear."""
    upper = heading.upper()
    found: list[tuple[int, str]] = []
    for pattern, role in _PUBMEDQA_HEADINGS:
        match = re.search(rf"\b(?:{pattern})\b", upper)
        if match:
            found.append((match.start(), role))
    return [role for _, role in sorted(found)]


def load_pubmedqa(root: Path, split: str) -> list[LabelledDocument]:
    """Context paragraphs labelled by heading, then LONG_ANSWER as the conclusion.

    ``test`` = the 500 PMIDs of ``test_ground_truth.json``, ``train`` = the other 500.
    Paragraphs whose heading names no known role (e.g. "UNLABELLED") are dropped.
    A heading naming several roles ("BACKGROUND AND PURPOSE") is labelled by its first
    role but allows all of them.
    """
    known = ("train", "test", "all")
    if split not in known:
        raise bad_split("pubmedqa", split, known)
    folder = root / "pubmedqa_labeled"
    data = json.loads(need_file(folder / "ori_pqal.json").read_text(encoding="utf-8"))
    test_ids = set(json.loads(need_file(folder / "test_ground_truth.json").read_text(encoding="utf-8")))
    docs = []
    for pmid, item in data.items():
        if (split == "train" and pmid in test_ids) or (split == "test" and pmid not in test_ids):
            continue
        sentences: list[str] = []
        labels: list[str] = []
        allowed: list[frozenset[str]] = []
        paragraphs = list(zip(item["CONTEXTS"], item["LABELS"]))
        paragraphs.append((item["LONG_ANSWER"], "CONCLUSIONS"))
        for text, heading in paragraphs:
            roles = pubmedqa_heading_roles(heading)
            if not roles:
                continue
            for sentence in _split_paragraph(text):
                sentences.append(sentence)
                labels.append(roles[0])
                allowed.append(frozenset(roles))
        if sentences:
            docs.append(LabelledDocument(f"pubmedqa-{pmid}", sentences, labels, allowed,
                                         ["abstract"] * len(sentences)))
    return docs


# --- NICTA-PIBOSO -----------------------------------------------------------------------------

def load_nicta(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "dev", "test")
    if split not in known:
        raise bad_split("nicta-piboso", split, known)
    path = need_file(root / "nicta_piboso" / f"{split}_clean.txt")
    docs: list[LabelledDocument] = []
    doc_id = ""
    sentences: list[str] = []
    labels: list[str] = []

    def flush() -> None:
        if sentences:
            docs.append(labelled_document("nicta-piboso", f"nicta-{doc_id}", list(sentences),
                                          list(labels), ["abstract"] * len(sentences)))
        sentences.clear()
        labels.clear()

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("###"):
            flush()
            doc_id = line[3:].strip()
        elif line.strip():
            label, _, text = line.partition("\t")
            sentences.append(text.strip())
            labels.append(label.strip())
    flush()
    return docs


# --- SciARG -----------------------------------------------------------------------------------

def load_sciarg_fine(root: Path, split: str) -> list[LabelledDocument]:
    """SciARG with the fine unit types as labels (same units and allowed sets)."""
    return load_sciarg(root, split, fine=True)


def load_sciarg(root: Path, split: str, fine: bool = False) -> list[LabelledDocument]:
    """Argument units per abstract; labels are coarse types (fine types with ``fine``), allowed
    sets come from fine types."""
    known = ("train", "test", "train-bio", "train-cl", "test-bio", "test-cl")
    if split not in known:
        raise bad_split("sciarg-fine" if fine else "sciarg", split, known)
    part, _, domain = split.partition("-")
    domains = [domain] if domain else ["bio", "cl"]
    filename = "training.tsv" if part == "train" else "test-consensus.tsv"
    docs = []
    for dom in domains:
        path = need_file(root / "sciarg_abstract_argument_units" / dom / filename)
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        grouped: OrderedDict[str, list[dict]] = OrderedDict()
        for row in rows:
            grouped.setdefault(row["doc_id"], []).append(row)
        for doc_id, units in grouped.items():
            units.sort(key=lambda r: int(r["adu_pos"]))
            coarse = [u["coarse_aty"].strip() for u in units]
            allowed = [SCIARG_FINE_ROLES.get(u["aty"].strip(), ROLE_MAPPINGS["sciarg"][c])
                       for u, c in zip(units, coarse)]
            labels = [u["aty"].strip() for u in units] if fine else coarse
            docs.append(LabelledDocument(f"sciarg-{dom}-{doc_id}", [u["text"].strip() for u in units],
                                         labels, allowed, ["abstract"] * len(units)))
    return docs


# --- UCI argumentative zoning -----------------------------------------------------------------

def load_uci(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "test")
    if split not in known:
        raise bad_split("uci-az", split, known)
    path = need_file(root / "uci_sentence_classification_az" / f"{split}.jsonl")
    docs = []
    with path.open(encoding="utf-8") as handle:
        for row, line in enumerate(handle):
            if line.strip():
                item = json.loads(line)
                docs.append(labelled_document("uci-az", f"uci-{split}-{row}", [item["text"]],
                                              [item["label"]], None))
    return docs
