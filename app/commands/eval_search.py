"""``rhetorica eval search``: faceted search by example (issue 13) against a gold-label reference.

Every abstract of a split with gold role labels (CSAbstruct, PubMedQA), or a seeded sample of
``--queries`` of them, queries all the *other* abstracts of the split, once per facet (background =
background + objective, method, result = result + conclusion; as in :mod:`core.search`).

**Reference.** For a query and a facet, the candidates are ranked by the max-sum (mean over the
query's facet sentences of the best cosine against the candidate's facet sentences) of the content
view, the facet sentences of *both* sides chosen by their GOLD role labels. The top ``R`` (default 10)
candidates of that ranking are the relevant ones (binary, for MAP); NDCG@10 grades them by how far
their reference score lies above the (R+1)-th's (gain = score - score of the (R+1)-th, so the
clearest matches weigh most; every other candidate has gain 0). This is the "agreement with a
content-only ranking of the facet sentences of the candidates" of the issue: it rewards a system
that picks the facet's sentences as gold labels would.

**Systems**, all on the same content vectors (the shipped model's content view, which is the
untrained all-MiniLM-L6-v2 embedding); only the choice of sentences and the aggregation differ:

- ``faceted``: the model's PREDICTED roles choose the facet sentences of query and candidates,
  max-sum (what ``rhetorica search --facet F`` ranks); a candidate without predicted facet sentences
  is not ranked; a query without any is a failure (AP = NDCG = 0, counted as ``no_query``);
- ``all``: every sentence, max-sum (``rhetorica search --facet all``);
- ``mean``: one vector per abstract (the L2-normalised mean of its sentence vectors), cosine: the
  untrained all-MiniLM-L6-v2 document baseline (``--against BUNDLE`` adds the same baseline with
  another bundle's embedding, e.g. the int8 ``runs/baseline-bundle``);
- ``random``: a seeded random ranking (the floor: MAP ≈ R / candidates).

**Limits.** The reference is itself built from content similarity with the same base embedding,
so the figures measure whether a system finds the candidates that gold-labelled facet sentences
would find, not topical relevance judged by people; a system whose sentence choice equals the gold
labels scores 1.0 by construction, and the un-faceted and mean-vector systems are penalised exactly
when a paper's other sentences pull the ranking elsewhere. Queries whose gold labels have no
sentence of the facet are left out of that facet. Abstracts are short (CSAbstruct: ~6 sentences,
often one or two per facet), so one mislabelled sentence changes a facet a lot.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.commands._options import bounded_int, output_file, path_arg, write_output

if TYPE_CHECKING:  # numpy loads inside the functions (fast CLI start-up)
    import numpy as np

EVAL_FACETS: tuple[str, ...] = ("background", "method", "result")
SYSTEMS: tuple[str, ...] = ("faceted", "all", "mean", "random")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "search", help="Faceted search by example: MAP and NDCG@10 against a gold-label facet reference.",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="csabstruct:test",
                        help="a split with gold role labels: csabstruct:test (default) or pubmedqa:test")
    parser.add_argument("--queries", type=bounded_int(0, 100_000_000), default=100, metavar="N",
                        help="seeded sample of N query abstracts (default 100; 0 = every abstract)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=13)
    parser.add_argument("--relevant", type=bounded_int(1, 1_000_000), default=10, metavar="R",
                        help="the top R of the reference ranking are relevant (default 10)")
    parser.add_argument("-k", type=bounded_int(1, 1_000_000), default=10, help="NDCG cut-off (default 10)")
    add_model_options(parser)
    parser.add_argument("--against", type=path_arg, action="append", default=[], metavar="BUNDLE",
                        help="also score the mean-vector baseline with this bundle's embedding (repeatable)")
    parser.add_argument("--limit", type=bounded_int(1, 100_000_000), default=None, metavar="N",
                        help="only the first N abstracts")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


# -- metrics --------------------------------------------------------------------------------------
def average_precision(ranking: Sequence[int], relevant: set[int] | frozenset[int]) -> float:
    """AP of a ranked list against a relevant set: (1 / |relevant|) * sum of P@i at each relevant hit.

    Relevant items missing from the ranking add 0; an empty relevant set gives 0."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for i, item in enumerate(ranking):
        if item in relevant:
            hits += 1
            total += hits / (i + 1)
    return total / len(relevant)


def ndcg_at_k(ranking: Sequence[int], gains: Mapping[int, float], k: int = 10) -> float:
    """NDCG@k with linear gains: sum gain / log2(rank + 1) over the first k, divided by the ideal's."""
    import math

    dcg = sum(gains.get(item, 0.0) / math.log2(i + 2) for i, item in enumerate(ranking[:k]))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def reference_judgements(scores: np.ndarray, query: int, r: int) -> tuple[frozenset[int], dict[int, float]]:
    """From one row of reference scores (-inf: the candidate has no gold facet sentence): the top ``r``
    other candidates (relevant) and their graded gains (score above the (r+1)-th's; all 1 when there
    is no (r+1)-th and the scores tie)."""
    import numpy as np

    candidates = np.flatnonzero(np.isfinite(scores))
    candidates = candidates[candidates != query]
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    top = order[:r]
    if len(top) == 0:
        return frozenset(), {}
    floor = float(scores[order[r]]) if len(order) > r else float(scores[top[-1]]) - 1e-3
    gains = {int(i): max(float(scores[i]) - floor, 0.0) for i in top}
    return frozenset(int(i) for i in top), gains


def ranking_of(scores: np.ndarray, query: int) -> list[int]:
    """Candidates best first (ties by index); the query and unrankable ones (-inf, nan) left out."""
    import numpy as np

    candidates = np.flatnonzero(np.isfinite(scores))
    candidates = candidates[candidates != query]
    return [int(i) for i in candidates[np.lexsort((candidates, -scores[candidates]))]]


# -- scoring, every query at once -----------------------------------------------------------------
def _group_starts(owners: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]) if len(owners) else owners


def max_sum_matrix(vectors: np.ndarray, owner: np.ndarray, query_mask: np.ndarray,
                   candidate_mask: np.ndarray, n_docs: int) -> np.ndarray:
    """(n_docs, n_docs) max-sum scores: [q, c] = mean over q's selected sentences of the best cosine
    against c's selected sentences (as :func:`core.search.max_sum_scores`). ``vectors`` (n, d) are
    L2-normalised sentence vectors, ``owner`` (n,) the document of each, sorted (documents
    contiguous). A row whose query has no selected sentence is nan; a column whose candidate has
    none is -inf."""
    import numpy as np

    out = np.full((n_docs, n_docs), -np.inf, dtype=np.float64)
    q_rows, c_rows = np.flatnonzero(query_mask), np.flatnonzero(candidate_mask)
    q_docs, c_docs = owner[q_rows], owner[c_rows]
    q_starts, c_starts = _group_starts(q_docs), _group_starts(c_docs)
    has_query = np.zeros(n_docs, dtype=bool)
    has_query[q_docs] = True
    if len(q_rows) and len(c_rows):
        similarities = vectors[q_rows] @ vectors[c_rows].T
        best = np.maximum.reduceat(similarities, c_starts, axis=1)  # (query sentences, candidate docs)
        sums = np.add.reduceat(best.astype(np.float64), q_starts, axis=0)  # (query docs, candidate docs)
        counts = np.diff(np.r_[q_starts, len(q_rows)])
        out[np.ix_(q_docs[q_starts], c_docs[c_starts])] = sums / counts[:, None]
    out[~has_query] = np.nan
    return out


def mean_vector_matrix(vectors: np.ndarray, owner: np.ndarray, n_docs: int) -> np.ndarray:
    """(n_docs, n_docs) cosines of one vector per document (the L2-normalised mean of its sentences')."""
    import numpy as np

    sums = np.zeros((n_docs, vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means = sums / np.maximum(norms, 1e-12)
    return means @ means.T


def evaluate(vectors: np.ndarray, owner: np.ndarray, gold: Sequence[str], predicted: Sequence[str],
             queries: Sequence[int], *, r: int = 10, k: int = 10, seed: int = 13,
             extra: Mapping[str, np.ndarray] | None = None,
             facets: Sequence[str] = EVAL_FACETS) -> dict[str, Any]:
    """MAP and NDCG@k per facet and system, with per-query scores.

    ``vectors`` (n, d): the content view of every sentence (L2-normalised), ``owner`` (n,): its
    document (sorted), ``gold`` / ``predicted``: role labels; ``queries``: the documents that query;
    ``extra``: more systems as ready (n_docs, n_docs) score matrices (e.g. another bundle's mean vectors).
    """
    import numpy as np

    from core.search import facet_mask

    owner = np.asarray(owner)
    n_docs = int(owner.max()) + 1 if len(owner) else 0
    every = np.ones(len(owner), dtype=bool)
    fixed: dict[str, np.ndarray] = {
        "all": max_sum_matrix(vectors, owner, every, every, n_docs),
        "mean": mean_vector_matrix(vectors, owner, n_docs),
        "random": np.random.default_rng(seed).random((n_docs, n_docs)),
        **(extra or {}),
    }
    report: dict[str, Any] = {}
    for facet in facets:
        gold_mask, predicted_mask = facet_mask(list(gold), facet), facet_mask(list(predicted), facet)
        reference = max_sum_matrix(vectors, owner, gold_mask, gold_mask, n_docs)
        systems = {"faceted": max_sum_matrix(vectors, owner, predicted_mask, predicted_mask, n_docs), **fixed}
        per_query: dict[str, dict[str, list[float]]] = {name: {"ap": [], "ndcg": []} for name in systems}
        used: list[int] = []
        searchable: list[bool] = []  # the query has predicted facet sentences (the faceted system can run)
        for q in queries:
            if not np.isfinite(reference[q]).any():  # no gold facet sentence in the query
                continue
            relevant, gains = reference_judgements(reference[q], q, r)
            if not relevant:
                continue
            used.append(int(q))
            searchable.append(not np.isnan(systems["faceted"][q]).all())
            for name, scores in systems.items():
                ranking = ranking_of(scores[q], q) if not np.isnan(scores[q]).all() else []
                per_query[name]["ap"].append(average_precision(ranking, relevant))
                per_query[name]["ndcg"].append(ndcg_at_k(ranking, gains, k))
        tp = int(np.count_nonzero(gold_mask & predicted_mask))
        selection = {"precision": tp / max(int(predicted_mask.sum()), 1),
                     "recall": tp / max(int(gold_mask.sum()), 1)}
        ok = np.array(searchable, dtype=bool)
        report[facet] = {
            "queries": len(used), "no_query": int(np.count_nonzero(~ok)),
            "gold_sentences": int(gold_mask.sum()), "predicted_sentences": int(predicted_mask.sum()),
            "selection": selection,
            "systems": {name: {"map": float(np.mean(v["ap"])) if v["ap"] else 0.0,
                               "ndcg": float(np.mean(v["ndcg"])) if v["ndcg"] else 0.0}
                        for name, v in per_query.items()},
            # faceted and un-faceted over the queries the faceted system can run at all
            "searchable": {name: {"map": _mean_where(per_query[name]["ap"], ok),
                                  "ndcg": _mean_where(per_query[name]["ndcg"], ok)}
                           for name in ("faceted", "all")},
            "per_query": {"query": used, "searchable": searchable, **per_query},
        }
        report[facet]["delta_map_faceted_all"] = paired_bootstrap(
            per_query["faceted"]["ap"], per_query["all"]["ap"], seed=seed)
    return report


def _mean_where(values: Sequence[float], keep: np.ndarray) -> float:
    import numpy as np

    kept = np.asarray(values, dtype=np.float64)[keep]
    return float(kept.mean()) if len(kept) else 0.0


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, seed: int = 13,
                     rounds: int = 2000) -> dict[str, float]:
    """Mean of a - b over queries with a 95 % percentile bootstrap interval (queries resampled)."""
    import numpy as np

    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(diff) == 0:
        return {"mean": 0.0, "low": 0.0, "high": 0.0}
    draws = np.random.default_rng(seed).integers(0, len(diff), size=(rounds, len(diff)))
    means = diff[draws].mean(axis=1)
    return {"mean": float(diff.mean()), "low": float(np.percentile(means, 2.5)),
            "high": float(np.percentile(means, 97.5))}


# -- the command ----------------------------------------------------------------------------------
def _flatten(documents: Sequence[Any]) -> tuple[list[str], np.ndarray, list[str]]:
    import numpy as np

    sentences = [s for d in documents for s in d.sentences]
    owner = np.repeat(np.arange(len(documents)), [len(d.sentences) for d in documents])
    gold = [str(label) for d in documents for label in d.labels]
    return sentences, owner, gold


def sample_queries(n_docs: int, n: int, seed: int) -> list[int]:
    """``n`` document indices drawn without replacement (seeded), in order; all when n is 0 or >= n_docs."""
    import numpy as np

    if n <= 0 or n >= n_docs:
        return list(range(n_docs))
    return sorted(int(i) for i in np.random.default_rng(seed).choice(n_docs, size=n, replace=False))


def command_line(args: argparse.Namespace) -> str:
    parts = ["rhetorica", "eval", "search", "--data", args.data, "--queries", str(args.queries)]
    if args.seed != 13:
        parts += ["--seed", str(args.seed)]
    if args.relevant != 10:
        parts += ["--relevant", str(args.relevant)]
    if args.k != 10:
        parts += ["-k", str(args.k)]
    if args.model is not None:
        parts += ["--model", str(args.model)]
    parts += [f"--against {b}" for b in args.against]
    if args.limit is not None:
        parts += ["--limit", str(args.limit)]
    return " ".join(parts)


def format_table(report: Mapping[str, Any], systems: Sequence[str]) -> list[str]:
    """Rows: system; columns: MAP and NDCG per facet (Markdown)."""
    facets = list(report)
    head = "| system | " + " | ".join(f"{f} MAP | {f} NDCG@10" for f in facets) + " |"
    lines = [head, "|---" * (1 + 2 * len(facets)) + "|"]
    for name in systems:
        cells = []
        for f in facets:
            s = report[f]["systems"][name]
            cells += [f"{s['map']:.3f}", f"{s['ndcg']:.3f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def run(args: argparse.Namespace, *, progress: Callable[[str], None] = print) -> int:
    import numpy as np

    from models.datasets import load_spec
    from models.encoder import load_model

    documents = [d for d in load_spec(args.data) if d.sentences]
    if args.limit is not None:
        documents = documents[: args.limit]
    sentences, owner, gold = _flatten(documents)
    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    encodings = model.encode_documents([(d.sentences, "abstract") for d in documents], with_embeddings=True)
    vectors = np.concatenate([e.embeddings for e in encodings]).astype(np.float32)
    predicted = [p.label for e in encodings for p in e.roles]
    encode_seconds = time.perf_counter() - started
    extra: dict[str, np.ndarray] = {}
    bundles: dict[str, str] = {}
    for bundle in args.against:
        other = load_model(bundle, device=args.device, threads=args.threads)
        name = f"mean ({other.model_id})"
        other_vectors = np.asarray(other.embed(sentences, view="content"), dtype=np.float32)
        other_vectors /= np.maximum(np.linalg.norm(other_vectors, axis=1, keepdims=True), 1e-12)
        extra[name] = mean_vector_matrix(other_vectors, owner, len(documents))
        bundles[name] = str(bundle)
    queries = sample_queries(len(documents), args.queries, args.seed)
    started = time.perf_counter()
    report = evaluate(vectors, owner, gold, predicted, queries, r=args.relevant, k=args.k, seed=args.seed,
                      extra=extra)
    score_seconds = time.perf_counter() - started
    systems = [*SYSTEMS[:3], *extra, SYSTEMS[3]]
    command = command_line(args)
    results = {"data": args.data, "documents": len(documents), "sentences": len(sentences),
               "queries": len(queries), "relevant": args.relevant, "k": args.k, "seed": args.seed,
               "model_id": model.model_id, "against": bundles, "command": command,
               "encode_seconds": round(encode_seconds, 1), "score_seconds": round(score_seconds, 2),
               "facets": report}
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=1) + "\n")
    progress(f"{args.data}: {len(queries)} query abstracts over {len(documents)} abstracts "
             f"({len(sentences)} sentences), model {model.model_id}; relevant = top {args.relevant} of the "
             f"gold-facet reference; encode {encode_seconds:.1f} s, scoring {score_seconds:.2f} s")
    for line in format_table(report, systems):
        progress(line)
    for facet, f in report.items():
        d = f["delta_map_faceted_all"]
        s = f["searchable"]
        progress(f"{facet}: {f['queries']} queries scored ({f['no_query']} without predicted {facet} "
                 f"sentences, AP 0; without them MAP faceted {s['faceted']['map']:.3f}, all "
                 f"{s['all']['map']:.3f}); predicted facet sentences precision "
                 f"{f['selection']['precision']:.3f} recall {f['selection']['recall']:.3f}; "
                 f"MAP faceted - all {d['mean']:+.3f} [95% CI {d['low']:+.3f}, {d['high']:+.3f}]")
    progress(f"command: {command}")
    return 0
