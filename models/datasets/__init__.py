"""Labelled role datasets: readers, label mappings, ``name:split`` specs (no torch here).

Every reader returns :class:`LabelledDocument` objects: one document's sentences in reading
order, each with its dataset's own label and the set of canonical roles
(:data:`core.taxonomy.labels.ROLES`) that label allows.  Training (``models.training``) uses the allowed
sets; evaluation (``rhetorica eval``) maps a predicted role back to the dataset's label with
:func:`to_dataset_label`.  The mappings are documented in ``docs/data.md``.

Dataset names accepted by :func:`load_dataset` (``name:split`` on the command line):

=================  =======================================  ================================
name               splits                                   documents
=================  =======================================  ================================
csabstruct         train, dev, test, test-dedup, dev-dedup  one per abstract
pmc-sents-full     dev, test, dev-fit, dev-holdout          one per sentence (rows shuffled)
pubmedqa           train, test, all                         one per abstract (+ conclusion)
nicta-piboso       train, dev, test                         one per abstract
sciarg             train, test (+ -bio / -cl suffix)        one per abstract (units)
sciarg-fine        (as sciarg)                              the same, scored on the 11 fine types
scirex-sections    train                                    one per section (distant labels, scirex.py)
uci-az             train, test                              one per sentence
jsonl:PATH         (none)                                   user data, see :mod:`models.datasets.user`
csv:PATH           (none)                                   user data: doc_id,text,label
=================  =======================================  ================================

``csabstruct:test-dedup`` is the test split without the abstracts that also occur in train
(26) or dev (6); ``csabstruct:dev-dedup`` is dev without those 6 (use it for early stopping).
"""

from __future__ import annotations

from core.errors import DatasetError
from models.datasets.documents import LabelledDocument, bad_split, need_file
from models.datasets.labels import (
    DATASET_LABELS,
    PARTIAL_ONLY,
    ROLE_MAPPINGS,
    dataset_key,
    to_dataset_label,
)
from models.datasets.readers import pubmedqa_heading_roles
from models.datasets.registry import (
    is_test_split,
    load_dataset,
    load_spec,
    parse_spec,
    refuse_test_split,
)

__all__ = [
    "DATASET_LABELS",
    "PARTIAL_ONLY",
    "ROLE_MAPPINGS",
    "DatasetError",
    "LabelledDocument",
    "bad_split",
    "dataset_key",
    "is_test_split",
    "load_dataset",
    "load_spec",
    "need_file",
    "parse_spec",
    "pubmedqa_heading_roles",
    "refuse_test_split",
    "to_dataset_label",
]
