"""``rhetorica data annotation-batches``: the batches hand annotators label (issue 24; see
models/datasets/annotated/README.md for the protocol)."""

from __future__ import annotations

import argparse
from pathlib import Path

GOLD_TEST_PAPERS = {"biomedical/life": 4, "computer science": 3, "physical/engineering": 3, "social/other": 2}
TRAIN_TAKE = {"oa-stm": 4, "unarxive": 30, "pmc-jats": 13, "scirex": 30, "arxiv-abs": 25, "csabstruct": 15}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("annotation-batches", help="write the hand-annotation batches (issue 24)",
                                   description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("runs/annotation"), metavar="DIR")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=420, metavar="N",
                        help="sentences per training batch (default 420)")
    parser.set_defaults(func=run)


def _field_key(field: str) -> str:
    low = field.lower()
    for key in GOLD_TEST_PAPERS:
        if key.split("/")[0].split()[0] in low:
            return key
    return "social/other"


def run(args: argparse.Namespace) -> int:
    import json
    import random
    import sys

    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches, write_batch

    rng = random.Random(args.seed)
    root = src.shared_root(None)
    shared = root.parent
    # 1. the new gold test: whole pdfs2 papers of all four fields, chosen before anything else
    pdf_papers = [p for p in src.read_pdfs2(shared) if sum(len(s.sentences) for s in p.sections) >= 40]
    by_field: dict[str, list[src.SourcePaper]] = {}
    for paper in sorted(pdf_papers, key=lambda p: p.paper_id):
        by_field.setdefault(_field_key(paper.field), []).append(paper)
    gold: list[src.SourcePaper] = []
    for key, count in GOLD_TEST_PAPERS.items():
        gold += rng.sample(by_field.get(key, []), min(count, len(by_field.get(key, []))))
    gold_ids = {p.paper_id for p in gold}
    # 2. the training papers, from every source, interleaved so each batch mixes fields
    oa = list(src.read_oa_stm(root))
    domains: dict[str, list[src.SourcePaper]] = {}
    for paper in oa:
        domains.setdefault(paper.field, []).append(paper)
    pools = {
        "oa-stm": [p for d in sorted(domains) for p in rng.sample(domains[d], min(TRAIN_TAKE["oa-stm"],
                                                                                 len(domains[d])))],
        "unarxive": rng.sample(list(src.read_unarxive(root)), TRAIN_TAKE["unarxive"]),
        "pmc-jats": list(src.read_pmc_jats(root))[:TRAIN_TAKE["pmc-jats"]],
        "scirex": rng.sample(list(src.read_scirex(root)), TRAIN_TAKE["scirex"]),
        "pdfs2": [p for p in pdf_papers if p.paper_id not in gold_ids],
        "arxiv-abs": rng.sample(list(src.read_arxiv_abstracts(root, 3000)), TRAIN_TAKE["arxiv-abs"]),
        "csabstruct": rng.sample(list(src.read_csabstruct_train(root, 1800)), TRAIN_TAKE["csabstruct"]),
    }
    for pool in pools.values():
        rng.shuffle(pool)
    interleaved: list[src.SourcePaper] = []
    while any(pools.values()):
        for name in sorted(pools):
            if pools[name]:
                interleaved.append(pools[name].pop())
    gold_batches = pack_batches(gold, split="gold-test", prefix="gold-", target=10 ** 6, rng=rng,
                                first_uid=90000)
    train_batches = pack_batches(interleaved, split="train", prefix="train-", target=args.batch_size, rng=rng,
                                 first_uid=0)
    summary = []
    for name, papers in gold_batches + train_batches:
        count = write_batch(args.out, name, papers)
        body = sum(1 for _, _, us in papers for u in us if u.section_kind != "abstract")
        fields = sorted({p.field for p, _, _ in papers})
        summary.append({"batch": name, "papers": len(papers), "sentences": count, "body": body,
                        "fields": fields})
        print(f"{name}: {len(papers)} papers, {count} sentences ({body} body)", file=sys.stderr)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0
