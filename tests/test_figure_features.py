"""What a figure is made of (issue 25, core.figures.figure_features): a drawn diagram, a raster photo and a
chart on synthetic PDFs made with pymupdf; the caption cues, title overlap, series and mention profiles; the
looks of a paper read safely (main thread, another thread, a changed or missing PDF)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from core.document import Figure, Section, SectionKind
from core.figures.figure_features import (
    FigureLook,
    caption_cues,
    caption_series,
    figure_type,
    is_appendix_page,
    look_at_figures,
    looks_for_paper,
    mention_profile,
    multi_panel,
    title_overlap,
    type_scores,
)
from tests.paper_factory import make_paper

DIAGRAM = (72.0, 80.0, 540.0, 300.0)
PHOTO = (72.0, 330.0, 300.0, 520.0)
CHART = (320.0, 330.0, 540.0, 520.0)
PANELS = (72.0, 560.0, 540.0, 740.0)


def _noise_png(width: int, height: int, seed: int) -> bytes:
    """A continuous-tone image (smooth gradients plus noise), like a photograph or micrograph."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 255 / width), (y * 255 / height), ((x + y) * 127 / (width + height))], axis=-1)
    pixels = np.clip(base * 0.6 + rng.normal(60, 40, size=base.shape), 0, 255).astype(np.uint8)
    pix = pymupdf.Pixmap(pymupdf.csRGB, width, height, pixels.tobytes(), False)
    return pix.tobytes("png")


def _diagram(page: pymupdf.Page) -> None:
    """Three labelled boxes joined by arrows: a pipeline."""
    x0, y0, _x1, _y1 = DIAGRAM
    for k, label in enumerate(("Encoder", "Ranker", "Output")):
        left = x0 + 20 + 160 * k
        page.draw_rect(pymupdf.Rect(left, y0 + 60, left + 110, y0 + 120), color=(0, 0, 0), width=1)
        page.insert_text((left + 12, y0 + 95), label, fontsize=11)
        if k < 2:
            page.draw_line((left + 110, y0 + 90), (left + 155, y0 + 90), color=(0, 0, 0))
            tip = left + 160
            page.draw_polyline([(tip - 8, y0 + 85), (tip, y0 + 90), (tip - 8, y0 + 95), (tip - 8, y0 + 85)],
                               color=(0, 0, 0), fill=(0, 0, 0), closePath=True)


def _chart(page: pymupdf.Page) -> None:
    """Axes with ticks, numeric labels and a curve."""
    x0, y0, x1, y1 = CHART
    left, bottom = x0 + 30, y1 - 25
    page.draw_line((left, y0 + 10), (left, bottom), color=(0, 0, 0))
    page.draw_line((left, bottom), (x1 - 10, bottom), color=(0, 0, 0))
    for k in range(6):
        x = left + k * (x1 - 10 - left) / 5
        page.draw_line((x, bottom), (x, bottom + 4), color=(0, 0, 0))
        page.insert_text((x - 4, bottom + 14), f"{k * 20}", fontsize=7)
        y = bottom - k * (bottom - y0 - 10) / 5
        page.draw_line((left - 4, y), (left, y), color=(0, 0, 0))
        page.insert_text((left - 22, y + 3), f"{k / 5:.1f}", fontsize=7)
    points = [(left + t * 1.6, bottom - 120 * (1 - np.exp(-t / 30))) for t in range(0, 110, 5)]
    page.draw_polyline(points, color=(0.8, 0.1, 0.1), width=1.2)


def figures_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    _diagram(page)
    page.insert_image(pymupdf.Rect(*PHOTO), stream=_noise_png(228, 190, 1))
    _chart(page)
    for k, letter in enumerate("ab"):  # two photos side by side, lettered panels
        left = PANELS[0] + 240 * k
        page.insert_image(pymupdf.Rect(left, PANELS[1] + 15, left + 220, PANELS[3]),
                          stream=_noise_png(110, 80, 2 + k))
        page.insert_text((left, PANELS[1] + 10), f"({letter})", fontsize=9)
    doc.save(path)
    return path


def _figure(number: str, bbox: tuple[float, float, float, float], found: bool = True) -> Figure:
    caption = f"Figure {number}: something."
    return Figure(f"fig{number}", "figure", number, caption, 0, bbox, region_found=found)


@pytest.fixture(scope="module")
def looks(tmp_path_factory: pytest.TempPathFactory) -> list[FigureLook]:
    pdf = figures_pdf(tmp_path_factory.mktemp("looks") / "figures.pdf")
    figures = [_figure("1", DIAGRAM), _figure("2", PHOTO), _figure("3", CHART), _figure("4", PANELS),
               _figure("5", DIAGRAM, found=False)]
    return look_at_figures(pdf, figures)


def test_a_drawn_diagram_is_boxes_with_words_and_arrows(looks: list[FigureLook]) -> None:
    diagram = looks[0]
    assert diagram.found and diagram.raster_share == 0.0
    assert diagram.text_boxes >= 3 and diagram.arrows >= 2 and diagram.words >= 3
    assert figure_type(diagram) == "diagram"
    assert type_scores(diagram)["diagram"] > type_scores(diagram)["chart"]


def test_a_raster_photo_is_continuous_tone(looks: list[FigureLook]) -> None:
    photo = looks[1]
    assert photo.images == 1 and photo.raster_share > 0.9
    assert photo.ink_share > 0.8 and photo.tones > 0.5
    assert figure_type(photo) == "photo"


def test_a_chart_has_axes_ticks_and_numbers(looks: list[FigureLook]) -> None:
    chart = looks[2]
    assert chart.long_lines >= 2 and chart.ticks >= 8 and chart.numeric_share > 0.8
    assert figure_type(chart) == "chart"


def test_panels_are_several_images_or_panel_letters(looks: list[FigureLook]) -> None:
    panels = looks[3]
    assert panels.images == 2 and panels.panel_letters == 2
    assert multi_panel(panels) == 1.0
    assert multi_panel(looks[1]) == 0.0


def test_an_unknown_region_has_an_unknown_look(looks: list[FigureLook]) -> None:
    unknown = looks[4]
    assert unknown == FigureLook()
    assert figure_type(unknown) == "" and set(type_scores(unknown).values()) == {0.0}
    assert FigureLook.from_dict(looks[0].to_dict()) == FigureLook(**{
        k: (round(v, 4) if isinstance(v, float) else v) for k, v in vars(looks[0]).items()})


def test_caption_cues_weigh_the_first_words() -> None:
    assert caption_cues("Overview of the proposed framework.") == (1.0, 0.0, 0.0)
    assert caption_cues("Cluster shares over time for the four jobs in our overall setting.")[0] == 0.5
    assert caption_cues("An example of a screenshot. Overview follows.") == (0.0, 1.0, 0.0)
    assert caption_cues("Comparison of compression factors.")[2] == 1.0
    assert caption_cues("Study design and flow diagram of the trial.")[0] == 1.0
    assert caption_cues("Body weight of the animals.") == (0.0, 0.0, 0.0)


def test_title_overlap_and_series() -> None:
    title = "Dropout: a simple way to prevent overfitting"
    assert title_overlap(title, "Dropout network model") == pytest.approx(1 / 4)
    assert title_overlap("", "anything") == 0.0
    captions = ["Precision learning curves for GEOQUERY.", "Recall learning curves for GEOQUERY.",
                "Overview of the parser."]
    series, later = caption_series(captions, [0, 1, 2])
    assert series[0] == series[1] > 0.3 and series[2] == 0.0
    assert later[0] == 0.0 and later[1] == series[1]


def test_mention_profiles_know_where_and_how_a_figure_is_pointed_to() -> None:
    paper = make_paper()
    paper.sentences[2].text = "Figure 1 gives an overview of the method."  # in the abstract
    paper.sentences[5].text = "As Figure 1 shows, signals help."  # in the conclusion
    figure = _figure("1", DIAGRAM)
    figure.mentioned_by = ["s2", "s5"]
    profile = mention_profile(paper, figure)
    assert profile.count == 2 and profile.overview and profile.early and profile.late
    assert profile.kinds == ("abstract", "conclusion") and profile.first_at == pytest.approx(2 / 5)
    assert profile.sentence.startswith("Figure 1 gives an overview")
    assert mention_profile(paper, _figure("2", DIAGRAM)).count == 0


def test_appendix_pages_follow_the_conclusion() -> None:
    paper = make_paper()
    assert not is_appendix_page(paper, 2)
    paper.sections.append(Section("Appendix A. Proofs", SectionKind.OTHER, page=2))
    assert is_appendix_page(paper, 2) and not is_appendix_page(paper, 1)


def test_looks_for_a_paper_are_read_safely(tmp_path: Path) -> None:
    from core.fileio import file_sha256

    pdf = figures_pdf(tmp_path / "paper.pdf")
    paper = make_paper(sha=file_sha256(pdf))
    paper.source_path = str(pdf)
    figures = [_figure("1", DIAGRAM), _figure("2", PHOTO)]
    direct = looks_for_paper(paper, figures)
    assert [figure_type(look) for look in direct] == ["diagram", "photo"]
    box: list[list[FigureLook]] = []
    worker = threading.Thread(target=lambda: box.append(looks_for_paper(paper, figures)))
    worker.start()
    worker.join(120)
    assert box and box[0] == [FigureLook.from_dict(look.to_dict()) for look in direct]  # via a child process
    paper.sha256 = "0" * 64  # not the file that was parsed
    assert looks_for_paper(paper, figures) == [FigureLook(), FigureLook()]
    paper.source_path = str(tmp_path / "gone.pdf")
    assert looks_for_paper(paper, figures) == [FigureLook(), FigureLook()]
