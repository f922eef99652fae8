"""The graphs of a model bundle as the export writes them and the parity check reads them: their
input and output names, their file names, and the pair (or trio) of files one export produces.

Shared by :mod:`models.training.export` (which writes the graphs) and
:mod:`models.training.parity` (which checks them against torch), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the net (and torch) load with the modules that use them
    from models.training.net import RhetoricaNet

OUTPUTS = ("sentence_embedding", "role_logits")
FUNCTION_OUTPUTS = ("function_embedding", "function_logits")  # after OUTPUTS, for nets with functions
SENTENCE_INPUTS = ("input_ids", "attention_mask")
ROLE_INPUTS = ("pooled", "section_kind")
CONTENT_INPUTS = ("fork_states", "attention_mask")
ROLE_GRAPH = "roles.onnx"  # the bundle's role graph (the sentence graph is models.bundle's model.onnx)
CONTENT_GRAPH = "content.onnx"  # a content fork's graph: fork_states -> sentence_embedding


def graph_outputs(net: RhetoricaNet) -> tuple[str, ...]:
    """The bundle's outputs, in the order the net returns them."""
    return OUTPUTS + FUNCTION_OUTPUTS if net.has_functions else OUTPUTS


def sentence_graph_outputs(net: RhetoricaNet) -> tuple[str, ...]:
    """The sentence graph's outputs: ``pooled`` (the role graph's input), then the per-sentence ones
    (with a content fork ``fork_states``, the content graph's input, in place of the embedding)."""
    second = "fork_states" if net.content_fork else "sentence_embedding"
    return ("pooled", second, *(FUNCTION_OUTPUTS if net.has_functions else ()))


@dataclass(frozen=True)
class GraphPair:
    """The two graphs of a bundle, as files."""

    sentences: Path  # tokens -> pooled + per-sentence outputs (quantised when shipped int8)
    roles: Path  # pooled + section kinds -> role logits
    content: Path | None = None  # a content fork's fork_states + mask -> sentence_embedding

    def files(self) -> list[Path]:
        return [self.sentences, self.roles, *([self.content] if self.content is not None else [])]
