"""The communicative-function taxonomy (resources/functions/taxonomy.toml) and its marker matcher."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from core.taxonomy.functions import (
    Marker,
    TaxonomyError,
    default_taxonomy,
    load_taxonomy,
    marker_tokens,
    parse_taxonomy,
)
from core.taxonomy.labels import ROLES


def test_the_bundled_taxonomy_has_the_promised_shape() -> None:
    taxonomy = default_taxonomy()
    assert taxonomy.name == "rhetorica-functions" and taxonomy.version
    assert 50 <= len(taxonomy.functions) <= 90
    for function in taxonomy.functions:
        assert 5 <= len(function.markers) <= 15, function.id
        assert function.role in ROLES and function.section in taxonomy.sections
        assert "\n" not in function.description and function.description.endswith(".")
        assert all(m.text == m.text.lower() for m in function.markers), function.id
    assert {f.role for f in taxonomy.functions} == set(ROLES)  # every role has functions
    used = {f.section for f in taxonomy.functions}
    assert used >= {"introduction", "related_work", "method", "results", "discussion", "conclusion", "any"}


def test_no_marker_belongs_to_two_functions() -> None:
    owners: dict[tuple[str, ...], set[str]] = {}
    for function in default_taxonomy().functions:
        for marker in function.markers:
            owners.setdefault(marker.tokens, set()).add(function.id)
    shared = {" ".join(tokens): ids for tokens, ids in owners.items() if len(ids) > 1}
    assert shared == {}
    counts = Counter(m.tokens for f in default_taxonomy().functions for m in f.markers)
    assert max(counts.values()) == 1  # and none twice within one function


@pytest.mark.parametrize(("marker", "lemmas", "span"), [
    ("little attention * pay to", "little attention have be pay to this", (0, 6)),
    ("little attention * pay to", "little attention pay to", (0, 4)),  # a slot may be empty
    ("little attention * pay to", "little attention have so far really be pay to", None),  # > 3 tokens
    ("we propose", "in this paper we propose a model", (3, 5)),
    ("t-test", "a paired t - test be use", (2, 5)),  # hyphens are tokens, as spaCy splits them
    ("be show in table", "result be show in figure 2", None),
])
def test_marker_matching(marker: str, lemmas: str, span: tuple[int, int] | None) -> None:
    assert Marker(marker).find(marker_tokens(lemmas)) == span


def test_matching_names_every_function_whose_marker_fires() -> None:
    taxonomy = default_taxonomy()
    hits = taxonomy.matching(marker_tokens("to our surprise , it remain unclear whether this hold"))
    assert {f.id for f, _, _ in hits} == {"unexpected", "open-question"}
    assert taxonomy.get("aim").role == "objective" and taxonomy.of_role("other")
    with pytest.raises(KeyError):
        taxonomy.get("no-such-function")


def _entry(**overrides: object) -> dict[str, object]:
    entry: dict[str, object] = {"id": "a", "name": "A", "description": "Does A.", "section": "method",
                                "role": "method", "markers": ["we do a"]}
    entry.update(overrides)
    return entry


@pytest.mark.parametrize(("entries", "message"), [
    ([_entry(role="methods")], "role 'methods' is not one of"),
    ([_entry(section="intro")], "section 'intro' is not one of"),
    ([_entry(), _entry(markers=["we do b"])], "duplicate function id(s) a"),
    ([_entry(markers=[])], "'markers' must be a non-empty list"),
    ([_entry(markers=["* *"])], "a marker needs at least one word"),
    ([_entry(name="")], "'name' must be a non-empty string"),
    ([_entry(instead_in={"conclusions": "a"})], "instead_in: unknown section kind(s) conclusions"),
    ([_entry(instead_in={"conclusion": "b"})], "instead_in names unknown function(s) b"),
    ([_entry(instead_in=["conclusion"])], "'instead_in' must map section kinds to function ids"),
])
def test_a_malformed_taxonomy_is_one_clear_error(entries: list[dict[str, object]], message: str) -> None:
    data = {"name": "t", "version": "0", "sections": ["method"], "function": entries}
    with pytest.raises(TaxonomyError) as caught:
        parse_taxonomy(data, "t.toml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_missing_or_broken_files(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="function taxonomy not found"):
        load_taxonomy(tmp_path / "none.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [", encoding="utf-8")
    with pytest.raises(TaxonomyError, match="not valid TOML"):
        load_taxonomy(broken)


def test_a_marker_can_signal_another_function_in_some_sections() -> None:
    taxonomy = default_taxonomy()
    assert taxonomy.in_section("proposal", "conclusion") == "work-summary"
    assert taxonomy.in_section("proposal", "abstract") == "proposal"
    assert taxonomy.in_section("proposal", None) == "proposal"
    assert taxonomy.in_section("aim", "conclusion") == "aim"
    for function in taxonomy.functions:  # the switch stays within the taxonomy
        assert all(target in taxonomy.ids for _, target in function.instead_in)


def test_name_of_falls_back_to_the_id() -> None:
    taxonomy = default_taxonomy()
    assert taxonomy.name_of("aim") == taxonomy.get("aim").name
    assert taxonomy.name_of("from-another-version") == "from-another-version"
