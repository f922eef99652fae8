"""The package boundaries of docs/architecture.md, enforced.

Two kinds of check:
- fresh interpreters import a package (every module of it) and report which heavy or forbidden
  packages got loaded (``sys.modules``);
- a static scan of every ``import`` statement, including the lazy ones inside functions, which
  an import-time check cannot see.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_LOADED = """
import importlib, json, pkgutil, sys
for name in {packages!r}:
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        if not any(info.name == s or info.name.startswith(s + ".") for s in {skip!r}):
            importlib.import_module(info.name)
watch = ("PySide6", "torch", "transformers", "onnxruntime", "models", "spacy", "app")
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set(watch))))
"""


def _loaded_after_importing(packages: list[str], skip: list[str] | None = None) -> set[str]:
    code = _LOADED.format(packages=packages, skip=skip or [])
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_all_of_core_loads_no_qt_torch_onnxruntime_or_models() -> None:
    loaded = _loaded_after_importing(["core"])
    assert not loaded & {"PySide6", "torch", "transformers", "onnxruntime", "models", "app"}, loaded


def test_importing_all_of_models_but_training_loads_no_torch_or_qt() -> None:
    loaded = _loaded_after_importing(["models"], skip=["models.training"])
    assert not loaded & {"PySide6", "torch", "transformers", "app"}, loaded
    assert "models" in loaded  # the check really imported something


def test_parse_help_loads_no_qt_or_torch() -> None:
    code = ("import json, sys\nfrom app.cli import main\n"
            "try:\n    main(['parse', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "usage: rhetorica parse" in out.stdout
    assert not loaded & {"PySide6", "torch", "transformers", "onnxruntime", "spacy", "pymupdf"}, loaded


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module an ``import``/``from … import`` in ``path`` names, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _violations(folder: str, forbidden: tuple[str, ...], allowed_under: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(allowed_under):
            continue
        for line, module in _imports(path):
            if module.split(".")[0] in forbidden:
                bad.append(f"{relative}:{line} imports {module}")
    return bad


def test_no_module_of_core_imports_models_app_qt_or_torch() -> None:
    assert _violations("core", ("models", "app", "PySide6", "torch", "transformers", "onnxruntime")) == []


def test_only_models_training_imports_torch() -> None:
    for folder in ("core", "models", "app"):
        assert _violations(folder, ("torch", "transformers"), allowed_under=("models/training/",)) == []


def test_models_never_imports_app_or_qt() -> None:
    assert _violations("models", ("app", "PySide6")) == []


def test_only_app_gui_imports_qt() -> None:
    for folder in ("core", "models", "app"):
        assert _violations(folder, ("PySide6",), allowed_under=("app/gui/",)) == []


def test_the_scan_sees_lazy_imports(tmp_path: Path) -> None:
    module = tmp_path / "lazy.py"
    module.write_text("def f():\n    import torch.nn\n    from models.encoder import load_model\n")
    assert _imports(module) == [(2, "torch.nn"), (3, "models.encoder")]


def test_the_encoder_satisfies_the_protocol_core_uses(tmp_path: Path) -> None:
    from core.model_api import RoleModel
    from models import load_model
    from tests.tiny_bundle import make_tiny_bundle

    model = load_model(make_tiny_bundle(tmp_path / "bundle"), device="cpu")
    assert isinstance(model, RoleModel)
    assert not isinstance(object(), RoleModel)
