"""``rhetorica train function-prior``: fit how much the contextual role probabilities and the section
kind reweight the function probabilities (``models/function_prior.py``), on dev data, into the bundle's
manifest (the kind table is counted on the annotated corpus's train split).

No torch and no re-export: ``alpha``, the "none" threshold after reweighting and each function's role are
written into ``context.functions.role_prior`` and applied by the runtime."""

from __future__ import annotations

import argparse
import json

from app.commands._options import add_model_options, input_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "function-prior", help="fit the role prior on function probabilities of a bundle, on dev data",
        description="Encode the annotated corpus's dev papers' sections whole, as the app reads a paper "
        "(with section kinds and neighbours), then choose alpha and beta in p(f) ∝ p_head(f) · "
        "p_role(role(f))^alpha · (p(f|kind)/p(f))^beta (kind table counted on annotated:train; with a "
        "contextual function head, p_head is first mixed with it, its weight chosen too) and the 'none' "
        "threshold for function accuracy on those sentences; write them into the bundle's manifest "
        "(run it after calibrate-roles: it reads the calibrated role probabilities). Never a test split.")
    parser.add_argument("--bundle", type=input_folder, required=True, help="bundle to fit (in place)")
    parser.add_argument("--fit-temperature", action="store_true",
                        help="also fit a temperature on the reweighted probabilities (the NLL of the dev "
                        "sentences' functions) so the shown probabilities mean what they say, and the 'none' "
                        "threshold on the tempered ones")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from core.errors import RhetoricaError
    from core.taxonomy.functions import default_taxonomy
    from models.bundle import read_manifest, write_manifest
    from models.datasets.annotated_corpus import annotated_sections, annotated_sentences
    from models.encoder import load_model
    from models.function_prior import fit_role_prior, kind_log_ratios, kind_table

    manifest = read_manifest(args.bundle)
    functions = dict(manifest.context.get("functions", {}))
    if not functions.get("ids"):
        raise RhetoricaError(f"{args.bundle}: this bundle has no function head")
    functions.pop("role_prior", None)
    manifest.context = {**manifest.context, "functions": functions}
    write_manifest(args.bundle, manifest, tuple(manifest.files))  # fit on the model without a prior
    role_of = {f.id: f.role for f in default_taxonomy().functions}
    ids = [str(i) for i in functions["ids"]]
    model = load_model(args.bundle, device=args.device, threads=args.threads)
    missing = [i for i in ids if role_of.get(i) not in model.labels]
    if missing:
        raise RhetoricaError(f"{args.bundle}: functions without a role the model labels: "
                             f"{', '.join(missing)}")
    # The dev papers' annotated sentences inside their whole sections, as the app reads a paper.
    sections = annotated_sections("dev")
    encodings = model.encode_documents([(s.texts, [s.kind] * len(s.texts)) for s in sections],
                                       with_embeddings=False)
    keep = [[c is not None for c in s.annotated] for s in sections]
    function_p = np.vstack([e.function_probabilities[k] for e, k in zip(encodings, keep, strict=True)
                            if e.function_probabilities is not None])
    role_p = np.vstack([e.probabilities[k] for e, k in zip(encodings, keep, strict=True)])
    context_p = (np.vstack([e.function_context_probabilities[k] for e, k in zip(encodings, keep, strict=True)
                            if e.function_context_probabilities is not None])
                 if model.has_function_context else None)
    gold = [c.function for s in sections for c in s.annotated if c is not None]
    columns = np.array([list(model.labels).index(role_of[i]) for i in ids], dtype=np.int64)
    train = annotated_sentences("train")
    kinds = list(manifest.section_kinds)
    log_ratio = kind_log_ratios([c.section_kind for c in train], [c.function for c in train], ids, kinds)
    kind_ids = np.concatenate([model.section_kind_ids([s.kind] * len(s.texts), len(s.texts))[k]
                               for s, k in zip(sections, keep, strict=True)])
    _, record = fit_role_prior(function_p, role_p, gold, ids, columns, kinds=kind_ids,
                               kind_log_ratio=kind_table(log_ratio, kinds, len(ids)),
                               context_probabilities=context_p, unknown_kind=len(kinds),
                               fit_temperatures=args.fit_temperature)
    record = {**record, "dev": ["annotated:dev"], "roles": [role_of[i] for i in ids],
              "kind_prior": {"beta": record["beta"], "counted_on": "annotated:train", "log_ratio": log_ratio}}
    functions["role_prior"] = record
    manifest.context = {**manifest.context, "functions": functions}
    write_manifest(args.bundle, manifest, tuple(manifest.files))
    print(json.dumps({k: v for k, v in record.items() if k not in {"roles", "kind_prior"}}, indent=2))
    return 0
