"""Readers for the labelled role datasets (pure Python + pyarrow: no torch here).

Every reader returns :class:`LabelledDocument` objects: one document's sentences in
reading order, each with its dataset's own label and the set of canonical roles
(:data:`models.roles.ROLES`) that label allows.  The mapping from dataset labels to
canonical roles is explicit in :data:`ROLE_MAPPINGS` and documented in ``docs/data.md``.
Training uses the allowed sets (partial labels); evaluation maps a predicted role back
to the dataset's label with :func:`to_dataset_label`.

Dataset names accepted by :func:`load_dataset` (``name:split`` on the command line):

=================  =======================================  ================================
name               splits                                   documents
=================  =======================================  ================================
csabstruct         train, dev, test, test-dedup             one per abstract
pmc-sents-full     dev, test, dev-fit, dev-holdout          one per sentence (rows shuffled)
pubmedqa           train, test, all                         one per abstract (+ conclusion)
nicta-piboso       train, dev, test                         one per abstract
sciarg             train, test (+ -bio / -cl suffix)        one per abstract (units)
sciarg-fine        (as sciarg)                              the same, scored on the 11 fine types
scirex-sections    train                                    one per section (distant labels, distant.py)
uci-az             train, test                              one per sentence
jsonl:PATH         (none)                                   user data, see :func:`_load_jsonl`
csv:PATH           (none)                                   user data: doc_id,text,label
=================  =======================================  ================================
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from core.errors import DatasetError
from models.roles import ROLES


@dataclass
class LabelledDocument:
    """One document's sentences in reading order with their gold labels."""

    doc_id: str
    sentences: list[str]
    labels: list[str]  # the dataset's own label names, per sentence
    allowed: list[frozenset[str]]  # canonical roles each sentence may take
    section_kinds: list[str] | None  # core.document.SectionKind values when known

    def __len__(self) -> int:
        return len(self.sentences)




def _fs(*roles: str) -> frozenset[str]:
    for role in roles:
        assert role in ROLES, role
    return frozenset(roles)


# Each dataset's own label names, in a fixed order (the order evaluation reports them in).
DATASET_LABELS: dict[str, tuple[str, ...]] = {
    "csabstruct": ("background", "objective", "method", "result", "other"),
    "pmc-sents-full": ("other", "objective", "methods", "results", "background"),  # label_id 0..4
    "pubmedqa": ("background", "objective", "method", "result", "conclusion"),
    "nicta-piboso": ("background", "population", "intervention", "study design", "outcome", "other"),
    "sciarg": ("motivation", "proposal", "method", "outcomes", "other"),
    # The same units scored on their fine types: separates result from conclusion, which no
    # other CS-domain set here does (CSAbstruct's "result" holds both).
    "sciarg-fine": ("motivation_background", "motivation_problem", "motivation_hypothesis", "proposal",
                    "proposal_implementation", "means", "result", "result_means", "observation",
                    "conclusion", "information_additional"),
    "uci-az": ("AIMX", "OWNX", "CONT", "BASE", "MISC"),
    "scirex-sections": ("related-work", "conclusion"),  # section headings: models/training/distant.py
    "user": ROLES,
}

# Dataset label -> canonical roles a sentence with that label may take.
ROLE_MAPPINGS: dict[str, dict[str, frozenset[str]]] = {
    # CSAbstruct has no conclusion class: its "result" sentences include the conclusions.
    "csabstruct": {
        "background": _fs("background"),
        "objective": _fs("objective"),
        "method": _fs("method"),
        "result": _fs("result", "conclusion"),
        "other": _fs("other"),
    },
    # PMC-Sents-FULL "other" (0) holds every sentence of sections that are not background /
    # objective / methods / results: introductions, discussions, conclusions, declarations. It does
    # not say which of those roles a sentence plays (see PARTIAL_ONLY), and its own "background"
    # (4) is indistinguishable from many introduction sentences filed under "other".
    "pmc-sents-full": {
        "other": _fs("background", "other", "conclusion"),
        "objective": _fs("objective"),
        "methods": _fs("method"),
        "results": _fs("result"),
        "background": _fs("background"),
    },
    # PubMedQA: structured-abstract headings (see _PUBMEDQA_HEADINGS) + LONG_ANSWER = conclusion.
    "pubmedqa": {
        "background": _fs("background"),
        "objective": _fs("objective"),
        "method": _fs("method"),
        "result": _fs("result"),
        "conclusion": _fs("conclusion"),
    },
    # NICTA-PIBOSO (evidence-based-medicine roles): PICO parts describe the study (method);
    # "outcome" sentences report results and conclusions; "other" mixes aims and conclusions.
    "nicta-piboso": {
        "background": _fs("background"),
        "population": _fs("method"),
        "intervention": _fs("method"),
        "study design": _fs("method"),
        "outcome": _fs("result", "conclusion"),
        "other": _fs("other", "objective", "conclusion"),
    },
    # SciARG coarse types (training uses the finer _SCIARG_FINE sets below).
    "sciarg": {
        "motivation": _fs("background"),
        "proposal": _fs("objective"),
        "method": _fs("method"),
        "outcomes": _fs("result", "conclusion"),
        "other": _fs("other"),
    },
    # UCI argumentative zoning: OWNX covers the paper's own method, results and conclusions;
    # CONT/BASE discuss prior work (background); MISC is mostly background.
    "uci-az": {
        "AIMX": _fs("objective"),
        "OWNX": _fs("method", "result", "conclusion"),
        "CONT": _fs("background"),
        "BASE": _fs("background"),
        "MISC": _fs("background", "other"),
    },
    # Distant labels from section headings (models/training/distant.py).
    "scirex-sections": {"related-work": _fs("background"), "conclusion": _fs("conclusion")},
    "user": {role: _fs(role) for role in ROLES},
}

# Where a canonical role is allowed by several labels of a dataset, the label evaluation uses.
_REVERSE_OVERRIDES: dict[str, dict[str, str]] = {
    "uci-az": {"background": "MISC"},
    "pmc-sents-full": {"background": "background"},
}

# Labels that name no single role: trained with the pure partial-label loss (-log of the summed
# probability of the allowed roles) even when a run asks for soft "primary role" targets.
PARTIAL_ONLY: dict[str, frozenset[str]] = {
    "pmc-sents-full": frozenset({"other"}),
}

# SciARG fine unit types -> allowed canonical roles (training targets).
_SCIARG_FINE: dict[str, frozenset[str]] = {
    "motivation_background": _fs("background"),
    "motivation_problem": _fs("background", "objective"),
    "motivation_hypothesis": _fs("objective", "background"),
    "proposal": _fs("objective"),
    "proposal_implementation": _fs("method", "objective"),
    "means": _fs("method"),
    "result": _fs("result"),
    "result_means": _fs("result", "method"),
    "observation": _fs("result"),
    "conclusion": _fs("conclusion"),
    "information_additional": _fs("other", "background"),
}
ROLE_MAPPINGS["sciarg-fine"] = _SCIARG_FINE
# A predicted role counts as the fine type that names it most plainly.
_REVERSE_OVERRIDES["sciarg-fine"] = {"background": "motivation_background", "objective": "proposal",
                                     "method": "means", "result": "result", "conclusion": "conclusion",
                                     "other": "information_additional"}

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


def to_dataset_label(name: str, role: str) -> str:
    """The dataset label a predicted canonical ``role`` counts as (for evaluation)."""
    key = dataset_key(name)
    if role not in ROLES:
        raise DatasetError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    override = _REVERSE_OVERRIDES.get(key, {}).get(role)
    if override is not None:
        return override
    for label in DATASET_LABELS[key]:
        if role in ROLE_MAPPINGS[key][label]:
            return label
    # A role the dataset cannot express (e.g. "conclusion" on a set without it): nearest label.
    fallback = {"conclusion": "result", "objective": "background"}.get(role, "other")
    for candidate in (fallback, "other", DATASET_LABELS[key][-1]):
        for label in DATASET_LABELS[key]:
            if candidate in ROLE_MAPPINGS[key][label]:
                return label
    return DATASET_LABELS[key][-1]


def dataset_key(name: str) -> str:
    base = name.split(":", 1)[0]
    if base in ("jsonl", "csv"):
        return "user"
    if base not in DATASET_LABELS:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASET_LABELS))}")
    return base


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``name:split`` (or ``jsonl:PATH`` / ``csv:PATH``) into (name, split)."""
    if spec.startswith(("jsonl:", "csv:")):
        return spec, ""
    if ":" not in spec:
        raise DatasetError(f"dataset spec {spec!r} must be NAME:SPLIT (e.g. csabstruct:train)")
    name, split = spec.split(":", 1)
    return name, split


def load_spec(spec: str, shared: Path | None = None) -> list[LabelledDocument]:
    """:func:`load_dataset` for a ``name:split`` string."""
    name, split = parse_spec(spec)
    return load_dataset(name, split, shared)


def load_dataset(name: str, split: str = "", shared: Path | None = None) -> list[LabelledDocument]:
    """Read one split of a named dataset (or a user file ``jsonl:PATH`` / ``csv:PATH``)."""
    if name.startswith("jsonl:"):
        return _load_jsonl(Path(name[6:]))
    if name.startswith("csv:"):
        return _load_csv(Path(name[4:]))
    from models.training.distant import load_scirex_sections

    readers = {
        "scirex-sections": load_scirex_sections,
        "csabstruct": _load_csabstruct,
        "pmc-sents-full": _load_pmc,
        "pubmedqa": _load_pubmedqa,
        "nicta-piboso": _load_nicta,
        "sciarg": _load_sciarg,
        "sciarg-fine": _load_sciarg_fine,
        "uci-az": _load_uci,
    }
    if name not in readers:
        known = ", ".join(sorted(readers))
        raise DatasetError(f"unknown dataset {name!r}; known: {known}, jsonl:PATH, csv:PATH")
    root = _data_root(shared)
    return readers[name](root, split)


def _data_root(shared: Path | None) -> Path:
    if shared is None:
        from core.paths import shared_dir

        shared = shared_dir()
    root = Path(shared) / "data"
    if not root.is_dir():
        raise DatasetError(f"{root}: shared data folder not found (set RHETORICA_SHARED)")
    return root


def need_file(path: Path) -> Path:
    """``path`` if it is a file, else a one-line :class:`DatasetError` (readers share it)."""
    if not path.is_file():
        raise DatasetError(f"{path}: dataset file not found")
    return path


def bad_split(name: str, split: str, known: tuple[str, ...]) -> DatasetError:
    """The error for an unknown split of dataset ``name`` (readers share it)."""
    return DatasetError(f"{name} has no split {split!r}; known: {', '.join(known)}")


def _doc(key: str, doc_id: str, sentences: list[str], labels: list[str],
         section_kinds: list[str] | None) -> LabelledDocument:
    mapping = ROLE_MAPPINGS[key]
    return LabelledDocument(doc_id, sentences, labels, [mapping[x] for x in labels], section_kinds)


# --- CSAbstruct -------------------------------------------------------------------------------

def _load_csabstruct(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "dev", "test", "test-dedup")
    if split not in known:
        raise bad_split("csabstruct", split, known)
    folder = root / "csabstruct"

    def read(part: str) -> list[dict]:
        with need_file(folder / f"{part}.jsonl").open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    # Every abstract_id in the files is 0: documents are named by their line number instead.
    part = split.split("-")[0]
    rows = list(enumerate(read(part)))
    if split == "test-dedup":  # drop the 26 test abstracts that also occur in train
        seen = {tuple(r["sentences"]) for r in read("train")}
        rows = [(i, r) for i, r in rows if tuple(r["sentences"]) not in seen]
    return [
        _doc("csabstruct", f"csabstruct-{part}-{i}", list(r["sentences"]),
             list(r["labels"]), ["abstract"] * len(r["sentences"]))
        for i, r in rows
    ]


# --- PMC-Sents-FULL ---------------------------------------------------------------------------

def _holdout(key: str, percent: int = 10) -> bool:
    digest = hashlib.sha1(key.encode("utf-8")).digest()
    return digest[0] * 100 // 256 < percent


def _load_pmc(root: Path, split: str) -> list[LabelledDocument]:
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
        docs.append(_doc("pmc-sents-full", f"{pmcid}#{part}{row}", [text], [names[int(label_id)]], None))
    return docs


# --- PubMedQA ---------------------------------------------------------------------------------

def _split_paragraph(text: str) -> list[str]:
    try:
        from core.text.sentences import split_sentence_texts
    except ImportError:
        split_sentence_texts = None
    if split_sentence_texts is not None:
        parts = split_sentence_texts(text)
    else:
        parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])", text.strip())
    return [p.strip() for p in parts if p.strip()]


def pubmedqa_heading_roles(heading: str) -> list[str]:
    """Canonical roles named by a structured-abstract heading, in the order they appear."""
    upper = heading.upper()
    found: list[tuple[int, str]] = []
    for pattern, role in _PUBMEDQA_HEADINGS:
        match = re.search(rf"\b(?:{pattern})\b", upper)
        if match:
            found.append((match.start(), role))
    return [role for _, role in sorted(found)]


def _load_pubmedqa(root: Path, split: str) -> list[LabelledDocument]:
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

def _load_nicta(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "dev", "test")
    if split not in known:
        raise bad_split("nicta-piboso", split, known)
    path = need_file(root / "nicta_piboso" / f"{split}_clean.txt")
    docs: list[LabelledDocument] = []
    doc_id, sentences, labels = "", [], []

    def flush() -> None:
        if sentences:
            docs.append(_doc("nicta-piboso", f"nicta-{doc_id}", list(sentences), list(labels),
                             ["abstract"] * len(sentences)))
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

def _load_sciarg_fine(root: Path, split: str) -> list[LabelledDocument]:
    """SciARG with the fine unit types as labels (same units and allowed sets)."""
    return _load_sciarg(root, split, fine=True)


def _load_sciarg(root: Path, split: str, fine: bool = False) -> list[LabelledDocument]:
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
            allowed = [_SCIARG_FINE.get(u["aty"].strip(), ROLE_MAPPINGS["sciarg"][c])
                       for u, c in zip(units, coarse)]
            labels = [u["aty"].strip() for u in units] if fine else coarse
            docs.append(LabelledDocument(f"sciarg-{dom}-{doc_id}", [u["text"].strip() for u in units],
                                         labels, allowed, ["abstract"] * len(units)))
    return docs


# --- UCI argumentative zoning -----------------------------------------------------------------

def _load_uci(root: Path, split: str) -> list[LabelledDocument]:
    known = ("train", "test")
    if split not in known:
        raise bad_split("uci-az", split, known)
    path = need_file(root / "uci_sentence_classification_az" / f"{split}.jsonl")
    docs = []
    with path.open(encoding="utf-8") as handle:
        for row, line in enumerate(handle):
            if line.strip():
                item = json.loads(line)
                docs.append(_doc("uci-az", f"uci-{split}-{row}", [item["text"]], [item["label"]], None))
    return docs


# --- user formats -----------------------------------------------------------------------------

def _user_allowed(label: str, where: str) -> frozenset[str]:
    """A user label is a canonical role, or several joined by ``|`` (a partial label)."""
    roles = frozenset(p.strip() for p in label.split("|") if p.strip())
    unknown = sorted(roles - set(ROLES))
    if not roles or unknown:
        raise DatasetError(f"{where}: label {label!r} is not one of {', '.join(ROLES)} (join several with |)")
    return roles


def _user_docs(rows: list[tuple[str, str, str, str | None]], where: str) -> list[LabelledDocument]:
    grouped: OrderedDict[str, list[tuple[str, str, str | None]]] = OrderedDict()
    for doc_id, text, label, kind in rows:
        grouped.setdefault(doc_id, []).append((text, label, kind))
    docs = []
    for doc_id, items in grouped.items():
        kinds = [k for _, _, k in items]
        docs.append(LabelledDocument(
            doc_id, [t for t, _, _ in items], [lab for _, lab, _ in items],
            [_user_allowed(lab, f"{where} ({doc_id})") for _, lab, _ in items],
            None if any(k is None for k in kinds) else [str(k) for k in kinds]))
    return docs


def _load_jsonl(path: Path) -> list[LabelledDocument]:
    """Either ``{"doc_id", "sentences": [...], "labels": [...], "section_kinds"?: [...]}`` per line
    or one sentence per line ``{"doc_id", "text", "label", "section_kind"?}`` (grouped by doc_id
    in file order)."""
    rows: list[tuple[str, str, str, str | None]] = []
    with need_file(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetError(f"{path}:{number}: not JSON ({error.msg})") from None
            doc_id = str(item.get("doc_id", f"line{number}"))
            if "sentences" in item:
                sentences, labels = item["sentences"], item.get("labels")
                if not isinstance(labels, list) or len(labels) != len(sentences):
                    raise DatasetError(f"{path}:{number}: 'labels' must list one label per sentence")
                kinds = item.get("section_kinds") or [None] * len(sentences)
                rows.extend((doc_id, str(s), str(lab), k) for s, lab, k in zip(sentences, labels, kinds))
            elif "text" in item and "label" in item:
                rows.append((doc_id, str(item["text"]), str(item["label"]), item.get("section_kind")))
            else:
                raise DatasetError(f"{path}:{number}: need 'sentences'+'labels' or 'text'+'label'")
    return _user_docs(rows, str(path))


def _load_csv(path: Path) -> list[LabelledDocument]:
    """Columns ``doc_id,text,label`` (optional ``section_kind``), rows in reading order."""
    with need_file(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"doc_id", "text", "label"} - set(reader.fieldnames or [])
        if missing:
            raise DatasetError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        rows = [(r["doc_id"], r["text"], r["label"], r.get("section_kind") or None) for r in reader]
    return _user_docs(rows, str(path))
