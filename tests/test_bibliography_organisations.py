"""An organisation as author ("The Team", Zotero's single-field creator) is written to BibTeX in double
braces, so BibTeX reads it as one name, never as "Team, The" (report L, problem 8); people stay
"Last, First"."""

from __future__ import annotations

import pytest

from core.exporting.bibliography import BibEntry, bibtex_author, is_organisation, to_bibtex, to_ris


@pytest.mark.parametrize("name, organisation", [
    ("The Team", True),
    ("ATLAS Collaboration", True),
    ("World Health Organization", True),
    ("Open Science Consortium", True),
    ("Bill and Melinda Gates Foundation", True),
    ("Aristotle", True),  # one word: no first name to split off
    ("Lovelace, Ada", False),
    ("Group, Anna", False),  # a person whose surname is a word from the list
    ("Ada Lovelace", False),
    ("", False),
])
def test_what_counts_as_an_organisation(name: str, organisation: bool) -> None:
    assert is_organisation(name) is organisation


def test_organisations_are_braced_and_people_are_not() -> None:
    assert bibtex_author("The Team") == "{The Team}"
    assert bibtex_author("R&D Group") == r"{R\&D Group}"
    assert bibtex_author("Lovelace, Ada") == "Lovelace, Ada"
    text = to_bibtex([BibEntry("p1", "Fast and Simple", ("The Team",), 2021),
                      BibEntry("p2", "Parsing", ("Lovelace, Ada", "Johnson and Johnson Institute"), 2019)])
    assert "  author = {{The Team}},\n" in text  # was {The Team}: BibTeX read "Team, The"
    assert "  author = {Lovelace, Ada and {Johnson and Johnson Institute}},\n" in text
    assert "@article{team2021fast," in text
    assert "AU  - The Team\r\n" in to_ris([BibEntry("p1", "Fast and Simple", ("The Team",), 2021)])
