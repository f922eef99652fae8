"""``rhetorica train none-detector``: fit the word model that decides a sentence has no function
(``models/none_detector.py``) on the annotated corpus's train split, and its decision on the dev split as the
bundle reads it; write ``none_detector.npz`` and its record into the bundle (in place). Never a test split.
Run it last (after ``function-prior``): the decision is fitted on the probabilities the bundle shows."""

from __future__ import annotations

import argparse
import json

from app.commands._options import add_model_options, input_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "none-detector", help="fit the 'none' detector of a bundle (words + section kind), on annotated data",
        description="Fit a logistic regression on word 1-2-grams and the section kind of annotated:train's "
        "sentences (hand label 'none' or a function), then choose w and t of the runtime's rule "
        "'none when log p_none - w * log p(best function) > t' for function accuracy on annotated:dev's "
        "sentences read in their whole sections by the bundle; write both into the bundle. "
        "Never a test split.")
    parser.add_argument("--bundle", type=input_folder, required=True, help="bundle to fit (in place)")
    parser.add_argument("--c", type=float, default=2.0,
                        help="inverse L2 strength of the regression (default 2)")
    parser.add_argument("--kind-dropout", type=float, default=0.3,
                        help="share of training sentences read without their section kind (default 0.3)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    import numpy as np

    from core.errors import RhetoricaError
    from models.bundle import read_manifest, write_manifest
    from models.datasets.annotated_corpus import annotated_sections, annotated_sentences
    from models.encoder import load_model
    from models.none_detector import NONE_DETECTOR_FILE, write_none_detector
    from models.training.none_detector import choose_decision, fit_none_detector

    if not 0.0 < args.c <= 1e6 or not 0.0 <= args.kind_dropout < 1.0:
        raise RhetoricaError("--c must be in (0, 1e6] and --kind-dropout in [0, 1)")
    manifest = read_manifest(args.bundle)
    functions = dict(manifest.context.get("functions", {}))
    if not functions.get("ids"):
        raise RhetoricaError(f"{args.bundle}: this bundle has no function head")
    functions.pop("none_detector", None)
    manifest.context = {**manifest.context, "functions": functions}
    files = tuple(name for name in manifest.files if name != NONE_DETECTOR_FILE)
    write_manifest(args.bundle, manifest, files)  # the dev reading without a detector

    train = annotated_sentences("train")
    detector = fit_none_detector([s.text for s in train], [s.section_kind for s in train],
                                 [s.function == "none" for s in train], c=args.c,
                                 kind_dropout=args.kind_dropout)
    model = load_model(args.bundle, device=args.device, threads=args.threads)
    ids = list(model.function_ids)
    sections = annotated_sections("dev")
    encodings = model.encode_documents([(s.texts, [s.kind] * len(s.texts)) for s in sections],
                                       with_embeddings=False)
    texts, kinds, gold, shown, before = [], [], [], [], []
    for section, encoding in zip(sections, encodings, strict=True):
        if encoding.function_probabilities is None:
            raise RhetoricaError(f"{args.bundle}: the bundle gave no function probabilities")
        labels = encoding.functions or []
        for row, sentence in enumerate(section.annotated):
            if sentence is None:
                continue
            texts.append(section.texts[row])
            kinds.append(section.kind)
            gold.append(sentence.function)
            shown.append(encoding.function_probabilities[row])
            before.append(labels[row].label == sentence.function)
    probabilities = np.vstack(shown)
    best_right = [ids[int(i)] == g for i, g in zip(probabilities.argmax(-1), gold, strict=True)]
    gold_none = [g == "none" for g in gold]
    log_p_none = detector.log_p_none(texts, kinds)
    decision = choose_decision(log_p_none, probabilities.max(-1), best_right, gold_none)
    fitted = dataclasses.replace(detector, best_weight=decision.best_weight, threshold=decision.threshold)
    summary = {"fitted_on": "annotated:train", "decided_on": "annotated:dev", "train_sentences": len(train),
               "train_none": sum(s.function == "none" for s in train), "vocabulary": len(detector.vocabulary),
               "c": args.c, "kind_dropout": args.kind_dropout, "dev_sentences": len(gold),
               "dev_accuracy_before": round(float(np.mean(before)), 4),
               "dev_accuracy": round(decision.accuracy, 4), "dev_none_share": round(decision.none_share, 4)}
    functions["none_detector"] = write_none_detector(args.bundle, fitted, summary)
    manifest.context = {**manifest.context, "functions": functions}
    write_manifest(args.bundle, manifest, (*files, NONE_DETECTOR_FILE))
    print(json.dumps(functions["none_detector"], indent=2))
    return 0
