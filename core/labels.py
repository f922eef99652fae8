"""Label vocabularies that ``core`` and every model share.

The role set lives here (not in ``models``) so that ``core`` never imports ``models``;
``models.roles`` re-exports these names for compatibility.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES: tuple[str, ...] = ("background", "objective", "method", "result", "conclusion", "other")


@dataclass(frozen=True)
class RolePrediction:
    """The role of one sentence: the winning label and every class probability."""

    label: str
    probabilities: dict[str, float]

    @property
    def confidence(self) -> float:
        return self.probabilities[self.label]

    def to_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "confidence": round(self.confidence, 4),
            "probabilities": {k: round(v, 4) for k, v in self.probabilities.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RolePrediction:
        raw = data["probabilities"]
        if not isinstance(raw, dict):
            raise ValueError("role prediction: 'probabilities' must be a mapping")
        probs = {str(k): float(v) for k, v in raw.items()}
        return cls(label=str(data["label"]), probabilities=probs)


__all__ = ["ROLES", "RolePrediction"]
