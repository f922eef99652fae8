"""The user's own labelled data: JSONL or CSV files with canonical roles as labels.

A label is one of :data:`core.taxonomy.labels.ROLES`, or several joined by ``|`` (a partial label).
"""

from __future__ import annotations

import csv
import json
from collections import OrderedDict
from pathlib import Path

from core.errors import DatasetError
from core.fileio import check_text_file
from core.json_shapes import loads
from core.taxonomy.labels import ROLES
from models.datasets.documents import LabelledDocument, need_file


def _user_allowed(label: str, where: str) -> frozenset[str]:
    """A user label is a canonical role, or several joined by ``|`` (a partial label)."""
    roles = frozenset(p.strip() for p in label.split("|") if p.strip())
    unknown = sorted(roles - set(ROLES))
    if not roles or unknown:
        raise DatasetError(f"{where}: label {label!r} is not one of {', '.join(ROLES)} (join several with |)")
    return roles


def _user_docs(rows: list[tuple[str, str, str, str | None]], where: str) -> list[LabelledDocument]:
    grouped: OrderedDict[str, list[tuple[str, str, str | None]]] = OrderedDict()
    for doc_id, text, label, kind in rows:
        grouped.setdefault(doc_id, []).append((text, label, kind))
    docs = []
    for doc_id, items in grouped.items():
        kinds = [k for _, _, k in items]
        docs.append(LabelledDocument(
            doc_id, [t for t, _, _ in items], [lab for _, lab, _ in items],
            [_user_allowed(lab, f"{where} ({doc_id})") for _, lab, _ in items],
            None if any(k is None for k in kinds) else [str(k) for k in kinds]))
    return docs


USER_DATA_LIMIT = 4_000_000_000  # bytes; checked in blocks, so memory stays small


def _text_file(path: Path, what: str) -> Path:
    """``path`` as a UTF-8 text file, checked in blocks before it is read: one line naming the file and
    the first bad byte otherwise ("not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8")."""
    check_text_file(need_file(path), what, max_bytes=USER_DATA_LIMIT)
    return path


def load_jsonl(path: Path) -> list[LabelledDocument]:
    """Either ``{"doc_id", "sentences": [...], "labels": [...], "section_kinds"?: [...]}`` per line
    or one sentence per line ``{"doc_id", "text", "label", "section_kind"?}`` (grouped by doc_id
    in file order)."""
    rows: list[tuple[str, str, str, str | None]] = []
    with _text_file(path, "labelled data (JSON Lines)").open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = loads(line)
            except json.JSONDecodeError as error:
                raise DatasetError(f"{path}:{number}: not JSON ({error.msg})") from None
            except ValueError as error:  # nested too deeply
                raise DatasetError(f"{path}:{number}: {error}") from None
            if not isinstance(item, dict):
                raise DatasetError(f"{path}:{number}: not a JSON object; need 'sentences'+'labels' or "
                                   "'text'+'label'")
            doc_id = str(item.get("doc_id", f"line{number}"))
            if "sentences" in item:
                sentences, labels = item["sentences"], item.get("labels")
                if not isinstance(sentences, list):
                    raise DatasetError(f"{path}:{number}: 'sentences' must be a list of sentences")
                if not isinstance(labels, list) or len(labels) != len(sentences):
                    raise DatasetError(f"{path}:{number}: 'labels' must list one label per sentence")
                kinds = item.get("section_kinds") or [None] * len(sentences)
                if not isinstance(kinds, list):
                    raise DatasetError(f"{path}:{number}: 'section_kinds' must list one kind per sentence")
                rows.extend((doc_id, str(s), str(lab), k) for s, lab, k in zip(sentences, labels, kinds))
            elif "text" in item and "label" in item:
                rows.append((doc_id, str(item["text"]), str(item["label"]), item.get("section_kind")))
            else:
                raise DatasetError(f"{path}:{number}: need 'sentences'+'labels' or 'text'+'label'")
    return _user_docs(rows, str(path))


def load_csv(path: Path) -> list[LabelledDocument]:
    """Columns ``doc_id,text,label`` (optional ``section_kind``), rows in reading order."""
    with _text_file(path, "labelled data (CSV)").open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"doc_id", "text", "label"} - set(reader.fieldnames or [])
        if missing:
            raise DatasetError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        rows = [(r["doc_id"], r["text"], r["label"], r.get("section_kind") or None) for r in reader]
    return _user_docs(rows, str(path))
