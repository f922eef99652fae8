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


NO_FUNCTION = "none"  # a sentence whose best function is below the bundle's calibrated threshold


@dataclass(frozen=True)
class FunctionPrediction:
    """The communicative function of one sentence: the winner (or ``NO_FUNCTION``) and the top
    candidates with their probabilities, best first (ids of ``core.functions`` taxonomy)."""

    label: str
    top: tuple[tuple[str, float], ...]

    @property
    def confidence(self) -> float:
        return self.top[0][1] if self.top else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "top": [[f, round(p, 4)] for f, p in self.top]}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> FunctionPrediction:
        raw = data.get("top", [])
        if not isinstance(raw, list):
            raise ValueError("function prediction: 'top' must be a list of [id, probability]")
        return cls(label=str(data["label"]), top=tuple((str(f), float(p)) for f, p in raw))


__all__ = ["NO_FUNCTION", "ROLES", "FunctionPrediction", "RolePrediction"]
