"""``rhetorica eval search``: faceted search by example (issues 13 and 26) against gold-label references.

Every abstract of a split with gold role labels (CSAbstruct, PubMedQA), or a seeded sample of
``--queries`` of them, queries all the *other* abstracts of the split, once per facet (background =
background + objective, method, result = result + conclusion; as in :mod:`core.phrasing.search`).

**References** (``app/commands/lab/eval_search_scoring.py``), each from the GOLD role labels: ``content``
(max-sum of the content view over the gold facet sentences of both sides: issue 13's reference, which
shares the systems' embedding and favours facet-only matching), ``lexical-facet`` (TF-IDF cosine of the
gold facet sentences of both sides) and ``lexical-whole`` (the query's gold facet sentences against the
candidate's whole abstract). For each, the top ``R`` (default 10) candidates are relevant (MAP); NDCG@10
and NDCG%20 (cut-off: 20 % of the candidates, CSFCube's measure) grade them by how far their reference
score lies above the (R+1)-th's.

**Systems**, all on the same content vectors; only the choice of sentences and the aggregation differ:

- ``faceted``: what ``rhetorica search --facet F`` ranks (:func:`core.phrasing.search.blend_scores`, the
  :data:`core.phrasing.search.DEFAULT_BLEND`): the query's predicted facet sentences (all of them when it has
  none) against every candidate sentence, facet sentences of the candidate with a small bonus, blended
  with whole-paper similarity;
- ``facet-only``: issue 13's ranking, max-sum over the PREDICTED facet sentences of both sides; a
  candidate without them is not ranked, a query without them fails (AP = NDCG = 0, ``no_query``);
- ``all``: every sentence, max-sum (``rhetorica search --facet all``);
- ``mean``: one vector per abstract (the L2-normalised mean of its sentence vectors), cosine
  (``--against BUNDLE`` adds the same baseline with another bundle's embedding);
- ``random``: a seeded random ranking (the floor).

``--tune`` (dev splits only) scores a grid of blends instead and prints the one whose worst margin over
facets and references (NDCG%20 minus the better of ``all`` and ``mean``) is highest.

**Limits.** No human relevance judgements: the references are built from gold role labels and a
similarity (the embedding, or word overlap), so they measure agreement with "what the gold facet
sentences would find", not topical relevance judged by people. Queries whose gold labels have no
sentence of the facet are left out of that facet. Abstracts are short (CSAbstruct: ~6 sentences).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.commands._options import bounded_int, output_file, path_arg, write_output
from app.commands.lab.eval_search_metrics import (
    average_precision,
    ndcg_at_k,
    ranking_of,
    reference_judgements,
)
from app.commands.lab.eval_search_scoring import REFERENCES, max_sum_matrix, mean_vector_matrix

__all__ = ["REFERENCES", "evaluate", "max_sum_matrix", "mean_vector_matrix", "never_loses", "run"]

if TYPE_CHECKING:  # numpy loads inside the functions (fast CLI start-up)
    import numpy as np

    from core.phrasing.search import FacetBlend

EVAL_FACETS: tuple[str, ...] = ("background", "method", "result")
SYSTEMS: tuple[str, ...] = ("faceted", "facet-only", "all", "mean", "random")
WHOLE_PAPER: tuple[str, ...] = ("all", "mean")  # the rankings a facet must not lose to
METRICS: tuple[str, ...] = ("map", "ndcg", "ndcg20")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import add_model_options

    parser = subparsers.add_parser(
        "search", help="Faceted search by example: MAP, NDCG@10 and NDCG%%20 against gold-label facet "
                       "references; --tune chooses the facet blend on a dev split.",
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
    parser.add_argument("--tune", action="store_true",
                        help="score the grid of facet blends (bonus x whole-paper weight x confidence) "
                             "and print the best; refused on a test split")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


# -- scoring, every query at once -----------------------------------------------------------------
def evaluate(vectors: np.ndarray, owner: np.ndarray, gold: Sequence[str], predicted: Sequence[str],
             queries: Sequence[int], *, r: int = 10, k: int = 10, seed: int = 13,
             extra: Mapping[str, np.ndarray] | None = None, facets: Sequence[str] = EVAL_FACETS,
             confidences: np.ndarray | None = None, texts: Sequence[str] | None = None,
             reference: str = "content", blend: FacetBlend | None = None) -> dict[str, Any]:
    """MAP, NDCG@k and NDCG%20 per facet and system against ``reference``, with per-query scores.

    ``vectors`` (n, d): the content view of every sentence (L2-normalised), ``owner`` (n,): its
    document (sorted), ``gold`` / ``predicted``: role labels, ``confidences``: the predicted roles'
    (default 1), ``texts``: the sentences (the lexical references); ``queries``: the documents that
    query; ``extra``: more systems as ready (n_docs, n_docs) score matrices; ``blend``: the faceted
    system's (default :data:`core.phrasing.search.DEFAULT_BLEND`).
    """
    import numpy as np

    from app.commands.lab.eval_search_scoring import (
        blend_matrix,
        fraction_cutoff,
        max_sum_matrix,
        mean_vector_matrix,
        reference_matrix,
    )
    from core.phrasing.search import DEFAULT_BLEND, facet_mask

    owner = np.asarray(owner)
    n_docs = int(owner.max()) + 1 if len(owner) else 0
    cut = fraction_cutoff(n_docs - 1)
    confidences = np.ones(len(owner)) if confidences is None else np.asarray(confidences)
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
        judged = reference_matrix(reference, vectors, owner, gold_mask, texts, n_docs)
        faceted = blend_matrix(vectors, owner, predicted, confidences, facet, blend or DEFAULT_BLEND)
        systems = {"faceted": faceted,
                   "facet-only": max_sum_matrix(vectors, owner, predicted_mask, predicted_mask, n_docs),
                   **fixed}
        per_query: dict[str, dict[str, list[float]]] = {name: {m: [] for m in METRICS} for name in systems}
        used: list[int] = []
        searchable: list[bool] = []  # the query has predicted facet sentences (facet-only can run)
        for q in queries:
            if not np.isfinite(judged[q]).any():  # no gold facet sentence in the query
                continue
            relevant, gains = reference_judgements(judged[q], q, r)
            if not relevant:
                continue
            used.append(int(q))
            searchable.append(not np.isnan(systems["facet-only"][q]).all())
            for name, scores in systems.items():
                ranking = ranking_of(scores[q], q) if not np.isnan(scores[q]).all() else []
                per_query[name]["map"].append(average_precision(ranking, relevant))
                per_query[name]["ndcg"].append(ndcg_at_k(ranking, gains, k))
                per_query[name]["ndcg20"].append(ndcg_at_k(ranking, gains, cut))
        tp = int(np.count_nonzero(gold_mask & predicted_mask))
        selection = {"precision": tp / max(int(predicted_mask.sum()), 1),
                     "recall": tp / max(int(gold_mask.sum()), 1)}
        ok = np.array(searchable, dtype=bool)
        report[facet] = {
            "queries": len(used), "no_query": int(np.count_nonzero(~ok)),
            "gold_sentences": int(gold_mask.sum()), "predicted_sentences": int(predicted_mask.sum()),
            "selection": selection, "ndcg20_cutoff": cut,
            "systems": {name: {m: float(np.mean(v[m])) if v[m] else 0.0 for m in METRICS}
                        for name, v in per_query.items()},
            # over the queries facet-only can run at all
            "searchable": {name: {m: _mean_where(per_query[name][m], ok) for m in METRICS}
                           for name in ("faceted", "facet-only", "all")},
            "per_query": {"query": used, "searchable": searchable, **per_query},
            "delta_map_faceted_all": paired_bootstrap(per_query["faceted"]["map"], per_query["all"]["map"],
                                                      seed=seed),
            "delta_ndcg20_faceted": {whole: paired_bootstrap(per_query["faceted"]["ndcg20"],
                                                             per_query[whole]["ndcg20"], seed=seed)
                                     for whole in WHOLE_PAPER},
        }
    return report


def never_loses(report: Mapping[str, Any], metric: str = "ndcg20") -> tuple[bool, float]:
    """Whether the faceted system scores at least the better whole-paper ranking on every facet of a
    report, and the worst margin."""
    margins = [f["systems"]["faceted"][metric] - max(f["systems"][w][metric] for w in WHOLE_PAPER)
               for f in report.values()]
    worst = min(margins) if margins else 0.0
    return worst >= 0.0, worst


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
    if args.tune:
        parts.append("--tune")
    return " ".join(parts)


def format_table(report: Mapping[str, Any], systems: Sequence[str]) -> list[str]:
    """Rows: system; columns: MAP, NDCG@10 and NDCG%20 per facet (Markdown)."""
    facets = list(report)
    head = "| system | " + " | ".join(f"{f} MAP | {f} NDCG@10 | {f} NDCG%20" for f in facets) + " |"
    lines = [head, "|---" * (1 + 3 * len(facets)) + "|"]
    for name in systems:
        cells = [f"{report[f]['systems'][name][m]:.3f}" for f in facets for m in METRICS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _encode(args: argparse.Namespace) -> dict[str, Any]:
    """The split's documents through the model: sentences, owners, gold and predicted roles,
    confidences, content vectors."""
    import numpy as np

    from models.datasets import load_spec, refuse_test_split
    from models.encoder import load_model

    if args.tune:
        refuse_test_split(args.data, "choosing the facet blend (--tune)")
    documents = [d for d in load_spec(args.data) if d.sentences]
    if args.limit is not None:
        documents = documents[: args.limit]
    sentences, owner, gold = _flatten(documents)
    model = load_model(args.model, device=args.device, threads=args.threads)
    started = time.perf_counter()
    encodings = model.encode_documents([(d.sentences, "abstract") for d in documents], with_embeddings=True)
    vectors = np.concatenate([e.embeddings for e in encodings]).astype(np.float32)
    roles = [p for e in encodings for p in e.roles]
    return {"documents": documents, "sentences": sentences, "owner": owner, "gold": gold, "model": model,
            "vectors": vectors, "predicted": [p.label for p in roles],
            "confidences": np.array([float(getattr(p, "confidence", 1.0)) for p in roles]),
            "encode_seconds": time.perf_counter() - started}


def _run_tune(args: argparse.Namespace, data: dict[str, Any], queries: list[int],
              progress: Callable[[str], None]) -> int:
    from app.commands.lab.eval_search_scoring import tune

    started = time.perf_counter()
    tuned = tune(data["vectors"], data["owner"], data["gold"], data["predicted"], data["confidences"],
                 data["sentences"], queries, r=args.relevant)
    command = command_line(args)
    if args.json is not None:
        record = {"data": args.data, "model_id": data["model"].model_id, "queries": len(queries),
                  "command": command, **tuned}
        write_output(args.json, json.dumps(record, indent=1) + "\n")
    progress(f"{args.data}: {len(tuned['grid'])} blends x {len(REFERENCES)} references, NDCG%20 (cut-off "
             f"{tuned['cutoff']}), {len(queries)} queries, model {data['model'].model_id}; "
             f"{time.perf_counter() - started:.1f} s")
    progress("| sentence bonus | whole-paper weight | confidence-weighted | worst margin | mean NDCG%20 |")
    progress("|---|---|---|---|---|")
    for row in tuned["grid"][:10]:
        progress(f"| {row['sentence_bonus']} | {row['whole_weight']} | {row['confidence_weighted']} | "
                 f"{row['worst_margin']:+.4f} | {row['mean_ndcg20']:.4f} |")
    chosen = tuned["chosen"]
    progress(f"chosen: FacetBlend(sentence_bonus={chosen['sentence_bonus']}, whole_weight="
             f"{chosen['whole_weight']}, confidence_weighted={chosen['confidence_weighted']})")
    progress(f"command: {command}")
    return 0


def run(args: argparse.Namespace, *, progress: Callable[[str], None] = print) -> int:
    import numpy as np

    from models.encoder import load_model

    data = _encode(args)
    documents, sentences, owner, model = data["documents"], data["sentences"], data["owner"], data["model"]
    queries = sample_queries(len(documents), args.queries, args.seed)
    if args.tune:
        return _run_tune(args, data, queries, progress)
    extra: dict[str, np.ndarray] = {}
    bundles: dict[str, str] = {}
    for bundle in args.against:
        other = load_model(bundle, device=args.device, threads=args.threads)
        name = f"mean ({other.model_id})"
        other_vectors = np.asarray(other.embed(sentences, view="content"), dtype=np.float32)
        other_vectors /= np.maximum(np.linalg.norm(other_vectors, axis=1, keepdims=True), 1e-12)
        extra[name] = mean_vector_matrix(other_vectors, owner, len(documents))
        bundles[name] = str(bundle)
    started = time.perf_counter()
    references = {ref: evaluate(data["vectors"], owner, data["gold"], data["predicted"], queries,
                                r=args.relevant, k=args.k, seed=args.seed, extra=extra,
                                confidences=data["confidences"], texts=sentences, reference=ref)
                  for ref in REFERENCES}
    score_seconds = time.perf_counter() - started
    systems = [*SYSTEMS[:4], *extra, SYSTEMS[4]]
    command = command_line(args)
    results = {"data": args.data, "documents": len(documents), "sentences": len(sentences),
               "queries": len(queries), "relevant": args.relevant, "k": args.k, "seed": args.seed,
               "model_id": model.model_id, "against": bundles, "command": command,
               "encode_seconds": round(data["encode_seconds"], 1), "score_seconds": round(score_seconds, 2),
               "facets": references["content"], "references": references}
    if args.json is not None:
        write_output(args.json, json.dumps(results, indent=1) + "\n")
    progress(f"{args.data}: {len(queries)} query abstracts over {len(documents)} abstracts "
             f"({len(sentences)} sentences), model {model.model_id}; relevant = top {args.relevant} of each "
             f"gold-facet reference; encode {data['encode_seconds']:.1f} s, scoring {score_seconds:.2f} s")
    for ref, report in references.items():
        progress(f"reference: {ref}")
        for line in format_table(report, systems):
            progress(line)
        holds, worst = never_loses(report)
        progress(f"{ref}: faceted {'>=' if holds else '<'} the better whole-paper ranking (all, mean) on "
                 f"NDCG%20 for every facet: {'yes' if holds else 'no'} (worst margin {worst:+.3f})")
    for facet, f in references["content"].items():
        d = f["delta_map_faceted_all"]
        s = f["searchable"]
        progress(f"{facet}: {f['queries']} queries ({f['no_query']} without predicted {facet} sentences: "
                 f"facet-only AP 0, faceted falls back to all sentences; without them MAP faceted "
                 f"{s['faceted']['map']:.3f}, facet-only {s['facet-only']['map']:.3f}, "
                 f"all {s['all']['map']:.3f}); "
                 f"predicted facet sentences precision {f['selection']['precision']:.3f} recall "
                 f"{f['selection']['recall']:.3f}; MAP faceted - all {d['mean']:+.3f} "
                 f"[95% CI {d['low']:+.3f}, {d['high']:+.3f}]")
    progress(f"command: {command}")
    return 0
