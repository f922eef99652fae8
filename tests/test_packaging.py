"""The PyInstaller package (``make package``, packaging/rhetorica.spec).

The fast tests read the spec (no PyInstaller needed): every command module the CLI imports by name
is either bundled as a hidden import or left out on purpose, and the model bundle, the default
corpus, the sample paper and the icons are bundled.  The slow test builds the app and runs it from a
clean environment (``env -i``: no virtualenv, no PYTHONPATH); it runs only with
``RHETORICA_BUILD_PACKAGE=1``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.cli import COMMAND_MODULES

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "rhetorica.spec"
APP = ROOT / "dist" / "rhetorica" / "rhetorica"
SAMPLE = ROOT / "resources" / "sample" / "sample-paper.pdf"
GROUPS = ("app.commands.lab.eval", "app.commands.lab.bench", "app.commands.lab.data",
          "app.commands.lab.train")


def _literal(path: Path, name: str) -> Any:
    """The value of the literal assignment ``NAME = ...`` in a Python file (read, not imported)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return ast.literal_eval(node.value)  # type: ignore[attr-defined]
    raise KeyError(f"{path.name} has no literal {name} = ...")


def spec_literal(name: str) -> Any:
    return _literal(SPEC, name)


def module_literal(module: str, name: str) -> tuple[str, ...]:
    """A tuple literal of a module's source, read without importing it (train needs torch)."""
    try:
        return tuple(_literal(ROOT / Path(*module.split(".")).with_suffix(".py"), name))
    except (KeyError, FileNotFoundError):
        return ()


def all_command_modules() -> set[str]:
    modules = set(COMMAND_MODULES)
    for group in GROUPS:
        if group in modules:
            modules |= set(module_literal(group, "MODULES"))
    return modules


def test_every_command_module_is_bundled_or_left_out_on_purpose() -> None:
    commands = set(spec_literal("COMMANDS"))
    left_out = set(spec_literal("LEFT_OUT_COMMANDS"))
    assert not commands & left_out
    modules = all_command_modules()
    assert len(modules) > len(COMMAND_MODULES)  # the groups' subcommands were found
    existing = {m for m in modules if (ROOT / Path(*m.split(".")).with_suffix(".py")).is_file()}
    missing = sorted(existing - commands - left_out)
    assert not missing, f"add to COMMANDS (or LEFT_OUT_COMMANDS) in packaging/rhetorica.spec: {missing}"
    # what is left out is exactly the torch part (training, export of an untrained bundle)
    assert all(m in {"app.commands.lab.export", "app.commands.lab.train"}
               or m.startswith("app.commands.lab.train_") for m in left_out)


def test_the_spec_bundles_the_model_corpus_sample_and_icons() -> None:
    datas = spec_literal("DATAS")
    assert isinstance(datas, list)
    sources = {src for src, _dest in datas}
    for needed in ("resources/models/default", "resources/corpus", "resources/sample", "resources/icons",
                   "resources/functions", "packaging/rhetorica.desktop"):
        assert needed in sources, needed
    for src, dest in datas:
        assert (ROOT / src).exists(), src
        if src.startswith("resources/"):
            assert dest == src  # core.paths.resources_dir() is <_MEIPASS>/resources
    assert (ROOT / "resources" / "corpus" / "manifest.json").is_file()
    assert (ROOT / "resources" / "models" / "default" / "manifest.json").is_file()


def test_the_desktop_entry_opens_the_gui() -> None:
    entry = (ROOT / "packaging" / "rhetorica.desktop").read_text(encoding="utf-8")
    assert "Exec=rhetorica gui %f" in entry
    assert "Icon=rhetorica" in entry
    assert (ROOT / "resources" / "icons" / "rhetorica.svg").is_file()


def _clean_env(home: Path) -> dict[str, str]:
    # no virtualenv, no PYTHONPATH, a fresh profile
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}


@pytest.mark.skipif(os.environ.get("RHETORICA_BUILD_PACKAGE") != "1",
                    reason="slow: builds the app with PyInstaller, ~1 min (plus ~30 s of smoke tests); "
                           "set RHETORICA_BUILD_PACKAGE=1")
def test_build_the_package_and_run_it_from_a_clean_environment(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("make not available")
    subprocess.run(["make", "package"], cwd=ROOT, check=True, timeout=1800)
    assert APP.is_file()
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home)

    parsed = subprocess.run([str(APP), "parse", str(SAMPLE)], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert parsed.returncode == 0, parsed.stderr
    assert "SPECTER" in parsed.stdout and "sentences:" in parsed.stdout

    suggested = subprocess.run([str(APP), "suggest", "We propose a method."], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
    assert suggested.returncode == 0, suggested.stderr
    assert "corpus" in suggested.stdout  # the default phrase corpus, no setup

    shot = tmp_path / "packaged.png"
    gui = subprocess.run([str(APP), "gui", str(SAMPLE), "--screenshot", str(shot)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert gui.returncode == 0, gui.stderr
    assert shot.is_file() and shot.stat().st_size > 20_000

    first = tmp_path / "first-start.png"
    empty = subprocess.run([str(APP), "gui", "--screenshot", str(first)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert empty.returncode == 0, empty.stderr
    assert first.is_file() and first.stat().st_size > 20_000
