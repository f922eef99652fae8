"""LaTeX drafts through pylatexenc: the body (``document`` environment) read as sentences that read
cleanly, each mapped back to its character range in its source file.

What becomes what: ``\\part`` … ``\\subparagraph`` (starred or not) are headings (``#`` lines of the
readable text; after ``\\appendix`` their kind is "other"), the ``abstract`` environment a heading
"Abstract"; ``\\cite`` and its natbib/biblatex kin a numeric placeholder "[1, 2]" (keys numbered by
first appearance); ``\\ref``/``\\eqref``/``\\cref``/``\\autoref`` the number LaTeX would print
(sections, figures, tables, equations counted as LaTeX counts them; "??" for an unknown label);
inline math its text (``$\\alpha$`` → "α"), display math "[equation]"; ``\\emph`` and the other font
commands their text; comments, ``\\label``, ``\\footnote``, figures, tables, code and the bibliography
nothing. ``\\input``/``\\include``/``\\subfile`` are followed inside the project folder only; a file
outside it or an include cycle is refused (:class:`core.errors.DraftError`), a missing file is skipped
with a warning. An unbalanced group (or environment, or ``$``) is refused in one line with its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.draft_formats.latex_prepass import Prepared, prepare_latex
from core.draft_formats.markdown import CitationNumbers, math_as_text
from core.draft_formats.reading import ReadingBuilder, ReadingHeading, assemble_draft
from core.draft_formats.text_file import read_text_draft
from core.draft_formats.types import ParsedDraft
from core.errors import DraftError

MAX_INCLUDE_DEPTH = 16
MAX_INCLUDED_FILES = 500
# inclusions read in all (a file may be included again, each time read through): far above a thesis's
# chapters, far below the blow-up of files that include one another ten times over (10 + 100 + 1000 + …)
MAX_INCLUSIONS = 2000
MAX_LINE_CHARS = 200_000  # a line of a LaTeX draft (a paragraph on one line is a few thousand)
# characters the author's macros may add in all: a macro of a whole page used a hundred times is far below;
# a 1 MB macro used 200 times (a 200 MB "sentence" that exhausted memory in the tokenizer) is not
MAX_MACRO_TEXT = 5_000_000

SECTION_LEVELS = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4,
                  "paragraph": 5, "subparagraph": 6}
CITE_MACROS = frozenset("""
    cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum Cite Citep Citet parencite
    Parencite textcite Textcite autocite Autocite footcite smartcite supercite fullcite
    """.split())  # noqa: SIM905
REF_MACROS = frozenset(("ref", "eqref", "cref", "Cref", "autoref", "nameref", "vref", "pageref", "subref"))
INCLUDE_MACROS = frozenset(("input", "include", "subfile"))
TEXT_MACROS = frozenset("""
    emph textbf textit textsl textsc texttt textrm textsf textup textmd textnormal underline uline mbox
    text hbox makebox fbox framebox textcolor colorbox highlight hl ul so st enquote mkbibquote
    textsuperscript textsubscript
    """.split())  # noqa: SIM905
DROPPED_MACROS = frozenset("""
    label index nocite vspace hspace noindent centering maketitle tableofcontents listoffigures listoftables
    bibliography bibliographystyle addbibresource printbibliography newpage clearpage cleardoublepage
    pagebreak linebreak newline includegraphics thanks footnote footnotetext footnotemark marginpar todo
    newcommand renewcommand providecommand def newenvironment renewenvironment usepackage documentclass
    setlength setcounter addtocounter pagestyle thispagestyle keywords author affiliation affil address
    email date institute orcid acmConference copyrightyear acmYear acmDOI ccsdesc caption captionof
    bigskip medskip smallskip vfill hfill protect phantomsection addcontentsline graphicspath
    RequirePackage input@path
    """.split())  # noqa: SIM905
DROPPED_ENVIRONMENTS = frozenset("""
    figure figure* table table* tabular tabular* tabularx longtable tikzpicture algorithm algorithm*
    algorithmic algorithm2e lstlisting verbatim verbatim* Verbatim Verbatim* BVerbatim LVerbatim spverbatim
    minted comment thebibliography
    wrapfigure subfigure subtable sidewaysfigure sidewaystable keywords CCSXML filecontents filecontents*
    titlepage
    """.split())  # noqa: SIM905
# Arguments of dropped commands that pylatexenc does not know, so they are dropped with them.
DROPPED_ARGUMENTS = {
    "bibliographystyle": "{", "bibliography": "{", "vspace": "*{", "hspace": "*{", "index": "{",
    "includegraphics": "*[[{", "setlength": "{{", "setcounter": "{{", "addtocounter": "{{", "pagestyle": "{",
    "thispagestyle": "{", "usepackage": "[{[", "documentclass": "[{[", "addcontentsline": "{{{",
    "marginpar": "[{", "footnotetext": "[{", "footnotemark": "[", "ccsdesc": "[{", "acmConference": "[{{{",
    "copyrightyear": "{", "acmYear": "{", "acmDOI": "{", "date": "{", "RequirePackage": "[{[",
    "printbibliography": "[", "label": "{", "nocite": "{",
}
MATH_ENVIRONMENTS = frozenset("""
    equation equation* align align* gather gather* multline multline* eqnarray eqnarray* displaymath
    math flalign flalign* alignat alignat* dmath dmath*
    """.split())  # noqa: SIM905
MULTILINE_MATH = frozenset(e for e in MATH_ENVIRONMENTS if e.rstrip("*") in ("align", "gather", "eqnarray",
                                                                                 "flalign", "alignat"))
HEADING_ENVIRONMENTS = {"abstract": "Abstract", "acknowledgments": "Acknowledgments",
                        "acknowledgements": "Acknowledgements"}
REF_NAMES = {"figure": "Figure", "table": "Table", "section": "Section", "equation": "Eq."}
SPECIALS = {"~": " ", "``": "“", "''": "”", "--": "–", "---": "—", "!`": "¡", "?`": "¿", "&": " "}
NAMED_MACROS = {"LaTeX": "LaTeX", "TeX": "TeX", "LaTeXe": "LaTeX2e", "BibTeX": "BibTeX",
                "textasciicircum": "^", "textasciitilde": "~", "textbackslash": "\\"}


def _context_db() -> Any:
    """pylatexenc's default macros plus the citation, heading and include commands it lacks."""
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import MacroSpec, VerbatimArgsParser

    db = get_default_latex_context_db()
    extra = [MacroSpec(name, "*[[{") for name in sorted(CITE_MACROS)]
    extra += [MacroSpec(name, "*[{") for name in SECTION_LEVELS]
    extra += [MacroSpec(name, "*{") for name in ("cref", "Cref", "autoref", "nameref", "vref", "subref")]
    extra += [MacroSpec("href", "[{{"), MacroSpec("subfile", "{"), MacroSpec("todo", "[{"),
              MacroSpec("caption", "[{"), MacroSpec("captionof", "{[{"), MacroSpec("textcolor", "[{{"),
              MacroSpec("colorbox", "[{{"), MacroSpec("thanks", "{"), MacroSpec("author", "[{"),
              MacroSpec("affiliation", "{"), MacroSpec("affil", "[{"), MacroSpec("email", "{"),
              MacroSpec("keywords", "{"), MacroSpec("institute", "{"), MacroSpec("enquote", "*{"),
              MacroSpec("highlight", "{"), MacroSpec("hl", "{"), MacroSpec("uline", "{"),
              MacroSpec("addbibresource", "[{"), MacroSpec("graphicspath", "{"),
              MacroSpec("newcommand", "*{[[{"), MacroSpec("renewcommand", "*{[[{"),
              MacroSpec("providecommand", "*{[[{"), MacroSpec("orcid", "{")]
    extra += [MacroSpec(name, spec) for name, spec in DROPPED_ARGUMENTS.items()]
    extra.append(MacroSpec("lstinline", args_parser=VerbatimArgsParser(verbatim_arg_type="verb-macro")))
    db.add_context_category("rhetorica-drafts", macros=extra, prepend=True)
    return db


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, max(0, min(pos, len(text)))) + 1


def _unclosed_brace(text: str) -> int | None:
    """Where the first ``{`` that is never closed opens (comments and ``\\{`` skipped)."""
    stack: list[int] = []
    for match in re.finditer(r"\\.|%[^\n]*|[{}]", text, re.DOTALL):
        token = match.group()
        if token == "{":
            stack.append(match.start())
        elif token == "}" and stack:
            stack.pop()
    return stack[0] if stack else None


def _unended_environment(text: str, name: str) -> int | None:
    """Where the first ``\\begin{name}`` that is never ended opens (comments skipped)."""
    stack: list[int] = []
    pattern = re.compile(r"\\(begin|end)\s*\{" + re.escape(name) + r"\}|\\.|%[^\n]*", re.DOTALL)
    for match in pattern.finditer(text):
        if match.group(1) == "begin":
            stack.append(match.start())
        elif match.group(1) == "end" and stack:
            stack.pop()
    return stack[0] if stack else None


def parse_nodes(text: str, name: str) -> list[Any]:
    """The pylatexenc node list of ``text`` (a :func:`prepare_latex` text: definitions hidden); a
    :class:`DraftError` naming the line for unbalanced input."""
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    walker = LatexWalker(text, latex_context=_CONTEXT.db, tolerant_parsing=False)
    try:
        nodes, _, _ = walker.get_latex_nodes()
    except LatexWalkerError as error:
        message = str(error).splitlines()[0].split(" @(")[0].strip() or "cannot be parsed"
        pos = getattr(error, "pos", None)
        if "expecting '}'" in message and (opened := _unclosed_brace(text)) is not None:
            raise DraftError(f"{name}, line {_line_of(text, opened)}: unbalanced group: this '{{' is never "
                             "closed") from None
        expected = re.search(r"expecting \\end\{([^}]*)\}", message)
        if expected and (opened := _unended_environment(text, expected.group(1))) is not None:
            raise DraftError(f"{name}, line {_line_of(text, opened)}: unbalanced environment: this "
                             f"\\begin{{{expected.group(1)}}} is never ended") from None
        where = f", line {_line_of(text, pos)}" if isinstance(pos, int) else ""
        raise DraftError(f"{name}{where}: not valid LaTeX (unbalanced group or environment: "
                         f"{message[0].lower() + message[1:]})") from None
    except RecursionError:
        raise DraftError(f"{name}: groups nested too deeply to read") from None
    return list(nodes)


class _Context:
    """The pylatexenc context, built once on first use."""

    _db: Any = None

    @property
    def db(self) -> Any:
        if self._db is None:
            type(self)._db = _context_db()
        return self._db


_CONTEXT = _Context()


def _kind(node: Any) -> str:
    return type(node).__name__


def _args(node: Any) -> list[Any]:
    argd = getattr(node, "nodeargd", None)
    return list(argd.argnlist) if argd is not None and argd.argnlist else []


def _last_group(node: Any) -> Any:
    groups = [arg for arg in _args(node) if arg is not None and _kind(arg) == "LatexGroupNode"]
    return groups[-1] if groups else None


def _raw(node: Any, text: str) -> str:
    return text[node.pos:node.pos + node.len]


def _group_text(node: Any, text: str) -> str:
    """The source between the braces of a group argument."""
    raw = _raw(node, text)
    return raw[1:-1] if raw.startswith("{") and raw.endswith("}") else raw


def _document_body(nodes: list[Any]) -> tuple[list[Any], list[Any]]:
    """(preamble nodes, body nodes): the ``document`` environment's content when there is one."""
    for index, node in enumerate(nodes):
        if _kind(node) == "LatexEnvironmentNode" and node.environmentname == "document":
            return nodes[:index], list(node.nodelist)
    return [], nodes


@dataclass
class _Source:
    text: str
    nodes: list[Any]
    name: str  # for messages
    key: str | None  # None: the main file; else its path relative to the project folder
    path: Path | None
    prepared: Prepared

    @classmethod
    def read(cls, text: str, name: str, key: str | None, path: Path | None) -> _Source:
        _check_line_lengths(text, name)
        prepared = prepare_latex(text)
        return cls(text, parse_nodes(prepared.text, name), name, key, path, prepared)


def _check_line_lengths(text: str, name: str) -> None:
    """The LaTeX parser takes time in the square of a line's length (4 MB on one line: minutes, 20 MB: hours);
    no author writes a line of ``MAX_LINE_CHARS``."""
    if len(text) <= MAX_LINE_CHARS:
        return
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE_CHARS:
            raise DraftError(f"{name}, line {number}: {len(line):,} characters on one line, more than "
                             f"{MAX_LINE_CHARS:,}: not read (break the line)")


@dataclass
class LatexReader:
    """Reads one LaTeX draft (and the files it includes) into a :class:`ReadingBuilder`."""

    name: str
    main_path: Path | None = None
    project_root: Path | None = None
    builder: ReadingBuilder = field(default_factory=ReadingBuilder)
    cites: CitationNumbers = field(default_factory=CitationNumbers)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label → (kind, number)
    sources: dict[str | None, _Source] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    title: str | None = None
    appendix: bool = False
    top_level: int = 2  # the heading level shown as "#"
    levels: set[int] = field(default_factory=set)
    overrides: dict[str, str] = field(default_factory=dict)  # included file → its text (not read from disk)
    user_macros: dict[str, str] = field(default_factory=dict)  # \newcommand{\name}{body} → the body as text
    macro_bodies: dict[str, str] = field(default_factory=dict)  # … → the body as LaTeX (expanded in math)
    inclusions: int = 0  # include() calls that read a file, over every pass
    macro_text: int = 0  # characters the author's macros have added so far

    # -- includes ---------------------------------------------------------------------------------
    def include(self, node: Any, source: _Source, chain: tuple[str | None, ...]) -> _Source | None:
        """The source an ``\\input``-like macro names, read and parsed once; None when skipped."""
        group = _last_group(node)
        line = _line_of(source.text, node.pos)
        where = f"{source.name}, line {line}"
        target = _group_text(group, source.text).strip() if group is not None else ""
        command = f"\\{node.macroname}{{{target}}}"
        if not target:
            self.warnings.append(f"{where}: \\{node.macroname} without a file name in braces: skipped")
            return None
        if self.main_path is None or self.project_root is None:
            self.warnings.append(f"{where}: {command} not read (no project folder)")
            return None
        root = self.project_root.resolve()
        base = self.main_path.parent
        candidates = [base / target] + ([base / f"{target}.tex"] if not target.endswith(".tex") else [])
        for candidate in candidates:
            resolved = candidate.resolve()
            if not resolved.is_relative_to(root):
                raise DraftError(f"{where}: {command} is outside the project folder {self.project_root}; "
                                 "not read")
        found = next((c.resolve() for c in reversed(candidates) if c.resolve().is_file()), None)
        if found is None:
            self.warnings.append(f"{where}: {command}: no such file in the project folder; skipped")
            return None
        key = found.relative_to(root).as_posix()
        if self.main_path is not None and found == self.main_path.resolve():
            key_or_main: str | None = None
        else:
            key_or_main = key
        if key_or_main in chain:
            names = [self.main_path.name if k is None else k for k in (*chain, key_or_main)]
            raise DraftError(f"{where}: {command} includes a file that includes it ({' → '.join(names)}); "
                             "refused")
        if len(chain) > MAX_INCLUDE_DEPTH:
            raise DraftError(f"{where}: {command}: includes nested more than {MAX_INCLUDE_DEPTH} deep")
        self.inclusions += 1
        if self.inclusions > MAX_INCLUSIONS:
            raise DraftError(f"{where}: {command}: files are included more than {MAX_INCLUSIONS} times in "
                             "all (the same files over and over?); refused")
        if key_or_main not in self.sources:
            if len(self.sources) >= MAX_INCLUDED_FILES:
                raise DraftError(f"{where}: more than {MAX_INCLUDED_FILES} included files")
            text = self.overrides[key] if key in self.overrides else read_text_draft(found, "a LaTeX file")
            self.sources[key_or_main] = _Source.read(text, key, key_or_main, found)
            self.learn_macros(self.sources[key_or_main])
        return self.sources[key_or_main]

    def expand(self, latex: str) -> str:
        """``latex`` with the author's argument-less macros replaced by their bodies (once)."""
        if not self.macro_bodies:
            return latex
        pattern = re.compile(r"\\(" + "|".join(map(re.escape, self.macro_bodies)) + r")(?![A-Za-z])")
        return pattern.sub(lambda m: "{" + self.macro_text_of(self.macro_bodies, m.group(1)) + "}", latex)

    def macro_text_of(self, table: dict[str, str], name: str) -> str:
        """The text macro ``name`` stands for, counted against ``MAX_MACRO_TEXT``."""
        text = table[name]
        self.macro_text += len(text)
        if self.macro_text > MAX_MACRO_TEXT:
            raise DraftError(f"{self.name}: the author's macros (last \\{name}) expand to more than "
                             f"{MAX_MACRO_TEXT:,} characters in all; refused")
        return text

    def learn_macros(self, source: _Source) -> None:
        """The author's argument-less macros (``\\newcommand{\\method}{CapProbe}``) as their text."""
        for name, body in source.prepared.macros.items():
            if name not in self.user_macros and not _is_code(body):
                self.user_macros[name] = math_as_text(body)
                self.macro_bodies[name] = body

    # -- pass 1: labels, heading levels, the title ------------------------------------------------
    def count(self, source: _Source) -> None:
        counters: dict[str, int] = {}
        sections: list[int] = [0] * 7
        appendix = False

        def section_number(level: int) -> str:
            parts = [n for n in sections[1:level + 1]]
            while parts and parts[0] == 0:
                parts.pop(0)
            if appendix and parts:
                return ".".join([chr(ord("A") + parts[0] - 1)] + [str(n) for n in parts[1:]])
            return ".".join(str(n) for n in parts)

        current: list[tuple[str, str]] = [("section", "")]

        def walk(nodes: list[Any], src: _Source, chain: tuple[str | None, ...]) -> None:
            nonlocal appendix
            for node in nodes:
                kind = _kind(node)
                if kind == "LatexMacroNode":
                    name = node.macroname
                    if name in SECTION_LEVELS:
                        level = SECTION_LEVELS[name]
                        self.levels.add(level)
                        starred = any(a is not None and _kind(a) == "LatexCharsNode"
                                      and src.text[a.pos] == "*" for a in _args(node))
                        if not starred:
                            sections[level] += 1
                            for deeper in range(level + 1, 7):
                                sections[deeper] = 0
                            current[-1] = ("section", section_number(level))
                    elif name == "appendix":
                        appendix = True
                        sections[1:] = [0] * 6
                    elif name == "label":
                        group = _last_group(node)
                        if group is not None:
                            self.labels.setdefault(_group_text(group, src.text).strip(), current[-1])
                    elif name == "title" and self.title is None:
                        group = _last_group(node)
                        if group is not None:
                            self.title = " ".join(math_as_text(_group_text(group, src.text)).split()) or None
                    elif name in INCLUDE_MACROS:
                        included = self.include(node, src, chain)
                        if included is not None:
                            walk(_document_body(included.nodes)[1], included, (*chain, included.key))
                    for arg in _args(node):
                        if arg is not None and name not in INCLUDE_MACROS | {"label", "title"}:
                            walk([arg], src, chain)
                elif kind == "LatexEnvironmentNode":
                    env = node.environmentname
                    base = env.rstrip("*")
                    if env in MATH_ENVIRONMENTS:
                        first = counters.get("equation", 0) + 1
                        rows = 1
                        if env in MULTILINE_MATH:
                            rows = len(re.findall(r"\\\\", _raw(node, src.text))) + 1
                        if not env.endswith("*") and base not in ("displaymath", "math"):
                            for label in re.finditer(r"\\label\{([^}]*)\}", _raw(node, src.text)):
                                row = len(re.findall(r"\\\\", _raw(node, src.text)[:label.start()]))
                                self.labels.setdefault(label.group(1).strip(), ("equation", str(first + row)))
                            counters["equation"] = first - 1 + rows
                        continue
                    if base in ("figure", "table", "wrapfigure", "sidewaysfigure", "sidewaystable"):
                        counter = "table" if "table" in base else "figure"
                        counters[counter] = counters.get(counter, 0) + 1
                        current.append((counter, str(counters[counter])))
                    elif base not in ("document", "itemize", "enumerate", "description", "abstract",
                                      "center", "minipage", "quote", "quotation"):
                        counters[base] = counters.get(base, 0) + 1
                        current.append((base, str(counters[base])))
                    else:
                        current.append(current[-1])
                    walk(list(node.nodelist), src, chain)
                    current.pop()
                elif kind == "LatexGroupNode":
                    walk(list(node.nodelist), src, chain)

        preamble, body = _document_body(source.nodes)
        walk(preamble, source, (source.key,))
        walk(body, source, (source.key,))
        shown = [level for level in self.levels if level > 0]
        self.top_level = min(shown) if shown else 2

    # -- pass 2: the readable text -----------------------------------------------------------------
    def render(self, nodes: list[Any], src: _Source, chain: tuple[str | None, ...]) -> None:
        b = self.builder
        text, key = src.text, src.key
        for node in nodes:
            kind = _kind(node)
            start, end = node.pos, node.pos + node.len
            if kind == "LatexCharsNode":
                self.chars(start, end, src)
            elif kind == "LatexSpecialsNode":
                chars = node.specials_chars
                b.replaced(SPECIALS.get(chars, chars), start, end, key)
            elif kind == "LatexCommentNode":
                continue
            elif kind == "LatexGroupNode":
                self.render(list(node.nodelist), src, chain)
            elif kind == "LatexMathNode":
                inner = _raw(node, text)
                if node.displaytype == "inline":
                    b.replaced(math_as_text(self.expand(_math_body(inner))), start, end, key)
                else:
                    b.replaced(_equation(_math_body(inner)), start, end, key)
            elif kind == "LatexEnvironmentNode":
                self.render_environment(node, src, chain)
            elif kind == "LatexMacroNode":
                self.render_macro(node, src, chain)

    def chars(self, start: int, end: int, src: _Source) -> None:
        """Source characters as they are, except hidden ones (left out) and masked ones (replaced by
        themselves: the parser saw a stand-in)."""
        b = self.builder
        cuts = sorted([(s, e, "hidden") for s, e in src.prepared.hidden if s < end and e > start]
                      + [(s, e, "masked") for s, e in src.prepared.masked if start <= s < end])
        at = start
        for cut_start, cut_end, kind in cuts:
            cut_start, cut_end = max(cut_start, start), min(cut_end, end)
            if cut_start > at:
                b.verbatim(src.text[at:cut_start], at, src.key)
            if kind == "masked":
                b.replaced(src.text[cut_start:cut_end], cut_start, cut_end, src.key)
            at = max(at, cut_end)
        if at < end:
            b.verbatim(src.text[at:end], at, src.key)

    def heading(self, title_nodes: list[Any] | None, title: str | None, level: int, start: int, end: int,
                src: _Source, chain: tuple[str | None, ...], kind: str | None = None) -> None:
        b = self.builder
        b.paragraph_break(start, src.key)
        shown = max(1, min(6, level - self.top_level + 1))
        line_start = b.length
        b.replaced("#" * shown + " ", start, end, src.key)
        title_start = b.length
        if title_nodes is not None:
            self.render(title_nodes, src, chain)
        if title is not None:
            b.replaced(title, start, end, src.key)
        rendered = " ".join(b.text()[title_start:].split())
        b.headings.append(ReadingHeading(line_start, b.length, level if level > 0 else 1, rendered, start,
                                         src.key, "other" if self.appendix and kind is None else kind))
        b.replaced("\n\n", end, end, src.key)

    def render_macro(self, node: Any, src: _Source, chain: tuple[str | None, ...]) -> None:
        b = self.builder
        name = node.macroname
        start, end = node.pos, node.pos + node.len
        if name in SECTION_LEVELS:
            group = _last_group(node)
            self.heading(list(group.nodelist) if group is not None else [], None, SECTION_LEVELS[name],
                         start, end, src, chain)
        elif name in CITE_MACROS:
            group = _last_group(node)
            keys = [k.strip() for k in _group_text(group, src.text).split(",") if k.strip()] if group else []
            b.replaced(self.cites.placeholder(keys), start, end, src.key)
        elif name in REF_MACROS:
            b.replaced(self.reference(node, src), start, end, src.key)
        elif name in INCLUDE_MACROS:
            included = self.include(node, src, chain)
            if included is not None:
                b.paragraph_break(start, src.key)
                self.render(_document_body(included.nodes)[1], included, (*chain, included.key))
                b.paragraph_break(end, src.key)
        elif name == "appendix":
            self.appendix = True
        elif name in ("item", "par"):
            b.paragraph_break(start, src.key)
        elif name == "\\":
            b.replaced(" ", start, end, src.key)
        elif name in TEXT_MACROS or name in ("href", "url"):
            group = _last_group(node)
            if group is not None:
                self.render(list(group.nodelist), src, chain)
        elif name in DROPPED_MACROS or name == "title":
            return
        elif name in NAMED_MACROS:
            b.replaced(NAMED_MACROS[name], start, end, src.key)
        elif name in ("verb", "lstinline"):  # inline code reads as itself
            b.replaced(getattr(node.nodeargd, "verbatim_text", "") or "", start, end, src.key)
        elif name in self.user_macros:
            b.replaced(self.macro_text_of(self.user_macros, name), start, end, src.key)
        else:  # accents, symbols, \% and the rest: pylatexenc's own text for them
            b.replaced(_node_text(node), start, end, src.key)

    def render_environment(self, node: Any, src: _Source, chain: tuple[str | None, ...]) -> None:
        b = self.builder
        env = node.environmentname
        start, end = node.pos, node.pos + node.len
        if env in MATH_ENVIRONMENTS:
            body = _raw(node, src.text)
            inner = body[body.find("}") + 1:body.rfind("\\end")] if "\\end" in body else body
            b.replaced(_equation(inner), start, end, src.key)
            return
        if env in DROPPED_ENVIRONMENTS:
            b.paragraph_break(start, src.key)
            return
        if env in HEADING_ENVIRONMENTS:
            kind = "abstract" if env == "abstract" else "other"
            self.heading(None, HEADING_ENVIRONMENTS[env], self.top_level, start, start, src, chain, kind)
            self.render(list(node.nodelist), src, chain)
            b.paragraph_break(end, src.key)
            return
        b.paragraph_break(start, src.key)
        self.render(list(node.nodelist), src, chain)
        b.paragraph_break(end, src.key)

    def reference(self, node: Any, src: _Source) -> str:
        group = _last_group(node)
        labels = [k.strip() for k in _group_text(group, src.text).split(",") if k.strip()] if group else []
        found = [self.labels.get(label) for label in labels]
        numbers = [f[1] if f is not None and f[1] else "??" for f in found]
        name = node.macroname
        if name == "eqref":
            return ", ".join(f"({n})" for n in numbers)
        if name in ("cref", "Cref", "autoref"):
            kind = found[0][0] if found and found[0] is not None else ""
            word = REF_NAMES.get(kind, kind.capitalize())
            if name == "cref" and kind != "equation":
                word = word.lower()
            return f"{word} {', '.join(numbers)}".strip()
        return ", ".join(numbers)


def _is_code(body: str) -> bool:
    """A macro body that is not text to read (it defines, sets or typesets something)."""
    return bool(re.search(r"#|\\(?:def|let|new|renew|set|add|vspace|hspace|begin|end|if|else|fi|par|"
                          r"expandafter|csname|usepackage|input|include)", body))


def _math_body(raw: str) -> str:
    for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if raw.startswith(opening) and raw.endswith(closing) and len(raw) >= len(opening) + len(closing):
            return raw[len(opening):len(raw) - len(closing)]
    return raw


def _equation(inner: str) -> str:
    """A display equation's placeholder, ending its sentence when the equation does."""
    stripped = re.sub(r"(\\[,;:!quad ]+|\\nonumber|\\notag|\\label\{[^}]*\}|\s)+$", "", inner)
    return "[equation]." if stripped.endswith(".") else "[equation]"


def _node_text(node: Any) -> str:
    from pylatexenc.latex2text import LatexNodes2Text

    try:
        return str(LatexNodes2Text(math_mode="text").nodelist_to_text([node]))
    except Exception:  # pylatexenc's converters raise assorted errors on odd macros: drop the macro
        return ""


def parse_latex(text: str, *, name: str = "the draft", path: Path | None = None,
                project_root: Path | None = None, overrides: dict[str, str] | None = None) -> ParsedDraft:
    """Parse a LaTeX draft (see the module's docstring); ``path``/``project_root`` let it follow
    ``\\input`` files (without them each is a warning); ``overrides`` gives the text of included files
    (relative path → text) instead of reading them."""
    reader = LatexReader(name, path, project_root, overrides=dict(overrides or {}))
    main = _Source.read(text, name, None, path)
    reader.sources[None] = main
    reader.learn_macros(main)
    try:
        reader.count(main)
        reader.appendix = False
        reader.render(_document_body(main.nodes)[1], main, (None,))
    except RecursionError:
        raise DraftError(f"{name}: groups nested too deeply to read") from None
    files = {key: source.text for key, source in reader.sources.items() if key is not None}
    warnings = list(dict.fromkeys(reader.warnings))  # both passes meet each skipped \input
    return assemble_draft("tex", reader.builder, text, title=reader.title, files=files, warnings=warnings,
                          project_root=project_root)
