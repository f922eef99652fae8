"""No code runs from data files (issue 23): a static scan of core/, models/ and app/ for the calls that
can execute what a file holds, and a checkpoint whose pickle would run a command, refused unrun."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "models", "app")


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _call_name(node: ast.Call) -> str:
    """'torch.load', 'pickle.load', 'eval', 'np.load' … as written at the call."""
    parts: list[str] = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    else:
        return ""
    return ".".join(reversed(parts))


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _is_true(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


PICKLE_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve"}


def _unsafe(node: ast.Call) -> str | None:
    """Why this call can run code from data, or None."""
    name = _call_name(node)
    root, last = name.split(".")[0], name.rsplit(".", 1)[-1]
    allow_pickle = _keyword(node, "allow_pickle")
    if name in {"eval", "exec", "compile", "__import__", "os.system", "os.popen"}:
        return f"{name}()"
    if name.endswith("torch.load") and not _is_true(_keyword(node, "weights_only")):
        return "torch.load without weights_only=True"
    if (root in PICKLE_MODULES and last in {"load", "loads", "open"}) or last == "Unpickler":
        return f"{name}()"
    if root in {"np", "numpy"} and last == "load" and not (allow_pickle is None or _is_false(allow_pickle)):
        return f"{name}(allow_pickle=…)"
    if root == "yaml" and last == "load":
        return "yaml.load (use yaml.safe_load)"
    if _is_true(_keyword(node, "shell")):
        return f"{name}(shell=True)"
    return None


def unsafe_calls(source: str, filename: str = "<source>") -> list[str]:
    """Each call in ``source`` that can run code from data, as 'line: why'."""
    return [f"{node.lineno}: {why}" for node in ast.walk(ast.parse(source, filename))
            if isinstance(node, ast.Call) and (why := _unsafe(node)) is not None]


def _is_false(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is False


def test_the_scan_finds_each_unsafe_call() -> None:
    """The scanner itself: every pattern it exists for is caught, the safe spellings are not."""
    unsafe = """
torch.load(p)
torch.load(p, weights_only=False)
pickle.loads(b)
np.load(p, allow_pickle=True)
eval("1")
exec("x = 1")
subprocess.run("ls", shell=True)
os.system("ls")
yaml.load(text)
"""
    assert len(unsafe_calls(unsafe)) == 9
    safe = """
torch.load(p, map_location="cpu", weights_only=True)
np.load(p, allow_pickle=False)
np.load(p)
net.eval()
dialog.exec()
subprocess.run(["ls"], shell=False)
json.loads(text)
"""
    assert unsafe_calls(safe) == []


def test_no_module_can_run_code_from_a_data_file() -> None:
    found = {str(p.relative_to(ROOT)): hits for p in _sources()
             if (hits := unsafe_calls(p.read_text(encoding="utf-8"), str(p)))}
    assert found == {}


class _RunsACommand:
    """A pickle payload: unpickling it calls ``Path.touch`` on the marker (any callable would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.touch, (self.marker,))


def test_a_checkpoint_whose_pickle_runs_code_is_refused_unrun(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from core.errors import ModelError
    from models.training.checkpoint import load_checkpoint

    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    torch.save({"state_dict": {}, "head": {}, "payload": _RunsACommand(marker)}, evil)
    # the payload is real: an unsafe load would run it
    with evil.open("rb") as handle:
        torch.load(handle, weights_only=False)  # (this file is outside the scan: core, models, app)
    assert marker.exists()
    marker.unlink()

    with pytest.raises(ModelError, match="refusing checkpoint") as caught:
        load_checkpoint(evil)
    assert not marker.exists()
    assert "\n" not in str(caught.value)


def test_a_plain_pickle_and_random_bytes_are_one_line_errors(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from core.errors import ModelError
    from models.training.checkpoint import load_checkpoint

    plain = tmp_path / "plain.pt"
    plain.write_bytes(pickle.dumps({"state_dict": {}}))
    noise = tmp_path / "noise.pt"
    noise.write_bytes(bytes(range(256)) * 8)
    wrong = tmp_path / "wrong.pt"
    import torch

    torch.save({"state_dict": {}, "head": {"no_such_field": 1}, "base_dir": "x"}, wrong)
    for path in (plain, noise, wrong):
        with pytest.raises(ModelError) as caught:
            load_checkpoint(path)
        assert "\n" not in str(caught.value)
