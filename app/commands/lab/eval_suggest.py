"""``rhetorica eval suggest``: phrasing suggestions judged by hand, blind, against random sentences.

Two steps, so the judge never knows which system gave a candidate:

1. ``--draw DIR``: ``--queries`` sentences of the hand-labelled full-paper gold set
   (``models/datasets/gold_data``, dev and test, the rows of CC BY papers whose gold function is
   not "none"; drawn with a fixed seed) each get the top ``-k`` suggestions from the phrase corpus
   and ``-k`` sentences of the same corpus drawn at random, shuffled together (with ``--compare-model``,
   also the top ``-k`` of a second model from its own corpus: the blind comparison of two models; a
   sentence both models suggest is shown once and counts for both). Writes
   ``DIR/sample.jsonl`` (what the judge sees: the query, its gold function with the taxonomy's name
   and description, the candidates) and ``DIR/key.jsonl`` (which system gave each candidate).
2. ``--judgements FILE --key FILE``: the judge's rows ``{"query_id", "cid", "same_job": 0|1|2}``
   (2 = the candidate performs the query's gold function, so its wording could be adapted for it;
   1 = a related function or only part of it; 0 = another function) scored per system: the share
   of candidates judged 2 (strict) and judged >= 1 (lenient), macro-averaged over queries.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from app.commands._options import (
    MAX_THREADS,
    as_text,
    bounded_int,
    bundle_path,
    input_file,
    input_folder,
    output_file,
    output_folder,
    write_output,
)

SEED = 2029
READINGS = ("alone", "neighbours", "analysis")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "suggest", help="Suggestions judged by hand, blind, against random sentences.", description=__doc__)
    step = parser.add_mutually_exclusive_group(required=True)
    step.add_argument("--draw", type=output_folder, metavar="DIR", help="write a blind sample to judge")
    step.add_argument("--judgements", type=input_file, metavar="FILE",
                      help="score the judgements of a sample")
    parser.add_argument("--key", type=input_file, default=None,
                        help="the sample's key.jsonl (with --judgements)")
    parser.add_argument("--gold", choices=("v1", "v2", "v3", "v4"), default="v1",
                        help="where --draw takes its queries: v1, the gold set of the shared PDFs (dev and "
                        "test); v2, the pdfs2 gold test (fresh queries; issue 24); v3, further sentences of "
                        "the same pdfs2 papers (session 18); v4, further ones (session 19)")
    parser.add_argument("--split", choices=("all", "dev", "test"), default="all",
                        help="with --draw --gold v1: take the queries from the dev papers only (to choose "
                        "between variants), the test papers only, or both (the default, as the v1 and v2 "
                        "samples); v2 has only a test split")
    parser.add_argument("--queries", type=bounded_int(1, 100_000), default=50)
    parser.add_argument("-k", type=bounded_int(1, 100), default=5)
    parser.add_argument("--corpus", type=input_folder, default=None,
                        help="phrase corpus (default: the shipped one)")
    parser.add_argument("--model", type=as_text(bundle_path), default=None)
    parser.add_argument("--compare-model", type=as_text(bundle_path), default=None, metavar="BUNDLE",
                        help="with --draw: a second model whose top -k (from --compare-corpus) join the "
                        "candidates as system 'baseline'")
    parser.add_argument("--compare-corpus", type=input_folder, default=None, metavar="DIR",
                        help="the phrase corpus built with --compare-model (default: the shipped one)")
    parser.add_argument("--seed", type=bounded_int(0, 2 ** 31), default=SEED,
                        help=f"query draw seed (default {SEED}, the v1 and v2 samples')")
    parser.add_argument("--exclude", type=input_file, action="append", default=[], metavar="SAMPLE",
                        help="with --draw: leave out the queries of an earlier sample.jsonl (repeatable), "
                        "so a new judgement has fresh queries")
    parser.add_argument("--in-context", action="store_true",
                        help="with --draw: the same as --reading neighbours (how the app read a sentence of "
                        "an open paper until session 17; the v3e sample was drawn so)")
    parser.add_argument("--reading", choices=READINGS, default=None,
                        help="with --draw: how each query is read. alone (the default); neighbours: its "
                        "section's kind and two neighbours a side, from the parsed gold paper; analysis: as "
                        "the app reads a selected sentence of an open paper now, from the paper's own "
                        "analysis (its whole section)")
    parser.add_argument("--compare-reading", choices=READINGS, default=None, metavar="READING",
                        help="with --draw: how the 'baseline' system reads each query (default: as "
                        "--reading); with no --compare-model, the baseline is the same model and corpus read "
                        "this way")
    parser.add_argument("--ranking", choices=("label", "confidence", "gated"), default="label",
                        help="with --draw: how the 'model' system ranks (core.phrasing.suggest.RANKINGS; "
                        "default label, as the app)")
    parser.add_argument("--compare-ranking", choices=("label", "confidence", "gated"), default=None,
                        metavar="RANKING",
                        help="with --draw: how the 'baseline' system ranks (default: as --ranking); with no "
                        "--compare-model, the same model and corpus ranked this way")
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _gold_dir(gold: str) -> Path:
    """The folder of a gold set's rows: v1 (the shared PDFs), v2, v3 or v4 (pdfs2 papers)."""
    from models.datasets.annotated_corpus import GOLD_TESTS
    from models.datasets.gold import GOLD_DIR

    return GOLD_DIR if gold == "v1" else GOLD_TESTS[f"gold{gold[1:]}"]


def _splits(gold: str, split: str = "all") -> tuple[str, ...]:
    """The gold splits queries come from (v2 has only a test split)."""
    from core.errors import RhetoricaError

    if gold != "v1":
        if split == "dev":
            raise RhetoricaError(f"eval suggest: --gold {gold} has no dev split (use --gold v1 --split dev)")
        return ("test",)
    return ("dev", "test") if split == "all" else (split,)


def _query_rows(count: int, gold: str = "v1", seed: int = SEED,
                exclude: frozenset[str] = frozenset(), split: str = "all") -> list[dict[str, Any]]:
    """Gold rows (open papers only: their text is in the repository) with a real function, none of whose
    text is in ``exclude``."""
    folder = _gold_dir(gold)
    files = [folder / f"{name}.jsonl" for name in _splits(gold, split)]
    rows = [json.loads(line) for path in files
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    pool = [r for r in rows if r.get("text") and r["function"] != "none" and r["text"] not in exclude]
    return random.Random(seed).sample(pool, min(count, len(pool)))


def _query_papers(rows: list[dict[str, Any]], gold: str, split: str = "all") -> dict[tuple[str, str], Any]:
    """(pdf, sid) -> (the parsed gold paper, the row's sentence index in it): each gold paper parsed
    afresh, the row found by its sentence id or hash."""
    from core.paths import shared_dir
    from models.datasets.gold import load_gold_papers

    folder, gold_dir = ("pdfs" if gold == "v1" else "pdfs2"), _gold_dir(gold)
    wanted = {(str(r["pdf"]), str(r["sid"])) for r in rows}
    found: dict[tuple[str, str], Any] = {}
    for name in _splits(gold, split):
        for paper, items in load_gold_papers(name, shared_dir() / folder, gold_dir):
            for item in items:
                if (item.pdf, item.sid) in wanted:
                    found[(item.pdf, item.sid)] = (paper, item.index)
    return found


class _Reader:
    """How one system reads a query (``--reading``): alone, with 2+2 neighbours and its section's kind
    (``context_in_paper``), or from the gold paper's own analysis by this model, as the app reads a
    selected sentence (``core.phrasing.query_reading.reading_from_analysis``; one analysis per paper)."""

    def __init__(self, mode: str, model: Any, papers: dict[tuple[str, str], Any]) -> None:
        self.mode, self.model, self.papers = mode, model, papers
        self._analyses: dict[int, Any] = {}

    def __call__(self, key: tuple[str, str], text: str) -> tuple[Any, Any]:
        """(context, reading) for ``suggest``; (None, None): the query is read alone."""
        from core.labelling.analysis import label_paper
        from core.labelling.sentence_context import context_in_paper
        from core.phrasing.query_reading import page_query

        if self.mode == "alone" or key not in self.papers:
            return None, None
        paper, index = self.papers[key]
        if self.mode == "neighbours":
            return context_in_paper(paper, index), None
        if id(paper) not in self._analyses:
            self._analyses[id(paper)] = label_paper(paper, self.model).embed()
        _, context, reading = page_query(paper, self._analyses[id(paper)], index)  # as the panel reads it
        return context, reading


def sample_queries(paths: list[Path]) -> frozenset[str]:
    """The query texts of earlier samples (``sample.jsonl``)."""
    return frozenset(str(row["query"]) for path in paths for row in _read(path, "a sample.jsonl"))


def draw(out: Path, queries: int, k: int, corpus_dir: Path | None, model_path: str | None,
         threads: int, gold: str = "v1", compare: tuple[str, Path | None] | None = None,
         seed: int = SEED, exclude: frozenset[str] = frozenset(), reading: str = "alone",
         split: str = "all", compare_reading: str | None = None,
         compare_ranking: str | None = None, ranking: str = "label") -> dict[str, Any]:
    from core.paths import corpus_dir as default_corpus
    from core.phrasing.suggest import open_source, suggest
    from core.taxonomy.functions import default_taxonomy
    from models.encoder import load_model

    taxonomy = {f.id: f for f in default_taxonomy().functions}
    first = load_model(model_path, device="cpu", threads=threads)
    systems = [("model", first, corpus_dir, reading)]
    rankings = {"model": ranking, "baseline": compare_ranking or ranking}
    if compare is not None or compare_reading is not None or compare_ranking is not None:
        other = load_model(compare[0], device="cpu", threads=threads) if compare is not None else first
        systems.append(("baseline", other, compare[1] if compare is not None else corpus_dir,
                        compare_reading or reading))
    sources = [open_source("corpus", folder or default_corpus(), model) for _, model, folder, _ in systems]
    rng = random.Random(seed + 1)
    size = len(sources[0].library)  # type: ignore[arg-type]
    sample, key = [], []
    rows = _query_rows(queries, gold, seed, exclude, split)
    papers = (_query_papers(rows, gold, split) if any(mode != "alone" for *_, mode in systems) else {})
    readers = [_Reader(mode, model, papers) for _, model, _, mode in systems]
    for number, row in enumerate(rows):
        query = str(row["text"])
        given: dict[str, list[str]] = {}  # candidate text -> the systems that gave it
        predicted: dict[str, str] = {}
        for (system, model, _, _), source, reader in zip(systems, sources, readers, strict=True):
            context, read = reader((str(row["pdf"]), str(row["sid"])), query)
            found = suggest(query, model, [source], k, context=context, reading=read,
                            ranking=rankings[system])
            predicted[system] = str(found.query["function"])
            for suggestion in found.suggestions[:k]:
                given.setdefault(suggestion.text, []).append(system)
        randoms = [r.text for r in sources[0].library.sentences(rng.sample(range(size), k * 3))
                   if r.text != query and r.text not in given][:k]
        for text in randoms:
            given[text] = ["random"]
        candidates = list(given.items())
        rng.shuffle(candidates)
        qid = f"q{number:02d}"
        shown = [{"cid": f"{qid}-{i}", "text": t} for i, (t, _) in enumerate(candidates)]
        function = taxonomy[row["function"]]
        sample.append({"query_id": qid, "query": query, "section_kind": row["section_kind"],
                       "gold_function": {"id": function.id, "name": function.name,
                                         "description": function.description},
                       "candidates": shown})
        key += [{"query_id": qid, "cid": f"{qid}-{i}", "system": system, "gold_function": row["function"],
                 "predicted_function": predicted.get(system, predicted["model"]), "pdf": row["pdf"],
                 "sid": row["sid"]}
                for i, (_, names) in enumerate(candidates) for system in names]
    for source in sources:
        source.library.close()
    model = systems[0][1]
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("sample.jsonl", sample), ("key.jsonl", key)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (out / name).write_text(text, encoding="utf-8")
    return {"queries": len(sample), "candidates": len(key), "model_id": model.model_id, "out": str(out)}


def score(judgements: list[dict[str, Any]], key: list[dict[str, Any]]) -> dict[str, Any]:
    """Per system: strict (judged 2) and lenient (judged >= 1) precision, macro over queries."""
    systems_of: dict[str, list[str]] = {}
    for row in key:  # a candidate two systems gave has a key row for each
        systems_of.setdefault(row["cid"], []).append(row["system"])
    per_query: dict[str, dict[str, list[int]]] = {}
    for row in judgements:
        if row["cid"] not in systems_of:
            raise ValueError(f"judged candidate {row['cid']} is not in the key")
        for system in systems_of[row["cid"]]:
            per_query.setdefault(system, {}).setdefault(row["query_id"], []).append(int(row["same_job"]))
    # Queries whose function each system's model recognised (predicted function = the gold one).
    recognised: dict[str, set[str]] = {}
    for row in key:
        if row.get("gold_function") and row.get("predicted_function") == row.get("gold_function"):
            recognised.setdefault(row["system"], set()).add(row["query_id"])

    def summary(queries: dict[str, list[int]]) -> dict[str, Any]:
        strict = [sum(v == 2 for v in values) / len(values) for values in queries.values()]
        lenient = [sum(v >= 1 for v in values) / len(values) for values in queries.values()]
        return {"queries": len(queries), "candidates": sum(len(v) for v in queries.values()),
                "precision_strict": round(sum(strict) / max(1, len(strict)), 4),
                "precision_lenient": round(sum(lenient) / max(1, len(lenient)), 4)}

    result: dict[str, Any] = {}
    for system, queries in sorted(per_query.items()):
        result[system] = summary(queries)
        if any("predicted_function" in row for row in key):
            known = recognised.get(system, set())  # random rows carry the model's reading
            result[system]["query_function_recognised"] = summary(
                {q: v for q, v in queries.items() if q in known})
            result[system]["query_function_missed"] = summary(
                {q: v for q, v in queries.items() if q not in known})
    return result


def _read(path: Path, what: str) -> list[dict[str, Any]]:
    from app.commands._options import read_jsonl

    return read_jsonl(path, what)


def run(args: argparse.Namespace) -> int:
    if args.draw is not None:
        compare = (args.compare_model, args.compare_corpus) if args.compare_model else None
        reading = args.reading or ("neighbours" if args.in_context else "alone")
        report = draw(args.draw, args.queries, args.k, args.corpus, args.model, args.threads, args.gold,
                      compare, args.seed, sample_queries(args.exclude), reading, args.split,
                      args.compare_reading, args.compare_ranking, args.ranking)
    else:
        from core.errors import RhetoricaError

        if args.key is None:
            raise RhetoricaError("eval suggest: --judgements needs --key (the sample's key.jsonl)")
        judgements, key = _read(args.judgements, "judgements (JSON Lines)"), _read(args.key, "a key.jsonl")
        try:
            report = score(judgements, key)
        except (KeyError, TypeError, ValueError) as error:
            raise RhetoricaError(f"{args.judgements}: judgements that do not match {args.key} "
                                 f"({type(error).__name__}: {error})") from None
    print(json.dumps(report, indent=2))
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2) + "\n")
    return 0
