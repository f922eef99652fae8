"""A small hand-made Paper and PaperAnalysis for unit tests of cache and exports (no PDF needed)."""

from __future__ import annotations

from core.document import Figure, PageRect, Paper, Section, SectionKind, Sentence
from core.labelling.analysis import PaperAnalysis
from models.roles import ROLES, RolePrediction

TEXTS = [
    ("Abstract", SectionKind.ABSTRACT, "", [
        "Citation graphs carry signal.", "We propose SPECTER, a document encoder.",
        "It beats strong baselines by 3 points."]),
    ("Method", SectionKind.METHOD, "2", [
        "We fine-tune SciBERT with a triplet loss.",
        "Negatives come from the citation graph, e.g. | pipes *stars*."]),
    ("Conclusion", SectionKind.CONCLUSION, "5", ["Document-level signals help, \"quoted\", and, commas."]),
]
LABELS = ["background", "objective", "result", "method", "method", "conclusion"]


def make_paper(sha: str = "ab" * 32, parser_version: str = "test-1") -> Paper:
    sections, sentences = [], []
    for s_index, (heading, kind, number, texts) in enumerate(TEXTS):
        sections.append(Section(heading=heading, kind=kind, number=number, page=s_index,
                                first_sentence=len(sentences), sentence_count=len(texts)))
        for text in texts:
            i = len(sentences)
            sentences.append(Sentence(id=f"s{i}", text=text, section_index=s_index, index=i, pages=[s_index],
                                      rects=[PageRect(s_index, 72, 100 + 14 * i, 300, 112 + 14 * i)]))
    figure = Figure(id="fig1", kind="figure", number="1", caption="Figure 1: Overview.", page=0,
                    bbox=(72.0, 300.0, 500.0, 500.0))
    return Paper(title="A | Test *Paper*", source_path="/tmp/test.pdf", sha256=sha,
                 page_sizes=[(612.0, 792.0)] * 3, authors=["A. Author", "B. Author"], sections=sections,
                 sentences=sentences, figures=[figure], parser_version=parser_version)


def make_analysis(paper: Paper, model_id: str = "tiny@1#abc") -> PaperAnalysis:
    roles = []
    for label in LABELS[: len(paper.sentences)]:
        probs = {r: 0.02 for r in ROLES}
        probs[label] = 1.0 - 0.02 * (len(ROLES) - 1)
        roles.append(RolePrediction(label, probs))
    return PaperAnalysis(paper.sha256, model_id, roles)
