"""``rhetorica eval suggest-labels``: suggestions scored against hand labels, never from the query's paper."""

from __future__ import annotations

import numpy as np

from app.commands.lab.eval_suggest_labels import LabelledLibrary, LabelledSentence, score
from core.phrasing.query_reading import QueryReading
from core.taxonomy.labels import FunctionPrediction, RolePrediction


class _Model:
    model_id = "fake@1#0"


def _sentence(paper: str, text: str, vector: list[float], model_function: str, hand_function: str,
              hand_role: str = "method") -> LabelledSentence:
    v = np.asarray(vector, dtype=np.float32)
    reading = QueryReading(text, _Model.model_id, RolePrediction("method", {"method": 0.9}),
                           FunctionPrediction(model_function, ((model_function, 0.9),)),
                           v / np.linalg.norm(v), None, "with its whole section")
    return LabelledSentence(paper, text, "method", hand_role, hand_function, reading)


def test_the_share_of_the_top_k_with_the_query_s_hand_function_leaving_its_paper_out() -> None:
    procedure = "lab-procedure"
    library_items = [
        _sentence("a", "We sampled the sites every month.", [1, 0.0, 0], procedure, procedure),
        # not near-duplicates of the query in the function view (cosine below 0.99)
        _sentence("b", "Samples were taken weekly at each site.", [1, 0.3, 0], procedure, procedure),
        _sentence("b", "The survey covered three regions in total.", [1, 0.5, 0], procedure, "data-source"),
        _sentence("c", "Results improved over the baseline by far.", [0, 0.0, 1], "outperforming",
                  "outperforming", "result"),
    ]
    library = LabelledLibrary(library_items)
    query = library_items[0]  # its own paper "a" is never searched
    result = score([query], library, _Model(), k=2)
    assert result["queries"] == 1 and result["recognised_queries"] == 1
    assert result["same_hand_function"] == 50.0  # one of the two picks from paper b has the hand label
    assert result["same_hand_role"] == 100.0
    ids, _ = library.search("function", query.reading.function_vector, 10)
    assert 0 not in ids[0] and len(ids[0]) == 3
