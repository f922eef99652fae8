"""Each dataset's own labels and how they map to the canonical roles (both ways).

Training uses the allowed role sets (partial labels); evaluation maps a predicted role back
to the dataset's label with :func:`to_dataset_label`.  The mappings are documented in
``docs/data.md``.
"""

from __future__ import annotations

from core.errors import DatasetError
from core.taxonomy.labels import ROLES
from models.datasets.documents import LabelledDocument


def _fs(*roles: str) -> frozenset[str]:
    unknown = [role for role in roles if role not in ROLES]
    if unknown:
        raise ValueError(f"not canonical roles: {unknown}")
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
    "scirex-sections": ("related-work", "conclusion"),  # section headings: models/datasets/scirex.py
    "gold": ROLES,  # the hand-labelled full-paper gold set (models/datasets/gold.py)
    "gold-papers": ROLES,  # the same, in whole sections (unsampled sentences carry no label)
    "annotated": ROLES,  # the hand-annotated full-paper corpus (models/datasets/annotated_corpus.py)
    "gold2-papers": ROLES,  # the second gold test, on pdfs2 papers (test only)
    "gold3-papers": ROLES,  # the third, more sentences of gold2's papers (test only)
    "gold4-papers": ROLES,  # the fourth, further sentences of gold2's papers (test only)
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
    # SciARG coarse types (training uses the finer SCIARG_FINE_ROLES sets below).
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
    # Distant labels from section headings (models/datasets/scirex.py).
    "scirex-sections": {"related-work": _fs("background"), "conclusion": _fs("conclusion")},
    "gold": {role: _fs(role) for role in ROLES},
    "gold-papers": {role: _fs(role) for role in ROLES},
    "annotated": {role: _fs(role) for role in ROLES},
    "gold2-papers": {role: _fs(role) for role in ROLES},
    "gold3-papers": {role: _fs(role) for role in ROLES},
    "gold4-papers": {role: _fs(role) for role in ROLES},
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
SCIARG_FINE_ROLES: dict[str, frozenset[str]] = {
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
ROLE_MAPPINGS["sciarg-fine"] = SCIARG_FINE_ROLES
# A predicted role counts as the fine type that names it most plainly.
_REVERSE_OVERRIDES["sciarg-fine"] = {"background": "motivation_background", "objective": "proposal",
                                     "method": "means", "result": "result", "conclusion": "conclusion",
                                     "other": "information_additional"}

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


def labelled_document(key: str, doc_id: str, sentences: list[str], labels: list[str],
         section_kinds: list[str] | None) -> LabelledDocument:
    mapping = ROLE_MAPPINGS[key]
    return LabelledDocument(doc_id, sentences, labels, [mapping[x] for x in labels], section_kinds)
