"""The words of the Library, Suggestions and Draft panels, moved out of the widgets (issue 26.2): what a
job's end says and does, the suggestions' status line, and the draft's labelling summary."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from app.gui.operation import AnalysisUnavailable, ModelUnavailable
from app.gui.panels import library_text, suggestion_text
from app.gui.panels.draft_text import labelled_summary, opened_text
from core.library.store import DamagedLibraryError, MissingDatabaseError
from core.taxonomy.labels import RolePrediction


def test_a_failed_library_job_says_one_line_and_changes_only_what_it_may_have_changed() -> None:
    no_model = library_text.failed_outcome(ModelUnavailable("bundle refused\nsecond line " + "x" * 400))
    assert no_model.text.startswith("No model: choose a model bundle in File › Settings (")
    assert "\n" not in no_model.text and len(no_model.text) <= 240
    assert not no_model.changed and not no_model.announce and not no_model.repair
    no_analysis = library_text.failed_outcome(AnalysisUnavailable("The paper was closed."))
    assert no_analysis.text == "The paper was closed." and not no_analysis.changed
    damaged = library_text.failed_outcome(DamagedLibraryError(Path("/x/library.sqlite3"), "page 3 is bad"))
    assert damaged.repair and damaged.changed and damaged.announce and "page 3 is bad" in damaged.text
    missing = library_text.failed_outcome(MissingDatabaseError(Path("/x"), "missing"))
    assert missing.repair and "missing or empty" in missing.text
    other = library_text.failed_outcome(OSError("disk full"))
    assert other.text == "Failed: disk full" and other.changed and not other.repair  # part may have happened


def test_library_outcomes_of_adds_and_removes() -> None:
    from core.library.library import ALREADY_THERE, AddReport

    skipped = [("/p/b.pdf", ALREADY_THERE), ("/p/c.pdf", "/p/c.pdf: encrypted")]
    report = AddReport(added=["a"], skipped=skipped, sentences=12)
    added = library_text.added_outcome(report)
    assert added.text == "Added 1 paper (12 sentences) · 1 already in your library · 1 could not be read"
    assert added.details == ("b.pdf: already in your library", "c.pdf: encrypted") and added.changed
    assert not library_text.added_outcome(AddReport(skipped=[("/p/b.pdf", ALREADY_THERE)])).changed
    assert library_text.paper_added_outcome("T", None).text == "“T” is already in your library."
    assert not library_text.paper_added_outcome("T", None).changed
    assert library_text.paper_added_outcome("T", 1).text == "Added “T” to your library (1 sentence)."
    assert library_text.removed_outcome((2, 30)).text == "Removed 2 papers (30 sentences)."
    assert library_text.removal_question(["T"]).startswith("Remove “T” from your library?")
    assert "2 papers" in library_text.removal_question(["T", "U"])


def test_suggestion_status_and_messages() -> None:
    assert suggestion_text.result_status(1, 0.42, []) == "1 suggestion · 0.4 s"
    line = suggestion_text.result_status(3, 1.0, ["phrase corpus only: your library is damaged\nrepair it"])
    assert line == "3 suggestions · 1.0 s · phrase corpus only: your library is damaged repair it"
    assert "try “All”" in suggestion_text.no_results_message(["Stating the aim"])
    assert "add more papers" in suggestion_text.no_results_message([])
    note = suggestion_text.broken_library_note(MissingDatabaseError(Path("/x"), "missing"))
    assert note == "phrase corpus only: your library has lost its database; repair it in the Library panel"
    assert "&lt;b&gt;" in suggestion_text.failure_message(RuntimeError("<b>"))  # escaped: rich text


def test_draft_summary_counts_confident_roles_and_keeps_the_note() -> None:
    sure = RolePrediction("method", {"method": 0.9, "result": 0.1})
    weak = RolePrediction("method", {"method": 0.4, "result": 0.35, "background": 0.25})
    labelled = [((0, 5), sure), ((6, 9), sure), ((10, 12), weak)]
    assert labelled_summary(labelled) == "3 sentences: 2 method, 1 uncertain"
    assert labelled_summary(labelled, "Opened a.md (Markdown): 3 sentences") == (
        "Opened a.md (Markdown): 3 sentences — 3 sentences: 2 method, 1 uncertain")
    assert labelled_summary([], "Opened a.md") == "Opened a.md" and labelled_summary([]) == ""


def test_what_opening_a_draft_says() -> None:
    from core.draft_formats import parse_draft_text

    parsed = parse_draft_text("# Intro\n\nWe study X. We find Y.\n", "md")
    assert opened_text("/d/a.md", parsed) == f"Opened a.md (Markdown): {len(parsed.sentences)} sentences"
