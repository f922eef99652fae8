"""Model bundles: a directory with ``manifest.json``, ``model.onnx`` and ``tokenizer.json``.

The manifest describes the model (labels, section kinds, pooling, context window,
quantisation, metrics, how it was trained) and pins every file by sha256, so a
bundle explains itself and an altered file is caught before it is used.
See docs/architecture.md ("Model bundle format").
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import ModelError
from core.fileio import file_sha256
from core.json_shapes import as_int, as_number, as_object, as_string, as_strings
from core.paths import resources_dir

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
REQUIRED_FILES = ("model.onnx", "tokenizer.json")


@dataclass
class Manifest:
    """What ``manifest.json`` holds (docs/architecture.md, "Model bundle format")."""

    name: str
    version: str
    base_model: str
    labels: list[str]
    section_kinds: list[str]
    max_length: int
    embedding_dim: int
    pooling: str = "mean"
    context: dict[str, Any] = field(default_factory=dict)
    quantization: str = "none"
    files: dict[str, str] = field(default_factory=dict)  # file name -> sha256
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {value, data, command}
    training: dict[str, Any] = field(default_factory=dict)
    created: str = ""
    format: int = FORMAT_VERSION

    @property
    def unknown_section_kind(self) -> int:
        """The ``section_kind`` index meaning "unknown" (one past the last kind)."""
        return len(self.section_kinds)

    @property
    def context_window(self) -> int:
        """How many sentences the role head sees at once (long documents go in windows)."""
        return int(self.context.get("window", 64))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        # Stable, readable key order with "format" first.
        return {"format": data.pop("format"), **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        known = {f.name for f in fields(cls)}
        required = ("name", "version", "base_model", "labels", "section_kinds", "max_length",
                    "embedding_dim")
        absent = [key for key in required if key not in data]
        if absent:
            raise ValueError(f"missing field(s) {', '.join(absent)}")
        check_shape(data, MANIFEST_SHAPE)
        values = {k: v for k, v in data.items() if k in known}
        manifest = cls(**values)
        if not manifest.labels or not all(isinstance(x, str) for x in manifest.labels):
            raise ValueError("'labels' must be a non-empty list of strings")
        if not all(isinstance(x, str) for x in manifest.section_kinds):
            raise ValueError("'section_kinds' must be a list of strings")
        if int(manifest.max_length) <= 2 or int(manifest.embedding_dim) <= 0:
            raise ValueError("'max_length' and 'embedding_dim' must be positive")
        return manifest


# The shape of each manifest field the code reads, checked when the manifest is read (a ShapeError naming
# the field): "string", "number", "count" (a whole number >= 1), "strings" (a list of strings), "object",
# or a dict: an object whose listed keys are checked in turn ("*": every key). Only what the runtime
# reads is listed (the records of how the bundle was made are not checked).
CONTEXT_SHAPE: dict[str, Any] = {
    "window": "count",
    "adapter_input": "string",
    "graphs": {"*": "string"},
    "body_head": {"section_kinds": "strings"},
    "role_calibration": {"role_head": {"temperature": "number"}, "body_head": {"temperature": "number"}},
    "functions": {
        "ids": "strings", "threshold": "number", "embedding_dim": "count",
        "none_detector": {"file": "string", "bias": "number", "best_weight": "number", "threshold": "number"},
        "role_prior": {"roles": "strings", "alpha": "number", "threshold": "number", "temperature": "number",
                       "context_weight": "number", "kind_prior": {"beta": "number", "log_ratio": "object"}},
    },
    "adapters": {"*": {"labels": "strings", "file": "string", "embedding_scale": "number"}},
    "figures": {"lexical_weight": "number", "ranker": "object"},
}
MANIFEST_SHAPE: dict[str, Any] = {
    "name": "string", "version": "string", "base_model": "string", "labels": "strings",
    "section_kinds": "strings", "max_length": "count", "embedding_dim": "count", "pooling": "string",
    "context": CONTEXT_SHAPE, "quantization": "string", "files": {"*": "string"},
    "metrics": {"*": "object"}, "training": "object", "created": "string",
}
_SHAPE_CHECKS: dict[str, Any] = {
    "string": as_string, "number": as_number, "strings": as_strings, "object": as_object,
    "count": lambda value, where: as_int(value, where, minimum=1),
}


def check_shape(value: object, shape: str | dict[str, Any], path: str = "") -> None:
    """Refuse (:class:`~core.json_shapes.ShapeError`, a ``ValueError``) a ``value`` not of ``shape``
    (see :data:`MANIFEST_SHAPE`); ``path``: its dotted name ("": the whole manifest)."""
    if isinstance(shape, str):
        _SHAPE_CHECKS[shape](value, f"'{path}'")
        return
    data = as_object(value, f"'{path}'" if path else "the manifest")
    for key, inner in shape.items():
        for name in (data if key == "*" else [key] if key in data else []):
            check_shape(data[name], inner, f"{path}.{name}" if path else name)


def check_format(version: object, path: Path) -> None:
    """Refuse a manifest whose ``format`` this version cannot read, saying what to do."""
    if version == FORMAT_VERSION:
        return
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise ModelError(f"bad manifest {path}: format {version} is not supported (an incompatible "
                         f"bundle, newer than format {FORMAT_VERSION}, which this Rhetorica reads); "
                         "update Rhetorica or re-export the model")
    raise ModelError(f"bad manifest {path}: format {version!r} is not supported "
                     f"(expected {FORMAT_VERSION})")


# The inputs Rhetorica feeds each graph (models/encoder.py: run, run_roles, run_content).
GRAPH_INPUTS: dict[str, frozenset[str]] = {
    "sentences": frozenset({"input_ids", "attention_mask", "section_kind", "token_type_ids"}),
    "roles": frozenset({"pooled", "section_kind"}),
    "content": frozenset({"fork_states", "attention_mask"}),
}


def check_graph_inputs(bundle_dir: str | Path, graph: str, file_name: str, inputs: set[str]) -> None:
    """Refuse a graph that needs inputs Rhetorica does not give it (an incompatible export)."""
    fed = GRAPH_INPUTS[graph]
    unknown = sorted(set(inputs) - fed)
    if unknown:
        raise ModelError(f"incompatible model bundle {bundle_dir}: {file_name} needs input(s) "
                         f"{', '.join(unknown)} that Rhetorica does not provide "
                         f"(it feeds {', '.join(sorted(fed))}); re-export the model")
    if graph == "sentences" and "input_ids" not in inputs:
        raise ModelError(f"incompatible model bundle {bundle_dir}: {file_name} has no input 'input_ids'")


def default_bundle_path() -> Path:
    """The bundled default model (``resources/models/default``)."""
    return resources_dir() / "models" / "default"


def read_manifest(bundle_dir: str | Path) -> Manifest:
    """Read and validate ``manifest.json`` (no file hashes checked: see :func:`verify_bundle`)."""
    bundle = Path(bundle_dir)
    if not bundle.is_dir():
        raise ModelError(f"model bundle not found: {bundle} (expected a folder with {MANIFEST_NAME})")
    path = bundle / MANIFEST_NAME
    if not path.is_file():
        raise ModelError(f"model bundle {bundle} has no {MANIFEST_NAME}: reinstall or re-export the model")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"bad manifest {path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ModelError(f"bad manifest {path}: expected a JSON object")
    check_format(data.get("format"), path)
    try:
        return Manifest.from_dict(data)
    except (TypeError, ValueError) as error:
        raise ModelError(f"bad manifest {path}: {error}") from None


def write_manifest(bundle_dir: str | Path, manifest: Manifest,
                   file_names: tuple[str, ...] | None = None) -> Manifest:
    """Hash the bundle's files into ``manifest.files`` and write ``manifest.json``.

    ``file_names`` defaults to the manifest's current file list plus the required files.
    Returns the manifest as written (``files`` and, when empty, ``created`` filled in).
    """
    bundle = Path(bundle_dir)
    names = file_names or tuple(dict.fromkeys((*REQUIRED_FILES, *manifest.files)))
    files: dict[str, str] = {}
    for name in names:
        path = bundle / name
        if not path.is_file():
            raise ModelError(f"cannot write manifest: {path} is missing")
        files[name] = file_sha256(path)
    manifest.files = files
    if not manifest.created:
        manifest.created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
    (bundle / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return manifest


def verify_bundle(bundle_dir: str | Path) -> Manifest:
    """Read the manifest and check every file against its sha256; raise :class:`ModelError`."""
    bundle = Path(bundle_dir)
    manifest = read_manifest(bundle)
    for name in REQUIRED_FILES:
        if name not in manifest.files:
            raise ModelError(f"bad manifest {bundle / MANIFEST_NAME}: 'files' does not list {name}")
    graphs = manifest.context.get("graphs", {}) if isinstance(manifest.context, dict) else {}
    for role, name in (graphs.items() if isinstance(graphs, dict) else ()):
        if str(name) not in manifest.files:
            raise ModelError(f"incompatible model bundle {bundle}: the manifest names {name} as its "
                             f"{role} graph but does not pin it in 'files' (re-export the model)")
    for name, expected in manifest.files.items():
        path = bundle / name
        if not path.is_file():
            raise ModelError(f"model bundle {bundle} is incomplete: {name} is missing")
        if file_sha256(path) != expected:
            raise ModelError(f"model bundle {bundle} is altered: {name} does not match its sha256 "
                             "in the manifest (re-export or reinstall the model)")
    return manifest


def record_metrics(bundle_dir: str | Path, metrics: dict[str, dict[str, Any]]) -> Manifest:
    """Add or replace entries of ``manifest.metrics`` ({name: {value, data, command}}).

    The bundle is verified first and its file hashes are rewritten unchanged, so the
    model id (which hashes the files, not the manifest) stays the same.
    """
    for name, entry in metrics.items():
        missing = {"value", "data", "command"} - set(entry)
        if missing:
            raise ValueError(f"metric {name!r} lacks {', '.join(sorted(missing))}")
    bundle = Path(bundle_dir)
    manifest = verify_bundle(bundle)
    manifest.metrics = {**manifest.metrics, **metrics}
    return write_manifest(bundle, manifest, tuple(manifest.files))


def bundle_size_bytes(bundle_dir: str | Path) -> int:
    """Total size of the files in a bundle folder."""
    return sum(p.stat().st_size for p in Path(bundle_dir).iterdir() if p.is_file())


def files_digest(manifest: Manifest) -> str:
    """One hash over the manifest's file hashes (changes when any bundle file changes)."""
    joined = "\n".join(f"{name}={digest}" for name, digest in sorted(manifest.files.items()))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()
