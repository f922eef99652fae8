"""Label vocabularies that ``core`` and every model share.

The role set lives here (not in ``models``) so that ``core`` never imports ``models``;
``models.roles`` re-exports these names for compatibility.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.json_shapes import ShapeError, as_list, as_number, as_object, as_string, entry

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
    def from_dict(cls, data: object, where: str = "role prediction") -> RolePrediction:
        """A prediction from its JSON (:class:`~core.json_shapes.ShapeError` naming a bad field)."""
        data = as_object(data, where)
        raw = as_object(entry(data, "probabilities", where), f"{where}: 'probabilities'")
        probs = {k: as_number(v, f"{where}: probability of {k!r}") for k, v in raw.items()}
        label = as_string(entry(data, "label", where), f"{where}: 'label'")
        if label not in probs:
            raise ShapeError(f"{where}: its label {label!r} has no probability")
        return cls(label=label, probabilities=probs)


# A role label whose probability is below this is shown as uncertain (hatched/greyed, with the
# runner-up) and left out of the judgements built on labels (the gap report, the draft checklist).
# Chosen on gold:dev only (180 sentences, in context), recomputed by `rhetorica eval functions --data gold
# --split dev --confidence` for each shipped model: the highest threshold that keeps at least 75 % of the
# sentences and sets aside sentences right less than half the time.
# rhetorica-functions 0.7.1 (session 13, with its role temperatures):
#   p >= 0.45: 93.3 % kept, confident 70.2 % right, uncertain 33.3 %
#   p >= 0.55: 81.1 % kept, confident 75.3 %, uncertain 35.3 %
#   p >= 0.60: 78.3 % kept, confident 76.6 %, uncertain 35.9 %   <- chosen
#   p >= 0.65: 70.0 % kept, confident 80.2 %, uncertain 38.9 %
#   p >= 0.90: 31.7 % kept, confident 94.7 %, uncertain 55.3 %
# (0.7.0 chose 0.65 and 0.6.0 0.45 by the same rule.)
# The role probabilities are temperature-scaled on dev (`rhetorica train calibrate-roles`,
# models/role_calibration.py; gold test ECE 0.17 -> 0.07 for 0.6.0).
UNCERTAIN_BELOW = 0.60


def is_confident(prediction: RolePrediction) -> bool:
    """Whether a role label is sure enough to be shown plainly and counted (``UNCERTAIN_BELOW``)."""
    return prediction.confidence >= UNCERTAIN_BELOW


def runner_up(prediction: RolePrediction) -> tuple[str, float]:
    """The second most probable role and its probability (("", 0.0) when there is none)."""
    ranked = sorted(((p, r) for r, p in prediction.probabilities.items() if r != prediction.label),
                    reverse=True)
    return (ranked[0][1], ranked[0][0]) if ranked else ("", 0.0)


def role_text(prediction: RolePrediction) -> str:
    """"method 83%" for a confident label; "uncertain: method 41% or result 35%" below
    ``UNCERTAIN_BELOW`` (plain text; the words of the window, the exports, the draft pane and the
    language server alike)."""
    shown = f"{prediction.label} {prediction.confidence:.0%}"
    if is_confident(prediction):
        return shown
    second, p = runner_up(prediction)
    return f"uncertain: {shown}" + (f" or {second} {p:.0%}" if second else "")


NO_FUNCTION = "none"  # a sentence whose best function is below the bundle's calibrated threshold


@dataclass(frozen=True)
class FunctionPrediction:
    """The communicative function of one sentence: the winner (or ``NO_FUNCTION``) and the top
    candidates with their probabilities, best first (ids of ``core.taxonomy.functions`` taxonomy)."""

    label: str
    top: tuple[tuple[str, float], ...]

    @property
    def confidence(self) -> float:
        return self.top[0][1] if self.top else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "top": [[f, round(p, 4)] for f, p in self.top]}

    @classmethod
    def from_dict(cls, data: object, where: str = "function prediction") -> FunctionPrediction:
        """A prediction from its JSON (:class:`~core.json_shapes.ShapeError` naming a bad field)."""
        data = as_object(data, where)
        top = as_list(entry(data, "top", where, []), f"{where}: 'top'")
        return cls(label=as_string(entry(data, "label", where), f"{where}: 'label'"),
                   top=tuple(_candidate(c, f"{where}: candidate {i}") for i, c in enumerate(top)))


def _candidate(value: object, where: str) -> tuple[str, float]:
    """One ``[function id, probability]`` of a prediction's ``top``."""
    pair = as_list(value, where)
    if len(pair) != 2:
        raise ShapeError(f"{where} must be [function id, probability]")
    return as_string(pair[0], f"{where}'s id"), as_number(pair[1], f"{where}'s probability")


# A function label counts as *clear* (shown plainly, counted by the draft checklist) only when the
# model's calibrated probability says it is more likely right than wrong and it stands apart from the
# runner-up. The bundle's own threshold (the "none" label, 0.191 for 0.9.3) is lower: it
# is chosen to maximise accuracy with "none" as a class, i.e. to give a best guess, not a sure label.
# The function probabilities are calibrated (temperature on gold:dev; best function's ECE 0.03-0.07 on
# the gold test sets, docs/benchmarks.md), so a top probability p means "right about p of the time":
#   - CLEAR_FUNCTION_FLOOR = 0.5: below it the label is more likely wrong than right. Measured with
#     the shipped 0.9.3 on gold:dev (180 sentences, the split the floor was read on): labels with
#     p >= 0.5 were right 72 % of the time, those below (but above the bundle's threshold) 26 %;
#     on gold test v1 (360, read once) 69 % and 28 %. 48 % (dev) / 44 % (test) of sentences are clear.
#   - CLEAR_FUNCTION_MARGIN = 0.15: the best candidate must beat the runner-up by more than about
#     twice the calibration error, else the two cannot be told apart ("participants 50 %, study
#     design 37 %" is not a clear function). Binds rarely (no gold:dev sentence with p >= 0.5 had a
#     margin under 0.2).
# The calibration is what `rhetorica eval functions --data gold --split dev` reports ("best function's
# probability"); the shares above are over the same predictions (each paper analysed whole).
CLEAR_FUNCTION_FLOOR = 0.5
CLEAR_FUNCTION_MARGIN = 0.15


def function_is_clear(prediction: FunctionPrediction | None) -> bool:
    """Whether a function label is clear enough to be shown plainly and counted: the model gave one
    (not ``NO_FUNCTION``: its best candidate reached the bundle's calibrated threshold), its calibrated
    probability is at least :data:`CLEAR_FUNCTION_FLOOR` (more likely right than wrong) and it beats the
    runner-up by at least :data:`CLEAR_FUNCTION_MARGIN` (more than the calibration error). A best guess
    at 19 % or 36 % is not clear: it is shown as "no clear function (top candidate: …)"."""
    if prediction is None or prediction.label in ("", NO_FUNCTION) or not prediction.top:
        return False
    best = prediction.top[0][1]
    runner_up = prediction.top[1][1] if len(prediction.top) > 1 else 0.0
    return best >= CLEAR_FUNCTION_FLOOR and best - runner_up >= CLEAR_FUNCTION_MARGIN


def confident_count(roles: list[RolePrediction]) -> int:
    return sum(is_confident(p) for p in roles)


def judged_on(clear: int, total: int) -> str:
    """"judged on the 12 of 15 sentences whose function is clear" (the wording the gap report and the
    move checklist use: both count only sentences with a clear function, :func:`function_is_clear`; a
    sentence whose role is uncertain may still have one)."""
    return f"judged on the {clear} of {total} sentence{'s' if total != 1 else ''} whose function is clear"


__all__ = ["CLEAR_FUNCTION_FLOOR", "CLEAR_FUNCTION_MARGIN", "NO_FUNCTION", "ROLES", "UNCERTAIN_BELOW",
           "FunctionPrediction", "RolePrediction", "confident_count", "function_is_clear", "is_confident",
           "judged_on", "role_text", "runner_up"]
