"""``rhetorica eval suggest``: phrasing suggestions judged by hand, blind, against random sentences.

Two steps, so the judge never knows which system gave a candidate:

1. ``--draw DIR``: ``--queries`` sentences of the hand-labelled full-paper gold set
   (``models/datasets/gold_data``, dev and test, the rows of CC BY papers whose gold function is
   not "none"; drawn with a fixed seed) each get the top ``-k`` suggestions from the phrase corpus
   and ``-k`` sentences of the same corpus drawn at random, shuffled together. Writes
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


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "suggest", help="Suggestions judged by hand, blind, against random sentences.", description=__doc__)
    step = parser.add_mutually_exclusive_group(required=True)
    step.add_argument("--draw", type=output_folder, metavar="DIR", help="write a blind sample to judge")
    step.add_argument("--judgements", type=input_file, metavar="FILE",
                      help="score the judgements of a sample")
    parser.add_argument("--key", type=input_file, default=None,
                        help="the sample's key.jsonl (with --judgements)")
    parser.add_argument("--gold", choices=("v1", "v2"), default="v1",
                        help="where --draw takes its queries: v1, the gold set of the shared PDFs (dev and "
                        "test); v2, the pdfs2 gold test (fresh queries; issue 24)")
    parser.add_argument("--queries", type=bounded_int(1, 100_000), default=50)
    parser.add_argument("-k", type=bounded_int(1, 100), default=5)
    parser.add_argument("--corpus", type=input_folder, default=None,
                        help="phrase corpus (default: the shipped one)")
    parser.add_argument("--model", type=as_text(bundle_path), default=None)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def _query_rows(count: int, gold: str = "v1") -> list[dict[str, Any]]:
    """Gold rows (open papers only: their text is in the repository) with a real function."""
    from models.datasets.annotated_corpus import GOLD2_DIR
    from models.datasets.gold import GOLD_DIR

    files = [GOLD_DIR / "dev.jsonl", GOLD_DIR / "test.jsonl"] if gold == "v1" else [GOLD2_DIR / "test.jsonl"]
    rows = [json.loads(line) for path in files
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    pool = [r for r in rows if r.get("text") and r["function"] != "none"]
    return random.Random(SEED).sample(pool, min(count, len(pool)))


def draw(out: Path, queries: int, k: int, corpus_dir: Path | None, model_path: str | None,
         threads: int, gold: str = "v1") -> dict[str, Any]:
    from core.paths import corpus_dir as default_corpus
    from core.phrasing.suggest import open_source, suggest
    from core.taxonomy.functions import default_taxonomy
    from models.encoder import load_model

    taxonomy = {f.id: f for f in default_taxonomy().functions}

    model = load_model(model_path, device="cpu", threads=threads)
    source = open_source("corpus", corpus_dir or default_corpus(), model)
    rng = random.Random(SEED + 1)
    size = len(source.library)  # type: ignore[arg-type]
    sample, key = [], []
    for number, row in enumerate(_query_rows(queries, gold)):
        query = str(row["text"])
        found = suggest(query, model, [source], k)
        chosen = [("model", s.text) for s in found.suggestions[:k]]
        randoms = [r.text for r in source.library.sentences(rng.sample(range(size), k * 3))
                   if r.text != query and r.text not in {t for _, t in chosen}][:k]
        candidates = [*chosen, *[("random", t) for t in randoms]]
        rng.shuffle(candidates)
        qid = f"q{number:02d}"
        shown = [{"cid": f"{qid}-{i}", "text": t} for i, (_, t) in enumerate(candidates)]
        function = taxonomy[row["function"]]
        sample.append({"query_id": qid, "query": query, "section_kind": row["section_kind"],
                       "gold_function": {"id": function.id, "name": function.name,
                                         "description": function.description},
                       "candidates": shown})
        key += [{"query_id": qid, "cid": f"{qid}-{i}", "system": system, "gold_function": row["function"],
                 "predicted_function": found.query["function"], "pdf": row["pdf"], "sid": row["sid"]}
                for i, (system, _) in enumerate(candidates)]
    source.library.close()
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("sample.jsonl", sample), ("key.jsonl", key)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (out / name).write_text(text, encoding="utf-8")
    return {"queries": len(sample), "candidates": len(key), "model_id": model.model_id, "out": str(out)}


def score(judgements: list[dict[str, Any]], key: list[dict[str, Any]]) -> dict[str, Any]:
    """Per system: strict (judged 2) and lenient (judged >= 1) precision, macro over queries."""
    system_of = {row["cid"]: row["system"] for row in key}
    per_query: dict[str, dict[str, list[int]]] = {}
    for row in judgements:
        system = system_of.get(row["cid"])
        if system is None:
            raise ValueError(f"judged candidate {row['cid']} is not in the key")
        per_query.setdefault(system, {}).setdefault(row["query_id"], []).append(int(row["same_job"]))
    # Queries whose function the model recognised (its predicted function = the gold one), when known.
    recognised = {row["query_id"] for row in key
                  if row.get("gold_function") and row.get("predicted_function") == row.get("gold_function")}

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
            result[system]["query_function_recognised"] = summary(
                {q: v for q, v in queries.items() if q in recognised})
            result[system]["query_function_missed"] = summary(
                {q: v for q, v in queries.items() if q not in recognised})
    return result


def _read(path: Path, what: str) -> list[dict[str, Any]]:
    from app.commands._options import read_jsonl

    return read_jsonl(path, what)


def run(args: argparse.Namespace) -> int:
    if args.draw is not None:
        report = draw(args.draw, args.queries, args.k, args.corpus, args.model, args.threads, args.gold)
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
