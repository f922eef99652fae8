"""Distillation in the encoder step (session 24): a teacher's probabilities (models/training/teacher.py) as
soft targets for the role heads and the function head, on every training sentence the teacher read.

``rhetorica train roles --distil TEACHER_RUN --distil-data TEACHER_DATA --distil-weight W`` reads them once
(:func:`read_teacher_targets`, by sentence text, in the net's own label orders), attaches them to the encoded
documents (:func:`attach_teacher`; a row of zeros: a sentence the teacher never read), and each step adds
``W`` × :func:`distil_loss`: the cross-entropy to the teacher's role probabilities plus the same for its
function probabilities, each averaged over the batch's rows the teacher read. A training pack carries them
(``teacher.npz``) so the step can run on a GPU machine too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from models.roles import ROLES
from models.training.batching import Batch, EncodedDocument


@dataclass
class TeacherTargets:
    """The teacher's probabilities by sentence text: functions in the net's function order, roles in
    :data:`ROLES` order."""

    functions: dict[str, np.ndarray]
    roles: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.roles)


def read_teacher_targets(teacher_run: Path, teacher_data: Path, function_ids: Sequence[str]
                         ) -> TeacherTargets:
    from models.training.teacher import SOFT_FILE, read_soft_labels

    soft = Path(teacher_run) / SOFT_FILE
    functions = read_soft_labels(teacher_data, soft, list(function_ids), "functions") if function_ids else {}
    return TeacherTargets(functions, read_soft_labels(teacher_data, soft, list(ROLES), "roles"))


def attach_teacher(corpus: Sequence[EncodedDocument], targets: TeacherTargets, function_count: int) -> int:
    """Give every document whose sentences the teacher read its rows (in place); returns the rows taught."""
    taught = 0
    for doc in corpus:
        texts = doc.doc.sentences
        if not any(t in targets.roles for t in texts):
            continue
        roles = torch.zeros(len(texts), len(ROLES))
        functions = torch.zeros(len(texts), function_count)
        for i, text in enumerate(texts):
            row = targets.roles.get(text)
            if row is not None:
                roles[i] = torch.from_numpy(row)
                taught += 1
            fn = targets.functions.get(text)
            if fn is not None and function_count:
                functions[i] = torch.from_numpy(fn)
        doc.teacher_roles = roles
        doc.teacher_functions = functions if function_count else None
    return taught


def _soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of ``logits`` [..., C] to the probability rows ``targets`` [..., C] over the rows
    that hold any (a row of zeros: nothing taught; zero when none does)."""
    rows = targets.sum(-1) > 0
    if not bool(rows.any()):
        return logits.new_zeros(())
    return -(targets[rows] * F.log_softmax(logits[rows].float(), dim=-1)).sum(-1).mean()


def teacher_rows(runs: Sequence[Sequence[str]], soft: Mapping[str, np.ndarray], width: int,
                 n_max: int | None = None) -> torch.Tensor:
    """The teacher's probabilities [B, n, width] for padded runs of sentences (heads trained on cached
    vectors: windows, body runs); zero rows for sentences it did not read and for padding."""
    n_max = n_max if n_max is not None else max((len(r) for r in runs), default=0)
    probs = torch.zeros(len(runs), n_max, width)
    for b, run in enumerate(runs):
        for i, text in enumerate(run):
            row = soft.get(text)
            if row is not None:
                probs[b, i] = torch.from_numpy(row)
    return probs


def taught_loss(logits: torch.Tensor, runs: Sequence[Sequence[str]], soft: Mapping[str, np.ndarray] | None,
                key_mask: torch.Tensor) -> torch.Tensor:
    """For a head on cached vectors: the mean cross-entropy of its logits [B, n, C] to the teacher's
    probabilities on the runs' real sentences it read (zero without any)."""
    if not soft:
        return logits.new_zeros(())
    probs = teacher_rows(runs, soft, logits.shape[-1], logits.shape[1])
    return _soft_cross_entropy(logits[key_mask], probs[key_mask.cpu()].to(logits.device))


def distil_loss(role_logits: torch.Tensor, function_logits: torch.Tensor | None, batch: Batch
                ) -> torch.Tensor:
    """Cross-entropy to the teacher's role probabilities, plus to its function probabilities, on the rows
    it read (zero when it read none)."""
    total = role_logits.new_zeros(())
    if batch.teacher_roles is not None:
        total = total + _soft_cross_entropy(role_logits, batch.teacher_roles)
    if batch.teacher_functions is not None and function_logits is not None:
        total = total + _soft_cross_entropy(function_logits, batch.teacher_functions)
    return total


def targets_to_arrays(targets: TeacherTargets) -> tuple[list[str], dict[str, np.ndarray]]:
    """For a training pack: the texts and their rows as float16 arrays (roles; functions where known)."""
    texts = sorted(targets.roles)
    arrays = {"roles": np.stack([targets.roles[t] for t in texts]).astype(np.float16)}
    if targets.functions:
        width = len(next(iter(targets.functions.values())))
        arrays["functions"] = np.stack([targets.functions.get(t, np.zeros(width, np.float32))
                                        for t in texts]).astype(np.float16)
    return texts, arrays


def targets_from_arrays(texts: Sequence[str], arrays: dict[str, np.ndarray]) -> TeacherTargets:
    roles = np.asarray(arrays["roles"], dtype=np.float32)
    functions = arrays.get("functions")
    if roles.shape != (len(texts), len(ROLES)) or (functions is not None and len(functions) != len(texts)):
        raise ValueError("the pack's teacher rows do not match its texts")
    return TeacherTargets({t: np.asarray(functions[i], dtype=np.float32) for i, t in enumerate(texts)
                           if float(np.asarray(functions[i]).sum()) > 0} if functions is not None else {},
                          {t: roles[i] for i, t in enumerate(texts)})
