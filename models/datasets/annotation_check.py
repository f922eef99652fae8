"""Check an annotator's labels file against its batch key: every uid once, known roles and function ids.

``python -m models.datasets.annotation_check BATCH.key.jsonl LABELS.jsonl`` prints the problems (or
"ok: N labels") and exits 1 when there are any. It reads no model and no marker rule: annotators may run
it on their own output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.taxonomy.labels import NO_FUNCTION, ROLES


def function_ids() -> set[str]:
    import tomllib

    from core.paths import resources_dir

    data = tomllib.loads((resources_dir() / "functions" / "taxonomy.toml").read_text(encoding="utf-8"))
    return {str(f["id"]) for f in data["function"]}


def check_labels(key: Path, labels: Path) -> tuple[list[str], int]:
    """(problems, number of good labels)."""
    key_lines = key.read_text(encoding="utf-8").splitlines()
    wanted = [json.loads(line)["uid"] for line in key_lines if line.strip()]
    functions = function_ids() | {NO_FUNCTION}
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(labels.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            uid, role, function = str(row["uid"]), str(row["role"]), str(row["function"])
        except (ValueError, KeyError, TypeError) as error:
            problems.append(f"{labels}:{number}: not a label row ({error})")
            continue
        if uid in seen:
            problems.append(f"{labels}:{number}: {uid} labelled twice (first on line {seen[uid]})")
        seen[uid] = number
        if role not in ROLES:
            problems.append(f"{labels}:{number}: unknown role {role!r}")
        if function not in functions:
            problems.append(f"{labels}:{number}: unknown function {function!r}")
    extra = set(seen) - set(wanted)
    missing = [uid for uid in wanted if uid not in seen]
    problems += [f"not in this batch: {uid}" for uid in sorted(extra)]
    if missing:
        problems.append(f"{len(missing)} uids not labelled, first: {', '.join(missing[:10])}")
    return problems, len(seen) - len(extra)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m models.datasets.annotation_check BATCH.key.jsonl LABELS.jsonl",
              file=sys.stderr)
        return 2
    problems, good = check_labels(Path(argv[0]), Path(argv[1]))
    for problem in problems:
        print(problem)
    if not problems:
        print(f"ok: {good} labels")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
