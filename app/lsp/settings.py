"""What an editor may configure: ``initializationOptions`` at start, ``workspace/didChangeConfiguration``
later (under a ``"rhetorica"`` key, or the bare object). Unknown keys are ignored; a value of the wrong
type or out of range is refused with one line naming the key and the value kept (the server shows it
and keeps the previous value; the other keys of the same message still apply). A folder path
(``corpus``, ``library``) is checked when it is set: it must exist, be a folder and hold a phrase corpus
or a library (``core.phrasing.suggest.has_sentences``)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
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
        """These settings updated from a client's JSON object (camelCase or snake_case keys);
        :class:`SettingsError` for the first bad value (nothing is changed then)."""
        updated, errors = self.apply(options)
        if errors:
            raise SettingsError(errors[0])
        return updated

    def apply(self, options: object) -> tuple[LspSettings, list[str]]:
        """(these settings updated from a client's JSON object with every good value, one line per bad
        value: naming the key and the value it keeps)."""
        if options is None:
            return self, []
        if not isinstance(options, dict):
            return self, [f"rhetorica settings must be an object, not {type(options).__name__}; "
                          "nothing was changed"]
        nested = options.get("rhetorica")
        if isinstance(nested, dict):
            options = nested
        known = {f.name: f.name for f in fields(self)}
        known.update({_camel(name): name for name in list(known)})
        changes: dict[str, Any] = {}
        errors: list[str] = []
        for key, value in options.items():
            name = known.get(str(key))
            if name is None:
                continue
            try:
                changes[name] = _checked(name, value)
            except SettingsError as error:
                errors.append(f"{error}; keeping {_shown(name, getattr(self, name))}")
        return replace(self, **changes), errors

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
    if value is None:
        return None  # corpus, library: the default folder
    if not (isinstance(value, str) and value.strip() and "\x00" not in value):
        raise SettingsError(f"rhetorica setting {_camel(name)!r} must be a folder path, not {value!r}")
    folder = str(Path(value).expanduser())
    problem = folder_problem(folder, name)
    if problem:
        raise SettingsError(f"rhetorica setting {_camel(name)!r}: {problem}")
    return folder


#: what each folder setting is (its default, when unset)
FOLDER_WHAT = {"corpus": ("a phrase corpus", "the bundled or built phrase corpus"),
               "library": ("a library", "your library")}


def folder_problem(folder: str | Path, name: str) -> str:
    """Why ``folder`` cannot be the ``corpus``/``library`` setting ("" when it can): it must exist, be
    a folder and hold a phrase corpus or a library (what the suggestions are searched in)."""
    from core.phrasing.suggest import has_sentences

    path = Path(folder)
    try:
        if not path.exists():
            return f"{path} does not exist"
        if not path.is_dir():
            return f"{path} is a file, not {FOLDER_WHAT[name][0]} folder"
        if not has_sentences(path):
            return (f"{path} holds no phrase corpus or library (build one with 'rhetorica corpus build' "
                    "or 'rhetorica library add PDF…')")
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"
    return ""


def _shown(name: str, value: object) -> str:
    """A setting's value as the refusal names it ("keeping 'inlay'", "keeping your library")."""
    if name in FOLDER_WHAT:
        return str(value) if value else FOLDER_WHAT[name][1]
    return "none" if value is None else repr(value)


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise SettingsError(f"rhetorica setting {name!r} must be one of {', '.join(choices)}, not {value!r}")
    return value
