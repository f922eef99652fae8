"""What the text says of a figure is read truly (a hostile tester's findings, session 32):

- IOP and the Royal Society print references in lower case ("presented in figure 2"): they count, so
  a figure is not "never pointed to in the text"; prose like "a figure of 3 percent", a name like
  "table1" and an enumeration "routing table 2) Route Reply" do not;
- "called an overview or summary there" was said of any "Figure 7 depicts …": a mention counts as
  calling the figure an overview only for an overview or summary word (the ranker did better so), and
  the reason quotes the words.
"""

from __future__ import annotations

import pytest

from core.figures.figure_features import MentionProfile, mention_profile, overview_evidence
from core.figures.figure_rank import explain
from core.pdf.mentions import mentioned_ids
from tests.paper_factory import make_paper


@pytest.mark.parametrize(("text", "ids"), [
    ("The deceleration parameters for models 1–4 are presented in figure 2.", ["fig2"]),
    ("It can be seen from the right panel of figure 4 that the volume", ["fig4"]),
    ("as shown in fig. 3 and in figs. 4-6", ["fig3", "fig4", "fig5", "fig6"]),
    ("annotated in figure 3 are summarized in table 1, with detail", ["fig3", "tab1"]),
    ("(see electronic supplementary material, figure S3)", ["figS3"]),
    ("from gels (including those in figures 3 and S2)", ["fig3", "figS2"]),
    ("(95% CI 3.71 to 14.58 mg/l, p<0.0001) (figure 4).", ["fig4"]),
    ("a figure of 3 percent of the budget", []),
    ("the rows of table1 are joined with table2", []),
    ("caches the route in its routing table 2) Route Reply: when a node", []),
    ("(the values are in table 2)", ["tab2"]),
    ("in this figure I show the whole", []),
    ("Figure 2 and FIGURE 3 as before", ["fig2", "fig3"]),
])
def test_lower_case_references_count_and_prose_does_not(text: str, ids: list[str]) -> None:
    assert mentioned_ids(text) == ids


def test_a_lower_case_figure_reference_is_a_mention_in_a_parsed_paper(tmp_path) -> None:
    import pymupdf

    from core.pdf import parse_pdf

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    text = ("Introduction. The model parameters are presented in figure 1. The volume deceleration is shown "
            "in the right panel of figure 1 and it is positive. Nothing else is shown here.")
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 200), text, fontsize=10, fontname="helv")
    page.draw_rect(pymupdf.Rect(150, 230, 450, 380), color=(0, 0, 0), fill=(0.6, 0.6, 0.6))
    page.insert_text((72, 400), "Figure 1. The parameters of the models.", fontsize=9, fontname="helv")
    path = tmp_path / "lower.pdf"
    doc.save(path)
    doc.close()
    (figure,) = parse_pdf(path).figures
    assert len(figure.mentioned_by) == 2  # two sentences, one count each


def test_overview_evidence_is_an_overview_or_summary_word_near_the_reference() -> None:
    assert overview_evidence("Figure 1 gives an overview of the method.", "1") == (
        "overview", "Figure 1 gives an overview")
    assert overview_evidence("The steps are summarised in Fig. 2 below.", "2") == (
        "summarised", "summarised in Fig. 2")
    assert overview_evidence("We show the results at a glance in figures 3–5.", "3") == (
        "at a glance", "at a glance in figures 3–5")
    assert overview_evidence("Figure 7 depicts the data loss probabilities.", "7") is None
    assert overview_evidence("The efficiencies are depicted below in Figures 5–7.", "5") is None
    assert overview_evidence("Figure 4 illustrates the framework of the system.", "4") is None
    assert overview_evidence("Figure 2 shows the loss.", "2") is None


def _reason(sentence: str) -> str:
    paper = make_paper()
    paper.sentences[3].text = sentence
    figure = paper.figures[0]
    figure.number = "7"
    figure.mentioned_by = [paper.sentences[3].id]
    profile = mention_profile(paper, figure)
    return explain({"size": 0.1}, "chart", profile, "", [], True)


def test_the_reason_says_overview_only_for_an_overview_word() -> None:
    depicts = _reason("Figure 7 depicts the data loss probabilities for 5000 node clusters.")
    assert "overview" not in depicts and "summary" not in depicts
    overview = _reason("Figure 7 gives an overview of the whole replication scheme.")
    assert 'described there as an overview or summary ("Figure 7 gives an overview")' in overview
    assert explain({"size": 0.1}, "", MentionProfile(), "", [], True).startswith("Never pointed to")
