"""PDF ingestion: ``parse_pdf`` turns a paper into a :class:`core.document.Paper`.

Modules, one job each:

- ``opening``     open and validate (typed errors for bad input, scan detection)
- ``lines``       page text as lines with per-character positions (rotated text dropped)
- ``furniture``   running headers/footers, page and line numbers
- ``layout``      columns and reading order
- ``textmap``     text clean-up with a map back to page positions
- ``headings``    heading tests, numbering, run-in headings, canonical section kinds
- ``frontmatter`` title and authors
- ``captions``    figure/table caption starts
- ``regions``     figure/table regions (images, drawings) and fallback crops
- ``linekinds``   table rows, pseudo-code and display equations inside the flow
- ``structure``   front matter, abstract, section headings, references cut-off, footnotes
- ``paragraphs``  sections under construction, paragraph breaks, sentences (split by
                  ``core.text.sentences.split_sentences``) with rectangles
- ``outline``     heading levels and kinds inherited by subsections
- ``mentions``    "Figure 3", "Figs. 2 and 3", "Tables 1-3" in body sentences
- ``assemble``    ``parse_pdf``: the steps in order
- ``render``      ``render_figure_png``: a figure crop as PNG bytes
"""

from core.pdf.assemble import PARSER_VERSION, parse_pdf
from core.pdf.render import render_figure_png

__all__ = ["PARSER_VERSION", "parse_pdf", "render_figure_png"]
