"""``rhetorica eval sections``: how often the parser gives a section its true kind (issue 24).

The role model reads each body sentence with its section's kind, so a wrong kind misroutes every
sentence of the section. The gold (``tests/fixtures/section_kinds/gold.jsonl``, hand-labelled; its
README says how) gives the true kind of every section the parser finds in the 12 gold papers of
``<shared>/pdfs`` and the 52 papers of ``<shared>/pdfs2``. Each PDF is parsed afresh and each gold
row joined to its section by index and heading hash; a row whose section no longer matches (the
parser now finds other sections) is counted as unmatched and left out.

Two accuracies per folder: **by section** (each section with at least one sentence counts once) and
**by sentence** (each section counts as many times as it has sentences, which is what the role
model sees). Subsections (level > 1) are also scored alone, since that is where the parent's kind
matters. Rows labelled ``mixed`` (a parse that merged sections of several kinds) are not scored.

``--second JSONL``: instead, how far a second, independent annotation of some of the gold's sections
agrees with the gold (rows as the gold's, joined by folder, paper, section index and heading hash): the
share of sections given the same kind and Cohen's kappa, overall and per field (the pdfs2 manifest's;
the shared ``pdfs`` papers count as CS). Nothing is parsed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

FOLDERS = ("pdfs", "pdfs2")
MIXED = "mixed"
DEFAULT_GOLD = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "section_kinds" / "gold.jsonl"
_FIELDS = ("pdf", "folder", "section", "heading_sha1", "kind")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from app.commands._options import input_file, input_folder, output_file

    parser = subparsers.add_parser(
        "sections", help="Section-kind accuracy of the PDF parser on the hand-labelled section gold.",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=input_file, default=None, metavar="JSONL",
                        help="gold rows (default tests/fixtures/section_kinds/gold.jsonl)")
    parser.add_argument("--shared", type=input_folder, default=None, metavar="DIR",
                        help="folder holding pdfs/ and pdfs2/ (default: the shared folder, RHETORICA_SHARED)")
    parser.add_argument("--folder", action="append", choices=FOLDERS, default=None,
                        help="score only this folder (repeatable; default both)")
    parser.add_argument("--errors", action="store_true", help="also list every section given a wrong kind")
    parser.add_argument("--second", type=input_file, default=None, metavar="JSONL",
                        help="a second annotation of some gold sections: report its agreement with the gold "
                             "(overall and per field, Cohen's kappa) instead of scoring the parser")
    parser.add_argument("--json", type=output_file, default=None, metavar="OUT",
                        help="also write the figures here")
    parser.set_defaults(func=run)


def heading_sha1(heading: str) -> str:
    return hashlib.sha1(heading.encode("utf-8")).hexdigest()[:16]


def read_gold(path: Path) -> list[dict[str, Any]]:
    """The gold rows, or a one-line error naming the file and line."""
    from core.document import SectionKind
    from core.errors import DatasetError

    kinds = {kind.value for kind in SectionKind} | {MIXED}
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DatasetError(f"{path}: cannot read the section gold ({error})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise DatasetError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(row, dict) or any(key not in row for key in _FIELDS):
            raise DatasetError(f"{path}:{number}: a gold row needs {', '.join(_FIELDS)}")
        index = row["section"]
        if row["kind"] not in kinds or not isinstance(index, int) or isinstance(index, bool):
            raise DatasetError(f"{path}:{number}: 'kind' must be one of {', '.join(sorted(kinds))} and "
                               "'section' a whole number")
        rows.append(row)
    return rows


def _block() -> dict[str, Any]:
    return {"papers": set(), "sections": 0, "correct_sections": 0, "sentences": 0, "correct_sentences": 0,
            "sub_sections": 0, "sub_correct_sections": 0, "sub_sentences": 0, "sub_correct_sentences": 0,
            "unmatched": 0, "mixed": 0, "confusion": Counter()}


def score(rows: list[dict[str, Any]], papers: dict[tuple[str, str], list[Any]]) -> dict[str, Any]:
    """Figures per folder and for all rows. ``papers`` maps (folder, pdf) to the parsed paper's
    sections (``core.document.Section``); rows of papers not in it are skipped."""
    blocks: dict[str, dict[str, Any]] = {}
    errors: list[dict[str, Any]] = []
    for row in rows:
        key = (row["folder"], row["pdf"])
        if key not in papers:
            continue
        sections = papers[key]
        for name in (row["folder"], "all"):
            blocks.setdefault(name, _block())["papers"].add(key)
        index = int(row["section"])
        section = sections[index] if 0 <= index < len(sections) else None
        if section is None or heading_sha1(section.heading) != row["heading_sha1"]:
            for name in (row["folder"], "all"):
                blocks[name]["unmatched"] += 1
            continue
        if row["kind"] == MIXED:
            for name in (row["folder"], "all"):
                blocks[name]["mixed"] += 1
            continue
        weight = section.sentence_count
        if weight <= 0:
            continue
        parsed = section.kind.value
        right = parsed == row["kind"]
        for name in (row["folder"], "all"):
            block = blocks[name]
            block["sections"] += 1
            block["correct_sections"] += right
            block["sentences"] += weight
            block["correct_sentences"] += weight * right
            if section.level > 1:
                block["sub_sections"] += 1
                block["sub_correct_sections"] += right
                block["sub_sentences"] += weight
                block["sub_correct_sentences"] += weight * right
            if not right:
                block["confusion"][(row["kind"], parsed)] += weight
        if not right:
            errors.append({"folder": row["folder"], "pdf": row["pdf"], "section": index,
                           "number": section.number, "level": section.level, "heading": section.heading,
                           "gold": row["kind"], "parsed": parsed, "sentences": weight})
    out = {name: _figures(block) for name, block in sorted(blocks.items(), key=lambda kv: kv[0] == "all")}
    return {"folders": out, "errors": errors}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _figures(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "papers": len(block["papers"]),
        "sections": block["sections"],
        "section_accuracy": _ratio(block["correct_sections"], block["sections"]),
        "sentences": block["sentences"],
        "sentence_accuracy": _ratio(block["correct_sentences"], block["sentences"]),
        "subsections": {
            "sections": block["sub_sections"],
            "section_accuracy": _ratio(block["sub_correct_sections"], block["sub_sections"]),
            "sentences": block["sub_sentences"],
            "sentence_accuracy": _ratio(block["sub_correct_sentences"], block["sub_sentences"]),
        },
        "unmatched_rows": block["unmatched"],
        "mixed_rows": block["mixed"],
        "confusions": [{"gold": gold, "parsed": parsed, "sentences": n}
                       for (gold, parsed), n in block["confusion"].most_common()],
    }


def parse_papers(rows: list[dict[str, Any]], shared: Path) -> dict[tuple[str, str], list[Any]]:
    """Each gold paper parsed afresh: (folder, pdf) -> its sections."""
    from core.errors import MissingFileError
    from core.pdf import parse_pdf

    papers: dict[tuple[str, str], list[Any]] = {}
    for folder, pdf in sorted({(row["folder"], row["pdf"]) for row in rows}):
        path = shared / folder / f"{pdf}.pdf"
        if not path.is_file():
            raise MissingFileError(str(path), "a section-gold paper is missing "
                                              "(set RHETORICA_SHARED or --shared)")
        papers[(folder, pdf)] = parse_pdf(path).sections
    return papers


def run(args: argparse.Namespace) -> int:
    from app.commands._options import write_output
    from core.paths import shared_dir
    from core.pdf import PARSER_VERSION

    gold_path = args.gold or DEFAULT_GOLD
    if args.second is not None:
        return _run_agreement(gold_path, args.second, args.shared or shared_dir(), args.json)
    folders = tuple(args.folder or FOLDERS)
    rows = [row for row in read_gold(gold_path) if row["folder"] in folders]
    if not rows:
        from core.errors import DatasetError

        raise DatasetError(f"{gold_path}: no gold rows for {' or '.join(folders)}")
    result = score(rows, parse_papers(rows, args.shared or shared_dir()))
    result = {"gold": str(gold_path), "parser_version": PARSER_VERSION,
              "command": " ".join(["rhetorica", *sys.argv[1:]]), **result}
    _print(result, args.errors)
    if args.json is not None:
        write_output(args.json, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


def _row_key(row: dict[str, Any]) -> tuple[str, str, int, str]:
    return (str(row["folder"]), str(row["pdf"]), int(row["section"]), str(row["heading_sha1"]))


def agreement(gold: list[dict[str, Any]], second: list[dict[str, Any]],
              fields: dict[str, str]) -> dict[str, Any]:
    """The second annotation against the gold, overall ("all") and per field: sections, share of equal
    kinds, Cohen's kappa; and the disagreements. A second row that matches no gold row is counted apart."""
    from models.datasets.annotated_corpus import cohen_kappa

    by_key = {_row_key(row): row for row in gold}
    pairs: dict[str, list[tuple[str, str]]] = {"all": []}
    unmatched = 0
    disagreements = []
    for row in second:
        first = by_key.get(_row_key(row))
        if first is None:
            unmatched += 1
            continue
        field = "CS" if row["folder"] == "pdfs" else fields.get(str(row["pdf"]), "unknown")
        for group in ("all", field):
            pairs.setdefault(group, []).append((str(first["kind"]), str(row["kind"])))
        if first["kind"] != row["kind"]:
            disagreements.append({"folder": row["folder"], "pdf": row["pdf"], "section": row["section"],
                                  "gold": first["kind"], "second": row["kind"]})
    groups = {}
    for group, labels in pairs.items():
        if labels:
            a, b = [x for x, _ in labels], [y for _, y in labels]
            groups[group] = {"sections": len(labels),
                             "agreement": round(sum(x == y for x, y in labels) / len(labels), 4),
                             "kappa": round(cohen_kappa(a, b), 4)}
    return {"groups": groups, "unmatched_rows": unmatched, "disagreements": disagreements}


def _run_agreement(gold_path: Path, second_path: Path, shared: Path, json_out: Path | None) -> int:
    from app.commands._options import write_output
    from core.errors import DatasetError
    from models.datasets.figure_sources import pdfs2_fields

    result = agreement(read_gold(gold_path), read_gold(second_path), pdfs2_fields(shared / "data"))
    if not result["groups"]:
        raise DatasetError(f"{second_path}: no row matches a section of the gold {gold_path}")
    result = {"gold": str(gold_path), "second": str(second_path),
              "command": " ".join(["rhetorica", *sys.argv[1:]]), **result}
    print(f"Second annotation {second_path} against the section gold {gold_path}")
    for group, row in result["groups"].items():
        print(f"  {group:<11} {row['sections']:>4} sections  agreement {100 * row['agreement']:5.1f}%  "
              f"kappa {row['kappa']:.3f}")
    if result["unmatched_rows"]:
        print(f"  {result['unmatched_rows']} second rows match no gold row (left out)")
    if json_out is not None:
        write_output(json_out, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


def _pct(value: float | None) -> str:
    return "   –  " if value is None else f"{100 * value:5.1f}%"


def _print(result: dict[str, Any], errors: bool) -> None:
    print(f"Section kinds against {result['gold']} (parser {result['parser_version']})")
    print(f"  {'folder':<7}{'papers':>7}{'sections':>10}{'by section':>12}{'sentences':>11}"
          f"{'by sentence':>13}{'subsections':>13}{'by section':>12}{'by sentence':>13}")
    for name, block in result["folders"].items():
        sub = block["subsections"]
        print(f"  {name:<7}{block['papers']:>7}{block['sections']:>10}{_pct(block['section_accuracy']):>12}"
              f"{block['sentences']:>11,}{_pct(block['sentence_accuracy']):>13}{sub['sections']:>13}"
              f"{_pct(sub['section_accuracy']):>12}{_pct(sub['sentence_accuracy']):>13}")
    for name, block in result["folders"].items():
        if block["unmatched_rows"] or block["mixed_rows"]:
            print(f"  {name}: {block['unmatched_rows']} gold rows no longer match a parsed section, "
                  f"{block['mixed_rows']} mixed rows not scored")
    block = result["folders"].get("all")
    if block and block["confusions"]:
        top = ", ".join(f"{c['gold']}→{c['parsed']} {c['sentences']}" for c in block["confusions"][:8])
        print(f"  most sentences misrouted (gold→parsed): {top}")
    if errors:
        for e in result["errors"]:
            number = f"{e['number']} " if e["number"] else ""
            print(f"  {e['folder']}/{e['pdf']} [{e['section']}] L{e['level']} {number}{e['heading'][:60]!r}: "
                  f"{e['gold']}, parsed {e['parsed']} ({e['sentences']} sentences)")
