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
from core.json_shapes import ShapeError, as_int, as_number, as_object, as_string, as_strings, loads
from core.paths import resources_dir
from core.taxonomy.labels import ROLES

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
REQUIRED_FILES = ("model.onnx", "tokenizer.json")
# The token positions the encoder reads (all-MiniLM-L6-v2 and every BERT-family base: 512); a manifest's
# ``max_length`` beyond it would crash the sentence graph on a long sentence.
MAX_POSITIONS = 512
# A role temperature outside this range is damage, not calibration (the fit's grid is [0.5, 10]).
TEMPERATURE_RANGE = (0.05, 20.0)
# What another Rhetorica folder's manifest says it is (core/library/pack_format.py: PACK_FORMAT).
OTHER_FORMATS = {"rhetorica-phrase-corpus": "a phrase-corpus pack"}


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
    # the runtime fields' digest (``runtime_digest``) as the bundle was made; a manifest edited in place since
    # (calibrate-roles, function-prior, none-detector) reads differently and gets another model id
    made_as: str = ""
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
        if manifest.max_length > MAX_POSITIONS:
            raise ValueError(f"'max_length' is {manifest.max_length}, more than the {MAX_POSITIONS} token "
                             "positions the encoder reads")
        unknown = [label for label in manifest.labels if label not in ROLES]
        if unknown:
            raise ValueError(f"'labels' names {', '.join(map(repr, unknown[:3]))}, not a role Rhetorica has "
                             f"({', '.join(ROLES)})")
        if len(set(manifest.labels)) != len(manifest.labels):
            raise ValueError("'labels' names a role twice")
        for name in manifest.files:
            check_file_name(name, "'files'")
        return manifest


# The shape of each manifest field the code reads, checked when the manifest is read (a ShapeError naming
# the field): "string", "number", "count" (a whole number >= 1), "strings" (a list of strings), "object",
# "temperature" (a number in TEMPERATURE_RANGE), "file" (a file name inside the bundle folder), or a dict:
# an object whose listed keys are checked in turn ("*": every key). Only what the runtime
# reads is listed (the records of how the bundle was made are not checked).
CONTEXT_SHAPE: dict[str, Any] = {
    "window": "count",
    "adapter_input": "string",
    "graphs": {"*": "file"},
    "body_head": {"section_kinds": "strings"},
    "role_calibration": {"role_head": {"temperature": "temperature"},
                         "body_head": {"temperature": "temperature"}},
    "functions": {
        "ids": "strings", "threshold": "number", "embedding_dim": "count",
        "none_detector": {"file": "file", "bias": "number", "best_weight": "number", "threshold": "number"},
        "role_prior": {"roles": "strings", "alpha": "number", "threshold": "number", "temperature": "number",
                       "context_weight": "number", "kind_prior": {"beta": "number", "log_ratio": "object"}},
    },
    "adapters": {"*": {"labels": "strings", "file": "file", "embedding_scale": "number"}},
    "figures": {"lexical_weight": "number", "ranker": {"weights": {"*": "number"}}},
}
MANIFEST_SHAPE: dict[str, Any] = {
    "name": "string", "version": "string", "base_model": "string", "labels": "strings",
    "section_kinds": "strings", "max_length": "count", "embedding_dim": "count", "pooling": "string",
    "context": CONTEXT_SHAPE, "quantization": "string", "files": {"*": "string"},
    "metrics": {"*": "object"}, "training": "object", "created": "string", "made_as": "string",
}


def check_file_name(name: object, where: str) -> str:
    """A file name inside the bundle folder: no folder part (``/``, ``\\``), not ``..``, not absolute
    (a :class:`~core.json_shapes.ShapeError` naming it otherwise); a bundle is one self-contained folder."""
    text = as_string(name, where)
    if not text or text in (".", "..") or "/" in text or "\\" in text or ":" in text or "\0" in text:
        raise ShapeError(f"{where} names {text!r}, not a file of the bundle folder (a plain file name "
                         "without a folder)")
    return text


def _temperature(value: object, where: str) -> float:
    number = as_number(value, where)
    low, high = TEMPERATURE_RANGE
    if not low <= number <= high:
        raise ShapeError(f"{where} must be between {low:g} and {high:g}, not {number:g}")
    return number


_SHAPE_CHECKS: dict[str, Any] = {
    "string": as_string, "number": as_number, "strings": as_strings, "object": as_object,
    "count": lambda value, where: as_int(value, where, minimum=1),
    "temperature": _temperature, "file": check_file_name,
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
    if isinstance(version, str) and version in OTHER_FORMATS:
        raise ModelError(f"{path.parent} is {OTHER_FORMATS[version]}, not a model bundle: choose a model "
                         f"bundle folder (one with model.onnx, tokenizer.json and {MANIFEST_NAME})")
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
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # UnicodeDecodeError, JSONDecodeError, ShapeError (too deep)
        raise ModelError(f"bad manifest {path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ModelError(f"bad manifest {path}: expected a JSON object")
    check_format(data.get("format"), path)
    try:
        return Manifest.from_dict(data)
    except (TypeError, ValueError) as error:
        raise ModelError(f"bad manifest {path}: {error}") from None


def write_manifest(bundle_dir: str | Path, manifest: Manifest,
                   file_names: tuple[str, ...] | None = None, *, made: bool = False) -> Manifest:
    """Hash the bundle's files into ``manifest.files`` and write ``manifest.json``.

    ``file_names`` defaults to the manifest's current file list plus the required files. ``made``: the
    bundle is being made (an export, a new bundle's last step): its runtime fields are recorded as made
    (``made_as``); an edit in place leaves the record, so the model id changes with it (``model_id``).
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
    if made:
        manifest.made_as = runtime_digest(manifest)
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
        graph = _read_graph(path) if name.endswith(".onnx") else None  # read once: hashed and scanned
        digest = file_sha256(path) if graph is None else hashlib.sha256(graph).hexdigest()
        if digest != expected:
            raise ModelError(f"model bundle {bundle} is altered: {name} does not match its sha256 "
                             "in the manifest (re-export or reinstall the model)")
        if graph is not None:
            check_no_external_data(bundle, name, graph)
    return manifest


def _read_graph(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read {path}: {error.strerror or error}") from None


# -- ONNX external data ---------------------------------------------------------------------------
# A graph may keep a tensor's bytes in another file (TensorProto.data_location = EXTERNAL, its location in
# external_data); onnxruntime then reads that file, which the manifest does not pin. The protobuf wire
# format is walked by hand (the onnx package is a training dependency only), following only the fields
# that can hold a tensor: {message: {field number: message it holds}}.
_ONNX_MESSAGES: dict[str, dict[int, str]] = {
    "model": {7: "graph", 25: "function"},
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "function": {7: "node"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
    "tensor": {},
}
_TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION = 13, 14


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("a truncated number")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _has_external_data(data: memoryview, message: str, depth: int = 0) -> bool:
    """True when the protobuf ``message`` in ``data`` holds a tensor whose bytes live in another file."""
    if depth > 64:
        raise ValueError("nested too deeply")
    inner = _ONNX_MESSAGES[message]
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            if message == "tensor" and field == _TENSOR_DATA_LOCATION and value == 1:
                return True
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ValueError("a truncated field")
            if message == "tensor" and field == _TENSOR_EXTERNAL_DATA:
                return True
            if field in inner and _has_external_data(data[at: at + size], inner[field], depth + 1):
                return True
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return False


def check_no_external_data(bundle_dir: str | Path, name: str, data: bytes | None = None) -> None:
    """Refuse a bundle graph that keeps weights in another file (not pinned by the manifest); ``data``:
    the graph's bytes when they were read already."""
    path = Path(bundle_dir) / name
    try:
        external = _has_external_data(memoryview(_read_graph(path) if data is None else data), "model")
    except (ValueError, RecursionError) as error:
        raise ModelError(f"cannot load {path}: not an ONNX graph ({error})") from None
    if external:
        raise ModelError(f"incompatible model bundle {bundle_dir}: {name} keeps weights in a separate file, "
                         "which the manifest does not pin; re-export the model with its weights inside the "
                         "graph")


def record_metrics(bundle_dir: str | Path, metrics: dict[str, dict[str, Any]]) -> Manifest:
    """Add or replace entries of ``manifest.metrics`` ({name: {value, data, command}}).

    The bundle is verified first and its file hashes are rewritten unchanged, so the
    model id (which hashes the files and the manifest's runtime fields, not its metrics) stays the same.
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


# The manifest fields the runtime reads besides the files (what it labels and embeds with). Left out: the
# records of how the bundle was made (metrics, training, created), so recording a metric keeps the model
# id, and ``context.figures`` (the figure ranker's weights, written by ``train figures``' record_ranker):
# figure rankings are never stored by model id.
RUNTIME_FIELDS = ("labels", "section_kinds", "max_length", "embedding_dim", "pooling", "context",
                  "quantization")
UNKEYED_CONTEXT = ("figures",)


def runtime_digest(manifest: Manifest) -> str:
    """One hash over the manifest's runtime fields (changes when calibrate-roles, function-prior or
    none-detector rewrite the manifest in place, though no file changes)."""
    record = {name: getattr(manifest, name) for name in RUNTIME_FIELDS}
    record["context"] = {k: v for k, v in dict(manifest.context).items() if k not in UNKEYED_CONTEXT}
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_id(manifest: Manifest) -> str:
    """``name@version#digest``: the digest (12 hex) covers the bundle's files; when the manifest's runtime
    fields were changed in place since the bundle was made (``made_as``), ``~`` and 8 hex of their digest
    follow, so analyses cached or stored by model id are not served after either changes. A bundle as made
    keeps the id it always had (libraries built with it stay usable)."""
    base = f"{manifest.name}@{manifest.version}#{files_digest(manifest)[:12]}"
    runtime = runtime_digest(manifest)
    return base if manifest.made_as in ("", runtime) else f"{base}~{runtime[:8]}"


