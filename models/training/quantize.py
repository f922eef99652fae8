"""int8 dynamic quantisation of an exported ONNX graph (per channel: per-tensor drifts badly)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

# onnxruntime logs this on the root logger for every graph ("WARNING:root:Please consider to run
# pre-processing before quantization…"): advice for its own tool, not for the author running an export.
PREPROCESS_ADVICE = "Please consider"


def _not_preprocess_advice(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(PREPROCESS_ADVICE)


def quantize_int8(source: Path, target: Path, exclude: list[str] | None = None) -> None:
    """``onnxruntime.quantization.quantize_dynamic`` with per-channel int8 weights.

    It runs inside a temporary working directory: onnxruntime's pre-processing writes a large
    ``*-infer.onnx`` file into the current directory (and fails shape inference on this graph,
    which is not fatal).  The directory is removed afterwards.  ``exclude``: node names kept fp32.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source, target = Path(source).resolve(), Path(target).resolve()
    cwd = os.getcwd()
    work = tempfile.mkdtemp(prefix="rhetorica-quant-")
    root = logging.getLogger()
    root.addFilter(_not_preprocess_advice)
    try:
        os.chdir(work)
        quantize_dynamic(str(source), str(target), per_channel=True, weight_type=QuantType.QInt8,
                         nodes_to_exclude=list(exclude or []))
    finally:
        root.removeFilter(_not_preprocess_advice)
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
