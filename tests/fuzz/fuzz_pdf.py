"""Atheris (libFuzzer) harness for PDF ingestion: ``core.pdf.parse_pdf`` on mutated bytes.

Contract under test: any input either parses into a ``Paper`` or raises a
``core.errors.RhetoricaError`` subclass.  Anything else escaping ``parse_pdf`` (IndexError,
ValueError, a pymupdf exception, RecursionError, ...) is a crash that libFuzzer records as an
artifact; hangs (``-timeout``) and memory blow-ups (``-rss_limit_mb``) are caught by libFuzzer.

Run (see tests/fuzz/README.md)::

    python tests/fuzz/make_corpus.py /tmp/corpus
    python tests/fuzz/fuzz_pdf.py /tmp/corpus -runs=100000 -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix=/tmp/fuzz-artifacts/

A single crash file can be replayed with ``python tests/fuzz/fuzz_pdf.py CRASH_FILE``.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

with atheris.instrument_imports(include=["core"]):
    from core.errors import RhetoricaError
    from core.pdf import parse_pdf

_TMP_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
_FD, _TARGET = tempfile.mkstemp(prefix="rhetorica-fuzz-", suffix=".pdf", dir=_TMP_DIR)
os.close(_FD)
atexit.register(lambda: os.path.exists(_TARGET) and os.unlink(_TARGET))


def TestOneInput(data: bytes) -> None:  # the name atheris expects
    with open(_TARGET, "wb") as handle:
        handle.write(data)
    try:
        parse_pdf(_TARGET)
    except RhetoricaError as error:
        message = str(error)
        # The contract is also "one line a user can act on".
        if "\n" in message or not message.strip():
            raise AssertionError(f"error message is not one line: {message!r}") from None


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
