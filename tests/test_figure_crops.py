"""Figure crops are the named figure, whole (a hostile tester's findings, session 32):

- Frontiers: a short caption between its own diagram (above, a few points further) and the next
  figure's chart (below, nearer) took the chart, and the next figure got no region at all;
- MDPI charts exported from office software: legend entries running past the legend's marks, an axis
  title more than a line above the tick numbers and a rotated axis title were cut off, and the chart,
  its lines all drawn as thin fills, was called "a figure made of text";
- ``figures rank --png`` wrote 300-dpi pixels with 96 dpi in the file.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pymupdf
import pytest

from core.pdf import parse_pdf
from core.pdf.regions import RegionOptions, assign_regions
from tests.pdf_factory import LEFT, RIGHT, H, W


def _columns(page: pymupdf.Page, top: float, bottom: float, name: str) -> None:
    for x0, x1, side in ((LEFT[0], LEFT[1], "left"), (RIGHT[0], RIGHT[1], "right")):
        text = " ".join(f"{name} {side} sentence number {k} is running text of this page."
                        for k in range(1, 9))
        page.insert_textbox(pymupdf.Rect(x0, top, x1, bottom), text, fontsize=10, fontname="helv")


def stacked_figures_pdf(path: Path) -> Path:
    """Frontiers' page: a full-width diagram, its short caption in the left column 14 points below it,
    then, 6 points below that caption, the next figure's full-width chart and its own caption 14 points
    below the chart; two columns of text under them."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 60), "1 Introduction", fontsize=12, fontname="hebo")
    page.draw_rect(pymupdf.Rect(100, 80, 512, 240), color=(0, 0, 0), fill=(0.6, 0.7, 0.9))  # the diagram
    page.insert_text((LEFT[0], 262), "FIGURE 2 | Diagram of the hypothesis.", fontsize=8, fontname="helv")
    page.draw_rect(pymupdf.Rect(100, 272, 512, 420), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))  # the chart
    page.insert_text((LEFT[0], 442), "FIGURE 3 | Success of the two groups in the two conditions.",
                     fontsize=8, fontname="helv")
    _columns(page, 470, 740, "Lower")
    doc.save(path)
    doc.close()
    return path


def test_a_caption_between_two_figures_keeps_its_own_and_leaves_the_next_its_chart(tmp_path: Path) -> None:
    paper = parse_pdf(stacked_figures_pdf(tmp_path / "stacked.pdf"))
    figures = {f.number: f for f in paper.figures}
    assert set(figures) == {"2", "3"}
    two, three = figures["2"], figures["3"]
    assert two.region_found and three.region_found
    assert two.bbox[1] < 90 and two.bbox[3] <= two.caption_bbox[1]  # the diagram above its caption
    assert three.bbox[1] >= two.caption_bbox[3] and three.bbox[3] <= three.caption_bbox[1]  # the chart


def test_a_graphic_is_handed_over_only_from_the_unusual_side() -> None:
    diagram, chart = (45.0, 62.0, 550.0, 242.0), (45.0, 270.0, 550.0, 427.0)
    above_or_below = RegionOptions([(14.4, 14.4, diagram), (14.3, 6.3, chart)], (0, 0, 1, 1), [True, False])
    only_above = RegionOptions([(14.4, 14.4, chart)], (0, 1, 1, 2), [True])
    assert assign_regions([above_or_below, only_above]) == [(diagram, True), (chart, True)]
    # the nearer caption holds the graphic on its usual side: it keeps it
    usual_both = RegionOptions([(6.3, 6.3, chart), (22.4, 14.4, diagram)], (0, 0, 1, 1), [True, False])
    assert assign_regions([usual_both, only_above]) == [(chart, True), ((0, 1, 1, 2), False)]


def _filled_line(page: pymupdf.Page, x0: float, y0: float, x1: float, y1: float,
                 colour: tuple[float, float, float] = (0.8, 0.8, 0.8)) -> None:
    """A line drawn as a thin filled rectangle, as office software exports chart lines."""
    page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), color=None, fill=colour, width=0)


def office_chart_pdf(path: Path) -> Path:
    """One column of text, then a line chart whose axes, grid and series are thin fills: tick numbers,
    an axis title 14 points above the top tick numbers, a rotated y-axis title left of the y numbers,
    and legend entries that run past the legend's marks; the caption below, then text."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    text = " ".join(f"Sentence number {k} of the results is running text above the chart."
                    for k in range(1, 9))
    page.insert_textbox(pymupdf.Rect(72, 60, 540, 170), text, fontsize=10, fontname="helv")
    page.insert_text((200, 205), "T - no booster [C]", fontsize=8, fontname="helv")  # the top axis title
    for k, x in enumerate(range(140, 400, 50)):
        page.insert_text((x - 4, 225), str(60 + 5 * k), fontsize=8, fontname="helv")  # top tick numbers
        page.insert_text((x - 4, 400), str(30 + 5 * k), fontsize=8, fontname="helv")  # bottom tick numbers
        _filled_line(page, x, 232, x + 0.7, 385)  # vertical grid lines
        _filled_line(page, x, 385, x + 0.7, 389, (0, 0, 0))  # tick marks
    for k, y in enumerate(range(240, 390, 25)):
        page.insert_text((118, y + 3), f"0.{8 - k}", fontsize=8, fontname="helv")  # y tick numbers
        _filled_line(page, 140, y, 392, y + 0.7)  # horizontal grid lines
    _filled_line(page, 140, 385, 392, 385.7, (0, 0, 0))  # the x axis
    page.insert_text((108, 330), "efficiency [/]", fontsize=8, fontname="helv", rotate=90)
    for k, y in enumerate(range(240, 380, 20)):
        _filled_line(page, 398, y - 3, 420, y - 2.3, (0.9, 0.1 * k, 0.1))  # the legend's marks
        page.insert_text((424, y), f"Series {k}; T = {25 + 10 * k} C", fontsize=8, fontname="helv")
        _filled_line(page, 140, 380 - 15 * k, 392, 300 - 10 * k, (0.9, 0.1 * k, 0.1))  # a series
    page.insert_text((72, 425), "Figure 2. Comparison of the exergy efficiencies of the boosters.",
                     fontsize=9, fontname="helv")
    text = " ".join(f"Sentence number {k} of the discussion is running text below the chart."
                    for k in range(1, 9))
    page.insert_textbox(pymupdf.Rect(72, 445, 540, 560), text, fontsize=10, fontname="helv")
    doc.save(path)
    doc.close()
    return path


def test_an_office_charts_crop_keeps_its_axis_titles_and_legend_entries(tmp_path: Path) -> None:
    paper = parse_pdf(office_chart_pdf(tmp_path / "chart.pdf"))
    (fig,) = paper.figures
    assert fig.region_found
    x0, y0, x1, y1 = fig.bbox
    assert y0 < 198  # the top axis title (its line starts at y 198)
    assert x0 < 104  # the rotated y-axis title (x 102-110)
    assert x1 > 480  # the legend entries end near x 489, past their marks (x 398-420)
    assert y1 < fig.caption_bbox[1] and y0 > 165  # neither the caption nor the text above


def test_an_office_chart_drawn_with_fills_is_a_chart_not_text(tmp_path: Path) -> None:
    from core.figures.figure_features import figure_type, look_at_figures

    pdf = office_chart_pdf(tmp_path / "chart.pdf")
    paper = parse_pdf(pdf)
    (look,) = look_at_figures(pdf, paper.figures)
    assert look.long_lines >= 4  # the axis and grid lines, drawn as thin fills
    assert figure_type(look) == "chart"


# -- PNG resolution ---------------------------------------------------------------------------------------
def _png_dpi(data: bytes) -> float:
    at = data.index(b"pHYs")
    x, y, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    assert x == y and unit == 1
    return x * 0.0254


def test_png_resolution_is_written_into_the_file() -> None:
    from app.commands.figures import with_png_dpi

    doc = pymupdf.open()
    page = doc.new_page(width=200, height=100)
    page.draw_rect(pymupdf.Rect(10, 10, 190, 90), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    png = page.get_pixmap(matrix=pymupdf.Matrix(300 / 72, 300 / 72)).tobytes("png")
    doc.close()
    assert round(_png_dpi(png)) == 96  # what MuPDF writes by default
    out = with_png_dpi(png, 300)
    assert round(_png_dpi(out)) == 300 and out.count(b"pHYs") == 1
    image = pymupdf.Pixmap(out)  # still a valid PNG with the same pixels
    assert (image.width, image.height) == (834, 417) and image.xres == 300
    no_phys = png[:png.index(b"pHYs") - 4] + png[png.index(b"pHYs") + 17:]
    assert round(_png_dpi(with_png_dpi(no_phys, 150))) == 150  # added after IHDR when absent


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_bundle import make_tiny_bundle

    return make_tiny_bundle(tmp_path_factory.mktemp("crops") / "bundle", functions=True)


def test_figures_rank_png_says_300_dpi(bundle: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    pdf = stacked_figures_pdf(tmp_path / "stacked.pdf")
    code = main(["figures", "rank", str(pdf), "--png", str(tmp_path / "pngs"), "--quiet",
                 "--model", str(bundle), "--threads", "1"])
    capsys.readouterr()
    assert code == 0
    pngs = sorted((tmp_path / "pngs").glob("*.png"))
    assert len(pngs) == 2
    for png in pngs:
        assert round(_png_dpi(png.read_bytes())) == 300
