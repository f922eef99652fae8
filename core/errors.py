"""Typed errors for bad input.  Every message is one line a user can act on."""

from __future__ import annotations


class RhetoricaError(Exception):
    """Base class: the CLI prints ``str(error)`` on one line and exits non-zero."""


class DocumentError(RhetoricaError):
    """A file that cannot be read as a scientific paper."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NotAPdfError(DocumentError):
    """The file is empty or is not a PDF at all."""


class EncryptedPdfError(DocumentError):
    """The PDF is password-protected."""


class CorruptPdfError(DocumentError):
    """The PDF is damaged or truncated beyond repair."""


class ScannedPdfError(DocumentError):
    """The PDF has no text layer (a scan): OCR it first."""


class TooLargeError(DocumentError):
    """The PDF exceeds the configured page limit."""


class ModelError(RhetoricaError):
    """A model bundle is missing, incomplete or altered."""


class DatasetError(RhetoricaError):
    """A dataset name, split or file that cannot be read (training and evaluation data)."""


class TaxonomyError(RhetoricaError):
    """The communicative-function taxonomy file is missing or malformed."""


class Cancelled(RhetoricaError):
    """A long job was cancelled by the user."""

    def __init__(self, message: str = "cancelled") -> None:
        super().__init__(message)


class MissingFileError(NotAPdfError):
    """The file does not exist (a :class:`NotAPdfError`, so callers catching that still work)."""


class DraftError(RhetoricaError):
    """A draft (.tex, .md, .docx, .txt) that cannot be read: a broken .docx, a .tex with an unbalanced
    group, an ``\\input`` outside the project folder or in a cycle (one line naming the file and line)."""
