"""The gap report of an alignment: the functions one paper has and the other lacks, per section,
phrased with the taxonomy's names, and the share of each role per section side by side.

Only confident labels count (issue 24.5): a function below the bundle's threshold ("none") never
makes or fills a gap, and a role below ``core.labels.UNCERTAIN_BELOW`` is left out of the role
shares; ``GapReport.judged`` / ``GapReport.note`` say on how many sentences of each side the report
was judged."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from core.align import Alignment, AlignSentence, GapItem, GapReport, RoleShare
from core.labels import ROLES

if TYPE_CHECKING:  # pragma: no cover
    from core.functions import FunctionTaxonomy


# -- the gap report -------------------------------------------------------------------------------
KIND_NAMES = {"abstract": "abstract", "introduction": "introduction", "related-work": "related work",
              "method": "method section", "result": "results", "discussion": "discussion",
              "conclusion": "conclusion", "other": "other sections", "": "whole text"}

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


def kind_name(kind: str) -> str:
    return KIND_NAMES.get(kind, kind.replace("-", " "))


def never_phrase(name: str) -> str:
    """"never admits a limitation" for "Admitting a limitation" (or "has no “name” sentence")."""
    first, _, rest = name.partition(" ")
    verb = VERBS.get(first.lower())
    if verb is None:
        return f"has no “{name}” sentence"
    return f"never {verb}{' ' + rest if rest else ''}"


def _role_shares(sentences: list[AlignSentence]) -> dict[str, float]:
    """The share of each role among the sentences with a confident role (uncertain ones left out)."""
    confident = [s for s in sentences if s.confident_role]
    counts = Counter(s.role for s in confident)
    return {role: counts.get(role, 0) / len(confident) if confident else 0.0 for role in ROLES}


def gap_report(alignment: Alignment, taxonomy: FunctionTaxonomy | None = None, *,
               min_count: int = 2) -> GapReport:
    """What one side does and the other does not: first the functions one side has and the other
    never has anywhere; then, per section kind, the functions one side has there (in at least
    ``min_count`` sentences) and the other has only in other sections; sections one side lacks.
    Also both sides' role shares per section kind (the whole text when a side has no kinds)."""
    if taxonomy is None:
        try:
            from core.functions import default_taxonomy

            taxonomy = default_taxonomy()
        except Exception:  # a missing taxonomy only costs the nice names
            taxonomy = None
    sides = {"a": alignment.a.sentences, "b": alignment.b.sentences}
    whole = any(all(s.section_kind == "" for s in sentences) for sentences in sides.values())

    def group(sentence: AlignSentence) -> str:
        return "" if whole else sentence.section_kind

    kinds: list[str] = []
    for sentences in sides.values():
        for sentence in sentences:
            if group(sentence) not in kinds:
                kinds.append(group(sentence))
    order = list(KIND_NAMES)
    kinds.sort(key=lambda k: order.index(k) if k in order else len(order))
    by_kind = {side: {k: [s for s in sentences if group(s) == k] for k in kinds}
               for side, sentences in sides.items()}
    functions_by_kind = {side: {k: Counter(s.function for s in rows if s.clear_function)
                                for k, rows in kinds_.items()} for side, kinds_ in by_kind.items()}
    items: list[GapItem] = []
    shares: list[RoleShare] = []

    def name_of(function: str) -> str:
        return taxonomy.name_of(function) if taxonomy is not None else function

    def plural(count: int) -> str:
        return f"{count} sentence{'s' if count != 1 else ''}"

    totals = {side: sum(kinds_.values(), Counter()) for side, kinds_ in functions_by_kind.items()}
    for have, lack in (("a", "b"), ("b", "a")):  # functions the other side never has anywhere
        for function, count in sorted(totals[have].items(), key=lambda item: (-item[1], item[0])):
            if totals[lack].get(function):
                continue
            where = [kind_name(k) for k in kinds if k and functions_by_kind[have][k].get(function)]
            text = f"{lack.upper()} {never_phrase(name_of(function))} ({have.upper()}: {plural(count)}"
            text += f" in the {', '.join(where)})." if where else ")."
            items.append(GapItem("", function, name_of(function), have, count, (), text))
    for kind in kinds:
        rows_a, rows_b = by_kind["a"][kind], by_kind["b"][kind]
        shares.append(RoleShare(kind, len(rows_a), len(rows_b), _role_shares(rows_a), _role_shares(rows_b),
                                sum(s.confident_role for s in rows_a), sum(s.confident_role for s in rows_b)))
        if kind == "":
            continue  # the whole text: covered above
        for have, lack in (("a", "b"), ("b", "a")):
            mine = functions_by_kind[have][kind]
            if not by_kind[lack][kind]:
                items.append(GapItem(kind, "", "", have, len(by_kind[have][kind]), (),
                                     f"{lack.upper()} has no {kind_name(kind)}; {have.upper()} has "
                                     f"{plural(len(by_kind[have][kind]))} there."))
                continue
            theirs = functions_by_kind[lack][kind]
            for function, count in sorted(mine.items(), key=lambda item: (-item[1], item[0])):
                if theirs.get(function) or not totals[lack].get(function) or count < min_count:
                    continue  # shared here, reported above as missing everywhere, or too rare to say
                elsewhere = tuple(k for k in kinds if k != kind and functions_by_kind[lack][k].get(function))
                text = (f"In the {kind_name(kind)}, {lack.upper()} {never_phrase(name_of(function))} "
                        f"({have.upper()}: {plural(count)}); {lack.upper()} does in the "
                        f"{', '.join(kind_name(k) for k in elsewhere)}.")
                items.append(GapItem(kind, function, name_of(function), have, count, elsewhere, text))
    judged = {side: {"sentences": len(sentences), "functions": sum(s.clear_function for s in sentences),
                     "roles": sum(s.confident_role for s in sentences)} for side, sentences in sides.items()}
    return GapReport(items, shares, judged)
