"""The communicative-function taxonomy: what a sentence does, one level finer than its role.

The taxonomy is data with a version (``resources/functions/taxonomy.toml``, written for Rhetorica):
each :class:`FunctionInfo` has an id, a short name, a one-line description (the labelling
guideline), the section where it mostly occurs, the role it belongs to (one of
:data:`core.taxonomy.labels.ROLES`) and its marker patterns.

A marker is a lower-cased lemma n-gram in which ``*`` stands for a slot of 0 to
:data:`SLOT_MAX` arbitrary tokens (``"little attention * pay to"`` matches the lemmas of "little
attention has been paid to").  :class:`Marker` matches token lists; lemmatising a sentence
(spaCy, in corpus building only) is the caller's job, so this module stays pure Python.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from core.document import SectionKind
from core.errors import TaxonomyError
from core.paths import resources_dir
from core.taxonomy.labels import ROLES

SLOT = "*"
SLOT_MAX = 3  # tokens a "*" may stand for
_TOKEN = re.compile(r"\*|-|[^\s\-]+")


def marker_tokens(text: str) -> tuple[str, ...]:
    """Tokens of a marker or of lemma text: whitespace-separated, hyphens as tokens of their own
    (spaCy splits "t-test" into "t", "-", "test"), lower-cased."""
    return tuple(_TOKEN.findall(text.lower()))


@dataclass(frozen=True)
class Marker:
    """One marker pattern: literal tokens with optional ``*`` slots between them."""

    text: str

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        return marker_tokens(self.text)

    @cached_property
    def literals(self) -> frozenset[str]:
        """The marker's words (everything but slots): all must occur for it to match."""
        return frozenset(t for t in self.tokens if t != SLOT)

    @property
    def literal_count(self) -> int:
        return sum(t != SLOT for t in self.tokens)

    def find(self, tokens: Sequence[str]) -> tuple[int, int] | None:
        """The first (start, end) token span of ``tokens`` (lemmas) the marker matches, or None;
        a slot takes as few tokens as it can."""
        return self.find_lowered([t.lower() for t in tokens])

    def find_lowered(self, words: Sequence[str], vocabulary: frozenset[str] | None = None
                     ) -> tuple[int, int] | None:
        """:meth:`find` on tokens already lower-cased; ``vocabulary`` (the set of ``words``) lets
        a marker whose words are not all there be skipped at once."""
        if vocabulary is not None and not self.literals <= vocabulary:
            return None
        pattern = self.tokens
        for start in range(len(words)):
            end = _match(pattern, words, start)
            if end is not None:
                return start, end
        return None


def _match(pattern: tuple[str, ...], words: Sequence[str], at: int) -> int | None:
    """End index when ``pattern`` matches ``words`` from ``at`` (slots: 0..SLOT_MAX tokens)."""
    if not pattern:
        return at
    head, rest = pattern[0], pattern[1:]
    if head == SLOT:
        for skip in range(SLOT_MAX + 1):
            if at + skip > len(words):
                break
            end = _match(rest, words, at + skip)
            if end is not None:
                return end
        return None
    if at < len(words) and words[at] == head:
        return _match(rest, words, at + 1)
    return None


@dataclass(frozen=True)
class FunctionInfo:
    """One communicative function of the taxonomy."""

    id: str
    name: str
    description: str
    section: str
    role: str
    markers: tuple[Marker, ...]
    instead_in: tuple[tuple[str, str], ...] = ()  # (section kind, function id done there instead)


@dataclass(frozen=True)
class FunctionTaxonomy:
    """The whole taxonomy, in file order."""

    name: str
    version: str
    sections: tuple[str, ...]
    functions: tuple[FunctionInfo, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(f.id for f in self.functions)

    def get(self, function_id: str) -> FunctionInfo:
        for function in self.functions:
            if function.id == function_id:
                return function
        raise KeyError(function_id)

    def name_of(self, function_id: str) -> str:
        """The short name of a function, or the id itself when the taxonomy lacks it (a bundle
        trained on another taxonomy version)."""
        for function in self.functions:
            if function.id == function_id:
                return function.name
        return function_id

    def in_section(self, function_id: str, section_kind: str | None) -> str:
        """The function a marker of ``function_id`` signals in a section of ``section_kind``
        (its ``instead_in`` entry for that kind, else itself)."""
        return dict(self.get(function_id).instead_in).get(str(section_kind), function_id)

    def of_role(self, role: str) -> tuple[FunctionInfo, ...]:
        return tuple(f for f in self.functions if f.role == role)

    def matching(self, tokens: Sequence[str]) -> list[tuple[FunctionInfo, Marker, tuple[int, int]]]:
        """Every (function, marker, span) whose marker matches the lemma tokens."""
        words = [t.lower() for t in tokens]
        vocabulary = frozenset(words)
        found = []
        for function in self.functions:
            for marker in function.markers:
                span = marker.find_lowered(words, vocabulary)
                if span is not None:
                    found.append((function, marker, span))
        return found


def default_taxonomy_path() -> Path:
    return resources_dir() / "functions" / "taxonomy.toml"


def _field(entry: dict[str, object], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TaxonomyError(f"{where}: '{key}' must be a non-empty string")
    return value


def _instead_in(entry: dict[str, object], where: str) -> tuple[tuple[str, str], ...]:
    value = entry.get("instead_in", {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TaxonomyError(f"{where}: 'instead_in' must map section kinds to function ids")
    kinds = {kind.value for kind in SectionKind}
    bad = sorted(set(value) - kinds)
    if bad:
        raise TaxonomyError(f"{where}: instead_in: unknown section kind(s) {', '.join(bad)}")
    return tuple(sorted((str(k), str(v)) for k, v in value.items()))


def parse_taxonomy(data: dict[str, object], where: str = "taxonomy") -> FunctionTaxonomy:
    """Validate the TOML's data: ids unique, roles and sections known, 1+ markers each."""
    sections = data.get("sections")
    if not isinstance(sections, list) or not all(isinstance(s, str) for s in sections):
        raise TaxonomyError(f"{where}: 'sections' must be a list of names")
    entries = data.get("function")
    if not isinstance(entries, list) or not entries:
        raise TaxonomyError(f"{where}: no [[function]] entries")
    functions: list[FunctionInfo] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise TaxonomyError(f"{where}: function #{number} is not a table")
        here = f"{where}: function #{number}"
        function_id = _field(entry, "id", here)
        here = f"{where}: function {function_id!r}"
        role, section = _field(entry, "role", here), _field(entry, "section", here)
        if role not in ROLES:
            raise TaxonomyError(f"{here}: role {role!r} is not one of {', '.join(ROLES)}")
        if section not in sections:
            raise TaxonomyError(f"{here}: section {section!r} is not one of {', '.join(sections)}")
        markers = entry.get("markers")
        if not isinstance(markers, list) or not markers or not all(isinstance(m, str) for m in markers):
            raise TaxonomyError(f"{here}: 'markers' must be a non-empty list of strings")
        compiled = tuple(Marker(" ".join(marker_tokens(m))) for m in markers)
        if any(m.literal_count == 0 for m in compiled):
            raise TaxonomyError(f"{here}: a marker needs at least one word")
        functions.append(FunctionInfo(function_id, _field(entry, "name", here),
                                      _field(entry, "description", here), section, role, compiled,
                                      _instead_in(entry, here)))
    ids = [f.id for f in functions]
    for function in functions:
        unknown = [target for _, target in function.instead_in if target not in ids]
        if unknown:
            raise TaxonomyError(f"{where}: function {function.id!r}: instead_in names unknown "
                                f"function(s) {', '.join(unknown)}")
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise TaxonomyError(f"{where}: duplicate function id(s) {', '.join(duplicates)}")
    return FunctionTaxonomy(_field(data, "name", where), _field(data, "version", where),
                            tuple(sections), tuple(functions))


def load_taxonomy(path: str | Path | None = None) -> FunctionTaxonomy:
    """Read and validate a taxonomy file (default: the bundled one)."""
    target = Path(path) if path is not None else default_taxonomy_path()
    try:
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaxonomyError(f"{target}: function taxonomy not found") from None
    except tomllib.TOMLDecodeError as error:
        raise TaxonomyError(f"{target}: not valid TOML ({error})") from None
    return parse_taxonomy(data, str(target))


@lru_cache(maxsize=1)
def default_taxonomy() -> FunctionTaxonomy:
    """The bundled taxonomy, read once."""
    return load_taxonomy()


__all__ = ["FunctionInfo", "FunctionTaxonomy", "Marker", "TaxonomyError", "default_taxonomy",
           "load_taxonomy", "marker_tokens", "parse_taxonomy"]
