"""The shape of the code (issue 26.3/26.2 targets): short functions in the GUI, thin panel files, and
the lab's commands apart from the author's verbs.

Measured statically (``ast``, nothing imported):
- no function or method anywhere under ``app/gui/`` is longer than ``MAX_FUNCTION_LINES``
  (``end_lineno - lineno + 1``: from its ``def`` line to its last line, decorators not counted);
- no file under ``app/gui/panels/`` is longer than ``MAX_PANEL_LINES``;
- the top level of ``app/commands/`` holds only the user verbs of ``app.cli.USER_COMMAND_MODULES`` and
  private helpers (``_name.py``); every lab command module (``app.cli.LAB_COMMAND_MODULES`` and the
  subcommands of its groups) lives in ``app/commands/lab/``.

``PENDING`` and ``PENDING_MOVES`` name what is still being converted, each with its reason; an entry
that is no longer needed fails, so the lists only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

from app.cli import LAB_COMMAND_MODULES, USER_COMMAND_MODULES

ROOT = Path(__file__).resolve().parents[1]
GUI = ROOT / "app" / "gui"
PANELS = GUI / "panels"
COMMANDS = ROOT / "app" / "commands"
LAB = COMMANDS / "lab"
MAX_FUNCTION_LINES = 60
MAX_PANEL_LINES = 300

# Files of app/gui (relative to it) being split up by other work in progress; exempt from both limits.
PENDING: dict[str, str] = {}

# Lab command modules still at the top of app/commands/ (file name -> reason).
PENDING_MOVES: dict[str, str] = {}


def _long_functions(path: Path) -> list[str]:
    """``name (line N): L lines`` for each function of ``path`` longer than the limit."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def _too_long(path: Path) -> bool:
    """A panel file over the limit (other files of app/gui have only the function limit)."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    return path.is_relative_to(PANELS) and lines > MAX_PANEL_LINES


def _gui_files() -> dict[str, Path]:
    return {path.relative_to(GUI).as_posix(): path for path in sorted(GUI.rglob("*.py"))}


def test_the_measure_counts_from_def_to_the_last_line(tmp_path: Path) -> None:
    def body(indent: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))

    source = tmp_path / "shape.py"
    source.write_text(f"@decorator\ndef fits():\n{body('    ')}\n\nclass A:\n    def too_long(self):\n"
                      f"{body('        ')}        return 1\n", encoding="utf-8")
    too_long_line = 2 + (MAX_FUNCTION_LINES - 1) + 2 + 2  # fits' def and body, two blank lines, class A
    assert _long_functions(source) == [f"too_long (line {too_long_line}): {MAX_FUNCTION_LINES + 1} lines"]


def test_no_function_in_app_gui_is_over_60_lines() -> None:
    found = {name: long for name, path in _gui_files().items()
             if name not in PENDING and (long := _long_functions(path))}
    assert not found, ("split these by meaning into helpers whose names say what they do: "
                       + "; ".join(f"app/gui/{name}: {', '.join(long)}" for name, long in found.items()))


def test_no_panel_file_is_over_300_lines() -> None:
    found = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in _gui_files().items() if name not in PENDING and _too_long(path)}
    assert not found, f"panel files over {MAX_PANEL_LINES} lines: {found}"


def test_pending_gui_files_exist_and_still_need_the_exemption() -> None:
    files = _gui_files()
    assert set(PENDING) <= set(files), f"PENDING names files that do not exist: {set(PENDING) - set(files)}"
    done = [name for name in PENDING if not _long_functions(files[name]) and not _too_long(files[name])]
    assert not done, f"these now fit the limits: remove them from PENDING in {Path(__file__).name}: {done}"


def _module_file(module: str) -> Path:
    return ROOT / Path(*module.split(".")).with_suffix(".py")


def _group_members(module: str) -> tuple[str, ...]:
    """The ``MODULES = (...)`` literal of a command group's source (read, not imported)."""
    for node in ast.parse(_module_file(module).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MODULES"
                                                for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return ()


def test_the_top_of_app_commands_holds_only_user_verbs_and_private_helpers() -> None:
    user_files = {_module_file(module).name for module in USER_COMMAND_MODULES}
    assert all(_module_file(module).parent == COMMANDS for module in USER_COMMAND_MODULES)
    top = {path.name for path in COMMANDS.glob("*.py")}
    strangers = sorted(name for name in top
                       if not name.startswith("_") and name not in user_files and name not in PENDING_MOVES)
    assert not strangers, f"lab command modules belong in app/commands/lab/: {strangers}"
    assert set(PENDING_MOVES) <= top, (f"moved: remove from PENDING_MOVES in {Path(__file__).name}: "
                                       f"{sorted(set(PENDING_MOVES) - top)}")


def test_every_lab_command_module_lives_in_the_lab_package() -> None:
    lab_modules = set(LAB_COMMAND_MODULES)
    for group in LAB_COMMAND_MODULES:
        lab_modules |= set(_group_members(group))
    assert len(lab_modules) > 2 * len(LAB_COMMAND_MODULES)  # the groups' members were read
    outside = sorted(module for module in lab_modules
                     if _module_file(module).parent != LAB and _module_file(module).name not in PENDING_MOVES)
    assert not outside, f"move these into app/commands/lab/: {outside}"
    assert all(_module_file(module).is_file() for module in lab_modules)
    assert not set(USER_COMMAND_MODULES) & lab_modules
