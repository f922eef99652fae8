"""``rhetorica data annotation-batches``: the batches hand annotators label (issue 24; see
models/datasets/annotated/README.md for the protocol)."""

from __future__ import annotations

import argparse
from pathlib import Path
from random import Random

GOLD_TEST_PAPERS = {"biomedical/life": 4, "computer science": 3, "physical/engineering": 3, "social/other": 2}
TRAIN_TAKE = {"oa-stm": 4, "unarxive": 30, "pmc-jats": 13, "scirex": 30, "arxiv-abs": 25, "csabstruct": 15}
ROUND_TWO_SCIREX = 30  # further SciREX train papers in round 2 (every other source: all it has left)
ROUND_TWO_FIRST_UID = 20000
ROUND_THREE_FIRST_UID = 30000
ROUND_THREE_WINDOWS = 5  # body runs per paper in round 3 (its papers are those of rounds 1 and 2)
ROUND_FOUR_FIRST_UID = 40000
ROUND_FOUR_WINDOWS = 8  # body runs per pdfs2 paper in round 4
ROUND_FIVE_FIRST_UID = 95000
ROUND_FIVE_WINDOWS = 5  # body runs per gold v2 paper in round 5 (the gold test v3)
ROUND_SIX_FIRST_UID = 50000
ROUND_SIX_WINDOWS = 3  # results runs per paper in round 6
ROUND_SIX_KINDS = frozenset({"result"})
ROUND_SEVEN_FIRST_UID = 97000
ROUND_SEVEN_WINDOWS = 4  # body runs per gold v2 paper in round 7 (the gold test v4)
ROUND_EIGHT_FIRST_UID = 98000
ROUND_EIGHT_WINDOWS = 4  # body runs per paper in round 8 (the dev set v5), besides its abstract
# The shared PDFs outside gold v1 (none of them in the annotated corpus or a gold test), by field.
DEV5_SHARED_FIELDS = {"bmc-datta2010": "biomedical", "arxiv-2201.09329v1_ULSA": "materials science"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("annotation-batches", help="write the hand-annotation batches (issue 24)",
                                   description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("runs/annotation"), metavar="DIR")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=420, metavar="N",
                        help="sentences per training batch (default 420)")
    parser.add_argument("--round", type=int, choices=(1, 2, 3, 4, 5, 6, 7, 8), default=1,
                        help="1: the first corpus and the gold test v2 (seed 24); 2: more training batches "
                        "(r2-NN) from the papers round 1 did not use and the sections of its pdfs2 and PMC "
                        "papers it did not label, never a gold paper (use --seed 29); 3: batches r3-NN of "
                        f"up to {ROUND_THREE_WINDOWS} runs per full-text paper already in the corpus, from "
                        "sections no earlier round labelled (use --seed 31); 4: batches r4-NN of up to "
                        f"{ROUND_FOUR_WINDOWS} runs per pdfs2 paper already in the corpus (the papers "
                        "parsed by Rhetorica, as the app reads them): runs of sentences no earlier round "
                        "labelled, also inside sections labelled elsewhere (use --seed 41); 5: the gold "
                        f"test v3, batches gold3-NN of up to {ROUND_FIVE_WINDOWS} body runs per gold v2 "
                        "paper (papers no training batch ever drew) of sentences gold v2 did not label "
                        "(use --seed 53 --batch-size 230); 6: batches r6-NN of up to "
                        f"{ROUND_SIX_WINDOWS} runs per full-text paper already in the corpus from its "
                        "results sections, of sentences no earlier round labelled (use --seed 61); 7: the "
                        f"gold test v4, batches gold4-NN of up to {ROUND_SEVEN_WINDOWS} body runs per gold "
                        "v2 paper of sentences neither gold v2 nor v3 labelled (use --seed 71 "
                        "--batch-size 230); 8: the dev set v5, batches dev5-NN of the abstract and up to "
                        f"{ROUND_EIGHT_WINDOWS} body runs of every paper no corpus batch or gold set reads "
                        "(the 13 shared PDFs outside gold v1, and pdfs2 papers in no batch) (use --seed 83 "
                        "--batch-size 250)")
    parser.set_defaults(func=run)

    agree = subparsers.add_parser("annotation-agreement", help="Cohen's kappa of two annotators on one batch",
                                  description="Raw agreement and Cohen's kappa (roles, functions) of two "
                                  "independent annotations of one batch, overall and per field; with "
                                  "--disagreements, the sentences they disagree on, for adjudication.")
    agree.add_argument("key", type=Path, help="the batch's .key.jsonl")
    agree.add_argument("first", type=Path, help="labels of the first annotator")
    agree.add_argument("second", type=Path, help="labels of the second annotator")
    agree.add_argument("--disagreements", type=Path, default=None, metavar="OUT",
                       help="write the disagreements (with text and both labels) here")
    agree.set_defaults(func=run_agreement)

    assemble = subparsers.add_parser(
        "annotation-assemble", help="write the committed corpus from the batches' labels",
        description="Join each batch's key with its labels (labels/BATCH.ANNOTATOR.jsonl; where a batch was "
        "annotated twice, the first annotator's labels with labels/BATCH.adjudicated.jsonl over the "
        "disagreements) into models/datasets/annotated/train.jsonl.gz and the new gold test "
        "models/datasets/gold_data/gold2/test.jsonl (text only where the licence allows).")
    assemble.add_argument("--batches", type=Path, default=Path("runs/annotation"), metavar="DIR")
    assemble.add_argument("--gold-only", action="store_true",
                          help="write only the gold and dev sets' rows; leave the committed corpus as it is "
                               "(for a folder that holds only those batches)")
    assemble.set_defaults(func=run_assemble)


def _field_key(field: str) -> str:
    low = field.lower()
    for key in GOLD_TEST_PAPERS:
        if key.split("/")[0].split()[0] in low:
            return key
    return "social/other"


def run(args: argparse.Namespace) -> int:
    import random

    if args.round == 2:
        return _run_round_two(args)
    if args.round == 3:
        return _run_round_three(args)
    if args.round == 4:
        return _run_round_four(args)
    if args.round == 5:
        return _run_round_five(args)
    if args.round == 6:
        return _run_round_six(args)
    if args.round == 7:
        return _run_round_seven(args)
    if args.round == 8:
        return _run_round_eight(args)
    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches

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
    interleaved = _interleave(pools)
    gold_batches = pack_batches(gold, split="gold-test", prefix="gold-", target=10 ** 6, rng=rng,
                                first_uid=90000)
    train_batches = pack_batches(interleaved, split="train", prefix="train-", target=args.batch_size, rng=rng,
                                 first_uid=0)
    _write_batches(args.out, gold_batches + train_batches, "summary.json")
    return 0


def _interleave(pools: dict) -> list:
    """One paper from each source in turn, so each batch mixes fields."""
    interleaved = []
    while any(pools.values()):
        for name in sorted(pools):
            if pools[name]:
                interleaved.append(pools[name].pop())
    return interleaved


def _already_annotated() -> tuple[set[tuple[str, str]], set[str], set[str]]:
    """What earlier rounds labelled: the corpus's (source, paper) keys and sentence hashes, and the gold
    test v2's PDFs (never drawn)."""
    from models.datasets.annotated_corpus import ANNOTATED_CORPUS, read_rows

    done = read_rows(ANNOTATED_CORPUS)
    gold_pdfs = {row["pdf"] for row in _gold2_rows()}
    return ({(str(r["source"]), str(r["paper_id"])) for r in done}, {str(r["sha1"]) for r in done}, gold_pdfs)


def _gold2_rows() -> list[dict]:
    """The gold test v2's rows (``models/datasets/gold_data/gold2/test.jsonl``)."""
    import json

    from models.datasets.annotated_corpus import GOLD2_DIR

    return [json.loads(line) for line in (GOLD2_DIR / "test.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _run_round_two(args: argparse.Namespace) -> int:
    """Round 2: the papers of every source that round 1 left out (SciREX: ``ROUND_TWO_SCIREX`` more),
    and, of round 1's pdfs2 and PMC papers, the sections it labelled none of; no gold v1/v2 paper."""
    import random

    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches

    rng = random.Random(args.seed)
    done_papers, done_sha1, gold_pdfs = _already_annotated()
    root = src.shared_root(None)

    def fresh(papers: object) -> list[src.SourcePaper]:
        return [p for p in papers if (p.source, p.paper_id) not in done_papers]  # type: ignore[attr-defined]

    pools = {
        "oa-stm": fresh(src.read_oa_stm(root)),
        "unarxive": fresh(src.read_unarxive(root)),
        "scirex": rng.sample(fresh(src.read_scirex(root)), ROUND_TWO_SCIREX),
        "pmc-jats": list(src.read_pmc_jats(root)),
        "pdfs2": [p for p in src.read_pdfs2(root.parent) if p.paper_id not in gold_pdfs
                  and sum(len(s.sentences) for s in p.sections) >= 40],
    }
    for pool in pools.values():
        pool.sort(key=lambda p: p.paper_id)
        rng.shuffle(pool)
    batches = pack_batches(_interleave(pools), split="train", prefix="r2-", target=args.batch_size, rng=rng,
                           first_uid=ROUND_TWO_FIRST_UID, annotated_sha1=done_sha1)
    _write_batches(args.out, batches, "summary-r2.json")
    return 0


def _run_round_three(args: argparse.Namespace) -> int:
    """Round 3: the full-text papers already in the corpus (rounds 1 and 2), up to
    ``ROUND_THREE_WINDOWS`` runs each from the sections no earlier round labelled (by the sentences'
    text hashes); no new paper, so the corpus's train/dev split by paper stays as it is; never a gold
    v1/v2 paper (none is in the corpus)."""
    import random

    from models.datasets.annotation import pack_batches

    rng = random.Random(args.seed)
    done_papers, done_sha1, gold_pdfs = _already_annotated()
    papers = _corpus_papers(rng, done_papers, gold_pdfs)
    batches = pack_batches(papers, split="train", prefix="r3-", target=args.batch_size, rng=rng,
                           first_uid=ROUND_THREE_FIRST_UID, annotated_sha1=done_sha1,
                           windows=ROUND_THREE_WINDOWS)
    _write_batches(args.out, batches, "summary-r3.json")
    return 0


def _corpus_papers(rng: Random, done_papers: set[tuple[str, str]], gold_pdfs: set[str]) -> list:
    """The full-text papers already in the corpus (never a gold v1/v2 paper), each source's in a random
    order, interleaved so that each batch mixes fields (rounds 3 and 6)."""
    from models.datasets import annotation_sources as src

    root = src.shared_root(None)

    def seen(papers: object) -> list[src.SourcePaper]:
        return [p for p in papers if (p.source, p.paper_id) in done_papers  # type: ignore[attr-defined]
                and p.paper_id not in gold_pdfs]

    pools = {
        "oa-stm": seen(src.read_oa_stm(root)),
        "unarxive": seen(src.read_unarxive(root)),
        "scirex": seen(src.read_scirex(root)),
        "pmc-jats": seen(src.read_pmc_jats(root)),
        "pdfs2": seen(src.read_pdfs2(root.parent)),
    }
    for pool in pools.values():
        pool.sort(key=lambda p: p.paper_id)
        rng.shuffle(pool)
    return _interleave(pools)


def _run_round_four(args: argparse.Namespace) -> int:
    """Round 4: more of the pdfs2 papers already in the corpus, up to ``ROUND_FOUR_WINDOWS`` runs each of
    sentences no earlier round labelled (also inside sections labelled elsewhere): the papers parsed by
    Rhetorica, with the parser's sentence boundaries and debris, are how the app reads a paper and where
    the model is weakest. No new paper (the train/dev split by paper stays), never a gold v1/v2 paper."""
    import random

    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches

    rng = random.Random(args.seed)
    done_papers, done_sha1, gold_pdfs = _already_annotated()
    root = src.shared_root(None)
    pool = sorted((p for p in src.read_pdfs2(root.parent)
                   if (p.source, p.paper_id) in done_papers and p.paper_id not in gold_pdfs),
                  key=lambda p: p.paper_id)
    rng.shuffle(pool)
    batches = pack_batches(pool, split="train", prefix="r4-", target=args.batch_size, rng=rng,
                           first_uid=ROUND_FOUR_FIRST_UID, annotated_sha1=done_sha1,
                           windows=ROUND_FOUR_WINDOWS, free_runs_only=True)
    _write_batches(args.out, batches, "summary-r4.json")
    return 0


def _run_round_five(args: argparse.Namespace) -> int:
    """Round 5, the gold test v3: runs of sentences the gold test v2 did not label, from its own pdfs2 papers
    (kept out of every training batch since round 1), parsed by Rhetorica. A test set: its batches are
    annotated twice, independently, and never train or select a model."""
    return _run_gold_round(args, prefix="gold3-", first_uid=ROUND_FIVE_FIRST_UID, windows=ROUND_FIVE_WINDOWS,
                           earlier=(), summary="summary-gold3.json")


def _run_round_seven(args: argparse.Namespace) -> int:
    """Round 7, the gold test v4: as round 5, runs of sentences neither gold v2 nor gold v3 labelled, from the
    same papers (fresh suggestion queries for the next blind judgement; a test set like v2 and v3)."""
    from models.datasets.annotated_corpus import GOLD3_DIR

    return _run_gold_round(args, prefix="gold4-", first_uid=ROUND_SEVEN_FIRST_UID,
                           windows=ROUND_SEVEN_WINDOWS, earlier=(GOLD3_DIR,), summary="summary-gold4.json")


def _run_round_eight(args: argparse.Namespace) -> int:
    """Round 8, the dev set v5 (session 23): fresh papers for judging candidates, since the annotated dev
    papers and gold:dev have judged many. Every paper that no corpus batch, gold test or gold v1 reads: the
    shared PDFs outside gold v1 and the pdfs2 papers in no batch; of each, the abstract's first sentences
    and up to ``ROUND_EIGHT_WINDOWS`` body runs, sections of different kinds first (as round 1 drew)."""
    import csv
    import random

    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches
    from models.datasets.gold import GOLD_PAPERS

    rng = random.Random(args.seed)
    root = src.shared_root(None)
    shared = root.parent
    done_papers, _, gold_pdfs = _already_annotated()
    papers: list[src.SourcePaper] = []
    with (shared / "pdfs" / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        for row in sorted(csv.DictReader(handle), key=lambda r: r["file"]):
            stem = row["file"].removesuffix(".pdf")
            if stem not in GOLD_PAPERS:
                papers.append(src.read_pdf_paper(shared / "pdfs" / row["file"],
                                                 DEV5_SHARED_FIELDS.get(stem, "computer science"),
                                                 row["tier"] == "open", source="pdfs"))
    papers += [p for p in src.read_pdfs2(shared)
               if ("pdfs2", p.paper_id) not in done_papers and p.paper_id not in gold_pdfs]
    rng.shuffle(papers)
    batches = pack_batches(papers, split="gold-dev", prefix="dev5-", target=args.batch_size, rng=rng,
                           first_uid=ROUND_EIGHT_FIRST_UID, windows=ROUND_EIGHT_WINDOWS)
    _write_batches(args.out, batches, "summary-dev5.json")
    return 0


def _run_gold_round(args: argparse.Namespace, *, prefix: str, first_uid: int, windows: int,
                    earlier: tuple[Path, ...], summary: str) -> int:
    """Batches of a further gold test on the gold v2 papers: free runs of sentences that no training batch,
    gold v2 nor the gold tests in ``earlier`` labelled."""
    import json
    import random

    from models.datasets import annotation_sources as src
    from models.datasets.annotation import pack_batches

    rng = random.Random(args.seed)
    _, done_sha1, gold_pdfs = _already_annotated()
    labelled = {str(row["sha1"]) for row in _gold2_rows()}
    for folder in earlier:
        labelled |= {str(json.loads(line)["sha1"]) for line in
                     (folder / "test.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()}
    root = src.shared_root(None)
    pool = sorted((p for p in src.read_pdfs2(root.parent) if p.paper_id in gold_pdfs),
                  key=lambda p: p.paper_id)
    rng.shuffle(pool)
    batches = pack_batches(pool, split="gold-test", prefix=prefix, target=args.batch_size, rng=rng,
                           first_uid=first_uid, annotated_sha1=labelled | done_sha1,
                           windows=windows, free_runs_only=True)
    _write_batches(args.out, batches, summary)
    return 0


def _run_round_six(args: argparse.Namespace) -> int:
    """Round 6: results sections, where the gold test v3 found the model weakest (result recall 40 %):
    up to ``ROUND_SIX_WINDOWS`` runs per full-text paper already in the corpus, from its sections of kind
    result (as the corpus readers and the parser name them), of sentences no earlier round labelled. No
    new paper (the train/dev split by paper stays), never a gold v1/v2 paper."""
    import random

    from models.datasets.annotation import pack_batches

    rng = random.Random(args.seed)
    done_papers, done_sha1, gold_pdfs = _already_annotated()
    papers = _corpus_papers(rng, done_papers, gold_pdfs)
    batches = pack_batches(papers, split="train", prefix="r6-", target=args.batch_size, rng=rng,
                           first_uid=ROUND_SIX_FIRST_UID, annotated_sha1=done_sha1,
                           windows=ROUND_SIX_WINDOWS, free_runs_only=True, kinds=ROUND_SIX_KINDS)
    _write_batches(args.out, batches, "summary-r6.json")
    return 0


def _write_batches(out: Path, batches: list, summary_name: str) -> None:
    import json
    import sys

    from models.datasets.annotation import write_batch

    summary = []
    for name, papers in batches:
        count = write_batch(out, name, papers)
        body = sum(1 for _, _, us in papers for u in us if u.section_kind != "abstract")
        fields = sorted({p.field for p, _, _ in papers})
        summary.append({"batch": name, "papers": len(papers), "sentences": count, "body": body,
                        "fields": fields})
        print(f"{name}: {len(papers)} papers, {count} sentences ({body} body)", file=sys.stderr)
    (out / summary_name).write_text(json.dumps(summary, indent=1), encoding="utf-8")


def run_agreement(args: argparse.Namespace) -> int:
    import json

    from models.datasets.annotated_corpus import agreement, read_labels
    from models.datasets.annotation import read_key

    units = read_key(args.key)
    first, second = read_labels(args.first), read_labels(args.second)
    rows = agreement(units, first, second)
    print("| group | sentences | role agreement % | role kappa | function agreement % | function kappa |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(row.as_row())
    if args.disagreements is not None:
        out = []
        for unit in units:
            a, b = first.get(unit.uid), second.get(unit.uid)
            if a is None or b is None or (a.role, a.function) == (b.role, b.function):
                continue
            out.append({"uid": unit.uid, "paper": f"{unit.source}:{unit.paper_id}", "heading": unit.heading,
                        "text": unit.text, "first": {"role": a.role, "function": a.function, "note": a.note},
                        "second": {"role": b.role, "function": b.function, "note": b.note}})
        args.disagreements.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out),
                                      encoding="utf-8")
        print(f"{len(out)} disagreements written to {args.disagreements}")
    return 0


def _batch_labels(folder: Path, batch: str) -> tuple[dict, str, list[str]]:
    """(final labels by uid, primary annotator, all annotators) of one batch."""
    from models.datasets.annotated_corpus import read_labels

    files = sorted(p for p in (folder / "labels").glob(f"{batch}.*.jsonl")
                   if not p.name.endswith(".adjudicated.jsonl"))
    if not files:
        return {}, "", []
    names = [p.name.removeprefix(f"{batch}.").removesuffix(".jsonl") for p in files]
    labels = read_labels(files[0])
    adjudicated = folder / "labels" / f"{batch}.adjudicated.jsonl"
    if adjudicated.is_file():
        labels.update(read_labels(adjudicated))
    return labels, names[0], names


def run_assemble(args: argparse.Namespace) -> int:
    import sys

    from models.datasets import annotation_sources as src
    from models.datasets.annotated_corpus import (
        ANNOTATED_CORPUS,
        GOLD_BATCHES,
        gold_test_dir,
        training_row,
        write_jsonl,
    )
    from models.datasets.annotation import read_key

    train_rows: list[dict] = []
    gold_units: dict[Path, list] = {folder: [] for folder in GOLD_BATCHES.values()}
    for key in sorted(args.batches.glob("*.key.jsonl")):
        batch = key.name.removesuffix(".key.jsonl")
        labels, primary, annotators = _batch_labels(args.batches, batch)
        if not labels:
            print(f"{batch}: no labels yet, skipped", file=sys.stderr)
            continue
        units = read_key(key)
        missing = [u.uid for u in units if u.uid not in labels]
        if missing:
            print(f"{batch}: {len(missing)} sentences unlabelled, skipped", file=sys.stderr)
            continue
        final = "+".join(annotators) + ("+adjudicated" if len(annotators) > 1 else "")
        gold_dir = gold_test_dir(batch)
        if gold_dir is not None:
            gold_units[gold_dir] += [(u, labels[u.uid], final) for u in units]
        else:
            train_rows += [training_row(u, labels[u.uid], final if len(annotators) > 1 else primary)
                           for u in units]
    if not args.gold_only:
        _refuse_to_lose(args.batches, train_rows)
        train_rows = _refresh_kinds(train_rows)
        count = write_jsonl(ANNOTATED_CORPUS, train_rows)
        print(f"{ANNOTATED_CORPUS}: {count} sentences", file=sys.stderr)
    for gold_dir, units_of_test in gold_units.items():
        if units_of_test:
            shared = src.shared_root(None).parent  # the gold rows are found again in the parsed PDFs
            split = "dev" if units_of_test[0][0].split == "gold-dev" else "test"
            count = write_jsonl(gold_dir / f"{split}.jsonl", _gold_rows(units_of_test, shared))
            print(f"{gold_dir / f'{split}.jsonl'}: {count} sentences", file=sys.stderr)
    return 0


def _refuse_to_lose(batches: Path, train_rows: list[dict]) -> None:
    """Stop before the committed corpus is rewritten without sentences it holds: ``runs/`` is not in git, so
    a checkout with only some batches (or none) would otherwise write a smaller corpus and lose labels."""
    from core.errors import DatasetError
    from models.datasets.annotated_corpus import ANNOTATED_CORPUS, read_rows

    committed = ({str(row["uid"]) for row in read_rows(ANNOTATED_CORPUS)} if ANNOTATED_CORPUS.is_file()
                 else set())
    lost = committed - {str(row["uid"]) for row in train_rows}
    if lost:
        raise DatasetError(f"{batches}: these batches would rewrite {ANNOTATED_CORPUS.name} without "
                           f"{len(lost):,} of its {len(committed):,} labelled sentences (their batches or "
                           "labels are not here); put them back, or write only the gold and dev sets with "
                           "--gold-only")


def _gold_rows(gold_units: list, shared: Path) -> list[dict]:
    """A gold test's rows (the gold set's format) from its batches' units and final labels: each sentence
    found again in the freshly parsed PDF (a changed parser fails loudly)."""
    from core.errors import DatasetError
    from models.datasets import annotation_sources as src
    from models.datasets.annotated_corpus import locate

    gold_rows = []
    by_paper: dict[tuple[str, str], list] = {}
    for unit, label, who in gold_units:
        by_paper.setdefault((unit.source, unit.paper_id), []).append((unit, label, who))
    for (folder, paper_id), items in sorted(by_paper.items()):
        # the gold tests' papers are pdfs2's; the dev set v5 also reads shared PDFs (source "pdfs")
        paper = src.read_pdf_paper(shared / folder / f"{paper_id}.pdf", items[0][0].field,
                                   items[0][0].open_text, source=folder)
        for unit, label, who in items:
            place = locate(paper, unit.section, unit.position, unit.sha1)
            if place is None:
                raise DatasetError(f"{paper_id} {unit.uid}: the parsed sentence changed; re-check the batch")
            section = paper.sections[place[0]]  # moved only when a parser change found or lost a heading
            sid = f"s{section.first_sentence + place[1]}"
            # the dev set v5 reads two folders, so its rows name theirs (the gold tests' are all pdfs2)
            gold = {"pdf": paper_id, **({"folder": folder} if unit.split == "gold-dev" else {}),
                    "domain": unit.field, "sid": sid,
                    "sha1": unit.sha1, "section_kind": section.kind, "role": label.role,
                    "function": label.function, "note": label.note, "annotators": who}
            if unit.open_text:
                gold["text"] = unit.text
            gold_rows.append(gold)
    return gold_rows


def _refresh_kinds(rows: list[dict]) -> list[dict]:
    """Full-text rows take the section kinds their readers give now (the parser's for pdfs2, whose
    places may also move: the kinds the app feeds the model), not those of the readers that made the
    batches; sentences are found by sha1 (:func:`models.datasets.annotated_corpus.locate`). A pdfs2 row
    whose sentence the parser no longer makes (a heading once merged into it is now a heading) is left
    out, with a line on stderr: its label stays in the batch files."""
    import sys

    from models.datasets.annotated_corpus import locate, source_papers

    papers = source_papers({(str(r["source"]), str(r["paper_id"])) for r in rows}, None)
    kept = []
    for row in rows:
        paper = papers.get((str(row["source"]), str(row["paper_id"])))
        place = locate(paper, int(row["section"]), int(row["position"]), str(row["sha1"]),
                       str(row.get("heading") or "")) if paper else None
        if paper is not None and place is not None:
            row["section"], row["position"] = place
            row["section_kind"] = paper.sections[place[0]].kind
        elif paper is not None and row["source"] == "pdfs2":
            print(f"{row['uid']} ({row['paper_id']}): the parser no longer makes this sentence; left out",
                  file=sys.stderr)
            continue
        kept.append(row)
    return kept
