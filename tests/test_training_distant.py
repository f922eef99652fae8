"""Distant supervision from section headings (models/training/distant.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from models.datasets import DATASET_LABELS, ROLE_MAPPINGS, DatasetError, load_dataset, to_dataset_label
from models.datasets.scirex import SCIREX_LABELS, SCIREX_ROLES, detokenise, heading_label


@pytest.mark.parametrize(("heading", "label"), [
    ("Conclusion", "conclusion"),
    ("5 . Conclusions", "conclusion"),
    ("VI. CONCLUSION AND FUTURE WORK", "conclusion"),
    ("Conclusions and Discussion", "conclusion"),
    ("Concluding remarks", "conclusion"),
    ("2 Related Work", "related-work"),
    ("Related works", "related-work"),
    ("Introduction", None),
    ("Experiments", None),
    ("Conclusion of the proof", None),
    ("A Related Work on Graphs", None),
    ("", None),
    (None, None),
])
def test_heading_label(heading: str | None, label: str | None) -> None:
    assert heading_label(heading) == label


@pytest.mark.parametrize(("tokenised", "text"), [
    ("State - of - the - art models ( e.g. , ResNet ) fail [ citation ] .",
     "State-of-the-art models (e.g., ResNet) fail."),
    ("[ reference ] [ reference ] propose a \" root \" network , see Figure [ reference ] .",
     'Previous work propose a "root" network, see Figure 1.'),
    ("We do n't use Eq . [ reference ] or Table [ reference ] ; it 's 3.5 % worse .",
     "We don't use Eq. 1 or Table 1; it's 3.5% worse."),
])
def test_detokenise(tokenised: str, text: str) -> None:
    assert detokenise(tokenised) == text


def test_mapping_is_registered() -> None:
    assert DATASET_LABELS["scirex-sections"] == SCIREX_LABELS
    for label, role in SCIREX_ROLES.items():
        assert ROLE_MAPPINGS["scirex-sections"][label] == {role}
        assert to_dataset_label("scirex-sections", role) == label


@pytest.mark.shared
def test_scirex_sections_reader(shared) -> None:
    docs = load_dataset("scirex-sections", "train", shared)
    counts = Counter(lab for d in docs for lab in d.labels)
    # 306 papers: 451 sections with a one-role heading (see docs/data.md).
    assert len(docs) == 451
    assert counts == {"related-work": 4002, "conclusion": 1728}
    for doc in docs:
        assert doc.section_kinds is None  # unknown: the role must come from the text
        assert len(set(doc.labels)) == 1 and all(a == {SCIREX_ROLES[doc.labels[0]]} for a in doc.allowed)
        assert not any("[ citation ]" in s or "[ reference ]" in s or " ," in s for s in doc.sentences)
    with pytest.raises(DatasetError, match="train"):
        load_dataset("scirex-sections", "test", shared)
