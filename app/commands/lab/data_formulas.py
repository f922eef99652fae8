"""``rhetorica data formulas``: the formulaic-word lexicon of the template extractor
(core.phrasing.templates).

A word is formulaic when it is common in the sentences of BOTH a CS and a biomedical abstract corpus
(CSAbstruct train, Apache-2.0; PubMedQA train, MIT): shared academic vocabulary rather than any one
field's topics; the words of the function taxonomy's markers (with their inflections) are added. The
lexicon stores words only, no text.
"""

from __future__ import annotations

import argparse
import json

from app.commands._options import bounded_float, bounded_int, output_file, write_output

SOURCES = ("csabstruct:train", "pubmedqa:train")
# Irregular forms of verbs that occur in the taxonomy's markers (which are lemmas).
IRREGULAR = {"be": ("is", "are", "was", "were", "been", "being", "am"), "have": ("has", "had", "having"),
             "do": ("does", "did", "done"), "pay": ("paid",), "find": ("found",), "show": ("shown",),
             "make": ("made",), "give": ("given", "gave"), "take": ("taken", "took"),
             "know": ("known", "knew"),
             "lead": ("led",), "bring": ("brought",), "see": ("seen", "saw"), "think": ("thought",),
             "become": ("became",), "begin": ("began", "begun"), "write": ("written", "wrote"),
             "hold": ("held",), "draw": ("drawn", "drew"), "leave": ("left",), "build": ("built",)}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("formulas", description=__doc__,
                                   help="Build the formulaic-word lexicon of the template extractor.")
    parser.add_argument("--out", type=output_file, required=True, help="lexicon JSON to write")
    parser.add_argument("--min-share", type=bounded_float(0.0, 1.0), default=0.002,
                        help="share of sentences a word must reach in every source (default 0.002)")
    parser.add_argument("--min-content", type=bounded_int(0, 100), default=1,
                        help="non-function words a span needs (default 1)")
    parser.add_argument("--min-tokens", type=bounded_int(1, 100), default=2,
                        help="words a span needs (default 2)")
    parser.set_defaults(func=run)


def word_shares(sentences: list[str]) -> dict[str, float]:
    """Share of ``sentences`` in which each lower-cased word occurs."""
    from collections import Counter

    from core.phrasing.templates import tokens

    counts: Counter[str] = Counter()
    for sentence in sentences:
        counts.update({t.lower() for _, _, t in tokens(sentence) if t[0].isalpha()})
    return {word: count / max(1, len(sentences)) for word, count in counts.items()}


def inflections(lemma: str) -> set[str]:
    """A lemma's regular (and listed irregular) inflected forms, itself included."""
    forms = {lemma, f"{lemma}s", f"{lemma}es", f"{lemma}ed", f"{lemma}ing", *IRREGULAR.get(lemma, ())}
    if lemma.endswith("e"):
        forms |= {f"{lemma}d", f"{lemma[:-1]}ing"}
    if lemma.endswith("y") and len(lemma) > 2:
        forms |= {f"{lemma[:-1]}ies", f"{lemma[:-1]}ied"}
    return forms


def marker_words() -> set[str]:
    """Every word of the function taxonomy's markers, with its inflected forms."""
    from core.taxonomy.functions import default_taxonomy

    words: set[str] = set()
    for function in default_taxonomy().functions:
        for marker in function.markers:
            for word in marker.text.split():
                if word.isalpha():
                    words |= inflections(word)
    return words


def run(args: argparse.Namespace) -> int:
    from models.datasets.registry import load_spec

    shares = [word_shares([s for d in load_spec(spec) for s in d.sentences]) for spec in SOURCES]
    shared = {w for w in shares[0] if all(share.get(w, 0.0) >= args.min_share for share in shares)}
    words = sorted(shared | marker_words())
    write_output(args.out, json.dumps({
        "sources": list(SOURCES), "min_share": args.min_share, "min_content": args.min_content,
        "min_tokens": args.min_tokens, "command": f"rhetorica data formulas --out {args.out} "
        f"--min-share {args.min_share} --min-content {args.min_content} --min-tokens {args.min_tokens}",
        "words": words}, indent=1) + "\n")
    print(f"{len(words)} formulaic words -> {args.out}")
    return 0
