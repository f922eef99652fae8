"""Parser snapshots: the JSON of every shared PDF, to show that a parser change changes nothing
(or exactly what it should).

    python -m tests.parse_snapshot write DIR [--pdfs FOLDER]     # each PDF's Paper JSON to DIR/<stem>.json
    python -m tests.parse_snapshot compare DIR_A DIR_B           # papers that differ, with a short diff
    python -m tests.parse_snapshot digests [--from DIR] [--pdfs FOLDER]
                                                                 # refresh tests/fixtures/parse_digests.json
    python -m tests.parse_snapshot check [--pdfs FOLDER]         # parse and compare with the digest file

A refactoring of ``core.pdf`` keeps the output byte-identical: ``write`` before and after, then
``compare``.  After an intentional parser change, bump ``core.pdf.PARSER_VERSION`` and run
``digests`` so that ``tests/test_parse_snapshot.py`` checks the new output.

The JSON is ``Paper.to_json()`` with ``source_path`` set to the file name, so that it does not
depend on where the shared folder lies.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

DIGEST_FILE = Path(__file__).resolve().parent / "fixtures" / "parse_digests.json"
REFRESH_HINT = (
    "after an intentional parser change, bump core.pdf.PARSER_VERSION and run "
    "`.venv/bin/python -m tests.parse_snapshot digests`"
)


def default_pdf_dir() -> Path:
    from core.paths import shared_dir

    return shared_dir() / "pdfs"


def pdf_paths(folder: Path) -> list[Path]:
    """The PDFs directly in ``folder``, by name."""
    return sorted(folder.glob("*.pdf"))


def snapshot_json(pdf: Path) -> str:
    """The parsed paper's JSON, with ``source_path`` reduced to the file name."""
    from core.pdf import parse_pdf

    paper = parse_pdf(pdf)
    paper.source_path = pdf.name
    return paper.to_json()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_snapshots(out_dir: Path, pdf_dir: Path) -> dict[str, str]:
    """Write ``<stem>.json`` per PDF into ``out_dir``; returns {pdf file name: digest}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    digests: dict[str, str] = {}
    for pdf in pdf_paths(pdf_dir):
        text = snapshot_json(pdf)
        (out_dir / f"{pdf.stem}.json").write_text(text, encoding="utf-8")
        digests[pdf.name] = digest(text)
    return digests


@dataclass
class Comparison:
    """What two snapshot folders hold differently (by JSON file name)."""

    differing: dict[str, list[str]] = field(default_factory=dict)  # name -> unified diff lines
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    same: int = 0

    @property
    def identical(self) -> bool:
        return not (self.differing or self.only_a or self.only_b)


def compare_dirs(dir_a: Path, dir_b: Path, context: int = 2, max_lines: int = 40) -> Comparison:
    """Compare the ``*.json`` files of two snapshot folders; differing ones get a short diff."""
    names_a = {p.name for p in dir_a.glob("*.json")}
    names_b = {p.name for p in dir_b.glob("*.json")}
    result = Comparison(only_a=sorted(names_a - names_b), only_b=sorted(names_b - names_a))
    for name in sorted(names_a & names_b):
        text_a = (dir_a / name).read_text(encoding="utf-8")
        text_b = (dir_b / name).read_text(encoding="utf-8")
        if text_a == text_b:
            result.same += 1
            continue
        diff = difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), f"a/{name}", f"b/{name}",
                                    n=context, lineterm="")
        lines = list(diff)
        if len(lines) > max_lines:
            lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} more diff lines)"]
        result.differing[name] = lines
    return result


def format_comparison(result: Comparison, dir_a: Path, dir_b: Path) -> str:
    out: list[str] = []
    for name, lines in result.differing.items():
        out.append(f"DIFFERS {name}")
        out.extend(f"    {line}" for line in lines)
    out.extend(f"ONLY IN {dir_a}: {name}" for name in result.only_a)
    out.extend(f"ONLY IN {dir_b}: {name}" for name in result.only_b)
    out.append(f"{result.same} identical, {len(result.differing)} differ, "
               f"{len(result.only_a) + len(result.only_b)} in one folder only")
    return "\n".join(out)


def load_digests(path: Path = DIGEST_FILE) -> tuple[str, dict[str, str]]:
    """The committed (parser version, {pdf file name: sha256 of the JSON text})."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["parser_version"], data["digests"]


def save_digests(parser_version: str, digests: dict[str, str], path: Path = DIGEST_FILE) -> None:
    data = {"parser_version": parser_version, "digests": dict(sorted(digests.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def digests_from_dir(snapshot_dir: Path) -> tuple[str, dict[str, str]]:
    """(parser version, digests) of a folder written by ``write``."""
    digests: dict[str, str] = {}
    versions: set[str] = set()
    for path in sorted(snapshot_dir.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        versions.add(json.loads(text)["parser_version"])
        digests[f"{path.stem}.pdf"] = digest(text)
    if len(versions) != 1:
        raise SystemExit(f"{snapshot_dir}: expected one parser version, found {sorted(versions) or 'none'}")
    return versions.pop(), digests


@dataclass
class DigestCheck:
    """Current parser output against the committed digests."""

    committed_version: str
    current_version: str
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # in the digest file, not in the PDF folder
    new: list[str] = field(default_factory=list)  # in the PDF folder, no committed digest
    checked: int = 0

    @property
    def ok(self) -> bool:
        return self.committed_version == self.current_version and not (self.changed or self.missing)

    def message(self) -> str:
        parts: list[str] = []
        if self.committed_version != self.current_version:
            parts.append(f"digests are for parser {self.committed_version}, "
                         f"core.pdf.PARSER_VERSION is {self.current_version}")
        if self.changed:
            parts.append(f"parser output changed for {len(self.changed)} of {self.checked} papers: "
                         + ", ".join(self.changed))
        if self.missing:
            parts.append("PDFs with a committed digest are missing: " + ", ".join(self.missing))
        if self.new:
            parts.append("PDFs without a committed digest (not checked): " + ", ".join(self.new))
        if not self.ok:
            parts.append(REFRESH_HINT + "; to see what changed, `write` before and after and `compare`")
        return "\n".join(parts) or f"{self.checked} papers match the committed digests"


def check_digests(pdf_dir: Path, digest_file: Path = DIGEST_FILE) -> DigestCheck:
    """Parse every PDF that has a committed digest and compare."""
    from core.pdf import PARSER_VERSION

    version, committed = load_digests(digest_file)
    present = {p.name: p for p in pdf_paths(pdf_dir)}
    result = DigestCheck(version, PARSER_VERSION,
                         missing=sorted(set(committed) - set(present)),
                         new=sorted(set(present) - set(committed)))
    for name in sorted(set(committed) & set(present)):
        result.checked += 1
        if digest(snapshot_json(present[name])) != committed[name]:
            result.changed.append(name)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.parse_snapshot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_write = sub.add_parser("write", help="write each PDF's Paper JSON to DIR")
    p_write.add_argument("dir", type=Path)
    p_write.add_argument("--pdfs", type=Path, default=None, help="PDF folder (default ../shared/pdfs)")
    p_compare = sub.add_parser("compare", help="compare two folders written by `write`")
    p_compare.add_argument("dir_a", type=Path)
    p_compare.add_argument("dir_b", type=Path)
    p_digests = sub.add_parser("digests", help=f"refresh {DIGEST_FILE.name}")
    p_digests.add_argument("--from", dest="source", type=Path, default=None,
                           help="take the digests from a folder written by `write` instead of parsing")
    p_digests.add_argument("--pdfs", type=Path, default=None)
    p_check = sub.add_parser("check", help="parse and compare with the committed digests")
    p_check.add_argument("--pdfs", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.command == "compare":
        result = compare_dirs(args.dir_a, args.dir_b)
        print(format_comparison(result, args.dir_a, args.dir_b))
        return 0 if result.identical else 1
    from_snapshots = args.command == "digests" and args.source is not None
    pdf_dir: Path = args.pdfs or default_pdf_dir()
    if not from_snapshots and not pdf_dir.is_dir():
        print(f"no PDF folder: {pdf_dir}", file=sys.stderr)
        return 2
    if args.command == "write":
        digests = write_snapshots(args.dir, pdf_dir)
        print(f"wrote {len(digests)} papers to {args.dir}")
        return 0
    if args.command == "digests":
        if from_snapshots:
            version, digests = digests_from_dir(args.source)
        else:
            from core.pdf import PARSER_VERSION

            version = PARSER_VERSION
            digests = {pdf.name: digest(snapshot_json(pdf)) for pdf in pdf_paths(pdf_dir)}
        save_digests(version, digests)
        print(f"wrote {len(digests)} digests for parser {version} to {DIGEST_FILE}")
        return 0
    check = check_digests(pdf_dir)
    print(check.message())
    return 0 if check.ok else 1


if __name__ == "__main__":
    sys.exit(main())
