"""Build the seed corpus for ``fuzz_pdf.py`` in a folder outside the repository.

Seeds: the small generated PDFs of ``tests/pdf_factory.py`` (saved compressed and uncompressed,
so the fuzzer sees both raw content streams and deflated ones), and, when ``/work/shared/pdfs``
is present, the first page of each ``open``-tier shared PDF (smallest first) with embedded font
programs dropped and images shrunk to 1x1 (the text layer stays), re-saved compactly and kept
only when it fits ``--max-len`` bytes.  Real PDFs are 0.1-3 MB; these derived seeds are 15-25 KB,
which is what makes ~100k executions affordable.

    python tests/fuzz/make_corpus.py /tmp/corpus [--max-len 65536] [--shared /work/shared/pdfs]
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests import pdf_factory

GENERATORS = ["two_column_pdf", "figure_pdf", "hyphen_pdf", "wide_figure_pdf", "furniture_pdf",
              "references_pdf"]


def _compact(doc: pymupdf.Document, *, deflate: bool) -> bytes:
    return doc.tobytes(garbage=4, deflate=deflate, clean=True, no_new_id=True)


def _slim(doc: pymupdf.Document) -> None:
    """Drop embedded font programs and shrink every image to one grey pixel."""
    for xref in range(1, doc.xref_length()):
        try:
            keys = doc.xref_get_keys(xref)
        except Exception:  # a free or broken object
            continue
        for key in ("FontFile", "FontFile2", "FontFile3"):
            if key in keys:
                doc.xref_set_key(xref, key, "null")
        if doc.xref_get_key(xref, "Subtype")[1] == "/Image":
            doc.update_stream(xref, b"\x80")
            for key, value in (("SMask", "null"), ("Mask", "null"), ("Filter", "null"),
                               ("DecodeParms", "null"), ("Width", "1"), ("Height", "1"),
                               ("ColorSpace", "/DeviceGray"), ("BitsPerComponent", "8")):
                doc.xref_set_key(xref, key, value)
    doc.set_metadata({})


def generated_seeds() -> dict[str, bytes]:
    seeds: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in GENERATORS:
            path = getattr(pdf_factory, name)(Path(tmp) / f"{name}.pdf")
            with pymupdf.open(path) as doc:
                seeds[f"gen-{name}-raw.pdf"] = _compact(doc, deflate=False)
                seeds[f"gen-{name}-deflate.pdf"] = _compact(doc, deflate=True)
    return seeds


def shared_seeds(shared: Path, max_len: int, limit: int) -> dict[str, bytes]:
    manifest = shared / "manifest.csv"
    if not manifest.is_file():
        return {}
    with manifest.open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["tier"] == "open"]
    rows.sort(key=lambda r: int(r["bytes"]))
    seeds: dict[str, bytes] = {}
    for row in rows:
        if len(seeds) >= limit:
            break
        with pymupdf.open(shared / row["file"]) as doc:
            doc.select([0])
            _slim(doc)
            data = _compact(doc, deflate=True)
        if len(data) <= max_len:
            seeds[f"open-{Path(row['file']).stem}-p1.pdf"] = data
    return seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--max-len", type=int, default=65536)
    parser.add_argument("--shared", type=Path, default=Path("/work/shared/pdfs"))
    parser.add_argument("--shared-limit", type=int, default=8)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = generated_seeds()
    seeds.update(shared_seeds(args.shared, args.max_len, args.shared_limit))
    for name, data in sorted(seeds.items()):
        (args.out / name).write_bytes(data)
        print(f"{len(data):8d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
