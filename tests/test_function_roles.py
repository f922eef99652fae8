"""Distant function labels as role supervision (``train roles --function-roles``)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from core.taxonomy.labels import ROLES
from models.training.function_data import NO_ROLE_LABEL, read_function_labels


def _labels(tmp_path):
    rows = [{"text": "Little is known about X.", "function": "gap", "section_kind": "introduction"},
            {"text": "We thank the reviewers.", "function": "thanks", "section_kind": "other"}]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_without_roles_every_role_is_allowed(tmp_path):
    docs, functions = read_function_labels([_labels(tmp_path)], ["gap", "thanks"])
    assert functions == [0, 1]
    assert all(d.labels == [NO_ROLE_LABEL] and d.allowed == [frozenset(ROLES)] for d in docs)


def test_with_roles_each_sentence_gets_its_functions_role_and_section_kind(tmp_path):
    docs, _ = read_function_labels([_labels(tmp_path)], ["gap", "thanks"],
                                   {"gap": "background", "thanks": "not-a-role"})
    assert docs[0].labels == ["background"] and docs[0].allowed == [frozenset({"background"})]
    assert docs[0].section_kinds == ["introduction"]
    # A function whose role is not a role the head knows teaches the function head only.
    assert docs[1].labels == [NO_ROLE_LABEL] and docs[1].allowed == [frozenset(ROLES)]


def test_the_taxonomy_gives_every_function_a_known_role():
    from core.taxonomy.functions import default_taxonomy

    assert {f.role for f in default_taxonomy().functions} <= set(ROLES)


def test_labelled_sentences_come_with_their_neighbours_in_the_same_section() -> None:
    from models.training.function_data import function_documents_in_context

    section = [("introduction", f"Intro sentence {i}.") for i in range(6)]
    section += [("method", f"Method sentence {i}.") for i in range(4)]

    def sentences_of(source: str) -> dict[str, list[tuple[str, str]]]:
        assert source == "scirex"
        return {"paper-1": section}

    rows = [{"source": "scirex", "doc_id": "paper-1", "text": "Intro sentence 1.", "function": "gap"},
            {"source": "scirex", "doc_id": "paper-1", "text": "Intro sentence 3.", "function": "gap"},
            {"source": "scirex", "doc_id": "paper-1", "text": "Method sentence 0.", "function": "aim"},
            {"source": "scirex", "doc_id": "gone", "text": "Not in the corpus.", "function": "aim",
             "section_kind": "result"}]
    docs, functions = function_documents_in_context(rows, ["gap", "aim"], {"gap": "background",
                                                                           "aim": "objective"},
                                                    window=1, sentences_of=sentences_of)
    by_first = {d.sentences[0]: (d, f) for d, f in zip(docs, functions, strict=True)}
    # Sentences 1 and 3 with one neighbour each side merge into 0..4; the window stops at the
    # section-kind change, so "Method sentence 0." gets only its following neighbour.
    intro, intro_functions = by_first["Intro sentence 0."]
    assert intro.sentences == [f"Intro sentence {i}." for i in range(5)]
    assert intro_functions == [-1, 0, -1, 0, -1]
    assert intro.labels == [NO_ROLE_LABEL, "background", NO_ROLE_LABEL, "background", NO_ROLE_LABEL]
    assert intro.allowed[0] == frozenset(ROLES) and intro.allowed[1] == frozenset({"background"})
    assert intro.section_kinds == ["introduction"] * 5
    method, method_functions = by_first["Method sentence 0."]
    assert method.sentences == ["Method sentence 0.", "Method sentence 1."] and method_functions == [1, -1]
    # A row whose sentence is not in its source stays alone, with its own section kind.
    alone, alone_functions = by_first["Not in the corpus."]
    assert alone.section_kinds == ["result"] and alone_functions == [1] and alone.labels == ["objective"]
    assert len(docs) == 3


def test_attach_functions_takes_one_index_or_one_per_sentence() -> None:
    import torch

    from models.datasets import LabelledDocument
    from models.training.base import load_tokenizer, resolve_base_dir
    from models.training.batching import encode_documents
    from models.training.function_data import attach_functions

    tokenizer = load_tokenizer(resolve_base_dir(None), 16)
    docs = [LabelledDocument("a", ["One."], [NO_ROLE_LABEL], [frozenset(ROLES)], ["unknown"]),
            LabelledDocument("b", ["One.", "Two."], [NO_ROLE_LABEL] * 2, [frozenset(ROLES)] * 2,
                             ["method"] * 2)]
    encoded = encode_documents(docs, tokenizer, "functions")
    attach_functions(encoded, [3, [-1, 5]])
    assert encoded[0].functions.tolist() == [3] and encoded[1].functions.tolist() == [-1, 5]
    with pytest.raises(ValueError, match="2-sentence document"):
        attach_functions(encoded, [3, [5]])
    assert encoded[1].functions.dtype == torch.long
