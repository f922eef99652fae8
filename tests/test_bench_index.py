"""``rhetorica bench index`` runs every engine in its own process and reports recall, memory, latency."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hnswlib")

from app.cli import main


def test_bench_index_small(tmp_path: Path) -> None:
    vectors = tmp_path / "v.npy"
    np.save(vectors, np.random.default_rng(0).standard_normal((1500, 32)).astype(np.float32))
    out = tmp_path / "bench.json"
    assert main(["bench", "index", "--vectors", str(vectors), "--n", "3000", "--queries", "50",
                 "--threads", "1", "--engines", "hnswlib,nonsense", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["real_vectors"] == 1450 and result["replicated_with_noise"] == 1550
    hnsw = result["engines"]["hnswlib"]
    assert hnsw["recall_at_10"] > 0.8 and hnsw["memory_mb"] > 0 and hnsw["latency_ms_p95"] > 0
    assert "unknown engine" in result["engines"]["nonsense"]["error"]
