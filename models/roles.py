"""The rhetorical role set shared by every model, dataset mapping and view."""

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
        probs = {str(k): float(v) for k, v in dict(data["probabilities"]).items()}  # type: ignore[arg-type]
        return cls(label=str(data["label"]), probabilities=probs)
