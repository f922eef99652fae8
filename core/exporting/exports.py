"""Export a paper's (or a draft's) role analysis as JSON, CSV, Markdown or HTML (no Qt).

The machine formats (JSON, CSV) carry per sentence its id, 0-based index, section, page, role,
confidence, whether the role is uncertain and its runner-up, every class probability and the function
ids; JSON and Markdown also summarise the role mix per section. The reading formats (Markdown, HTML)
say the labels as the GUI does (``core.exporting.label_words``): percentages, "uncertain: A 39% or
B 39%", plain function names. A CSV text cell that a spreadsheet would read as a formula (it starts
with ``= + - @``, a tab or a carriage return) is prefixed with ``'`` (:func:`spreadsheet_safe`).

The JSON export can be read back as a paper (:func:`paper_from_export`: text and sections, no places on
the page), so ``rhetorica analyze OUT.json`` labels it again.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.document import Paper, Section, Sentence
from core.exporting.label_words import function_words, role_is_uncertain, role_words
from core.fileio import atomic_write_text
from core.json_shapes import ShapeError, as_int, as_list, as_object
from core.json_shapes import entry as json_entry
from core.taxonomy.labels import ROLES, UNCERTAIN_BELOW, FunctionPrediction, RolePrediction, runner_up
from core.taxonomy.role_colors import DEFAULT_ROLE_COLORS

if TYPE_CHECKING:  # pragma: no cover
    from core.labelling.analysis import PaperAnalysis

EXPORT_FORMAT = 1
CSV_COLUMNS = ("id", "index", "section_number", "section_heading", "section_kind", "page", "role",
               "confidence", "uncertain", "role_2", "role_2_confidence", *(f"p_{role}" for role in ROLES),
               "function", "function_confidence", "function_2", "function_3", "text")
# How the reading exports say confidence (the GUI's rule, core.taxonomy.labels.UNCERTAIN_BELOW).
CONFIDENCE_NOTE = (f"Confidence is the model's probability; a role below {UNCERTAIN_BELOW:.0%} is marked "
                   "uncertain, with the runner-up.")
# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _function_fields(analysis: PaperAnalysis, index: int) -> dict[str, Any]:
    """The function columns of one sentence (empty when the model has no function head)."""
    functions = analysis.functions
    if functions is None:
        return {"function": "", "function_confidence": "", "function_2": "", "function_3": ""}
    prediction = functions[index]
    top = list(prediction.top) + [("", 0.0)] * 3
    return {"function": prediction.label, "function_confidence": round(prediction.confidence, 4),
            "function_2": top[1][0], "function_3": top[2][0]}


def _role_fields(prediction: RolePrediction) -> dict[str, Any]:
    """The role columns of one sentence: the label, its confidence, whether it is uncertain (below
    ``UNCERTAIN_BELOW``, as the GUI shows it) and the runner-up."""
    second, probability = runner_up(prediction)
    return {"role": prediction.label, "confidence": round(prediction.confidence, 4),
            "uncertain": role_is_uncertain(prediction), "role_2": second,
            "role_2_confidence": round(probability, 4) if second else ""}


def _check(paper: Paper, analysis: PaperAnalysis) -> None:
    if len(analysis.roles) != len(paper.sentences):
        raise ValueError(f"analysis has {len(analysis.roles)} roles for {len(paper.sentences)} sentences")
    if analysis.functions is not None and len(analysis.functions) != len(paper.sentences):
        raise ValueError(f"analysis has {len(analysis.functions)} functions "
                         f"for {len(paper.sentences)} sentences")


def sentence_rows(paper: Paper, analysis: PaperAnalysis) -> list[dict[str, Any]]:
    """One flat record per sentence (the CSV rows; also the JSON ``sentences`` list)."""
    _check(paper, analysis)
    rows = []
    for sentence, prediction in zip(paper.sentences, analysis.roles):
        # section_index -1: a draft's text before its first heading, in no section
        section = paper.section_of(sentence) if sentence.section_index >= 0 else None
        row: dict[str, Any] = {
            "id": sentence.id,
            "index": sentence.index,
            "section_number": section.number if section is not None else "",
            "section_heading": section.heading if section is not None else "",
            "section_kind": section.kind.value if section is not None else "",
            "page": (sentence.pages[0] + 1) if sentence.pages else "",
            **_role_fields(prediction),
        }
        for role in ROLES:
            row[f"p_{role}"] = round(float(prediction.probabilities.get(role, 0.0)), 4)
        row.update(_function_fields(analysis, sentence.index))
        row["text"] = sentence.text
        rows.append(row)
    return rows


def section_summary(paper: Paper, analysis: PaperAnalysis) -> list[dict[str, Any]]:
    """Per section: heading, kind, sentence count and the count of each role."""
    _check(paper, analysis)
    summary = []
    for section in paper.sections:
        labels = [analysis.roles[i].label for i in
                  range(section.first_sentence, section.first_sentence + section.sentence_count)]
        counts = Counter(labels)
        summary.append({
            "number": section.number,
            "heading": section.heading,
            "kind": section.kind.value,
            "level": section.level,
            "page": section.page,
            "sentences": section.sentence_count,
            "roles": {role: counts.get(role, 0) for role in ROLES},
        })
    return summary


def to_json_dict(paper: Paper, analysis: PaperAnalysis) -> dict[str, Any]:
    overall = Counter(p.label for p in analysis.roles)
    return {
        "format": EXPORT_FORMAT,
        "paper": {
            "title": paper.title,
            "authors": list(paper.authors),
            "source_path": paper.source_path,
            "sha256": paper.sha256,
            "parser_version": paper.parser_version,
            "pages": paper.page_count,
            "page_sizes": [list(size) for size in paper.page_sizes],
        },
        "model_id": analysis.model_id,
        "roles": list(ROLES),
        "role_counts": {role: overall.get(role, 0) for role in ROLES},
        "function_counts": (dict(Counter(f.label for f in analysis.functions).most_common())
                            if analysis.functions is not None else None),
        "sections": section_summary(paper, analysis),
        "sentences": sentence_rows(paper, analysis),
    }


def export_json(paper: Paper, analysis: PaperAnalysis, path: str | Path) -> Path:
    atomic_write_text(path, json.dumps(to_json_dict(paper, analysis), ensure_ascii=False, indent=2) + "\n")
    return Path(path)


def is_analysis_export(data: object) -> bool:
    """Whether JSON ``data`` looks like the JSON export (:func:`to_json_dict`, also the GUI's File ›
    Export as JSON): a 'format' and the per-sentence 'sentences' beside the paper's summary."""
    return isinstance(data, dict) and "format" in data and "sentences" in data and "sections" in data


def paper_from_export(data: object) -> Paper:
    """The paper a JSON export (:func:`to_json_dict`) was made of, rebuilt from what the export carries:
    title, authors, the sections (heading, number, kind, level) and the sentences (text, section, first
    page), then checked as any paper JSON is (:meth:`Paper.from_dict`, :meth:`Paper.check_links`).
    What an export does not carry stays empty: where each sentence sits on its page (no highlights),
    the figures, and the pages themselves for an export written before it kept 'page_sizes'. Raises
    :class:`~core.json_shapes.ShapeError` (a ``ValueError``) naming the first field that is wrong."""
    data = as_object(data, "the export")
    if isinstance(data.get("format"), bool) or data.get("format") != EXPORT_FORMAT:
        raise ShapeError(f"the export's 'format' is {data.get('format')!r}; this Rhetorica reads format "
                         f"{EXPORT_FORMAT}")
    about = as_object(json_entry(data, "paper", "the export"), "the export's 'paper'")
    sizes = json_entry(about, "page_sizes", "the export's 'paper'", [])
    listed = as_list(json_entry(data, "sentences", "the export"), "the export's 'sentences'")
    rows = [as_object(row, f"sentence {i}") for i, row in enumerate(listed)]
    sections, owners = _export_sections(as_list(json_entry(data, "sections", "the export"),
                                                "the export's 'sections'"), len(rows))
    sentences: list[dict[str, Any]] = []
    offset = 0
    for i, (row, owner) in enumerate(zip(rows, owners)):
        page, length = row.get("page"), len(row["text"]) if isinstance(row.get("text"), str) else 0
        pages = ([page - 1] if sizes and isinstance(page, int) and not isinstance(page, bool)
                 else [])  # page "": the sentence had none
        sentence: dict[str, Any] = {"id": f"s{i}", "index": i, "section_index": owner, "pages": pages,
                                    "char_start": offset, "char_end": offset + length}
        if "text" in row:  # else Sentence.from_dict says it is missing
            sentence["text"] = row["text"]
        sentences.append(sentence)
        offset += length + 1
    known: dict[str, Any] = {key: about[key] for key in ("title", "authors", "source_path", "sha256",
                                                         "parser_version") if key in about}
    paper = Paper.from_dict({**known, "page_sizes": sizes, "sections": sections, "sentences": sentences,
                             "figures": []})
    paper.check_links()
    for i, (row, owner) in enumerate(zip(rows, owners)):
        if owner >= 0:
            _check_export_section(row, i, paper.sections[owner])
    return paper


def _export_sections(entries: list[Any], total: int) -> tuple[list[dict[str, Any]], list[int]]:
    """The export's section summary as paper sections (each one's sentences follow the last one's, as
    the export lists them), and the section of each of the ``total`` sentences: -1 for a draft's text
    before its first heading (the sentences the sections do not count, which come first)."""
    counts = [as_int(json_entry(as_object(item, f"section {i}"), "sentences", f"section {i}"),
                     f"section {i}: 'sentences'", minimum=0) for i, item in enumerate(entries)]
    start = total - sum(counts)
    if start < 0:
        raise ShapeError(f"the export's sections count {sum(counts)} sentences, but it lists {total}")
    owners = [-1] * start
    sections = []
    for i, (item, count) in enumerate(zip(entries, counts)):
        kept = {key: item[key] for key in ("heading", "kind", "number", "level", "page") if key in item}
        sections.append({**kept, "first_sentence": start, "sentence_count": count})
        owners += [i] * count
        start += count
    return sections, owners


def _check_export_section(row: dict[str, Any], index: int, section: Section) -> None:
    """Sentence ``index`` names the section (heading and kind) the summary's counts put it in."""
    heading, kind = row.get("section_heading"), row.get("section_kind")
    if (heading, kind) != (section.heading, section.kind.value):
        raise ShapeError(f"sentence {index}: its section {heading!r} ({kind}) is not the one the export's "
                         f"'sections' counts put it in, {section.heading!r} ({section.kind.value})")


def spreadsheet_safe(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (``=1+1``, ``- T1 < T2``, ``@SUM(…)``) prefixed
    with ``'`` (OWASP's advice: shown as typed); any other value as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def to_csv_text(paper: Paper, analysis: PaperAnalysis) -> str:
    """The CSV export: one row per sentence (:func:`sentence_rows`), text cells spreadsheet-safe."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: spreadsheet_safe(value) for key, value in row.items()}
                     for row in sentence_rows(paper, analysis))
    return buffer.getvalue()


def export_csv(paper: Paper, analysis: PaperAnalysis, path: str | Path) -> Path:
    atomic_write_text(path, to_csv_text(paper, analysis))
    return Path(path)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_HTML_SPECIAL = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Link schemes that run or smuggle content in a viewer; "data:" only where a media type follows.
_UNSAFE_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data(?=:\s*[\w.+-]+/))\s*:")


def markdown_text(text: str) -> str:
    """``text`` (a paper's or a draft's, never trusted) as inert Markdown: one line; ``& < >`` as
    entities, so no HTML (``<script>``, ``<img onerror=…>``) or autolink can form; Markdown's own
    punctuation escaped (``[ ]`` above all, so no link or image can form); and the ``javascript:``,
    ``vbscript:`` and ``data:`` schemes broken (``javascript\\:``, shown as typed by a viewer), as the
    HTML export's escaping leaves them inert text."""
    text = re.sub(r"[\r\n\u2028\u2029]+", " ", text)
    text = "".join(_HTML_SPECIAL.get(char, char) for char in text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return _UNSAFE_SCHEME.sub(lambda m: m.group(0)[:-1] + "\\:", text)


def reading_labels(analysis: PaperAnalysis, index: int) -> tuple[str, str]:
    """(role, function) of sentence ``index`` as the reading exports say them (``label_words``):
    "uncertain: objective 39% or background 39%", "Introducing the proposed approach 87%"; the function
    is "" when the model has no function head."""
    functions = analysis.functions
    function: FunctionPrediction | None = functions[index] if functions is not None else None
    return role_words(analysis.roles[index]), function_words(function)


def to_markdown(paper: Paper, analysis: PaperAnalysis) -> str:
    _check(paper, analysis)
    lines = [f"# {markdown_text(paper.title or Path(paper.source_path).name)}", ""]
    if paper.authors:
        lines += [markdown_text(", ".join(paper.authors)), ""]
    model_id = analysis.model_id.replace("`", "'")  # it sits in a code span
    lines += [f"Rhetorical roles by model `{model_id}`; {len(paper.sentences)} sentences, "
              f"{paper.page_count} pages. {CONFIDENCE_NOTE}", "", "## Role mix per section", ""]
    lines.append("| Section | Sentences | " + " | ".join(ROLES) + " |")
    lines.append("|---|---:|" + "---:|" * len(ROLES))
    for entry in section_summary(paper, analysis):
        n = entry["sentences"]
        shares = [f"{100 * entry['roles'][r] / n:.0f}%" if n else "–" for r in ROLES]
        title = " ".join(p for p in (entry["number"], entry["heading"]) if p)
        lines.append(f"| {markdown_text(title)} | {n} | " + " | ".join(shares) + " |")
    lines.append("")
    for title, sentences in labelled_groups(paper):
        lines += [f"## {markdown_text(title) or '(untitled section)'}", ""]
        for sentence in sentences:
            role, function = reading_labels(analysis, sentence.index)
            shown = f" · *{markdown_text(function)}*" if function else ""
            lines.append(f"- **{markdown_text(role)}**{shown}: {markdown_text(sentence.text)}")
        lines.append("")
    return "\n".join(lines)


def export_markdown(paper: Paper, analysis: PaperAnalysis, path: str | Path) -> Path:
    atomic_write_text(path, to_markdown(paper, analysis))
    return Path(path)


def labelled_groups(paper: Paper) -> list[tuple[str, list[Sentence]]]:
    """The sentences under their headings, in reading order: a draft's text before its first heading
    (``section_index`` -1) first, as "(before any heading)"; then each section ("number heading")."""
    groups: list[tuple[str, list[Sentence]]] = []
    before = [s for s in paper.sentences if s.section_index < 0]
    if before:
        groups.append(("(before any heading)", before))
    for section in paper.sections:
        title = " ".join(p for p in (section.number, section.heading) if p)
        groups.append((title, paper.sentences_in(section)))
    return groups


def to_html(paper: Paper, analysis: PaperAnalysis, colors: dict[str, str] | None = None) -> str:
    """One standalone HTML page (inline CSS, no script, nothing fetched): each sentence on its role's
    colour (``core.taxonomy.role_colors``, or ``colors``), its role and function (:func:`reading_labels`)
    after it and in its tooltip, with its number counted from 1 as the GUI counts; a legend; every text
    escaped."""
    _check(paper, analysis)
    esc = html.escape
    palette = {**DEFAULT_ROLE_COLORS, **(colors or {})}
    css = "\n".join(f".r-{role} {{ background: {palette[role]}59; }}" for role in ROLES
                     if re.fullmatch(r"#[0-9A-Fa-f]{6}", palette[role]))
    title = esc(paper.title or Path(paper.source_path).name)
    legend = " ".join(f'<span class="r-{role}">{role}</span>' for role in ROLES)
    body = []
    for heading, sentences in labelled_groups(paper):
        body.append(f"<h2>{esc(heading) or '(untitled section)'}</h2>\n<p>")
        for sentence in sentences:
            note = " · ".join(part for part in reading_labels(analysis, sentence.index) if part)
            tooltip = f"sentence {sentence.index + 1} · {note}"
            role = esc(analysis.roles[sentence.index].label)
            body.append(f'<span class="s r-{role}" id="{esc(sentence.id)}" title="{esc(tooltip)}">'
                        f"{esc(sentence.text)}</span> <small>[{esc(note)}]</small>")
        body.append("</p>")
    model_id = esc(analysis.model_id)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; max-width: 50em; margin: 2em auto; line-height: 1.6; }}
.s {{ border-radius: 3px; padding: 1px 0; }}
small {{ color: #555; }}
{css}
</style></head><body>
<h1>{title}</h1>
<p>Rhetorical roles by model <code>{model_id}</code>; {len(paper.sentences)} sentences. {CONFIDENCE_NOTE}
Roles: {legend}</p>
{chr(10).join(body)}
</body></html>
"""


def export_html(paper: Paper, analysis: PaperAnalysis, path: str | Path) -> Path:
    atomic_write_text(path, to_html(paper, analysis))
    return Path(path)


EXPORTERS = {"json": export_json, "csv": export_csv, "md": export_markdown, "html": export_html}
