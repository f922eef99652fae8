"""Drafts in the formats authors write in (issue 27.1): LaTeX (multi-file), Markdown, Word, plain
text; sentences that read cleanly, headings with section kinds, offsets that map back exactly, and
one-line refusals of bad input."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest

from core.draft_formats import DraftSentence, ParsedDraft, parse_draft_text, read_draft
from core.draft_formats.paper import paper_from_draft
from core.errors import DraftError, RhetoricaError
from core.fileio import TextInputError

FIXTURE = Path(__file__).parent / "fixtures" / "drafts" / "latex_paper"


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{3,}", text)


@pytest.fixture(scope="module")
def latex_paper() -> ParsedDraft:
    return read_draft(FIXTURE / "main.tex")


def test_multi_file_latex_paper_reads_as_clean_sentences(latex_paper: ParsedDraft) -> None:
    texts = [s.text for s in latex_paper.sentences]
    assert latex_paper.format == "tex"
    assert latex_paper.title == "Soil Moisture Sensing with Low-Cost Capacitive Probes"
    assert len(texts) == 20
    # citations numbered by first appearance, \input and \include followed, refs resolved
    assert texts[0] == ("Capacitive soil moisture probes are cheap, but their readings drift with "
                        "temperature [1].")
    assert "Irrigation scheduling depends on knowing how much water the root zone holds [2, 3]." in texts
    assert ("Gravimetric sampling is accurate but slow; capacitive probes report continuously, yet they "
            "cost a fraction of a neutron probe [4].") in texts  # the comment is gone
    assert "However, their output depends on soil temperature, as shown in Figure 1." in texts
    assert "Each probe was read every ten minutes for 90 days (see Section 3 for the outcomes)." in texts
    assert "The calibrated readings tracked the reference closely (Table 1)." in texts
    assert "This follows from Eq. (1), whose offset term absorbs the drift." in texts
    assert ("Before calibration the error grew by 0.3% per °C; after it, the slope was not significant "
            "(p = 0.41).") in texts
    assert ("We model the raw count c as a linear function of water content θ and temperature T: "
            "[equation].") in texts
    assert "The coefficients a and b are fitted once per soil type by least squares." in texts  # no footnote
    # nothing of the preamble, captions, tables, labels, bibliography or markup
    joined = " ".join(texts)
    for absent in ("caption", "Loam", "plainnat", "\\", "{", "}", "~", "TODO", "sec:", "fig:", "tab:", "eq:",
                   "Author"):
        assert absent not in joined, absent


def test_latex_headings_have_kinds_files_and_levels(latex_paper: ParsedDraft) -> None:
    titles = [(title, kind) for _, title, kind in latex_paper.headings]
    assert titles == [("Abstract", "abstract"), ("Introduction", "introduction"), ("Methods", "method"),
                      ("Field sites", "method"), ("Calibration model", "method"), ("Results", "result"),
                      ("Agreement with gravimetric samples", "result"), ("Temperature dependence", "result"),
                      ("Discussion", "discussion"), ("Conclusion", "conclusion")]
    assert latex_paper.heading_files[2:5] == ["sections/methods.tex"] * 3
    assert latex_paper.heading_levels[2:4] == [2, 3]
    for (offset, title, _), file in zip(latex_paper.headings, latex_paper.heading_files, strict=True):
        source = latex_paper.source if file is None else latex_paper.files[file]
        if title != "Abstract":  # the abstract's heading is its environment
            assert source[offset:].startswith("\\"), title
            assert title in source[offset:offset + 80]
    kinds = {s.text[:20]: s.section_kind for s in latex_paper.sentences}
    assert kinds["Capacitive soil mois"] == "abstract"
    assert kinds["We installed 48 prob"] == "method"  # "Field sites" takes its parent's kind
    assert kinds["We showed that tempe"] == "conclusion"
    files = {s.file for s in latex_paper.sentences}
    assert files == {None, "sections/methods.tex", "sections/discussion.tex"}


def test_latex_offsets_map_back_to_the_exact_source_characters(latex_paper: ParsedDraft) -> None:
    sources = {None: latex_paper.source, **latex_paper.files}
    for sentence in latex_paper.sentences:
        raw = sources[sentence.file][sentence.start:sentence.end]
        assert raw == latex_paper.text_of(sentence)
        # the range starts at the sentence's first word and ends at its last character
        assert raw.split()[0].strip("\\") .startswith(sentence.text.split()[0][:3])
        assert raw.rstrip()[-1] in ".}$" and raw == raw.strip()
        assert _words(sentence.text) == [w for w in _words(raw) if w in _words(sentence.text)] or \
            set(_words(sentence.text)) <= set(_words(raw)) | {"equation"}
    intro = latex_paper.source.index("Irrigation scheduling")
    first = next(s for s in latex_paper.sentences if s.text.startswith("Irrigation"))
    assert (first.start, first.file) == (intro, None)
    assert latex_paper.source[first.end - len("\\cite{allen1998,smith2015}."):first.end] == \
        "\\cite{allen1998,smith2015}."


def test_latex_paper_becomes_a_paper_with_sections(latex_paper: ParsedDraft) -> None:
    paper = paper_from_draft(latex_paper, title="fallback", source="main.tex")
    assert paper.title.startswith("Soil Moisture")
    assert [s.kind.value for s in paper.sections][:3] == ["abstract", "introduction", "method"]
    assert paper.sections[2].sentence_count == 0 and paper.sections[3].sentence_count == 2
    assert [s.section_index for s in paper.sentences[:4]] == [0, 0, 0, 1]
    assert sum(s.sentence_count for s in paper.sections) == len(paper.sentences) == 20
    assert paper.sections[3].level == 2


def test_latex_without_a_project_folder_notes_each_input() -> None:
    parsed = parse_draft_text("\\section{Methods}\nWe counted birds.\n\\input{more}\nThen we left.\n", "tex")
    assert [s.text for s in parsed.sentences] == ["We counted birds.", "Then we left."]
    assert parsed.warnings == ["the draft, line 3: \\input{more} not read (no project folder)"]


def test_latex_fragment_math_lists_and_appendix() -> None:
    text = r"""\begin{abstract}We study \emph{very} small graphs.\end{abstract}
\section{Method}
The loss is
\[ L = \sum_i (y_i - \hat y_i)^2 . \]
We minimise it with Adam~\citep{kingma2015} and $\alpha = 10^{-3}$.
\begin{itemize}
  \item Graphs come from two sources
  \item Each has at most 20 nodes.
\end{itemize}
\appendix
\section{Results of extra runs}
Extra runs agree with the main ones \cite{kingma2015}.
"""
    parsed = parse_draft_text(text, "tex")
    assert [(s.text, s.section_kind) for s in parsed.sentences] == [
        ("We study very small graphs.", "abstract"),
        ("The loss is [equation].", "method"),
        ("We minimise it with Adam [1] and α = 10-3.", "method"),
        ("Graphs come from two sources", "method"),
        ("Each has at most 20 nodes.", "method"),
        ("Extra runs agree with the main ones [1].", "other"),  # after \appendix: kind "other"
    ]


@pytest.mark.parametrize(("text", "message"), [
    ("\\section{Intro}\nSome {text here.\n\nMore text.", r"the draft, line 2: unbalanced group: this '\{'"),
    ("Closing } too many.", r"the draft, line 1: not valid LaTeX \(unbalanced group"),
    ("Intro.\n\\begin{itemize}\n\\item one\n", r"line 2: unbalanced environment: this \\begin\{itemize\} is "
                                                r"never ended"),
    ("Inline $x = 1 without its end.", r"the draft, line 1: not valid LaTeX .*expecting '\$'"),
])
def test_unbalanced_latex_is_one_line(text: str, message: str) -> None:
    with pytest.raises(DraftError, match=message) as caught:
        parse_draft_text(text, "tex")
    assert "\n" not in str(caught.value)


def _project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "paper")
    return tmp_path / "paper"


def test_input_outside_the_project_folder_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (tmp_path / "secret.tex").write_text("Private notes.\n", encoding="utf-8")
    main = project / "main.tex"
    text = main.read_text(encoding="utf-8")
    main.write_text(text.replace("\\input{sections/methods}", "\\input{../secret}"), encoding="utf-8")
    with pytest.raises(DraftError, match=r"main.tex, line 27: \\input\{../secret\} is outside the project"):
        read_draft(main)
    link = project / "sections" / "link.tex"  # a symbolic link out of the folder counts as outside
    link.symlink_to(tmp_path / "secret.tex")
    main.write_text("\\section{A}\nText here.\n\\input{sections/link}\n", encoding="utf-8")
    with pytest.raises(DraftError, match="outside the project folder"):
        read_draft(main)


def test_files_including_one_another_over_and_over_are_refused_quickly(tmp_path: Path) -> None:
    """Nine small files, each including the next ten times, would be read 10^8 times (a hang)."""
    import time

    for level in range(8):
        (tmp_path / f"l{level}.tex").write_text(f"\\section{{L{level}}}\nWe study level {level}.\n"
                                                 + f"\\input{{l{level + 1}}}\n" * 10, encoding="utf-8")
    (tmp_path / "l8.tex").write_text("We show the final result here.\n", encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(DraftError, match="included more than 2000 times in all"):
        read_draft(tmp_path / "l0.tex")
    assert time.monotonic() - started < 60  # (seconds, not the hours it took before)


def test_a_huge_macro_used_over_and_over_is_refused_not_expanded_into_memory(tmp_path: Path) -> None:
    """A 1 MB macro used 200 times made one 200 MB "sentence"; the tokenizer then aborted the process."""
    body = ("word " * 100 + "\n") * 100  # 50 kB, used 120 times: 6 MB
    path = tmp_path / "macro.tex"
    path.write_text(f"\\newcommand{{\\x}}{{{body}}}\n\\section{{Intro}}\nWe use it. " + "\\x " * 120 + "\n",
                    encoding="utf-8")
    with pytest.raises(DraftError, match=r"macros \(last \\x\) expand to more than 5,000,000 characters"):
        read_draft(path)
    path.write_text("\\newcommand{\\method}{CapProbe}\n\\section{Intro}\nWe propose \\method{} here.\n",
                    encoding="utf-8")
    assert "We propose CapProbe here." in read_draft(path).plain


def test_a_line_too_long_to_parse_in_time_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "oneline.tex"
    path.write_text("\\section{Intro}\n" + "We study words. " * 20_000 + "\n", encoding="utf-8")
    with pytest.raises(DraftError, match=r"oneline.tex, line 2: 320,000 characters on one line"):
        read_draft(path)


def test_include_cycles_are_refused_and_missing_files_skipped(tmp_path: Path) -> None:
    project = _project(tmp_path)
    methods = project / "sections" / "methods.tex"
    text = methods.read_text(encoding="utf-8")
    methods.write_text(text + "\n\\input{sections/methods}\n", encoding="utf-8")
    cycle = r"includes a file that includes it \(main.tex → sections/methods.tex → sections/methods.tex\)"
    with pytest.raises(DraftError, match=cycle):
        read_draft(project / "main.tex")
    methods.write_text("\\section{Methods}\nWe did it.\n\\input{main}\n", encoding="utf-8")
    with pytest.raises(DraftError, match="includes a file that includes it"):
        read_draft(project / "main.tex")
    methods.unlink()
    parsed = read_draft(project / "main.tex")
    main = project / "main.tex"
    assert parsed.warnings == [f"{main}, line 27: \\input{{sections/methods}}: no such file in the project "
                               "folder; skipped"]
    assert not any(s.file == "sections/methods.tex" for s in parsed.sentences)


MARKDOWN = """---
title: "Counting *birds*"
---

# Introduction

Birds are **hard** to count [@smith2020; @lee2021]. Their density is $\\rho \\approx 3$ per km
(see [the survey](https://example.org)).

## Data analysis

We fit the model
$$
y = a x + b.
$$
The fit was good [@smith2020].

```python
print("Not a sentence. Nor this.")
```

# Results

- First, counts rose
- Second, they fell.
"""


def test_markdown_reads_without_markup_and_maps_back() -> None:
    parsed = parse_draft_text(MARKDOWN, "md")
    assert parsed.title == "Counting birds"
    assert parsed.plain == MARKDOWN
    assert [(s.text, s.section_kind) for s in parsed.sentences] == [
        ("Birds are hard to count [1, 2].", "introduction"),
        ("Their density is ρ ≈ 3 per km (see the survey).", "introduction"),
        ("We fit the model [equation].", "introduction"),  # "Data analysis" takes its parent's kind
        ("The fit was good [1].", "introduction"),
        ("First, counts rose", "result"),
        ("Second, they fell.", "result"),
    ]
    first = parsed.sentences[0]
    assert MARKDOWN[first.start:first.end] == "Birds are **hard** to count [@smith2020; @lee2021]."
    assert [(MARKDOWN[o:o + 3], t) for o, t, _ in parsed.headings] == [
        ("# I", "Introduction"), ("## ", "Data analysis"), ("# R", "Results")]


def test_plain_text_keeps_the_draft_pane_rules() -> None:
    text = "Abstract\nWe count birds. It is hard.\n\n2 Methods\nWe used nets.\n"
    parsed = parse_draft_text(text, "txt")
    assert [(s.text, s.section_kind, text[s.start:s.end]) for s in parsed.sentences] == [
        ("We count birds.", "abstract", "We count birds."), ("It is hard.", "abstract", "It is hard."),
        ("We used nets.", "method", "We used nets.")]


def _word_document(path: Path) -> Path:
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_heading("Counting birds with drones", 0)
    document.add_heading("Introduction", 1)
    document.add_paragraph("Bird surveys are slow. Drones could make them faster [1].")
    document.add_heading("Flight protocol", 2)
    paragraph = document.add_paragraph("We flew ")
    paragraph.add_run("twelve").bold = True
    paragraph.add_run(" transects at 40 m.")
    document.add_paragraph("Figure 1: the transects.", style="Caption")
    document.add_heading("Results", 1)
    document.add_paragraph("Counts matched ground surveys within 8%.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Not a sentence."
    document.save(str(path))
    return path


def test_word_document_headings_become_sections(tmp_path: Path) -> None:
    parsed = read_draft(_word_document(tmp_path / "birds.docx"))
    assert parsed.format == "docx" and parsed.title == "Counting birds with drones"
    assert [(s.text, s.heading, s.section_kind) for s in parsed.sentences] == [
        ("Bird surveys are slow.", "Introduction", "introduction"),
        ("Drones could make them faster [1].", "Introduction", "introduction"),
        ("We flew twelve transects at 40 m.", "Flight protocol", "introduction"),
        ("Counts matched ground surveys within 8%.", "Results", "result"),
    ]
    assert parsed.source.startswith("# Introduction\n\nBird surveys are slow.")
    for sentence in parsed.sentences:  # ranges refer to the extracted text
        assert parsed.source[sentence.start:sentence.end] == sentence.text
    assert [title for _, title, _ in parsed.headings] == ["Introduction", "Flight protocol", "Results"]


def test_localised_word_headings_count_by_outline_level(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    style = document.styles.add_style("Überschrift Eins", WD_STYLE_TYPE.PARAGRAPH)
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "0")
    style.element.get_or_add_pPr().append(level)
    document.add_paragraph("Methoden und Material", style="Überschrift Eins")
    document.add_paragraph("Wir zählten Vögel.")
    document.add_paragraph("Methods", style="Überschrift Eins")
    document.add_paragraph("We counted birds.")
    document.save(str(tmp_path / "de.docx"))
    parsed = read_draft(tmp_path / "de.docx")
    assert [(s.heading, s.section_kind) for s in parsed.sentences] == [
        ("Methoden und Material", "other"), ("Methods", "method")]


def test_word_styles_are_looked_up_once_each_and_a_paragraph_outline_level_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long Word draft's paragraphs share a few styles: each style is resolved once (python-docx scans
    every style of the document for each paragraph's), and a paragraph's own outline level still makes
    it a heading."""
    docx = pytest.importorskip("docx")
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    import core.draft_formats.docx as word

    document = docx.Document()
    document.add_paragraph("Bird counts", style="Title")
    for number in range(60):
        if number % 20 == 0:
            title = "Methods" if number == 0 else f"Results {number}"
            document.add_heading(title, level=1 if number < 40 else 2)
        document.add_paragraph(f"We counted {number} birds.")
    own = document.add_paragraph("Discussion")
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "0")
    own._p.get_or_add_pPr().append(level)
    document.add_paragraph("Drones help.")
    document.save(str(tmp_path / "long.docx"))
    resolved: list[object] = []
    real = word.style_level
    monkeypatch.setattr(word, "style_level", lambda style: resolved.append(style) or real(style))
    title, paragraphs = word.docx_paragraphs(tmp_path / "long.docx")
    assert title == "Bird counts" and len(resolved) <= 4  # Title, Normal, Heading 1, Heading 2
    assert [text for level, text in paragraphs if level is not None] == [
        "Methods", "Results 20", "Results 40", "Discussion"]
    assert [level for level, _ in paragraphs if level is not None] == [1, 1, 2, 1]
    assert len(paragraphs) == 60 + 4 + 1


def _broken_docx(path: Path, good: Path) -> Path:
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            target.writestr(name, data[:len(data) // 2] if name == "word/document.xml" else data)
    return path


def test_bad_drafts_get_one_line(tmp_path: Path) -> None:
    good = _word_document(tmp_path / "good.docx")
    cases = {
        "binary.tex": b"\\section{A}\x00\x01\x02 binary",
        "latin1.md": "Caf\xe9 au lait.".encode("latin-1"),
        "utf16.txt": "Some text.".encode("utf-16"),
        "old.docx": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 200,  # an old binary .doc renamed
        "notword.docx": None,
        "broken.docx": None,
        "empty.docx": None,
        "unbalanced.tex": b"\\section{Intro}\nText with {an open group.\n",
    }
    for name, data in cases.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
    with zipfile.ZipFile(tmp_path / "notword.docx", "w") as archive:
        archive.writestr("hello.txt", "not a Word file")
    _broken_docx(tmp_path / "broken.docx", good)
    docx = pytest.importorskip("docx")
    docx.Document().save(str(tmp_path / "empty.docx"))
    expected = {
        "binary.tex": (TextInputError, "is a binary file"),
        "latin1.md": (TextInputError, "not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"),
        "utf16.txt": (TextInputError, "is UTF-16 text; save it as UTF-8"),
        "old.docx": (DraftError, "not a Word .docx file"),
        "notword.docx": (DraftError, "without word/document.xml"),
        "broken.docx": (DraftError, "a broken Word .docx file"),
        "empty.docx": (DraftError, "the Word document has no text"),
        "unbalanced.tex": (DraftError, "line 2: unbalanced group"),
    }
    for name, (kind, message) in expected.items():
        with pytest.raises(kind) as caught:
            read_draft(tmp_path / name)
        text = str(caught.value)
        assert isinstance(caught.value, RhetoricaError)
        assert message in text and text.startswith(str(tmp_path / name)) and "\n" not in text, text
    with pytest.raises(DraftError, match="not a draft"):
        read_draft(tmp_path / "good.pdf")
    with pytest.raises(DraftError, match="unknown draft format 'rtf'"):
        parse_draft_text("x", "rtf")


def test_docx_zip_bomb_is_refused_before_unpacking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.draft_formats import docx as docx_format

    good = _word_document(tmp_path / "good.docx")
    monkeypatch.setattr(docx_format, "MAX_UNPACKED", 1000)
    with pytest.raises(DraftError, match=r"unpacks to .* refused"):
        read_draft(good)
    monkeypatch.setattr(docx_format, "MAX_UNPACKED", 10**9)  # the whole is fine, its text part is not
    monkeypatch.setattr(docx_format, "MAX_DOCUMENT_XML", 100)
    with pytest.raises(DraftError, match=r"its text part unpacks to 0 MB, more than a draft can be"):
        read_draft(good)


def test_draft_sentence_is_the_published_shape() -> None:
    sentence = DraftSentence("A b.", 0, 4, None, None)
    assert (sentence.file, sentence.heading) == (None, None)
    with pytest.raises(AttributeError):
        sentence.start = 3  # type: ignore[misc]


@pytest.mark.parametrize(("text", "sentences"), [
    ("\\def\\foo#1{\\textbf{#1}} Text \\foo{bar}.", ["Text bar."]),
    ("\\makeatletter\n\\renewcommand\\@maketitle{\\centering\\@title}\n\\makeatother\nText here.",
     ["Text here."]),
    ("\\newenvironment{box}{\\begin{center}}{\\end{center}} Text.", ["Text."]),
    ("\\newtheorem{thm}{Theorem}[section] A theorem.", ["A theorem."]),
    ("Code:\n\\begin{lstlisting}[language=C]\nint main() { if (x) {\n\\end{lstlisting}\nDone.",
     ["Code:", "Done."]),
    ("\\begin{minted}{python}\ndef f(): return {1:\n\\end{minted}\nDone.", ["Done."]),
    ("\\begin{comment}\nnot { balanced\n\\end{comment}\nShown.", ["Shown."]),
    ("\\iffalse\\ifx a b { \\fi still hidden\n\\fi Shown.", ["Shown."]),
    ("See \\url{http://a.org/%20x} now.", ["See http://a.org/%20x now."]),
    ("See \\href{http://a.org/a%20b#x}{the site} now.", ["See the site now."]),
    ("Call \\lstinline|f({)| or \\verb+g}+ now.", ["Call f({) or g} now."]),
    ("\\newcommand{\\method}{\\textsc{CapProbe}\\xspace}\n\\newcommand\\etal{et al.}\n\\def\\R{\\mathbb{R}}\n"
     "We propose \\method{}, after Lee \\etal{}, in $\\R$.",
     ["We propose CapProbe, after Lee et al., in ℝ."]),
])
def test_code_definitions_and_addresses_read_as_latex_does(text: str, sentences: list[str]) -> None:
    parsed = parse_draft_text(text, "tex")
    assert [s.text for s in parsed.sentences] == sentences
    for sentence in parsed.sentences:  # offsets still point into the unchanged source
        assert text[sentence.start:sentence.end].split()[0].strip("\\")[:2] in sentence.text
