"""What an editor may configure: ``initializationOptions`` at start, ``workspace/didChangeConfiguration``
later (under a ``"rhetorica"`` key, or the bare object). Unknown keys are ignored; a value of the wrong
type or out of range is refused with one line naming the key (the server shows it and keeps the
previous value)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

LABEL_MODES = ("inlay", "diagnostics", "both", "off")
SOURCE_CHOICES = ("all", "corpus", "library", "none")
# core.taxonomy.moves.EXPECTED's keys
SECTION_KINDS = ("abstract", "introduction", "discussion", "conclusion")
MAX_SUGGESTIONS = 10


class SettingsError(ValueError):
    """A setting the server cannot use (one line)."""


@dataclass(frozen=True)
class LspSettings:
    # How each sentence's role and function reach the editor: inlay hints, hint-level diagnostics,
    # both, or not at all (hover, code actions and the section summary stay).
    labels: str = "inlay"
    # Suggestions in a hover (and "Insert template" actions), 0 to MAX_SUGGESTIONS.
    suggestions: int = 3
    sources: str = "all"  # where suggestions come from
    corpus: str | None = None  # a phrase-corpus folder (default: core.paths.corpus_dir())
    library: str | None = None  # a library folder (default: core.paths.library_dir())
    checklist: bool = True  # the per-section move summary as a diagnostic on the heading
    # The section a draft without headings is checked as (None: no summary for such a draft).
    checklist_kind: str | None = None

    def with_options(self, options: object) -> LspSettings:
        """These settings updated from a client's JSON object (camelCase or snake_case keys)."""
        if options is None:
            return self
        if not isinstance(options, dict):
            raise SettingsError(f"rhetorica settings must be an object, not {type(options).__name__}")
        nested = options.get("rhetorica")
        if isinstance(nested, dict):
            options = nested
        known = {f.name: f.name for f in fields(self)}
        known.update({_camel(name): name for name in list(known)})
        changes: dict[str, Any] = {}
        for key, value in options.items():
            name = known.get(str(key))
            if name is not None:
                changes[name] = _checked(name, value)
        return replace(self, **changes)

    @property
    def inlay_hints(self) -> bool:
        return self.labels in ("inlay", "both")

    @property
    def label_diagnostics(self) -> bool:
        return self.labels in ("diagnostics", "both")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _checked(name: str, value: object) -> Any:
    if name == "labels":
        return _choice(name, value, LABEL_MODES)
    if name == "sources":
        return _choice(name, value, SOURCE_CHOICES)
    if name == "checklist_kind":
        return None if value is None else _choice(_camel(name), value, SECTION_KINDS)
    if name == "suggestions":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SUGGESTIONS:
            raise SettingsError(f"rhetorica setting 'suggestions' must be a whole number 0 to "
                                f"{MAX_SUGGESTIONS}, not {value!r}")
        return value
    if name == "checklist":
        if not isinstance(value, bool):
            raise SettingsError(f"rhetorica setting 'checklist' must be true or false, not {value!r}")
        return value
    if value is None or (isinstance(value, str) and value.strip() and "\x00" not in value):
        return value  # corpus, library: a folder path (checked when it is opened)
    raise SettingsError(f"rhetorica setting {_camel(name)!r} must be a folder path, not {value!r}")


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise SettingsError(f"rhetorica setting {name!r} must be one of {', '.join(choices)}, not {value!r}")
    return value
