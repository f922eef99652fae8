"""Library › Add (hostile test I, problem 4): the progress of adding a folder is one scale of papers that
only moves forward, said as "paper 2 of 3 (b.pdf)", never a section name that the labelling of one paper
reports on the scale of its sentences. The real ``Library.add_pdfs`` runs, with the parse and the
labelling replaced by stand-ins that report as the real ones do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.gui import library_jobs
from app.gui.job_progress import PaperSteps, Steps
from core.jobs import JobContext, Progress


class _Parsed:
    def __init__(self, path: Path) -> None:
        self.sha256 = path.name * 4


def _label_like_analyze_paper(self: Any, paper: Any, model: Any, *, note: str = "",
                              ctx: JobContext | None = None, analysis: Any = None) -> list[int]:
    """What ``analyze_paper`` reports while a paper is labelled: sentences of this paper."""
    assert ctx is not None
    ctx.progress(0, 40, "Labelling sentence roles")
    for done in (10, 25, 40):
        ctx.progress(done, 40, "Labelled Acknowledgments")
    return [1, 2, 3]


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.corpus_pipeline.parse
    from core.library.library import Library

    monkeypatch.setattr(core.corpus_pipeline.parse, "parse_pdfs",
                        lambda paths, workers, **_: ((Path(p), _Parsed(Path(p))) for p in paths))
    monkeypatch.setattr(Library, "add_paper", _label_like_analyze_paper)


def _pdfs(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_bytes(f"%PDF-1.4 {name}".encode())
    return folder


def _measured(seen: list[Progress]) -> list[Progress]:
    return [p for p in seen if p.total > 1]


def test_adding_a_folder_counts_papers_on_one_forward_scale(tmp_path: Path, stand_ins: None) -> None:
    folder = _pdfs(tmp_path / "pdfs", ["a.pdf", "b.pdf", "c.pdf"])
    seen: list[Progress] = []
    report = library_jobs.add_pdfs_job(JobContext(seen.append), tmp_path / "library", [folder],
                                       model=object(), workers=1)  # type: ignore[arg-type]
    assert len(report.added) == 3 and report.sentences == 9
    measured = _measured(seen)
    assert len({p.total for p in measured}) == 1  # one scale
    values = [p.done for p in measured]
    assert values == sorted(values) and values[-1] == measured[-1].total  # forward only, to the end
    words = [p.message for p in measured]
    assert not any("Labelled" in w for w in words)  # a paper's sections are not the job's words
    for number, name in enumerate(["a.pdf", "b.pdf", "c.pdf"], 1):
        assert f"paper {number} of 3 ({name})" in words
    # while paper 2 is labelled, the bar is within paper 2's share
    second = [p for p in measured if p.message == "paper 2 of 3 (b.pdf)"]
    assert all(p.total // 3 <= p.done <= 2 * p.total // 3 for p in second) and len(second) > 1


def test_one_pdf_is_read_then_added_on_one_forward_scale(tmp_path: Path, stand_ins: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import app.gui.pdf_jobs

    def parse_isolated(ctx: JobContext, path: str) -> _Parsed:
        ctx.progress(3, 6, "laying out page 1 of 3")
        ctx.progress(6, 6, "done")  # the parser's last word, not the job's
        return _Parsed(Path(path))

    monkeypatch.setattr(app.gui.pdf_jobs, "parse_isolated", parse_isolated)
    folder = _pdfs(tmp_path / "one", ["only.pdf"])
    seen: list[Progress] = []
    report = library_jobs.add_pdfs_job(JobContext(seen.append), tmp_path / "library", [folder],
                                       model=object())  # type: ignore[arg-type]
    assert len(report.added) == 1
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions)
    words = [p.message for p in seen]
    assert "done" not in words and not any("Labelled" in w for w in words)
    assert {"reading only.pdf", "adding only.pdf"} <= set(words)


def test_paper_steps_and_steps_pass_cancel_on() -> None:
    ctx = JobContext()
    papers = PaperSteps(ctx, 2)
    share = papers.child(0.5, 1.0)
    step = Steps(ctx, [("a", 1.0)]).step("a", "working")
    ctx.cancel()
    assert papers.cancelled and share.cancelled and step.cancelled
    from core.errors import Cancelled

    for context in (papers, share, step, step.child(0.0, 0.5)):
        with pytest.raises(Cancelled):
            context.check()
