"""``rhetorica eval suggest-labels``: phrasing suggestions scored against hand labels, on dev papers.

A repeatable check between blind hand judgements (``rhetorica eval suggest``), which need fresh gold queries.
The annotated corpus's dev papers are read whole, one section at a time, as the app reads a paper. Every
annotated sentence of at least :data:`MIN_WORDS` words becomes a library sentence carrying the *model's* role,
function and function vector (as the phrase corpus does). Every sentence whose *hand* function is not "none"
asks for ``-k`` suggestions, read as the paper's analysis reads it, never from its own paper. The score: the
share of the top ``-k`` whose hand function is the query's (and whose hand role is the query's), averaged over
queries; split by whether the model recognised the query's function. ``--queries gold-dev`` takes the
queries from the gold set v1's dev papers instead (the same library).

It scores the function view and the ranking against labels, not whether the wording could be adapted: a
judge's "does the query's job" is the closer measure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.commands._options import add_model_options, bounded_int, output_file, write_output

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from core.library.store import PaperRecord, SentenceRecord
    from core.phrasing.query_reading import QueryReading

MIN_WORDS = 5  # the phrase corpus's filter


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from core.phrasing.suggest import RANKINGS

    parser = subparsers.add_parser(
        "suggest-labels", help="Suggestions scored against hand labels on the annotated dev papers.",
        description=__doc__)
    parser.add_argument("--split", choices=("dev",), default="dev",
                        help="the annotated corpus's split read as library and queries (dev only: the train "
                        "split trained the model)")
    parser.add_argument("--queries", choices=("annotated", "gold-dev"), default="annotated",
                        help="annotated: every annotated dev sentence with a function (default); gold-dev: "
                        "the gold set v1's dev sentences with a function")
    parser.add_argument("-k", type=bounded_int(1, 100), default=5)
    parser.add_argument("--ranking", choices=RANKINGS, action="append", default=None,
                        help="how suggestions favour the query's function (repeat to compare; default: all, "
                        "core.phrasing.suggest.RANKINGS)")
    add_model_options(parser)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


@dataclass(frozen=True)
class LabelledSentence:
    """A sentence read by the model in its whole section, with its hand labels beside."""

    paper: str
    text: str
    section_kind: str
    hand_role: str
    hand_function: str
    reading: QueryReading


class LabelledLibrary:
    """The model-read sentences as a suggestion source (``core.phrasing.suggest.SentenceSource``): the model's
    labels on the records, brute-force search in the function view, one paper left out at a time."""

    duplicate_view = "function"  # as the phrase corpus: no content view

    def __init__(self, sentences: Sequence[LabelledSentence]) -> None:
        import numpy as np

        from core.library.store import SentenceRecord

        self.items = list(sentences)
        self.records = [SentenceRecord(i, s.paper, i, s.text, s.section_kind, s.section_kind,
                                       s.reading.role.label, s.reading.function_label,
                                       function_confidence=(s.reading.function.confidence
                                                            if s.reading.function is not None else 1.0))
                        for i, s in enumerate(self.items)]
        self.matrix = np.stack([s.reading.function_vector for s in self.items]).astype(np.float32)
        self.papers = np.array([s.paper for s in self.items])
        self.left_out = ""  # the query's paper: never suggested from

    def search(self, view: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        scores = self.matrix @ query.astype(np.float32)
        scores[self.papers == self.left_out] = -np.inf
        order = np.argsort(-scores, kind="stable")[: min(k, int((scores > -np.inf).sum()))]
        return order[None, :], scores[order][None, :]

    def sentences(self, ids: Sequence[int]) -> list[SentenceRecord]:
        return [self.records[int(i)] for i in ids]

    def vectors_of(self, ids: Sequence[int], view: str) -> np.ndarray:
        return self.matrix[[int(i) for i in ids]]

    def paper(self, paper_id: str) -> PaperRecord | None:
        return None

    def close(self) -> None:
        return None


def annotated_readings(model: Any, split: str) -> list[LabelledSentence]:
    """Every annotated sentence of ``split``, read by ``model`` with its whole section (kind included)."""
    from core.phrasing.query_reading import FROM_ANALYSIS, reading_at
    from models.datasets.annotated_corpus import annotated_sections

    sections = annotated_sections(split)
    encodings = model.encode_documents([(s.texts, s.kind) for s in sections], with_embeddings=False,
                                       with_function_vectors=True)
    out = []
    for section, encoding in zip(sections, encodings, strict=True):
        for index, label in enumerate(section.annotated):
            if label is None or encoding.functions is None:
                continue
            text = section.texts[index]
            reading = reading_at(encoding, index, text, model.model_id, FROM_ANALYSIS)
            out.append(LabelledSentence(f"{label.source}:{label.paper_id}", text, section.kind, label.role,
                                        label.function, reading))
    return out


def gold_dev_readings(model: Any) -> list[LabelledSentence]:
    """The gold set v1's dev sentences, read from their paper's one analysis, as the app reads them."""
    from core.labelling.analysis import label_paper
    from core.paths import shared_dir
    from core.phrasing.query_reading import reading_from_analysis
    from models.datasets.gold import load_gold_papers

    out = []
    for paper, items in load_gold_papers("dev", shared_dir() / "pdfs"):
        analysis = label_paper(paper, model).embed()
        for item in items:
            reading = reading_from_analysis(analysis, item.index, item.text)
            if reading is not None:
                out.append(LabelledSentence(f"gold:{item.pdf}", item.text, item.section_kind, item.role,
                                            item.function, reading))
    return out


def score(queries: Sequence[LabelledSentence], library: LabelledLibrary, model: Any,
          k: int, ranking: str = "label") -> dict[str, Any]:
    """The share of each query's top ``k`` with its hand function / hand role, averaged over queries."""
    from core.phrasing.suggest import Source, suggest

    hand = {record.id: (item.hand_function, item.hand_role)
            for record, item in zip(library.records, library.items, strict=True)}
    by_text = {record.text: record.id for record in library.records}
    source = Source("corpus", library)
    function_shares: list[float] = []
    role_shares: list[float] = []
    recognised: list[float] = []
    missed: list[float] = []
    for query in queries:
        library.left_out = query.paper
        found = suggest(query.text, model, [source], k, reading=query.reading, ranking=ranking).suggestions
        labels = [hand[by_text[s.text]] for s in found]
        share = sum(f == query.hand_function for f, _ in labels) / k
        function_shares.append(share)
        role_shares.append(sum(r == query.hand_role for _, r in labels) / k)
        (recognised if query.reading.function_label == query.hand_function else missed).append(share)

    def mean(values: list[float]) -> float:
        return round(100 * sum(values) / len(values), 2) if values else 0.0

    return {"ranking": ranking, "queries": len(function_shares),
            "same_hand_function": mean(function_shares), "same_hand_role": mean(role_shares),
            "recognised_queries": len(recognised), "same_hand_function_recognised": mean(recognised),
            "same_hand_function_missed": mean(missed)}


def run(args: argparse.Namespace) -> int:
    from core.phrasing.suggest import RANKINGS
    from models.encoder import load_model

    started = time.perf_counter()
    model = load_model(args.model, device=args.device, threads=args.threads)
    if not model.has_functions:
        print(f"eval suggest-labels: model {model.model_id} has no function head", file=sys.stderr)
        return 2
    items = annotated_readings(model, args.split)
    library = LabelledLibrary([s for s in items if len(s.text.split()) >= MIN_WORDS])
    pool = items if args.queries == "annotated" else gold_dev_readings(model)
    queries = [s for s in pool if s.hand_function != "none"]
    print(f"eval suggest-labels: {len(library.records)} library sentences (annotated:{args.split}, model "
          f"labels), {len(queries)} queries ({args.queries}), top {args.k}; model {model.model_id}")
    results = [score(queries, library, model, args.k, ranking) for ranking in (args.ranking or RANKINGS)]
    for result in results:
        print(f"  ranking {result['ranking']:<10} same hand function {result['same_hand_function']:5.2f} %  "
              f"same hand role {result['same_hand_role']:5.2f} %  (recognised queries "
              f"{result['recognised_queries']}: {result['same_hand_function_recognised']:5.2f} %, the others "
              f"{result['same_hand_function_missed']:5.2f} %)")
    report = {"command": " ".join(["rhetorica", *sys.argv[1:]]), "model": model.model_id, "split": args.split,
              "queries": args.queries, "k": args.k, "library": len(library.records), "results": results,
              "seconds": round(time.perf_counter() - started, 1)}
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=1))
    return 0
