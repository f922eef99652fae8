"""What the LaTeX parser must not see, found before it runs.

Hidden (blanked to spaces, line ends kept, so every offset stays the same): macro and environment
definitions (``\\newcommand``, ``\\newenvironment``, ``\\def``, ``\\let`` …, whose bodies are code, often
with an unmatched ``\\begin`` or ``#1``), ``\\makeatletter`` … ``\\makeatother`` blocks, ``\\iffalse`` …
``\\fi`` blocks and the content of code environments (``lstlisting``, ``minted``, ``comment`` …).
Masked: the characters of a ``\\url``/``\\href`` address that LaTeX would read as markup elsewhere
(``%``, ``~``, ``&``, ``#``, ``$``). The parser reads :attr:`Prepared.text`; the source is unchanged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Definition command → how many mandatory arguments it takes (its name counts as one).
_MANDATORY = {"newcommand": 2, "renewcommand": 2, "providecommand": 2, "DeclareRobustCommand": 2,
              "DeclareMathOperator": 2, "newenvironment": 3, "renewenvironment": 3, "NewDocumentCommand": 3,
              "RenewDocumentCommand": 3, "ProvideDocumentCommand": 3, "NewDocumentEnvironment": 4,
              "RenewDocumentEnvironment": 4, "newtheorem": 2, "newcounter": 1, "newlength": 1}
_DEF = frozenset(("def", "gdef", "edef", "xdef"))
_TOKEN = re.compile(r"%[^\n]*|\\[A-Za-z@]+\*?|\\.", re.DOTALL)
_IF = re.compile(r"%[^\n]*|\\if[A-Za-z@]*|\\fi(?![A-Za-z@])|\\.", re.DOTALL)
_URL_MARKUP = frozenset("%~&#$")
# Environments whose content is code, read by LaTeX to their \end (braces inside need not balance).
CODE_ENVIRONMENTS = ("verbatim", "verbatim*", "Verbatim", "Verbatim*", "BVerbatim", "LVerbatim", "spverbatim",
                     "lstlisting", "minted", "comment", "filecontents", "filecontents*")
_CODE_BEGIN = re.compile(r"\s*\{(" + "|".join(re.escape(name) for name in CODE_ENVIRONMENTS) + r")\}")
# \newcommand{\name}{body} or \def\name{body} without parameters: the name and the body.
_SIMPLE_MACRO = re.compile(r"\\[a-zA-Z]+\*?\s*\{?\s*\\([A-Za-z]+)\s*\}?\s*\{(.*)\}\s*$", re.DOTALL)
_SIMPLE_DEFINITIONS = frozenset(("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand",
                                 "def", "gdef", "edef", "xdef"))
MAX_PARAMETER_TEXT = 60  # characters between \def\name and its body ("#1#2" or a delimiter)


@dataclass
class Prepared:
    """The text the parser reads (as long as the source), the hidden and the masked ranges."""

    text: str
    hidden: list[tuple[int, int]] = field(default_factory=list)
    masked: list[tuple[int, int]] = field(default_factory=list)
    macros: dict[str, str] = field(default_factory=dict)  # argument-less \newcommand/\def: name → body


def _skip_space(text: str, at: int) -> int:
    while at < len(text):
        if text[at].isspace():
            at += 1
        elif text[at] == "%":
            end = text.find("\n", at)
            at = len(text) if end < 0 else end + 1
        else:
            break
    return at


def _group_end(text: str, at: int, opening: str = "{", closing: str = "}", *, comments: bool = True,
               ) -> int | None:
    """The end of the balanced group that opens at ``at`` (None when it does not open or close);
    ``comments``: a ``%`` starts a comment (not so in a URL)."""
    if at >= len(text) or text[at] != opening:
        return None
    depth = 0
    k = at
    while k < len(text):
        char = text[k]
        if char == "\\":
            k += 2
            continue
        if char == "%" and opening == "{" and comments:
            end = text.find("\n", k)
            k = len(text) if end < 0 else end + 1
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return None


def _control_sequence_end(text: str, at: int) -> int | None:
    match = re.compile(r"\\(?:[A-Za-z@]+|.)", re.DOTALL).match(text, at)
    return match.end() if match else None


def _definition_end(text: str, name: str, at: int) -> int | None:
    """Where the arguments of the definition command ``name`` (ending at ``at``) end."""
    if name in _DEF:
        end = _control_sequence_end(text, _skip_space(text, at))
        if end is None:
            return None
        body = text.find("{", end, end + MAX_PARAMETER_TEXT)
        return _group_end(text, body) if body >= 0 else None
    if name == "let":
        end = _control_sequence_end(text, _skip_space(text, at))
        if end is None:
            return None
        end = _skip_space(text, end)
        if end < len(text) and text[end] == "=":
            end = _skip_space(text, end + 1)
        return _control_sequence_end(text, end) or (end + 1 if end < len(text) else None)
    mandatory = _MANDATORY[name]
    position = at
    for number in range(mandatory):
        position = _skip_space(text, position)
        while (end := _group_end(text, position, "[", "]")) is not None:  # optional arguments
            position = _skip_space(text, end)
        end = _group_end(text, position)
        if end is None and number == 0:  # \newcommand\foo{…}: the name without braces
            end = _control_sequence_end(text, position)
        if end is None:
            return None
        position = end
    optional = _group_end(text, _skip_space(text, position), "[", "]")  # \newtheorem{a}{A}[section]
    return optional if optional is not None and name == "newtheorem" else position


def _if_block_end(text: str, at: int) -> int | None:
    """The end of the ``\\fi`` that closes the ``\\iffalse`` ending at ``at`` (nested ``\\if…`` counted)."""
    depth = 1
    for match in _IF.finditer(text, at):
        token = match.group()
        if token.startswith("\\if"):
            depth += 1
        elif token == "\\fi":
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def prepare_latex(text: str) -> Prepared:
    """Find what to hide and mask in ``text`` (see the module's docstring)."""
    hidden: list[tuple[int, int]] = []
    masked: list[tuple[int, int]] = []
    macros: dict[str, str] = {}
    at = 0
    while (match := _TOKEN.search(text, at)) is not None:
        at = match.end()
        token = match.group()
        if not token.startswith("\\") or len(token) < 2 or (not token[1].isalpha() and token[1] != "@"):
            continue
        name = token[1:].rstrip("*")
        end: int | None = None
        if name in _MANDATORY or name in _DEF or name == "let":
            end = _definition_end(text, name, at)
        elif name == "makeatletter":
            close = text.find("\\makeatother", at)
            end = close + len("\\makeatother") if close >= 0 else None
        elif name == "iffalse":
            end = _if_block_end(text, at)
        elif name == "begin":
            code = _CODE_BEGIN.match(text, at)
            if code is not None:
                close = text.find(f"\\end{{{code.group(1)}}}", code.end())
                if close >= 0:  # the code itself is hidden; \begin and \end stay for the parser
                    hidden.append((code.end(), close))
                    at = close
            continue
        elif name in ("url", "href"):
            group_end = _group_end(text, _skip_space(text, at), comments=False)
            if group_end is not None:
                start = _skip_space(text, at)
                masked.extend((k, k + 1) for k in range(start + 1, group_end - 1) if text[k] in _URL_MARKUP)
                at = group_end
            continue
        if end is not None:
            hidden.append((match.start(), end))
            simple = _SIMPLE_MACRO.match(text[match.start():end])
            if simple is not None and name in _SIMPLE_DEFINITIONS:
                macros.setdefault(simple.group(1), simple.group(2))
            at = end
    if not hidden and not masked:
        return Prepared(text, macros=macros)
    chars = list(text)
    for start, end in hidden:
        for k in range(start, end):
            if chars[k] not in "\r\n":
                chars[k] = " "
    for start, _ in masked:
        chars[start] = "x"
    return Prepared("".join(chars), hidden, masked, macros)
