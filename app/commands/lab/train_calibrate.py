"""``rhetorica train calibrate-roles``: fit the bundle's role temperatures on dev data (issue 24, item 5).

No torch and no re-export: the temperatures are written into the bundle's manifest
(``context.role_calibration``) and applied by the runtime (``models/role_calibration.py``)."""

from __future__ import annotations

import argparse
import json

from app.commands._options import add_model_options, input_folder


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate-roles", help="fit the role temperatures of a bundle on dev data",
        description="Fit one temperature for the role head (abstracts, unknown kinds) and one for the "
        "body head on dev documents (sentences with one gold role), as the app feeds them, and write "
        "them into the bundle's manifest (with --bias, also one logit bias per role and head). Never a "
        "test split.")
    parser.add_argument("--bundle", type=input_folder, required=True, help="bundle to calibrate (in place)")
    parser.add_argument("--dev", action="append", default=None, metavar="SPEC",
                        help="dev data (repeatable; default gold-papers:dev, annotated:dev, csabstruct:dev)")
    parser.add_argument("--bias", action="store_true",
                        help="also fit one logit bias per role for each head, jointly with its temperature "
                        "(a prior correction: unlike a temperature it can change the best role)")
    add_model_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from models.bundle import read_manifest, write_manifest
    from models.datasets import load_spec, refuse_test_split
    from models.encoder import load_model
    from models.role_calibration import fit_temperature, fit_temperature_and_bias

    specs = args.dev or ["gold-papers:dev", "annotated:dev", "csabstruct:dev"]
    for spec in specs:
        refuse_test_split(spec, "role calibration (--dev)")
    manifest = read_manifest(args.bundle)
    manifest.context = {k: v for k, v in manifest.context.items() if k != "role_calibration"}
    write_manifest(args.bundle, manifest, tuple(manifest.files))  # fit on the uncalibrated model
    model = load_model(args.bundle, device=args.device, threads=args.threads)
    body_kinds = set(dict(manifest.context.get("body_head", {})).get("section_kinds", []))
    labels = list(model.labels)
    parts: dict[str, tuple[list[np.ndarray], list[int]]] = {"role_head": ([], []), "body_head": ([], [])}
    for spec in specs:
        documents = load_spec(spec)
        encodings = model.encode_documents([(d.sentences, d.section_kinds) for d in documents],
                                           with_embeddings=False)
        for document, encoding in zip(documents, encodings, strict=True):
            kinds = document.section_kinds or ["unknown"] * len(document)
            for i, allowed in enumerate(document.allowed):
                if len(allowed) != 1 or next(iter(allowed)) not in labels:
                    continue
                head = "body_head" if kinds[i] in body_kinds else "role_head"
                parts[head][0].append(encoding.probabilities[i])
                parts[head][1].append(labels.index(next(iter(allowed))))
    method = ("temperature and per-role bias, penalised NLL on dev" if args.bias
              else "temperature scaling, NLL on dev")
    calibration: dict[str, object] = {"dev": specs, "method": method}
    fit = fit_temperature_and_bias if args.bias else fit_temperature
    for head, (probs, gold) in parts.items():
        fitted = fit(np.array(probs) if probs else np.zeros((0, len(labels))), gold)
        calibration[head] = fitted.to_dict()
    manifest.context = {**manifest.context, "role_calibration": calibration}
    write_manifest(args.bundle, manifest, tuple(manifest.files))
    print(json.dumps(calibration, indent=2))
    return 0
