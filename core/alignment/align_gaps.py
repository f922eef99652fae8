"""The gap report of an alignment: what one paper does that the other does not, checked against both
papers' structure, ranked by importance and phrased in words.

Three kinds of gap, each a :class:`GapItem` with an ``importance`` between 0 and 1 (the report's
order; the first :data:`TOP_GAPS` are what a reader sees first):

- **a section one side lacks** ("B has no results section (A has 19 sentences there)"). A section
  counts as there when a heading names it, also inside a joined heading ("Results and Discussion" is
  a results section *and* a discussion). A side whose headings were mostly not recognised (a parse
  that found no structure), or whose abstract runs past :data:`LONG_ABSTRACT` sentences (the reader
  took the text after it for the abstract: it is read as text under other headings), never gets a
  section called missing; a PDF's abstract is never called missing either (the reader may have
  missed its heading): each is said in ``GapReport.caveats``.
  When the side lacking the section does that section's job elsewhere (three or more of its sentences
  outside the abstract with that section's role): under headings the reader did not recognise, the
  section may well be there (a heading the parser missed), so no gap, a caveat; in recognised
  sections of other kinds ("its results are in the discussion"), a gap that says where, ranked low;
- **a function one side never has** ("No sentence of B clearly admits a limitation (A does, in 3
  sentences …)"). A function whose name is its move's (``core.taxonomy.moves``) is judged as that move,
  the same judgement as the draft checklist's: "Stating the aim" is done by any function of the aim
  move (a proposal, a research question …) or a confident objective sentence; "Reporting a finding" by
  any finding-type function or a confident result sentence, in the abstract or anywhere; "Claiming the
  topic matters" by any function of that move (:data:`GENERAL_JOBS`);
- **a function one side has in a section where the other has it only elsewhere** ("In the
  discussion, no sentence of B clearly admits a limitation (A does, in 3 sentences); B does so in the
  conclusion"). Only for sections of a known kind that both sides have (three or more sentences on the
  side lacking the function), and only when the side lacking it does not do it under a heading of no
  known kind (which may be a subsection of that very section): sections under unrecognised headings
  are not comparable. Never for a statement of the paper as a whole (funding, thanks, interests,
  availability, abbreviations: ``core.alignment.align_evidence.PAPER_LEVEL``): the parser may have
  merged the back matter into the last section, so those are said for the paper, counting all of it.

A sentence does a function when its label is clear or when the paper's own structure shows it does
(``core.alignment.align_evidence``: a figure or table it mentions, a heading that names the move, a
formulaic back-matter statement); the same judgement on both sides, so a paper that mentions Figure 2
is never said to point to no figure. A gap is worded for what is known: "no sentence of B clearly …"
(a sentence whose function is unclear may still do it), and ``GapReport.note`` says once what the
report rests on.

Importance (set by reasoning, not fitted): a base per kind of gap (a missing section 0.95, a function
never used 0.8, a function in another section 0.5, a section whose job is done under other headings
0.25) times the evidence (``n / (n + 2)`` for n sentences of a function, ``n / (n + 4)`` for a
section of n sentences) times how central the function is (1 for a move of the genre's checklist,
``core.taxonomy.moves``, that the section is expected to make; 0.75 for another move; 0.5 for a function in no
move; 0.3 for back matter such as funding or thanks), and × 0.6 when the side lacking the function
makes the same move with another function in that scope.

Only confident labels count (issue 24.5): a function below the bundle's threshold ("none") never
makes or fills a gap by its label (structural evidence may), and a role below
``core.taxonomy.labels.UNCERTAIN_BELOW`` is left out of the role shares and of the evidence above;
``GapReport.judged`` / ``GapReport.note`` say on how many sentences of each side the report was judged.

The report reads only the two sides' sentences (:class:`GapSide`): it does not import
``core.alignment.align``, which imports it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from core.alignment.align_evidence import PAPER_LEVEL, side_functions
from core.taxonomy.functions import default_taxonomy
from core.taxonomy.labels import ROLES
from core.taxonomy.moves import AIM, EXPECTED, FINDING, GAP, LIMITS, METHOD, OUTLINE, TERRITORY, Move

if TYPE_CHECKING:  # pragma: no cover
    from core.taxonomy.functions import FunctionTaxonomy

TOP_GAPS = 10  # the gaps a reader sees first; the rest sit behind "more"

KIND_NAMES = {"abstract": "abstract", "introduction": "introduction", "related-work": "related work",
              "method": "method section", "result": "results", "discussion": "discussion",
              "conclusion": "conclusion", "other": "other sections", "": "whole text"}
SECTION_NAMES = {"abstract": "abstract", "introduction": "introduction",
                 "related-work": "related-work section", "method": "method section",
                 "result": "results section", "discussion": "discussion", "conclusion": "conclusion"}
BODY_KINDS = ("introduction", "related-work", "method", "result", "discussion", "conclusion")

# The taxonomy's names start with a gerund ("Admitting a limitation"); the gap sentences need the verb
# ("B never admits a limitation").
VERBS = {"admitting": "admits", "analysing": "analyses", "building": "builds", "claiming": "claims",
         "comparing": "compares", "declaring": "declares", "defining": "defines", "delimiting": "delimits",
         "describing": "describes", "discussing": "discusses", "distinguishing": "distinguishes",
         "drawing": "draws", "following": "follows", "giving": "gives", "grouping": "groups",
         "interpreting": "interprets", "introducing": "introduces", "justifying": "justifies",
         "listing": "lists", "making": "makes", "naming": "names", "outlining": "outlines",
         "pointing": "points", "posing": "poses", "proposing": "proposes", "raising": "raises",
         "reporting": "reports", "showing": "shows", "stating": "states", "summarising": "summarises",
         "thanking": "thanks"}

# -- importance (set by reasoning, not fitted: see the module docstring) ---------------------------
MISSING_SECTION = 0.95
NEVER_USED = 0.8
ELSEWHERE = 0.5
SECTION_UNDER_OTHER_HEADINGS = 0.25
RELATED_WORK_SECTION = 0.6  # a missing related-work section matters less than a missing results section
SAME_MOVE_OTHERWISE = 0.6  # the side lacking the function makes the same move with another one
CENTRAL, MOVE, NO_MOVE, BACK_MATTER = 1.0, 0.75, 0.5, 0.3
READABLE_SHARE = 0.4  # a side is judged by its sections when this share sits in recognised body sections
MIN_SECTION = 3  # a section shorter than this is too short to say what it never does
EVIDENCE = 3  # sentences doing a section's job under other headings that make the section's job done
LONG_ABSTRACT = 25  # an "abstract" longer than this swallowed the text after it (a heading the reader missed)

# Each section kind's job, as the roles (or, for related work, the functions) of its sentences, and
# the words that say what those sentences do.
SECTION_JOBS: dict[str, tuple[frozenset[str], frozenset[str], str]] = {
    "introduction": (frozenset({"background", "objective"}), frozenset(), "introduce the work"),
    "related-work": (frozenset(), frozenset({"prior-approach", "contrast-prior", "closest-work",
                                             "grouping-prior", "survey-pointer"}), "discuss earlier work"),
    "method": (frozenset({"method"}), frozenset(), "describe the methods"),
    "result": (frozenset({"result"}), frozenset(), "report results"),
    "discussion": (frozenset({"conclusion"}), frozenset(), "discuss or conclude"),
    "conclusion": (frozenset({"conclusion"}), frozenset(), "draw conclusions"),
}
ALL_MOVES: tuple[Move, ...] = tuple(dict.fromkeys(
    [move for moves in EXPECTED.values() for move in moves] + [TERRITORY, GAP, METHOD, OUTLINE, LIMITS]))
MOVE_OF = {function: move for move in reversed(ALL_MOVES) for function in move.functions}
# A function whose name is its move's (and its role's general job): a side that does any of the move, or
# has any confident sentence of the role ("" = none), does it ("reports a finding": any finding in the
# abstract counts; "states the aim": a proposal does, as the draft checklist's "an aim statement").
GENERAL_JOBS: dict[str, tuple[Move, str]] = {"main-finding": (FINDING, "result"), "aim": (AIM, "objective"),
                                             "topic-importance": (TERRITORY, "")}
_JOINED = re.compile(r"\s+(?:and|&)\s+|[,/;&]")


# -- what the report reads --------------------------------------------------------------------------
class GapSentence(Protocol):
    """A sentence of a side (``core.alignment.align.AlignSentence`` is one)."""

    @property
    def text(self) -> str: ...
    @property
    def section(self) -> str: ...
    @property
    def section_kind(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def function(self) -> str: ...
    @property
    def confident_role(self) -> bool: ...
    @property
    def clear_function(self) -> bool: ...


class GapSide(Protocol):
    """A side of an alignment (``core.alignment.align.AlignSide`` is one): its sentences and where it came
    from ("pdf", "library", "draft", or "" when not known)."""

    @property
    def sentences(self) -> Sequence[GapSentence]: ...
    @property
    def kind(self) -> str: ...


# -- what it says ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GapItem:
    """Something one side does that the other does not (see the module docstring)."""

    section_kind: str  # "" = the whole text
    function: str  # taxonomy id ("" for a whole missing section)
    name: str  # the taxonomy's name of the function
    present_in: str  # "a" or "b"
    count: int  # sentences with it on the side that has it
    elsewhere: tuple[str, ...]  # section kinds where the other side does have it
    text: str  # the sentence for people
    importance: float = 0.0  # 0..1: the report's order
    # "section" (a section one side lacks), "section-elsewhere" (its job done under other headings),
    # "never" (a function the other side never has), "placement" (has it only in other sections)
    what: str = ""
    # the sentences (0-based, of ``present_in``) that do the function there; () for a section gap or a
    # file written before it was kept
    sentences: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["elsewhere"] = list(self.elsewhere)
        data["sentences"] = list(self.sentences)
        data["importance"] = round(self.importance, 4)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GapItem:
        return cls(str(data["section_kind"]), str(data["function"]), str(data["name"]),
                   str(data["present_in"]), int(data["count"]),
                   tuple(str(k) for k in data.get("elsewhere", [])), str(data["text"]),
                   min(max(float(data.get("importance", 0.0)), 0.0), 1.0), str(data.get("what", "")),
                   tuple(int(i) for i in data.get("sentences", [])))


@dataclass(frozen=True)
class RoleShare:
    """Sentences and the share of each role in one section kind, on both sides."""

    section_kind: str
    a_sentences: int
    b_sentences: int
    a: dict[str, float]  # shares among the sentences with a confident role
    b: dict[str, float]
    a_confident: int = -1  # sentences with a confident role (-1: not known, an older file)
    b_confident: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {"section_kind": self.section_kind, "a_sentences": self.a_sentences,
                "b_sentences": self.b_sentences, "a": {r: round(v, 4) for r, v in self.a.items()},
                "b": {r: round(v, 4) for r, v in self.b.items()},
                "a_confident": self.a_confident, "b_confident": self.b_confident}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoleShare:
        return cls(str(data["section_kind"]), int(data["a_sentences"]), int(data["b_sentences"]),
                   {str(k): float(v) for k, v in data["a"].items()},
                   {str(k): float(v) for k, v in data["b"].items()},
                   int(data.get("a_confident", -1)), int(data.get("b_confident", -1)))


@dataclass
class GapReport:
    items: list[GapItem] = field(default_factory=list)  # most important first
    role_shares: list[RoleShare] = field(default_factory=list)
    # What the report was judged on, per side ("a", "b"): {"sentences": all, "functions": those with a
    # clear function (the gaps), "roles": those with a confident role (the role shares), "evidence":
    # those whose structure shows a function (headings, figure mentions: core.alignment.align_evidence)}.
    # Empty in a report read from a file written before it was kept ("evidence" missing in older ones).
    judged: dict[str, dict[str, int]] = field(default_factory=dict)
    # What the report could not judge, in words ("B's headings were not recognised, so …").
    caveats: list[str] = field(default_factory=list)

    def top(self, count: int = TOP_GAPS) -> list[GapItem]:
        """The ``count`` most important gaps (what a reader sees first)."""
        return self.items[:max(count, 0)]

    def more(self, count: int = TOP_GAPS) -> list[GapItem]:
        """The gaps after the first ``count`` (behind "more")."""
        return self.items[max(count, 0):]

    @property
    def note(self) -> str:
        """What the gaps rest on, said once: "Gaps judged on the 31 of 40 sentences whose function is clear
        (A) and 52 of 70 (B), and on headings, figure and table mentions and back-matter statements: a
        sentence whose function is unclear may still do what no sentence clearly does. Role shares on the
        35 of 40 with a confident role (A) and 60 of 70 (B)." ("" when not known)."""
        if not all(side in self.judged for side in ("a", "b")):
            return ""
        a, b = self.judged["a"], self.judged["b"]
        plural = "s" if a["sentences"] != 1 else ""
        return ("Gaps judged on the "
                f"{a['functions']} of {a['sentences']} sentence{plural} whose function is clear (A) "
                f"and {b['functions']} of {b['sentences']} (B), and on headings, figure and table mentions "
                "and back-matter statements: a sentence whose function is unclear may still do what no "
                "sentence clearly does. Role shares on the "
                f"{a['roles']} of {a['sentences']} with a confident role (A) and {b['roles']} of "
                f"{b['sentences']} (B).")

    def to_dict(self) -> dict[str, Any]:
        return {"items": [g.to_dict() for g in self.items],
                "role_shares": [r.to_dict() for r in self.role_shares],
                "judged": {side: dict(counts) for side, counts in self.judged.items()},
                "caveats": list(self.caveats)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GapReport:
        judged = {str(side): {str(k): int(v) for k, v in counts.items()}
                  for side, counts in data.get("judged", {}).items()}
        return cls([GapItem.from_dict(g) for g in data.get("items", [])],
                   [RoleShare.from_dict(r) for r in data.get("role_shares", [])], judged,
                   [str(c) for c in data.get("caveats", [])])


# -- words ----------------------------------------------------------------------------------------
def kind_name(kind: str) -> str:
    return KIND_NAMES.get(kind, kind.replace("-", " "))


def never_phrase(name: str) -> str:
    """"never admits a limitation" for "Admitting a limitation" (or "has no “name” sentence")."""
    first, _, rest = name.partition(" ")
    verb = VERBS.get(first.lower())
    if verb is None:
        return f"has no “{name}” sentence"
    return f"never {verb}{' ' + rest if rest else ''}"


def none_clearly(side: str, name: str) -> str:
    """"no sentence of B clearly admits a limitation" for "Admitting a limitation" (what the labels and
    the structure show; a sentence whose function is unclear may still do it)."""
    first, _, rest = name.partition(" ")
    verb = VERBS.get(first.lower())
    if verb is None:
        return f"no sentence of {side} is clearly “{name}”"
    rest = rest or ("anyone" if verb == "thanks" else "")
    return f"no sentence of {side} clearly {verb}{' ' + rest if rest else ''}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def where_phrase(kinds: Iterable[str], limit: int = 3) -> str:
    """"in the abstract, the method section and under other headings" ("" for none); past ``limit``
    places, "… and 2 other sections"."""
    kinds = list(dict.fromkeys(kinds))
    named = [f"the {kind_name(k)}" for k in kinds if k not in ("other", "")]
    if "other" in kinds:
        named.append("under other headings")
    if not named:
        return ""
    if len(named) > limit:
        rest = len(named) - (limit - 1)
        named = [*named[: limit - 1], f"{rest} other places"]
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    return listed if listed.startswith("under") else f"in {listed}"


def _sentences(count: int) -> str:
    return f"{count} sentence{'s' if count != 1 else ''}"


# -- structure ------------------------------------------------------------------------------------
def heading_kinds(heading: str) -> frozenset[str]:
    """The section kinds a joined heading names: "Results and Discussion" → {result, discussion},
    "Discussion & Conclusions" → {discussion, conclusion}. A single name gives none (its kind is the
    section's own, which the parser also passes on to subsections)."""
    from core.pdf.headings import section_kind, split_number  # core.pdf loads PyMuPDF: only when read

    _, bare = split_number(heading.strip())
    parts = [part.strip() for part in _JOINED.split(bare) if part.strip()]
    if len(parts) < 2:
        return frozenset()
    return frozenset({section_kind(part).value for part in parts} - {"other"})


def is_back_matter(heading: str) -> bool:
    """Whether a heading is back matter (acknowledgements, funding, appendix …), not a paper section."""
    from core.pdf.headings import is_other_heading  # core.pdf loads PyMuPDF: only when read

    return is_other_heading(heading)


@dataclass
class _Structure:
    """One side seen by section: the sentences of each kind (a sentence under a joined heading is in
    each kind it names), and whether the side's headings were recognised at all."""

    kinds_of: list[frozenset[str]]
    readable: bool
    kind: str  # where the side came from ("pdf", "library", "draft", "")
    long_abstract: int = 0  # the sentences of an abstract too long to be one (read as other text), else 0
    # per sentence: under a heading of no known kind that is not back matter (it may be a subsection
    # of any section: "On-study MRI changes" under a Results heading the parser missed)
    unrecognised: list[bool] = field(default_factory=list)

    def has(self, kind: str) -> bool:
        return any(kind in kinds for kinds in self.kinds_of)

    def rows(self, sentences: Sequence[GapSentence], kind: str) -> list[GapSentence]:
        return [s for s, kinds in zip(sentences, self.kinds_of) if kind in kinds]


def _structure(side: GapSide, whole: bool) -> _Structure:
    names: dict[str, frozenset[str]] = {}
    back_matter: dict[str, bool] = {}
    kinds_of = []
    for sentence in side.sentences:
        if whole:
            kinds_of.append(frozenset({""}))
            continue
        if sentence.section not in names:
            names[sentence.section] = heading_kinds(sentence.section) if sentence.section else frozenset()
            back_matter[sentence.section] = is_back_matter(sentence.section)
        kinds_of.append(frozenset({sentence.section_kind}) | names[sentence.section])
    abstract = sum("abstract" in kinds for kinds in kinds_of)
    long_abstract = abstract if abstract > LONG_ABSTRACT else 0
    if long_abstract:  # the reader took the text after the abstract for it: other text, structure unknown
        kinds_of = [kinds - {"abstract"} | {"other"} if "abstract" in kinds else kinds for kinds in kinds_of]
    body = sum(bool(kinds & set(BODY_KINDS)) for kinds in kinds_of)
    readable = (not whole and not long_abstract and bool(kinds_of)
                and body / len(kinds_of) >= READABLE_SHARE)
    unrecognised = [kinds == {"other"} and not back_matter.get(sentence.section, False)
                    for sentence, kinds in zip(side.sentences, kinds_of)]
    return _Structure(kinds_of, readable, side.kind, long_abstract, unrecognised)


Doing = dict[int, frozenset[str]]  # id(sentence) -> the functions it does (label or evidence)


def _does_job(sentence: GapSentence, kind: str, doing: Doing) -> bool:
    """Whether ``sentence`` does the job of a ``kind`` section (its confident role; for related work,
    its function)."""
    roles, functions, _ = SECTION_JOBS[kind]
    return (sentence.confident_role and sentence.role in roles) or bool(doing[id(sentence)] & functions)


def _role_shares(sentences: Sequence[GapSentence]) -> dict[str, float]:
    """The share of each role among the sentences with a confident role (uncertain ones left out)."""
    confident = [s for s in sentences if s.confident_role]
    counts = Counter(s.role for s in confident)
    return {role: counts.get(role, 0) / len(confident) if confident else 0.0 for role in ROLES}


def _makes_move(sentences: Iterable[GapSentence], move: Move, doing: Doing, role: str = "") -> bool:
    return any(doing[id(s)] & move.functions or (role and s.confident_role and s.role == role)
               for s in sentences)


# -- importance -----------------------------------------------------------------------------------
def _evidence(count: int, half: int) -> float:
    return count / (count + half)


def centrality(function: str, kind: str, role: str) -> float:
    """How central ``function`` is where it was found (``kind``; "" = anywhere): see the docstring."""
    move = MOVE_OF.get(function)
    if move is None:
        return BACK_MATTER if role == "other" else NO_MOVE
    expected = EXPECTED.get(kind, ()) if kind else ALL_MOVES
    return CENTRAL if move in expected else MOVE


# -- the report -----------------------------------------------------------------------------------
class _Report:
    """Builds one :class:`GapReport` (the state shared by the three kinds of gap)."""

    def __init__(self, a: GapSide, b: GapSide, taxonomy: FunctionTaxonomy | None, min_count: int) -> None:
        self.sides = {"a": list(a.sentences), "b": list(b.sentences)}
        whole = any(all(s.section_kind == "" for s in rows) for rows in self.sides.values())
        self.structure = {"a": _structure(a, whole), "b": _structure(b, whole)}
        self.taxonomy = taxonomy
        self.min_count = min_count
        kinds = {k for st in self.structure.values() for ks in st.kinds_of for k in ks}
        order = list(KIND_NAMES)
        self.kinds = sorted(kinds, key=lambda k: order.index(k) if k in order else len(order))
        self.by_kind = {side: {k: self.structure[side].rows(rows, k) for k in self.kinds}
                        for side, rows in self.sides.items()}
        # what each sentence does: its clear label and what the structure shows (one judgement for both
        # sides and every kind of gap: core.alignment.align_evidence)
        self.doing: Doing = {}
        self.evidenced: dict[str, int] = {}
        for side, rows in self.sides.items():
            doing, self.evidenced[side] = side_functions(
                (s.text, s.section, s.function if s.clear_function else "") for s in rows)
            self.doing.update((id(s), functions) for s, functions in zip(rows, doing))
        self.index = {side: {id(s): i for i, s in enumerate(rows)} for side, rows in self.sides.items()}
        self.functions = {side: {k: Counter(f for s in rows for f in self.doing[id(s)])
                                 for k, rows in kinds_.items()} for side, kinds_ in self.by_kind.items()}
        self.totals = {side: Counter(f for s in rows for f in self.doing[id(s)])
                       for side, rows in self.sides.items()}
        self.unrecognised = {side: [s for s, u in zip(rows, self.structure[side].unrecognised) if u]
                             for side, rows in self.sides.items()}
        self.items: list[GapItem] = []
        self.caveats: list[str] = []

    def name_of(self, function: str) -> str:
        return self.taxonomy.name_of(function) if self.taxonomy is not None else function

    def role_of(self, function: str) -> str:
        if self.taxonomy is None:
            return ""
        try:
            return self.taxonomy.get(function).role
        except Exception:  # an id the taxonomy does not know (an older file)
            return ""

    def paper_level(self, function: str) -> bool:
        """A statement of the paper as a whole (funding, thanks …): said for the paper, never per section."""
        if function in PAPER_LEVEL:
            return True
        try:
            return self.taxonomy is not None and self.taxonomy.get(function).section == "any"
        except Exception:  # an id the taxonomy does not know (an older file)
            return False

    def does(self, side: str, function: str, rows: Sequence[GapSentence]) -> bool:
        """Whether ``rows`` of ``side`` do ``function``, by a clear label or the structure's evidence (its
        general job counts: see GENERAL_JOBS)."""
        if any(function in self.doing[id(s)] for s in rows):
            return True
        general = GENERAL_JOBS.get(function)
        return general is not None and _makes_move(rows, general[0], self.doing, general[1])

    def doers(self, side: str, function: str, rows: Sequence[GapSentence]) -> tuple[int, ...]:
        """The indices of the ``rows`` of ``side`` that do ``function``."""
        return tuple(self.index[side][id(s)] for s in rows if function in self.doing[id(s)])

    def weight(self, function: str, kind: str, lacking_rows: Sequence[GapSentence]) -> float:
        weight = centrality(function, kind, self.role_of(function))
        move = MOVE_OF.get(function)
        if move is not None and _makes_move(lacking_rows, move, self.doing):
            weight *= SAME_MOVE_OTHERWISE
        return weight

    def never_used(self) -> None:
        """Functions one side has and the other never has anywhere (a statement of the whole paper such
        as funding: where the side that has it does so is left unsaid)."""
        for have, lack in (("a", "b"), ("b", "a")):
            for function, count in sorted(self.totals[have].items(), key=lambda item: (-item[1], item[0])):
                if self.does(lack, function, self.sides[lack]):
                    continue
                where = "" if self.paper_level(function) else where_phrase(
                    k for k in self.kinds if k and self.functions[have][k].get(function))
                name = self.name_of(function)
                text = (f"{_capital(none_clearly(lack.upper(), name))} ({have.upper()} does, in "
                        f"{_sentences(count)}{' ' + where if where else ''}).")
                importance = NEVER_USED * _evidence(count, 2) * self.weight(function, "", self.sides[lack])
                self.items.append(GapItem("", function, name, have, count, (), text, importance, "never",
                                          self.doers(have, function, self.sides[have])))

    def missing_sections(self) -> None:
        """Sections of a known kind one side has and the other has not (checked: see the docstring)."""
        for kind in self.kinds:
            if kind in ("", "other"):
                continue
            for have, lack in (("a", "b"), ("b", "a")):
                count = len(self.by_kind[have][kind])
                structure = self.structure[lack]
                if not count or structure.has(kind) or not structure.readable:
                    continue
                if kind == "abstract":
                    if structure.kind in ("pdf", "library"):
                        self.caveats.append(f"No abstract was found in {lack.upper()}'s text (its PDF "
                                            "may have one the reader did not recognise), so none is called "
                                            "missing.")
                        continue
                    text = f"{lack.upper()} has no abstract ({have.upper()}'s has {_sentences(count)})."
                    self.items.append(GapItem(kind, "", "", have, count, (), text,
                                              MISSING_SECTION * _evidence(count, 4), "section"))
                    continue
                found = self.missing_section(kind, have, lack, count)
                if found is not None:
                    self.items.append(found)

    def missing_section(self, kind: str, have: str, lack: str, count: int) -> GapItem | None:
        """The gap of a ``kind`` section that ``lack`` has no heading for, checked against what its
        sentences do: doing that section's job under unrecognised headings, the section may well be
        there (a heading the reader missed): no gap, a caveat; doing it in recognised sections of
        other kinds, a low gap that says where; doing it nowhere, the section is missing."""
        rows, kinds = self.sides[lack], self.structure[lack].kinds_of
        doing = [i for i in range(len(rows))
                 if "abstract" not in kinds[i] and _does_job(rows[i], kind, self.doing)]
        unplaced = [i for i in doing if not kinds[i] & set(BODY_KINDS)]
        placed = [i for i in doing if kinds[i] & set(BODY_KINDS)]
        section = SECTION_NAMES[kind]
        job = SECTION_JOBS[kind][2]
        if len(unplaced) >= EVIDENCE:
            self.caveats.append(f"{len(unplaced)} of {lack.upper()}'s sentences {job} under headings the "
                                f"reader did not recognise: its {section} may be there, so it is not called "
                                "missing.")
            return None
        base = RELATED_WORK_SECTION if kind == "related-work" else MISSING_SECTION
        if len(placed) >= EVIDENCE:
            where = {k for i in placed for k in kinds[i]}
            text = (f"{lack.upper()} has no {section} of its own: {len(placed)} of its sentences {job} "
                    f"{where_phrase(k for k in self.kinds if k in where)} ({have.upper()}'s {section} has "
                    f"{_sentences(count)}).")
            return GapItem(kind, "", "", have, count, (), text,
                           SECTION_UNDER_OTHER_HEADINGS * base * _evidence(count, 4), "section-elsewhere")
        text = f"{lack.upper()} has no {section} ({have.upper()}'s has {_sentences(count)})."
        return GapItem(kind, "", "", have, count, (), text, base * _evidence(count, 4), "section")

    def placements(self) -> None:
        """Functions one side has in a section that the other has only in other sections."""
        for kind in self.kinds:
            if kind in ("", "other"):
                continue
            for have, lack in (("a", "b"), ("b", "a")):
                theirs_rows = self.by_kind[lack][kind]
                if len(theirs_rows) < MIN_SECTION:
                    continue  # no such section (a gap of its own), or too short to say what it never does
                for function, count in sorted(self.functions[have][kind].items(),
                                              key=lambda item: (-item[1], item[0])):
                    if self.paper_level(function):
                        continue  # a statement of the whole paper: said for the paper (never_used)
                    if count < self.min_count or not self.does(lack, function, self.sides[lack]):
                        continue  # too rare to say, or never anywhere (a gap of its own)
                    if self.does(lack, function, theirs_rows):
                        continue  # both do it here
                    if self.does(lack, function, self.unrecognised[lack]):
                        continue  # maybe in a subsection of this section, under a heading of no known kind
                    elsewhere = tuple(k for k in self.kinds if k != kind
                                      and self.does(lack, function, self.by_kind[lack][k]))
                    name = self.name_of(function)
                    where = where_phrase(elsewhere)
                    also = f"; {lack.upper()} does so {where}" if where else ""
                    text = (f"In the {kind_name(kind)}, {none_clearly(lack.upper(), name)} ({have.upper()} "
                            f"does, in {_sentences(count)}){also}.")
                    importance = ELSEWHERE * _evidence(count, 2) * self.weight(function, kind, theirs_rows)
                    self.items.append(GapItem(kind, function, name, have, count, elsewhere, text, importance,
                                              "placement", self.doers(have, function,
                                                                      self.by_kind[have][kind])))

    def unreadable(self) -> None:
        for side, structure in self.structure.items():
            if structure.long_abstract:
                self.caveats.append(f"{side.upper()}'s abstract runs to {structure.long_abstract} sentences: "
                                    "the reader took the text after it for the abstract, so it is read as "
                                    f"text under other headings and no section of {side.upper()} is called "
                                    "missing.")
            elif not structure.readable and not all(ks == {""} for ks in structure.kinds_of):
                self.caveats.append(f"Most of {side.upper()}'s text sits under headings the reader did not "
                                    f"recognise, so no section of {side.upper()} is called missing.")

    def shares(self) -> list[RoleShare]:
        rows = []
        for kind in self.kinds:
            rows_a, rows_b = self.by_kind["a"][kind], self.by_kind["b"][kind]
            confident = [sum(s.confident_role for s in rows) for rows in (rows_a, rows_b)]
            rows.append(RoleShare(kind, len(rows_a), len(rows_b), _role_shares(rows_a), _role_shares(rows_b),
                                  *confident))
        return rows

    def build(self) -> GapReport:
        self.never_used()
        self.missing_sections()
        self.placements()
        self.unreadable()
        order = {"section": 0, "never": 1, "placement": 2, "section-elsewhere": 3}
        # rounded as the JSON keeps it, so that a report read back is the report written
        self.items = [replace(g, importance=round(g.importance, 4)) for g in self.items]
        self.items.sort(key=lambda g: (-g.importance, order.get(g.what, 4)))
        judged = {side: {"sentences": len(rows), "functions": sum(s.clear_function for s in rows),
                         "roles": sum(s.confident_role for s in rows), "evidence": self.evidenced[side]}
                  for side, rows in self.sides.items()}
        return GapReport(self.items, self.shares(), judged, self.caveats)


def gap_report(a: GapSide, b: GapSide, taxonomy: FunctionTaxonomy | None = None, *,
               min_count: int = 2) -> GapReport:
    """What one side does and the other does not, most important first (see the module docstring):
    sections one side lacks, functions one side never has, and functions one side has in a section
    (in at least ``min_count`` sentences) where the other has them only elsewhere; also both sides'
    role shares per section kind (the whole text when a side has no section kinds)."""
    if taxonomy is None:
        try:
            taxonomy = default_taxonomy()
        except Exception:  # a missing taxonomy only costs the nice names
            taxonomy = None
    return _Report(a, b, taxonomy, min_count).build()
