"""Where reports go: one folder per report under ``output/``, never anywhere else.

A report (of ``make evaluate``, say) is written into ``output/<name>/`` chosen with
:func:`report_folder`. A name that would leave ``output/`` is refused, and a folder that holds the
report of other inputs is never silently replaced: the inputs of each report are kept beside it in
``inputs.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from .paths import OUTPUT_DIR

INPUTS_FILE = "inputs.json"


class ReportNameError(ValueError):
    """A report name that is not a plain folder name inside ``output/``, or that another report holds.

    Taught in: the README's "Your own data" (``make evaluate``).
    """


def report_folder(name: str, inputs: Mapping[str, str], output_dir: str | Path = OUTPUT_DIR) -> Path:
    """The folder ``output/<name>/`` for a report of ``inputs``, created if needed.

    Args:
        name: a plain folder name (letters, digits, spaces and ``. _ -``; no path separator, not
            starting with a dot), e.g. ``"library_hours"``.
        inputs: what the report is about, e.g. ``{"corpus": "/abs/path", "golden": "/abs/path.csv"}``
            (str to str); kept in ``inputs.json`` inside the folder.
        output_dir: the output folder (``output/`` of the project by default).

    Returns:
        The folder's path, which exists afterwards.

    Raises:
        ReportNameError: the name is empty, contains a path separator or other character outside the
            list above, starts with a dot, or the folder already holds a report of other inputs (the
            message names both and says how to choose another name).

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    if not isinstance(name, str) or not re.fullmatch(r"[^\W][\w .-]{0,99}", name) or name != name.strip():
        raise ReportNameError(
            f"report name {name!r} must be a plain folder name inside output/: letters, digits, spaces, '.', '_' "
            "or '-', not starting with a dot or a space, at most 100 characters (e.g. REPORT=library_hours)"
        )
    output_dir = Path(output_dir).resolve()
    folder = output_dir / name
    if folder.is_symlink() or folder.resolve().parent != output_dir:
        raise ReportNameError(f"output/{name} is a link that leaves output/; choose another REPORT name")
    inputs = {str(k): str(v) for k, v in inputs.items()}
    stored = folder / INPUTS_FILE
    if stored.exists():
        previous = json.loads(stored.read_text(encoding="utf-8"))
        if previous != inputs:
            raise ReportNameError(
                f"output/{name} holds the report of other inputs ({_describe(previous)}), not of these "
                f"({_describe(inputs)}); choose another REPORT name, or delete output/{name} to replace it"
            )
    elif folder.exists() and any(folder.iterdir()):
        raise ReportNameError(f"output/{name} exists and holds files of no report; choose another REPORT name")
    folder.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps(inputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


def _describe(inputs: Mapping[str, str]) -> str:
    return ", ".join(f"{key} {value}" for key, value in inputs.items())
