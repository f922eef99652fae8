"""Compare ``core.pdf.parse_pdf`` output with the hand-written gold in ``tests/fixtures/gold``.

Used by ``tests/test_pdf_gold.py`` and runnable on its own::

    .venv/bin/python -m tests.gold_compare            # every gold paper
    .venv/bin/python -m tests.gold_compare acl2020-main-207 peerj-webb2017 --json OUT

It prints, per paper, what the parser got wrong: title, abstract first/last words,
missed and extra section headings (by normalised text), figure/table numbers and
caption starts.  See ``tests/fixtures/gold/README.md`` for the gold schema.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

GOLD_DIR = Path(__file__).resolve().parent / "fixtures" / "gold"

# Headings that are front matter, not body sections: ignored on the parser side.
FRONT_MATTER_HEADINGS = frozenset({"abstract", "keywords", "key words", "index terms", "contents"})
# The references heading is gold (as printed) but not scored: the document model leaves the
# references list out (core/pdf/structure.py), so a parser need not make it a section.
REFERENCE_HEADINGS = frozenset(
    {"references", "reference", "bibliography", "literature cited", "works cited", "reference list",
     "cited literature"}
)
# Run-in labels that may open a structured abstract before the gold first words.
ABSTRACT_LABELS = frozenset(
    {"abstract", "background", "backgrounds", "objective", "objectives", "purpose", "aim", "aims",
     "introduction", "context", "motivation"}
)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00b4": "'"})
_NON_WORD = re.compile(r"[^0-9a-z]+")
_CAPTION_LABEL = re.compile(
    r"^\s*(?:fig(?:ure)?s?\.?|tab(?:le)?s?\.?)\s*[A-Z]?\d+[a-z]?\s*(?:\(\s*continued\s*\))?\s*[:.|]?\s*",
    re.IGNORECASE,
)


def normalize(text: str) -> str:
    """Lower-case words of ``text``: NFKC (ligatures), quotes unified, punctuation to spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = text.replace("'", "")
    return " ".join(_NON_WORD.sub(" ", text).split())


def words(text: str) -> list[str]:
    return normalize(text).split()


def strip_caption_label(caption: str) -> str:
    """'Figure 3: Overview of X' -> 'Overview of X' (also 'Fig. 3.', 'Table 2 ', 'TABLE 1.')."""
    return _CAPTION_LABEL.sub("", caption, count=1)


@dataclass
class PaperReport:
    """What the parser got right and wrong on one gold paper."""

    stem: str
    error: str = ""  # the parser raised: one line
    seconds: float = 0.0
    title_ok: bool = False
    title_got: str = ""
    abstract_first_ok: bool = False
    abstract_last_ok: bool = False
    abstract_start_got: str = ""
    abstract_end_got: str = ""
    gold_headings: int = 0
    predicted_headings: int = 0
    matched_headings: int = 0
    missed_headings: list[str] = field(default_factory=list)
    extra_headings: list[str] = field(default_factory=list)
    level_mismatches: list[str] = field(default_factory=list)
    missing_figures: list[str] = field(default_factory=list)  # "figure 3"
    extra_figures: list[str] = field(default_factory=list)
    duplicate_figures: list[str] = field(default_factory=list)
    caption_mismatches: list[str] = field(default_factory=list)
    page_mismatches: list[str] = field(default_factory=list)
    gold_figures: int = 0
    references_heading_found: bool = False  # informational only, not scored

    @property
    def heading_recall(self) -> float:
        return self.matched_headings / self.gold_headings if self.gold_headings else 1.0

    @property
    def heading_precision(self) -> float:
        return self.matched_headings / self.predicted_headings if self.predicted_headings else 1.0

    @property
    def figures_equal(self) -> bool:
        return not self.missing_figures and not self.extra_figures

    @property
    def caption_accuracy(self) -> float:
        matched = self.gold_figures - len(self.missing_figures)
        return (matched - len(self.caption_mismatches)) / matched if matched > 0 else 1.0

    def misses(self) -> list[str]:
        """One line per problem, for people."""
        if self.error:
            return [f"parser error: {self.error}"]
        out = []
        if not self.title_ok:
            out.append(f"title: got {self.title_got!r}")
        if not self.abstract_first_ok:
            out.append(f"abstract start: got {self.abstract_start_got!r}")
        if not self.abstract_last_ok:
            out.append(f"abstract end: got {self.abstract_end_got!r}")
        out += [f"missed heading: {h}" for h in self.missed_headings]
        out += [f"extra heading: {h}" for h in self.extra_headings]
        out += [f"level: {m}" for m in self.level_mismatches]
        out += [f"missing {f}" for f in self.missing_figures]
        out += [f"extra {f}" for f in self.extra_figures]
        out += [f"duplicate {f}" for f in self.duplicate_figures]
        out += [f"caption: {m}" for m in self.caption_mismatches]
        out += [f"page: {m}" for m in self.page_mismatches]
        return out

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(heading_recall=self.heading_recall, heading_precision=self.heading_precision,
                    figures_equal=self.figures_equal, caption_accuracy=self.caption_accuracy)
        return data


def gold_files(gold_dir: Path = GOLD_DIR) -> list[Path]:
    return sorted(gold_dir.glob("*.json"))


def load_gold(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _abstract_starts(got: list[str], gold: list[str]) -> bool:
    n = len(gold)
    for skip in range(3):  # allow up to two run-in label words ("Abstract", "Background")
        if skip and got[skip - 1] not in ABSTRACT_LABELS:
            break
        if got[skip : skip + n] == gold:
            return True
    return False


def _abstract_ends(got: list[str], gold: list[str]) -> bool:
    n = len(gold)
    if got[-n:] == gold:
        return True
    return len(got) > n and got[-1].isdigit() and got[-n - 1 : -1] == gold  # footnote marker


def _heading_keys(section: Any) -> set[str]:
    heading = normalize(section.heading)
    keys = {heading}
    if section.number:
        keys.add(normalize(f"{section.number} {section.heading}"))
    # A heading that still carries its number ("2.1 Overview", "A Appendix") also matches without it.
    stripped = re.sub(r"^(?:\d+(?: \d+)*|[ivx]+) ", "", heading)
    keys.add(stripped)
    return keys


def compare(gold: dict[str, Any], paper: Any) -> PaperReport:
    """Compare one parsed :class:`core.document.Paper` with its gold dict."""
    report = PaperReport(stem=Path(gold["file"]).stem)
    report.title_got = paper.title
    report.title_ok = normalize(paper.title) == normalize(gold["title"])

    abstract = [s.text for s in paper.abstract_sentences]
    got_words = words(" ".join(abstract))
    report.abstract_start_got = " ".join(abstract[0].split()[:10]) if abstract else ""
    report.abstract_end_got = " ".join(abstract[-1].split()[-10:]) if abstract else ""
    first, last = words(gold["abstract_first_words"]), words(gold["abstract_last_words"])
    report.abstract_first_ok = bool(got_words) and _abstract_starts(got_words, first)
    report.abstract_last_ok = bool(got_words) and _abstract_ends(got_words, last)

    _compare_sections(gold, paper, report)
    _compare_figures(gold, paper, report)
    return report


def _compare_sections(gold: dict[str, Any], paper: Any, report: PaperReport) -> None:
    predicted = [
        s for s in paper.sections
        if s.heading.strip() and getattr(s.kind, "value", s.kind) != "abstract"
        and normalize(s.heading) not in FRONT_MATTER_HEADINGS
    ]
    report.references_heading_found = any(normalize(s.heading) in REFERENCE_HEADINGS for s in predicted)
    predicted = [s for s in predicted if normalize(s.heading) not in REFERENCE_HEADINGS]
    scored = [e for e in gold["sections"] if normalize(e["heading"]) not in REFERENCE_HEADINGS]
    used = [False] * len(predicted)
    report.gold_headings = len(scored)
    report.predicted_headings = len(predicted)
    start = 0
    for entry in scored:
        label = f"{entry['number']} {entry['heading']}".strip()
        target = normalize(entry["heading"])
        match = _find_heading(predicted, used, target, start)
        if match is None:
            report.missed_headings.append(label)
            continue
        used[match] = True
        start = match + 1
        report.matched_headings += 1
        if predicted[match].level != entry["level"]:
            report.level_mismatches.append(f"{label}: level {predicted[match].level}, gold {entry['level']}")
    report.extra_headings = [
        f"{s.number} {s.heading}".strip() for s, u in zip(predicted, used, strict=True) if not u
    ]


def _find_heading(predicted: list[Any], used: list[bool], target: str, start: int) -> int | None:
    """First unused predicted heading matching ``target``, preferring reading order from ``start``."""
    order = list(range(start, len(predicted))) + list(range(start))
    for i in order:
        if not used[i] and target in _heading_keys(predicted[i]):
            return i
    return None


def _compare_figures(gold: dict[str, Any], paper: Any, report: PaperReport) -> None:
    report.gold_figures = len(gold["figures"])
    got: dict[tuple[str, str], list[Any]] = {}
    for figure in paper.figures:
        got.setdefault((figure.kind, str(figure.number).strip()), []).append(figure)
    wanted = {(g["kind"], g["number"]): g for g in gold["figures"]}
    for key, entries in sorted(got.items()):
        if key not in wanted:
            report.extra_figures.append(f"{key[0]} {key[1]}")
        elif len(entries) > 1:
            report.duplicate_figures.append(f"{key[0]} {key[1]} x{len(entries)}")
    for key, entry in wanted.items():
        name = f"{key[0]} {key[1]}"
        if key not in got:
            report.missing_figures.append(name)
            continue
        figure = got[key][0]
        caption = normalize(strip_caption_label(figure.caption))
        if not caption.startswith(normalize(entry["caption_start"])):
            report.caption_mismatches.append(f"{name}: got {figure.caption[:70]!r}")
        if figure.page != entry["page"]:
            report.page_mismatches.append(f"{name}: page {figure.page}, gold {entry['page']}")


def pdf_path_for(gold: dict[str, Any], pdf_dir: Path) -> Path:
    return pdf_dir / gold["file"]


def run(stems: Sequence[str] | None = None, pdf_dir: Path | None = None) -> list[PaperReport]:
    """Parse every gold paper (or the named ones) and compare."""
    from core.paths import shared_dir
    from core.pdf import parse_pdf

    pdf_dir = pdf_dir or shared_dir() / "pdfs"
    reports = []
    for path in gold_files():
        if stems and path.stem not in stems:
            continue
        gold = load_gold(path)
        started = time.perf_counter()
        try:
            paper = parse_pdf(pdf_path_for(gold, pdf_dir))
        except Exception as error:  # report and go on with the next paper
            report = PaperReport(stem=path.stem, error=f"{type(error).__name__}: {error}".splitlines()[0])
        else:
            report = compare(gold, paper)
        report.seconds = time.perf_counter() - started
        reports.append(report)
    return reports


def summary(reports: Sequence[PaperReport]) -> dict[str, Any]:
    ok = [r for r in reports if not r.error]
    gold_h = sum(r.gold_headings for r in ok)
    pred_h = sum(r.predicted_headings for r in ok)
    matched_h = sum(r.matched_headings for r in ok)
    gold_f = sum(r.gold_figures for r in ok)
    found_f = sum(r.gold_figures - len(r.missing_figures) for r in ok)
    return {
        "papers": len(reports),
        "errors": len(reports) - len(ok),
        "title_exact": sum(r.title_ok for r in ok),
        "abstract_first_ok": sum(r.abstract_first_ok for r in ok),
        "abstract_last_ok": sum(r.abstract_last_ok for r in ok),
        "heading_recall": matched_h / gold_h if gold_h else 1.0,
        "heading_precision": matched_h / pred_h if pred_h else 1.0,
        "figure_sets_equal": sum(r.figures_equal for r in ok),
        "figure_recall": found_f / gold_f if gold_f else 1.0,
        "extra_figures": sum(len(r.extra_figures) for r in ok),
        "caption_starts_ok": found_f - sum(len(r.caption_mismatches) for r in ok),
        "captions_compared": found_f,
        "seconds": sum(r.seconds for r in reports),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.gold_compare",
                                     description="Compare parse_pdf with the hand-written gold.")
    parser.add_argument("stems", nargs="*", help="gold file stems (default: all)")
    parser.add_argument("--pdf-dir", type=Path, default=None,
                        help="folder with the PDFs (default: shared/pdfs)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write the reports as JSON")
    args = parser.parse_args(argv)
    reports = run(args.stems or None, args.pdf_dir)
    for report in reports:
        status = "ERROR" if report.error else (
            f"title {'ok' if report.title_ok else 'NO'} | abstract "
            f"{'ok' if report.abstract_first_ok else 'NO'}/{'ok' if report.abstract_last_ok else 'NO'} | "
            f"headings R {report.heading_recall:.2f} P {report.heading_precision:.2f} | "
            f"figures {'equal' if report.figures_equal else 'DIFFER'} | "
            f"captions {report.caption_accuracy:.2f}"
        )
        print(f"== {report.stem} ({report.seconds:.1f} s): {status}")
        for line in report.misses():
            print(f"   - {line}")
    totals = summary(reports)
    print("\nsummary: " + ", ".join(
        f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in totals.items()))
    if args.json is not None:
        args.json.write_text(json.dumps({"summary": totals, "papers": [r.to_dict() for r in reports]},
                                        indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
