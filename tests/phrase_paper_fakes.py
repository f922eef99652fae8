"""Stand-ins for ``models.datasets.phrase_sources.PhrasePaper`` and its sections, shared by the
phrase-pack and corpus-growth tests."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeSection:
    heading: str
    kind: str
    sentences: list[str]


@dataclass
class FakePaper:
    dataset: str
    paper_id: str
    title: str
    sections: list[FakeSection] = field(default_factory=list)
    licence: str = "Apache-2.0"
