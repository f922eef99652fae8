"""A sentence's labels in the words a reader sees, shared by the human-readable exports (HTML,
Markdown), the annotated PDF's notes and the GUI (no Qt).

- A role below ``core.taxonomy.labels.UNCERTAIN_BELOW`` is uncertain and names its runner-up:
  "uncertain: objective 39% or background 39%"; a confident one reads "method 83%".
- A function reads by its plain name from the taxonomy ("Introducing the proposed approach 87%"), never
  its id; one below the bundle's threshold (``NO_FUNCTION``) reads "no clear function (uncertain:
  A 13% or B 10%)", its two best candidates named.
- Probabilities are percentages, never raw 0–1 scores.

The machine exports (CSV, JSON) keep ids and scores; :func:`role_is_uncertain` and
:func:`core.taxonomy.labels.runner_up` give them the same rule.
"""

from __future__ import annotations

from core.taxonomy.functions import FunctionTaxonomy, default_taxonomy
from core.taxonomy.labels import (
    FunctionPrediction,
    RolePrediction,
    function_is_clear,
    is_confident,
    role_text,
)

NO_CLEAR_FUNCTION = "no clear function"


def percent(probability: float) -> str:
    """``0.394`` as "39%"."""
    return f"{probability:.0%}"


def role_is_uncertain(prediction: RolePrediction) -> bool:
    """Whether a role is shown as uncertain (below ``UNCERTAIN_BELOW``), as the GUI does."""
    return not is_confident(prediction)


def role_words(prediction: RolePrediction) -> str:
    """"method 83%", or for an uncertain role "uncertain: objective 39% or background 39%"
    (``core.taxonomy.labels.role_text``, which the window, the draft pane and the language server use)."""
    return role_text(prediction)


def function_name(function_id: str, taxonomy: FunctionTaxonomy | None = None) -> str:
    """A function's plain name ("Introducing the proposed approach"), or its id when the taxonomy
    lacks it (a bundle trained on another taxonomy version)."""
    return (taxonomy or default_taxonomy()).name_of(function_id)


def function_words(prediction: FunctionPrediction | None, taxonomy: FunctionTaxonomy | None = None) -> str:
    """"Introducing the proposed approach 87%"; below the threshold "no clear function (uncertain:
    A 13% or B 10%)"; "" when the model has no function head (``prediction`` None)."""
    if prediction is None:
        return ""
    if function_is_clear(prediction):
        return f"{function_name(prediction.label, taxonomy)} {percent(prediction.confidence)}"
    candidates = " or ".join(f"{function_name(f, taxonomy)} {percent(p)}" for f, p in prediction.top[:2])
    return f"{NO_CLEAR_FUNCTION} (uncertain: {candidates})" if candidates else NO_CLEAR_FUNCTION


__all__ = ["NO_CLEAR_FUNCTION", "function_name", "function_words", "percent", "role_is_uncertain",
           "role_words"]
