"""Training losses behind one interface: ``make_loss(name, **kw)`` -> module ``(inputs, targets) -> loss``.

``targets`` is either a 1-D tensor of class ids [N] or a 2-D multi-hot tensor [N, C] of
allowed classes (partial labels; a one-hot row is an ordinary label).  For the metric losses
two samples are *positives* when their allowed sets are identical and *negatives* when their
allowed sets are disjoint; pairs that merely overlap are ignored.

=================  ============  ===============================================================
name               inputs        loss
=================  ============  ===============================================================
partial_ce         logits        -log sum_{r in allowed} softmax(logits)_r (plain CE for one-hot;
                                 soft CE when the targets are float distributions)
triplet_all        embeddings    batch-all triplet, cosine distance, mean over active triplets
triplet_hard       embeddings    batch-hard triplet (hardest positive and negative per anchor)
arcface            embeddings    additive angular margin softmax (has its own class weights)
multi_similarity   embeddings    multi-similarity loss with pair mining (Wang et al. 2019)
supcon / ntxent    embeddings    supervised contrastive / NT-Xent (Khosla et al. 2020)
=================  ============  ===============================================================

Embedding inputs are L2-normalised inside each loss.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import ModelError


def as_multi_hot(targets: torch.Tensor, num_classes: int | None = None) -> torch.Tensor:
    """Class ids [N] or multi-hot [N, C] -> boolean multi-hot [N, C]."""
    if targets.dim() == 2:
        return targets.bool()
    if num_classes is None:
        num_classes = int(targets.max().item()) + 1 if targets.numel() else 1
    return F.one_hot(targets.long(), num_classes).bool()


def pair_masks(targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(positive, negative) boolean [N, N] masks; the diagonal is neither."""
    hot = as_multi_hot(targets).float()
    overlap = hot @ hot.T
    same = (hot.unsqueeze(1) == hot.unsqueeze(0)).all(dim=-1)
    eye = torch.eye(hot.shape[0], dtype=torch.bool, device=hot.device)
    return same & ~eye, (overlap == 0) & ~eye


class PartialLabelCE(nn.Module):
    """Cross-entropy with allowed-set targets: -log sum_{r in allowed} p(r)."""

    class_weights: torch.Tensor | None  # a registered buffer

    def __init__(self, label_smoothing: float = 0.0, class_weights: torch.Tensor | None = None) -> None:
        super().__init__()
        self.label_smoothing = label_smoothing
        self.register_buffer("class_weights", class_weights if class_weights is not None else None)

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        log_p = F.log_softmax(logits, dim=-1)
        if targets.is_floating_point():  # soft targets (rows sum to 1): plain soft cross-entropy
            return -(targets * log_p).sum(-1).mean()
        allowed = as_multi_hot(targets, logits.shape[-1])
        picked = torch.logsumexp(log_p.masked_fill(~allowed, float("-inf")), dim=-1)
        loss = -picked
        if self.label_smoothing > 0:
            loss = (1 - self.label_smoothing) * loss - self.label_smoothing * log_p.mean(dim=-1)
        if self.class_weights is not None:
            # A sample's weight: the mean weight of its allowed classes.
            w = (allowed.float() * self.class_weights).sum(-1) / allowed.float().sum(-1)
            return (loss * w).sum() / w.sum()
        return loss.mean()


def _cosine_distance(embeddings: torch.Tensor) -> torch.Tensor:
    x = F.normalize(embeddings, dim=-1)
    return 1.0 - x @ x.T


class TripletLoss(nn.Module):
    """Triplet margin loss on cosine distance, with batch-all or batch-hard mining."""

    def __init__(self, margin: float = 0.2, mining: str = "all") -> None:
        super().__init__()
        if mining not in ("all", "hard"):
            raise ModelError(f"triplet loss: mining must be 'all' or 'hard', not {mining!r}")
        self.margin = margin
        self.mining = mining

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        dist = _cosine_distance(embeddings)
        pos, neg = pair_masks(targets)
        if self.mining == "hard":
            hardest_pos = dist.masked_fill(~pos, float("-inf")).max(dim=1).values
            hardest_neg = dist.masked_fill(~neg, float("inf")).min(dim=1).values
            valid = pos.any(1) & neg.any(1)
            if not valid.any():
                return embeddings.sum() * 0.0
            return F.relu(hardest_pos - hardest_neg + self.margin)[valid].mean()
        # batch-all: every (anchor, positive, negative) triplet; mean over the active ones.
        triplets = dist.unsqueeze(2) - dist.unsqueeze(1) + self.margin  # [a, p, n]
        valid = pos.unsqueeze(2) & neg.unsqueeze(1)
        losses = F.relu(triplets) * valid
        active = (losses > 1e-12).sum()
        if active == 0:
            return embeddings.sum() * 0.0
        return losses.sum() / active


class ArcFaceLoss(nn.Module):
    """Additive angular margin (ArcFace) with learnable class centres; partial labels allowed
    (the margin applies to every allowed class and their probabilities are summed)."""

    def __init__(self, embedding_dim: int, num_classes: int, scale: float = 30.0,
                 margin: float = 0.3) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_classes, embedding_dim))
        nn.init.xavier_uniform_(self.weight)
        self.scale = scale
        self.margin = margin
        self.num_classes = num_classes

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        allowed = as_multi_hot(targets, self.num_classes)
        cos = F.normalize(embeddings, dim=-1) @ F.normalize(self.weight, dim=-1).T
        theta = torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
        with_margin = torch.cos((theta + self.margin).clamp(max=math.pi))
        logits = self.scale * torch.where(allowed, with_margin, cos)
        log_p = F.log_softmax(logits, dim=-1)
        return -torch.logsumexp(log_p.masked_fill(~allowed, float("-inf")), dim=-1).mean()


class MultiSimilarityLoss(nn.Module):
    """Multi-similarity loss (Wang et al., CVPR 2019) with its hard-pair mining."""

    def __init__(self, alpha: float = 2.0, beta: float = 50.0, base: float = 0.5,
                 epsilon: float = 0.1) -> None:
        super().__init__()
        self.alpha, self.beta, self.base, self.epsilon = alpha, beta, base, epsilon

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = F.normalize(embeddings, dim=-1)
        sim = x @ x.T
        pos, neg = pair_masks(targets)
        # Mining: keep negatives harder than the easiest positive + eps, positives harder than
        # the hardest negative - eps.
        min_pos = sim.masked_fill(~pos, float("inf")).min(dim=1, keepdim=True).values
        max_neg = sim.masked_fill(~neg, float("-inf")).max(dim=1, keepdim=True).values
        neg_keep = neg & (sim + self.epsilon > min_pos)
        pos_keep = pos & (sim - self.epsilon < max_neg)
        pos_term = torch.log1p((torch.exp(-self.alpha * (sim - self.base)) * pos_keep).sum(1)) / self.alpha
        neg_term = torch.log1p((torch.exp(self.beta * (sim - self.base)) * neg_keep).sum(1)) / self.beta
        valid = pos.any(1) & neg.any(1)
        if not valid.any():
            return embeddings.sum() * 0.0
        return (pos_term + neg_term)[valid].mean()


class SupConLoss(nn.Module):
    """Supervised contrastive loss (NT-Xent when each sample's only positive is its other view).

    For anchor i with positives P(i) and negatives N(i):
    loss_i = -mean_{p in P(i)} log( exp(s_ip / t) / sum_{a in P(i) + N(i)} exp(s_ia / t) ).
    """

    def __init__(self, temperature: float = 0.1) -> None:
        super().__init__()
        self.temperature = temperature

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = F.normalize(embeddings, dim=-1)
        logits = (x @ x.T) / self.temperature
        pos, neg = pair_masks(targets)
        denom_mask = pos | neg
        log_denom = torch.logsumexp(logits.masked_fill(~denom_mask, float("-inf")), dim=1, keepdim=True)
        log_prob = logits - log_denom
        n_pos = pos.sum(1)
        valid = n_pos > 0
        if not valid.any():
            return embeddings.sum() * 0.0
        mean_log_prob = (log_prob * pos).sum(1)[valid] / n_pos[valid]
        return -mean_log_prob.mean()


LOSSES: dict[str, type[nn.Module]] = {
    "partial_ce": PartialLabelCE,
    "ce": PartialLabelCE,
    "triplet_all": TripletLoss,
    "triplet_hard": TripletLoss,
    "arcface": ArcFaceLoss,
    "multi_similarity": MultiSimilarityLoss,
    "supcon": SupConLoss,
    "ntxent": SupConLoss,
}


def make_loss(name: str, **kwargs: object) -> nn.Module:
    """Build a loss by name (see the module docstring for the list)."""
    if name not in LOSSES:
        raise ModelError(f"unknown loss {name!r}; known: {', '.join(sorted(LOSSES))}")
    if name == "triplet_all":
        kwargs.setdefault("mining", "all")
    if name == "triplet_hard":
        kwargs.setdefault("mining", "hard")
    return LOSSES[name](**kwargs)
