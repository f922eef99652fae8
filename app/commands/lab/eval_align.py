"""``rhetorica eval align``: two-paper alignment against gold labels, beside two baselines.

Pairs of documents with gold labels are aligned; a pair of aligned sentences is *right* when their
gold labels agree. Reported per system:

- **precision**: the share of aligned sentence pairs (a one-to-many pair counts each member) whose
  gold labels agree (roles; on the full-paper gold set also functions, over pairs where both have one);
- **coverage**: the share of gold-labelled sentences (of both sides) that are in some pair.

Systems: ``rhetorica`` (:func:`core.alignment.align.align`, default settings: function and content views,
role/function bonuses from the model's own labels), ``content-only`` (the same alignment with the
content view alone and no label bonuses: what a topical sentence aligner does) and ``position``
(sentence i of A with the sentence of B at the same relative position: every sentence aligned).
The default thresholds leave weak pairs out, and content similarity between two *different* papers
is low, so the content-only aligner at those thresholds aligns almost nothing; the ``-all`` variants
align every sentence they can (thresholds at -1), comparing precision at full coverage.

Data: ``csabstruct:test`` and ``pubmedqa:test`` (abstracts; ``--pairs`` random pairs of different
abstracts, seeded) and ``gold`` (the twelve hand-labelled full papers of ``models/datasets/gold_data``,
every pair of two of them, whole papers analysed as the app does; only gold sentences are scored).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import time
from typing import Any

from app.commands._options import MAX_THREADS, as_text, bounded_int, bundle_path, output_file, write_output

SYSTEMS = ("rhetorica", "content-only", "rhetorica-all", "content-only-all", "position")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("align", help="Two-paper alignment against gold labels and two baselines.",
                                   description=__doc__)
    parser.add_argument("--data", default="csabstruct:test",
                        help="csabstruct:test, pubmedqa:test (abstract pairs) or gold (full papers)")
    parser.add_argument("--pairs", type=bounded_int(1, 1_000_000), default=200,
                        help="abstract pairs (seeded; not for gold)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=13)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", type=_setting,
                        help="override an AlignSettings field of the rhetorica systems (e.g. role_bonus=0.2)")
    parser.add_argument("--model", type=as_text(bundle_path), default=None)
    parser.add_argument("--threads", type=bounded_int(1, MAX_THREADS), default=2)
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT")
    parser.set_defaults(func=run)


def position_pairs(n_a: int, n_b: int) -> list[tuple[int, int]]:
    """Sentence i of A with the sentence of B at the same relative position."""
    if n_a == 0 or n_b == 0:
        return []
    return [(i, round(i * (n_b - 1) / max(n_a - 1, 1))) for i in range(n_a)]


def member_pairs(alignment: Any) -> list[tuple[int, int]]:
    """Every (a, b) sentence pair of an alignment (a one-to-many pair gives one per member)."""
    return [(i, j) for pair in alignment.pairs for i in pair.a_indices for j in pair.b_indices]


class Tally:
    """Right and total pairs, covered and total gold sentences, for one system."""

    def __init__(self) -> None:
        self.right = self.pairs = self.covered = self.gold = 0
        self.function_right = self.function_pairs = 0

    def add(self, pairs: list[tuple[int, int]], labels_a: list[str], labels_b: list[str],
            functions_a: list[str] | None = None, functions_b: list[str] | None = None) -> None:
        scored = [(i, j) for i, j in pairs if labels_a[i] and labels_b[j]]
        self.pairs += len(scored)
        self.right += sum(labels_a[i] == labels_b[j] for i, j in scored)
        self.gold += sum(1 for x in labels_a if x) + sum(1 for x in labels_b if x)
        self.covered += len({i for i, _ in scored}) + len({j for _, j in scored})
        if functions_a is not None and functions_b is not None:
            with_function = [(i, j) for i, j in scored if functions_a[i] not in ("", "none")
                             and functions_b[j] not in ("", "none")]
            self.function_pairs += len(with_function)
            self.function_right += sum(functions_a[i] == functions_b[j] for i, j in with_function)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"precision": round(self.right / max(self.pairs, 1), 4),
                               "coverage": round(self.covered / max(self.gold, 1), 4),
                               "scored_pairs": self.pairs}
        if self.function_pairs:
            out["function_precision"] = round(self.function_right / self.function_pairs, 4)
            out["function_pairs"] = self.function_pairs
        return out


def _side(model: Any, sentences: list[str], kinds: list[str] | str) -> Any:
    from core.alignment.align import AlignSentence, AlignSide

    (encoding,) = model.encode_documents([(sentences, kinds)], with_embeddings=True,
                                         with_function_vectors=True)
    functions = encoding.functions or []
    kind_list = [kinds] * len(sentences) if isinstance(kinds, str) else kinds
    rows = [AlignSentence(text, "", kind, role.label, functions[i].label if functions else "")
            for i, (text, kind, role) in enumerate(zip(sentences, kind_list, encoding.roles, strict=True))]
    vectors = encoding.function_vectors if encoding.function_vectors is not None else encoding.embeddings
    return AlignSide("", rows, encoding.embeddings, vectors)


def _setting(text: str) -> str:
    """``--set NAME=VALUE``: NAME an :class:`core.alignment.align.AlignSettings` field, VALUE a finite number
    in a sane range (a whole number 1..10 for ``max_merge``)."""
    import math
    from dataclasses import fields

    from core.alignment.align import AlignSettings

    names = [f.name for f in fields(AlignSettings)]
    name, sep, value = text.partition("=")
    if not sep or name.strip() not in names:
        raise argparse.ArgumentTypeError(f"{text!r}: use NAME=VALUE, NAME one of {', '.join(names)}")
    try:
        number = int(value) if name.strip() == "max_merge" else float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number") from None
    low, high = (1, 10) if name.strip() == "max_merge" else (-10.0, 10.0)
    if not math.isfinite(number) or not low <= number <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: the value must be {low} to {high}")
    return f"{name.strip()}={value.strip()}"


def _evaluate(sides: list[tuple[Any, list[str], list[str] | None]], pairs: list[tuple[int, int]],
              overrides: dict[str, float] | None = None) -> tuple[dict[str, Tally], float]:
    from core.alignment.align import AlignSettings, align

    overrides = overrides or {}
    ours_settings = AlignSettings(**overrides)  # type: ignore[arg-type]
    tallies = {name: Tally() for name in SYSTEMS}
    content_only = AlignSettings(function_weight=0.0, role_bonus=0.0, function_bonus=0.0)
    everything = {"min_score": -1.0, "fallback_min_score": -1.0}
    variants = {"rhetorica-all": AlignSettings(**{**overrides, **everything}),  # type: ignore[arg-type]
                "content-only-all": AlignSettings(function_weight=0.0, role_bonus=0.0, function_bonus=0.0,
                                                  **everything)}  # type: ignore[arg-type]
    seconds = 0.0
    for a_index, b_index in pairs:
        (a, labels_a, functions_a), (b, labels_b, functions_b) = sides[a_index], sides[b_index]
        started = time.perf_counter()
        ours = align(a, b, settings=ours_settings)
        seconds += time.perf_counter() - started
        tallies["rhetorica"].add(member_pairs(ours), labels_a, labels_b, functions_a, functions_b)
        tallies["content-only"].add(member_pairs(align(a, b, settings=content_only)), labels_a, labels_b,
                                    functions_a, functions_b)
        for name, settings in variants.items():
            tallies[name].add(member_pairs(align(a, b, settings=settings)), labels_a, labels_b,
                              functions_a, functions_b)
        tallies["position"].add(position_pairs(len(a), len(b)), labels_a, labels_b, functions_a, functions_b)
    return tallies, seconds


def run(args: argparse.Namespace) -> int:
    from models.encoder import load_model

    model = load_model(args.model, device="cpu", threads=args.threads)
    started = time.perf_counter()
    sides: list[tuple[Any, list[str], list[str] | None]] = []
    if args.data == "gold":
        from core.alignment.align import side_from_paper
        from core.labelling.analysis import analyze_paper
        from core.paths import shared_dir
        from models.datasets.gold import load_gold_papers

        for split in ("dev", "test"):
            for paper, items in load_gold_papers(split, shared_dir() / "pdfs"):
                analysis = analyze_paper(paper, model, with_embeddings=True, with_function_vectors=True)
                roles = [""] * len(paper.sentences)
                functions = [""] * len(paper.sentences)
                for item in items:
                    roles[item.index], functions[item.index] = item.role, item.function
                sides.append((side_from_paper(paper, analysis), roles, functions))
        pairs = list(itertools.combinations(range(len(sides)), 2))
    else:
        from models.datasets import load_spec

        documents = [d for d in load_spec(args.data) if len(d.sentences) >= 2]
        for doc in documents:
            sides.append((_side(model, list(doc.sentences), "abstract"), list(doc.labels), None))
        rng = random.Random(args.seed)
        pairs = []
        while len(pairs) < min(args.pairs, len(sides) * (len(sides) - 1) // 2):
            a, b = rng.sample(range(len(sides)), 2)
            if (a, b) not in pairs:
                pairs.append((a, b))
    encoded = time.perf_counter() - started
    overrides = {name: (int(value) if name == "max_merge" else float(value))
                 for name, value in (item.split("=", 1) for item in args.set)}
    tallies, align_seconds = _evaluate(sides, pairs, overrides)
    report = {"data": args.data, "documents": len(sides), "pairs": len(pairs), "model_id": model.model_id,
              "seconds_encoding": round(encoded, 1), "seconds_aligning_rhetorica": round(align_seconds, 2),
              "systems": {name: tally.to_dict() for name, tally in tallies.items()},
              "settings": overrides,
              "command": f"rhetorica eval align --data {args.data}" + "".join(f" --set {x}" for x in args.set)
                         + ("" if args.data == "gold" else f" --pairs {args.pairs} --seed {args.seed}")}
    print(f"{args.data}: {len(pairs)} pairs of {len(sides)} documents; model {model.model_id}")
    for name, tally in tallies.items():
        figures = tally.to_dict()
        line = f"  {name:17} precision {figures['precision']:.4f}  coverage {figures['coverage']:.4f}"
        if "function_precision" in figures:
            line += (f"  function precision {figures['function_precision']:.4f}"
                     f" ({figures['function_pairs']} pairs)")
        print(line)
    if args.json is not None:
        write_output(args.json, json.dumps(report, indent=2) + "\n")
    return 0
