"""Small PDFs generated with pymupdf for the parser tests (known text at known places)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

W, H = 612.0, 792.0
LEFT = (72.0, 296.0)
RIGHT = (316.0, 540.0)


def write_lines(page: pymupdf.Page, x: float, y: float, lines: list[str], *, size: float = 10.0,
                font: str = "helv", leading: float = 1.25) -> float:
    """Write each string as its own line; returns the y after the last line."""
    for text in lines:
        page.insert_text((x, y), text, fontsize=size, fontname=font)
        y += size * leading
    return y


def two_column_pdf(path: Path) -> Path:
    """Title and abstract across the page, then two columns with a heading each."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "A Generated Paper About Reading Order", fontsize=20, fontname="hebo")
    page.insert_text((72, 110), "Ada Lovelace, Charles Babbage", fontsize=12, fontname="helv")
    page.insert_text((72, 150), "Abstract", fontsize=12, fontname="hebo")
    abstract = ("We test the abstract of a generated paper. It spans the whole width of the page above "
                "the two columns. The parser must read it before both columns.")
    page.insert_textbox(pymupdf.Rect(72, 158, 540, 220), abstract, fontsize=10, fontname="helv")
    page.insert_text((LEFT[0], 250), "1 Introduction", fontsize=12, fontname="hebo")
    left = " ".join(f"Left sentence number {k} belongs to the first column." for k in range(1, 16))
    page.insert_textbox(pymupdf.Rect(LEFT[0], 258, LEFT[1], 720), left, fontsize=10, fontname="helv")
    page.insert_text((RIGHT[0], 250), "2 Method", fontsize=12, fontname="hebo")
    right = " ".join(f"Right sentence number {k} belongs to the second column." for k in range(1, 16))
    page.insert_textbox(pymupdf.Rect(RIGHT[0], 258, RIGHT[1], 720), right, fontsize=10, fontname="helv")
    doc.save(path)
    return path


def figure_pdf(path: Path) -> Path:
    """One column: a grey box with its caption below, a ruled table below its caption, mentions."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), "Figures In A Generated Paper", fontsize=18, fontname="hebo")
    page.insert_text((72, 100), "1 Introduction", fontsize=12, fontname="hebo")
    y = write_lines(page, 72, 120, [
        "This paper has one figure and one table to test the detection of captions and regions in the",
        "parser. The grey box is shown in Figure 1 and the numbers are listed in Table 1, which the",
        "parser should link to this sentence.",
    ])
    page.draw_rect(pymupdf.Rect(150, y + 10, 450, y + 160), color=(0, 0, 0), fill=(0.6, 0.6, 0.6))
    cap_y = y + 180
    page.insert_text((72, cap_y), "Figure 1: A grey box drawn for the test.", fontsize=9, fontname="helv")
    y = write_lines(page, 72, cap_y + 30, [
        "The box in the figure above is grey and it has a black border that the parser should find",
        "as the region of the figure, with the caption right below it. Here we also write a line that",
        "Figure 1 shows the same box again, which is a mention at the start of a line and not a caption.",
        "Both Figs. 1 and 2 are mentioned here, but only Figure 1 exists in this document.",
    ])
    tab_y = y + 20
    page.insert_text((72, tab_y), "Table 1: Numbers in a ruled table.", fontsize=9, fontname="helv")
    top = tab_y + 10
    page.draw_line((120, top), (480, top), color=(0, 0, 0))
    write_lines(page, 130, top + 14, ["Name     Value", "alpha     1.0", "beta     2.0"], size=9)
    page.draw_line((120, top + 50), (480, top + 50), color=(0, 0, 0))
    write_lines(page, 72, top + 90, [
        "After the table the text goes on with a final sentence that is plain body text for the test.",
    ])
    doc.save(path)
    return path


def hyphen_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "Hyphenation Test Paper", fontsize=18, fontname="hebo")
    page.insert_text((72, 110), "1 Introduction", fontsize=12, fontname="hebo")
    write_lines(page, 72, 130, [
        "We study the repre-",
        "sentation of state-of-the-",
        "art models in this work. A second sentence",
        "ends here without any hyphen at all.",
    ])
    doc.save(path)
    return path


def many_pages_pdf(path: Path, pages: int) -> Path:
    """``pages`` copies of one page of text (copying keeps generation fast)."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 60), "A Long Generated Document", fontsize=16, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(72, 90, 540, 720), " ".join(
        f"This is sentence {k} of a page in a long generated document with plain text." for k in range(40)),
        fontsize=10, fontname="helv")
    for _ in range(pages - 1):
        doc.fullcopy_page(0)
    doc.save(path)
    return path


def wide_figure_pdf(path: Path) -> Path:
    """Two columns of text above and below a figure (and caption) that spans both columns."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), "A Page With A Wide Figure", fontsize=18, fontname="hebo")
    page.insert_text((LEFT[0], 100), "1 Introduction", fontsize=12, fontname="hebo")

    def column(rect: pymupdf.Rect, name: str) -> None:
        text = " ".join(f"{name} sentence number {k} is in this part of the page." for k in range(1, 5))
        page.insert_textbox(rect, text, fontsize=10, fontname="helv")

    column(pymupdf.Rect(LEFT[0], 108, LEFT[1], 300), "Upper left")
    column(pymupdf.Rect(RIGHT[0], 108, RIGHT[1], 300), "Upper right")
    page.draw_rect(pymupdf.Rect(100, 310, 512, 440), color=(0, 0, 0), fill=(0.8, 0.8, 0.8))
    page.insert_text((150, 458), "Figure 1: A wide figure that spans both columns of the page.", fontsize=9,
                     fontname="helv")
    column(pymupdf.Rect(LEFT[0], 480, LEFT[1], 720), "Lower left")
    column(pymupdf.Rect(RIGHT[0], 480, RIGHT[1], 720), "Lower right")
    doc.save(path)
    return path


def _methods_page_with_drawing(title: str,
                               drawing_bottom: float) -> tuple[pymupdf.Document, pymupdf.Page, str]:
    """A new one-page document: a title, a "1 Methods" heading, a paragraph of method sentences (its text
    returned) and a filled drawing under it, from y 220 to ``drawing_bottom``."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), title, fontsize=18, fontname="hebo")
    page.insert_text((72, 100), "1 Methods", fontsize=12, fontname="hebo")
    text = " ".join(f"Method sentence number {k} describes a step of the study here." for k in range(1, 6))
    page.insert_textbox(pymupdf.Rect(72, 108, 540, 200), text, fontsize=10, fontname="helv")
    page.draw_rect(pymupdf.Rect(72, 220, 330, drawing_bottom), color=(0, 0, 0), fill=(0.7, 0.8, 0.7))
    return doc, page, text


def ruled_caption_pdf(path: Path) -> Path:
    """A figure above its caption, and below the caption, as PLOS prints it, a link line with its underline
    and a full-width grey rule: strokes only, no graphic."""
    doc, page, text = _methods_page_with_drawing("A Page With A Ruled Caption", 414)
    page.insert_text((72, 436), "Fig 3. Transmission pathways of the hazards identified in the scenario.",
                     fontsize=9, fontname="helv")
    page.draw_line((72, 440), (540, 440), color=(0.6, 0.6, 0.6), width=0.5)  # just under the caption
    page.insert_text((72, 452), "https://doi.org/10.1371/journal.pone.0000000.g003", fontsize=8,
                     fontname="helv", color=(0.2, 0.4, 0.7))
    page.draw_line((72, 454), (200, 454), color=(0.2, 0.4, 0.7), width=0.4)  # the link's underline,
    page.draw_line((200, 454), (270, 454), color=(0.2, 0.4, 0.7), width=0.4)  # in two pieces
    page.insert_textbox(pymupdf.Rect(72, 480, 540, 600), text.replace("Method", "Later"), fontsize=10,
                        fontname="helv")
    doc.save(path)
    return path


def caption_then_paragraph_pdf(path: Path) -> Path:
    """A small-print caption under a figure and, written in the same text object (so the PDF puts them in
    one block), the body paragraph after it in the body's size."""
    doc, page, _ = _methods_page_with_drawing("A Page With A Caption And A Paragraph", 400)
    writer = pymupdf.TextWriter(page.rect)
    writer.append((72, 420), "Figure 1 Steps involved in the method", font=pymupdf.Font("helv"), fontsize=8)
    after = ["The steps involved in the method are shown in Figure 1. In the first step the",
             "data are read and cleaned by hand. In the second step the model is fitted to",
             "them and checked on held-out data."]
    for k, line in enumerate(after):
        writer.append((72, 432 + 12 * k), line, font=pymupdf.Font("helv"), fontsize=10)
    writer.write_text(page)
    doc.save(path)
    return path


def furniture_pdf(path: Path, pages: int = 3) -> Path:
    """Running head, page numbers, review line numbers, a grey watermark and a rotated side stamp
    around one column of body text on every page."""
    doc = pymupdf.open()
    for k in range(pages):
        page = doc.new_page(width=W, height=H)
        page.insert_text((72, 40), "Journal of Generated Tests, Volume 7", fontsize=8, fontname="helv")
        page.insert_text((300, 770), str(k + 1), fontsize=9, fontname="helv")
        page.insert_text((20, 500), "arXiv:2401.00001v1 [cs.CL] 1 Jan 2024", fontsize=14, fontname="helv",
                         rotate=90, color=(0.5, 0.5, 0.5))
        page.insert_text((150, 420), "DRAFT COPY", fontsize=60, fontname="hebo", color=(0.85, 0.85, 0.85))
        y = 90.0
        if k == 0:
            page.insert_text((72, y), "Furniture Test Paper", fontsize=18, fontname="hebo")
            page.insert_text((72, y + 30), "1 Introduction", fontsize=12, fontname="hebo")
            y += 50
        for n in range(30):
            page.insert_text((40, y), str(k * 30 + n + 1), fontsize=7, fontname="helv")
            page.insert_text((72, y), f"Body line {n + 1} of page {k + 1} says something plain here and",
                             fontsize=10, fontname="helv")
            y += 13
    doc.save(path)
    return path


def references_pdf(path: Path) -> Path:
    """Sections, acknowledgements, a references list and an appendix after it."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), "A Paper With References", fontsize=18, fontname="hebo")
    y = 110.0
    blocks = [
        ("1 Introduction", ["We introduce the problem in this first sentence.", "It matters a great deal."]),
        ("2 Conclusion", ["We conclude that the method works well."]),
        ("Acknowledgments", ["We thank the reviewers for their comments."]),
        ("References", ["A. Author. 2020. A cited paper about things. In Proceedings of Things.",
                        "B. Author. 2019. Another cited paper. Journal of Stuff."]),
        ("A Appendix Details", ["The appendix gives more details about the data."]),
    ]
    for heading, lines in blocks:
        page.insert_text((72, y), heading, fontsize=12, fontname="hebo")
        y += 20
        y = write_lines(page, 72, y, lines) + 12
    doc.save(path)
    return path


# --- journal layouts built from real CC BY text (tests/fixtures/layouts/*.json) --------------------------

_LAYOUT_REFS = [
    "1. Smith, A.; Jones, B. A cited study of the same problem. J. Appl. Res. 2011, 12, 101-110.",
    "2. Brown, C. Methods for the measurement of things. Anal. Methods 2010, 4, 55-63.",
    "3. Green, D.; White, E.; Black, F. Earlier results on a related question. Sci. Rep. 2012, 2, 301.",
]


class _Flow:
    """Words wrapped into columns, columns into pages, a running header and page number on each page."""

    def __init__(self, doc: pymupdf.Document, layout: dict, size: tuple[float, float]):
        self.doc, self.layout = doc, layout
        self.w, self.h = size
        margin = 56.0
        if layout.get("columns", 1) == 2:
            mid = self.w / 2
            self.cols = [(margin, mid - 9), (mid + 9, self.w - margin)]
        else:
            self.cols = [(margin, self.w - margin)]
        self.top, self.bottom = 72.0, self.h - 60.0
        self.page: pymupdf.Page | None = None
        self.col = 0
        self.y = self.top

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=self.w, height=self.h)
        k = self.doc.page_count
        header = self.layout.get("header", "")
        if header and (k > 1 or self.layout.get("header_on_first")):
            self.page.insert_text((56, 40), header.replace("{page}", str(k)), fontsize=8, fontname="helv")
        self.page.insert_text((self.w / 2 - 4, self.h - 30), str(k), fontsize=8, fontname="helv")
        self.col, self.y = 0, self.top
        return self.page

    @property
    def x0(self) -> float:
        return self.cols[self.col][0]

    @property
    def width(self) -> float:
        return self.cols[self.col][1] - self.cols[self.col][0]

    def need(self, height: float) -> None:
        if self.y + height <= self.bottom:
            return
        if self.col + 1 < len(self.cols):
            self.col += 1
            self.y = self.top
        else:
            self.new_page()

    def full_width(self, y: float) -> None:
        """Start the columns below ``y`` (after front matter set across the page)."""
        self.top = y
        self.col, self.y = 0, y

    def text(self, text: str, *, size: float = 10.0, font: str = "helv", label: str = "",
             label_font: str = "hebo", before: float = 0.0, after: float = 4.0, x0: float | None = None,
             width: float | None = None) -> None:
        leading = size * 1.3
        self.y += before
        words = text.split()
        first = True
        while words or (first and label):
            self.need(leading)
            left = self.x0 if x0 is None else x0
            avail = self.width if width is None else width
            x = left
            if first and label:
                self.page.insert_text((x, self.y + size), label, fontsize=size, fontname=label_font)
                x += pymupdf.get_text_length(label + " ", fontname=label_font, fontsize=size)
            line: list[str] = []
            while words:
                trial = " ".join([*line, words[0]])
                if line and x + pymupdf.get_text_length(trial, fontname=font, fontsize=size) > left + avail:
                    break
                line.append(words.pop(0))
            if line:
                self.page.insert_text((x, self.y + size), " ".join(line), fontsize=size, fontname=font)
            self.y += leading
            first = False
        self.y += after

    def figure(self, number: str, caption: str, height: float = 110.0) -> None:
        self.need(height + 50)
        box = pymupdf.Rect(self.x0 + 10, self.y + 12, self.x0 + self.width - 10, self.y + 12 + height)
        self.page.draw_rect(box, color=(0, 0, 0), fill=(0.75, 0.75, 0.8))
        self.y += height + 20
        self.text(caption, size=8, label=f"Figure {number}.", after=10)


def layout_paper_pdf(path: Path, spec: dict) -> Path:
    """A paper from a layout fixture: ``spec["content"]`` (real title, abstract, section paragraphs,
    captions) set the way ``spec["layout"]`` says (MDPI, Elsevier or PLOS front page; one or two
    columns; back matter with supplementary sections and figures S1, S2 ...)."""
    content, layout = spec["content"], spec["layout"]
    style = layout["style"]
    doc = pymupdf.open()
    flow = _Flow(doc, layout, (595.0, 842.0) if style == "mdpi" else (W, H))
    page = flow.new_page()
    authors = ", ".join(content["authors"][:3])
    if style == "mdpi":
        page.insert_text((56, 70), layout["journal"], fontsize=24, fontname="hebo", color=(0.2, 0.3, 0.5))
        page.insert_text((56, 100), "Article", fontsize=10, fontname="heit")
        flow.y = 108
        flow.text(content["title"], size=16, font="hebo", after=6)
        flow.text(authors, size=10, font="hebo", after=4)
        for aff in content["affiliations"][:2]:
            flow.text(aff, size=8, after=1)
        flow.text("Received: 2 May 2013; Accepted: 4 July 2013; Published: 10 July 2013", size=8,
                  before=4, after=8)
    elif style == "elsevier":
        page.insert_text((150, 84), "Contents lists available at ScienceDirect", fontsize=8, fontname="helv")
        page.insert_text((150, 108), layout["journal"], fontsize=18, fontname="hebo")
        page.insert_text((150, 126), "journal homepage: www.elsevier.com/locate/journal", fontsize=8,
                         fontname="helv")
        page.draw_line((56, 136), (flow.w - 56, 136), color=(0, 0, 0), width=1.5)
        flow.y = 150
        flow.text(content["title"], size=15, font="helv", after=8)
        flow.text(authors, size=10, after=4)
        for aff in content["affiliations"][:2]:
            flow.text(aff, size=7.5, font="heit", after=1)
    else:  # plos
        page.insert_text((56, 60), "RESEARCH ARTICLE", fontsize=9, fontname="hebo", color=(0.6, 0.1, 0.1))
        flow.y = 70
        flow.text(content["title"], size=17, font="hebo", after=8)
        flow.text(authors, size=10, after=4)
        for aff in content["affiliations"][:2]:
            flow.text(aff, size=8, after=1)
    if layout.get("abstract_style") == "runin":
        flow.text(content["abstract"], size=9, label="Abstract:", before=6, after=10)
    else:
        flow.text("Abstract", size=11, font="hebo", before=8, after=2)
        flow.text(content["abstract"], size=9, after=10)
    page.draw_line((56, flow.y), (flow.w - 56, flow.y), color=(0.5, 0.5, 0.5))
    flow.full_width(flow.y + 10)

    figures = {f["after_section"]: f for f in layout.get("figures", [])}
    mention = layout.get("body_mention")
    number = 0
    for k, section in enumerate(content["sections"]):
        heading = section["heading"]
        if layout.get("numbered", True) and heading.lower() not in ("conflict of interest",):
            number += 1
            heading = f"{number}. {heading}"
        flow.text(heading, size=11, font="hebo", before=6, after=3)
        for j, para in enumerate(section["paragraphs"]):
            if mention and mention["section"] == k and j == 0:
                para = f"{para} {mention['text']}"
            flow.text(para, size=10, after=5)
            fig = figures.get(k)
            if fig and j == 0:
                flow.figure(fig["number"], content["figure_captions"][fig["caption_index"]])
    for part in layout.get("back", []):
        if part["kind"] == "ack":
            flow.text("Acknowledgments", size=11, font="hebo", before=6, after=3)
            flow.text(content["acknowledgements"], size=9, after=5)
        elif part["kind"] == "references":
            flow.text("References", size=11, font="hebo", before=6, after=3)
            for ref in _LAYOUT_REFS:
                flow.text(ref, size=8, after=2)
        else:
            flow.text(part["heading"], size=11, font="hebo", before=6, after=3)
            if part.get("text"):
                flow.text(part["text"], size=9, after=5)
            for fig in part.get("figures", []):
                flow.figure(fig["number"], content["figure_captions"][fig["caption_index"]], height=80)
    doc.save(path)
    return path


def keywords_then_heading_overleaf_pdf(path: Path) -> Path:
    """Page 1: title, "Abstract", the abstract, a lone bold "KEYWORDS" label and the keywords set small (as
    Wiley's Conservation Biology); page 2 opens with a large bold "INTRODUCTION" heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 90), "Urban gradients and wildlife use in the Amazon", fontsize=18, fontname="hebo")
    page.insert_text((72, 140), "Abstract", fontsize=11, fontname="hebo")
    y = write_lines(page, 72, 160, [
        "We surveyed households along an urbanization gradient in the Amazon to measure wildlife use.",
        "Wild meat consumption fell with urbanization, while trade in wild meat increased in towns.",
        "We discuss what these results mean for policies that involve local people in conservation.",
    ])
    page.insert_text((72, y + 12), "KEYWORDS", fontsize=8, fontname="hebo")
    write_lines(page, 72, y + 24, ["Amazon, bushmeat, hunting, urbanization, wildlife trade"], size=8)
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "INTRODUCTION", fontsize=12, fontname="hebo")
    write_lines(page, 72, 100, [
        "Conservation efforts increasingly rely on the people who live with the species they protect.",
        "Most studies of wildlife use sample rural villages and leave the growing towns aside.",
        "Here we ask how the use of wildlife changes from remote villages to the largest cities.",
    ])
    doc.save(path)
    doc.close()
    return path


def bold_abstract_then_unheaded_intro_pdf(path: Path) -> Path:
    """Nature's article layout: title, authors, the abstract set in bold across the page, then the
    introduction in two columns with no heading, then a bold "RESULTS" heading set at body size."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 80), "Ephaptic coupling in a model cortex", fontsize=20, fontname="hebo")
    page.insert_text((72, 110), "Ann Author, Ben Writer & Cai Scholar", fontsize=11, fontname="helv")
    y = write_lines(page, 72, 135, [
        "The electrochemical processes that underlie neural function show in the extracellular field,",
        "but whether this field feeds back onto single neurons is not known in the living cortex slice.",
        "We stimulated and recorded inside and outside of pyramidal neurons with twelve electrodes and",
        "found that weak fields entrain spikes, so that the field acts as a feedback on the neurons.",
    ], font="hebo", size=9)
    left = [
        "Neurons communicate through synapses, but the",
        "electric field of their own activity is a second",
        "route that the usual models of the cortex leave",
        "aside, and it is rarely measured in the slice.",
        "Fields of a few millivolts per millimetre are",
        "known to shift the timing of spikes in slices,",
        "yet the fields of the living brain are weaker,",
        "and their effect on one cell is not settled by",
        "the experiments that have been done so far.",
        "Network models that include the field show that",
        "it can synchronise the firing of nearby cells.",
    ]
    right = [
        "Most studies applied constant fields between",
        "parallel plates far from the recorded cell, and",
        "a single electrode measured the field at a",
        "distance that hides what the soma itself sees.",
        "Here we measured the field next to the soma",
        "while it was driven from several sites at once,",
        "and we asked whether weak fields entrain spikes.",
    ]
    write_lines(page, LEFT[0], y + 30, left, size=9)
    ry = write_lines(page, RIGHT[0], y + 30, right, size=9)
    page.insert_text((RIGHT[0], ry + 14), "RESULTS", fontsize=9, fontname="hebo")
    write_lines(page, RIGHT[0], ry + 28, [
        "Stimulation at fifty micrometres from the soma changed the membrane potential by a millivolt.",
        "The change followed the field at every frequency we tried, up to one hundred hertz in all cells.",
    ], size=9)
    doc.save(path)
    doc.close()
    return path


def side_caption_pdf(path: Path) -> Path:
    """Nature's layout (parser pdf-11): a coloured running-head band at the top, then a figure caption at the
    top of the left column and its figure (a drawing) level with it in the right column; running text below
    both."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.draw_rect(pymupdf.Rect(LEFT[0], 36, LEFT[1], 60), color=None, fill=(1.0, 0.85, 0.4))  # header band
    page.insert_text((LEFT[0] + 4, 52), "ARTICLES", fontsize=9, fontname="hebo")
    write_lines(page, LEFT[0], 80, [
        "Figure 1 Recordings from twelve electrodes",
        "around one neuron. (a) The set-up seen from",
        "above. (b) The potential at each electrode.",
        "(c) Amplitudes against distance, mean and s.d.",
    ], size=8)
    page.draw_rect(pymupdf.Rect(RIGHT[0] + 10, 76, RIGHT[1] - 10, 200), color=(0, 0, 0), fill=(0.5, 0.7, 0.9))
    page.insert_text((RIGHT[0] + 12, 90), "a", fontsize=9, fontname="hebo")
    body = " ".join(f"Running text sentence number {k} is body text of the paper." for k in range(1, 14))
    page.insert_textbox(pymupdf.Rect(LEFT[0], 230, LEFT[1], 700), body, fontsize=10, fontname="helv")
    page.insert_textbox(pymupdf.Rect(RIGHT[0], 230, RIGHT[1], 700), body, fontsize=10, fontname="helv")
    doc.save(path)
    return path


def contents_list_pdf(path: Path) -> Path:
    """A contents list whose page numbers stand apart on each entry's baseline (JCAP), then the body."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), "A Paper With A Contents List", fontsize=18, fontname="hebo")
    page.insert_text((72, 110), "Abstract", fontsize=12, fontname="hebo")
    write_lines(page, 72, 130, ["We study lists of contents in papers. They come before the body."])
    page.insert_text((72, 180), "Contents", fontsize=12, fontname="hebo")
    y = 200.0
    entries = [("1. Introduction", "2"), ("2. Results", "3"), ("Acknowledgments", "4"), ("References", "5")]
    for entry, number in entries:
        page.insert_text((72, y), entry, fontsize=10, fontname="helv")
        page.insert_text((520, y), number, fontsize=10, fontname="helv")
        y += 16
    page = doc.new_page(width=W, height=H)
    y = 80.0
    for heading, lines in [
        ("1. Introduction", ["We introduce the problem in this first sentence.", "It matters a great deal."]),
        ("2. Results", ["The method works well on every test we ran."]),
        ("Acknowledgments", ["We thank the reviewers."]),
        ("References", ["A. Author. 2020. A cited paper about things. In Proceedings of Things."]),
    ]:
        page.insert_text((72, y), heading, fontsize=12, fontname="hebo")
        y = write_lines(page, 72, y + 20, lines) + 12
    doc.save(path)
    return path


def reference_column_pdf(path: Path) -> Path:
    """A table whose first column is headed "Reference" (Postgrad Med J), between Methods and Results."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((72, 70), "A Paper With A Table Of Studies", fontsize=18, fontname="hebo")
    page.insert_text((72, 110), "Methods", fontsize=12, fontname="hebo")
    y = write_lines(page, 72, 130, ["We searched three databases for trials of the treatment.",
                                    "Two of us read every study."]) + 12
    page.insert_text((72, y), "Table 1 Characteristics of the included studies", fontsize=9, fontname="hebo")
    y += 16
    page.insert_text((72, y), "Reference", fontsize=7.5, fontname="hebo")
    page.insert_text((200, y - 8), "Year of", fontsize=7.5, fontname="hebo")
    page.insert_text((200, y), "publication", fontsize=7.5, fontname="hebo")
    page.insert_text((300, y), "Country", fontsize=7.5, fontname="hebo")
    page.insert_text((72, y + 20), "Results", fontsize=12, fontname="hebo")
    y = write_lines(page, 72, y + 40, ["The treatment raised haemoglobin in every study.",
                                       "The effect was larger in children."]) + 12
    page.insert_text((72, y), "References", fontsize=12, fontname="hebo")
    write_lines(page, 72, y + 20, ["A. Author. 2020. A cited paper about things. In Proceedings of Things."])
    doc.save(path)
    return path


def article_info_beside_abstract_pdf(path: Path) -> Path:
    """Elsevier's first page: "A R T I C L E I N F O" with a keywords box on the left, "A B S T R A C T"
    (letter-spaced) and the abstract in small type on the right, side by side above a one-column body."""
    keywords = ["Keywords:", "Energy analysis", "Combined cooling heating and power", "System sizing",
                "Developed goshawk optimization"]
    abstract = ["This paper improves the design of a combined heating and power system for homes.",
                "An energy and exergy analysis assesses the system on four criteria in a case study.",
                "The new algorithm finds the best engine size of 130 kW for the building studied.",
                "It also lowers the emissions and the payback period of the system considerably."]
    body = ["Combined systems supply heat, cold and power to buildings from a single fuel source.",
            "Sizing them well matters for both their cost and their emissions over many years."]
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((40, 80), "A Paper With Two Boxes On Its First Page", fontsize=16, fontname="hebo")
    page.insert_text((40, 110), "Ada Lovelace, Charles Babbage", fontsize=10, fontname="helv")
    page.insert_text((40, 146), "A R T I C L E I N F O", fontsize=7, fontname="helv")
    page.insert_text((200, 150), "A B S T R A C T", fontsize=7, fontname="helv")
    write_lines(page, 40, 170, keywords, size=6.5)
    write_lines(page, 200, 170, abstract, size=7)
    page.insert_text((40, 260), "1. Introduction", fontsize=10, fontname="hebo")
    write_lines(page, 40, 280, body, size=9.5)
    doc.save(path)
    return path
