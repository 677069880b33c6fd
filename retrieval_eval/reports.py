"""Where reports go: one folder per report under ``output/``, never anywhere else.

A report (of ``make evaluate``, say) is written into ``output/<name>/`` chosen with
:func:`report_folder`. A name that would leave ``output/`` is refused, and a folder that holds the
report of other inputs is never silently replaced: the inputs of each report are kept beside it in
``inputs.json``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from .paths import OUTPUT_DIR

INPUTS_FILE = "inputs.json"  # the inputs of a finished report, written last
UNFINISHED_FILE = ".unfinished"  # a report being written, or one whose run stopped: the folder is free


class ReportNameError(ValueError):
    """A report name that is not a plain folder name inside ``output/``, or that another report holds.

    Taught in: the README's "Your own data" (``make evaluate``).
    """


def report_folder(name: str, inputs: Mapping[str, str], output_dir: str | Path = OUTPUT_DIR) -> Path:
    """The folder ``output/<name>/`` for a report of ``inputs``, created if needed and marked unfinished.

    A folder is taken when it is new, holds a finished report of the same inputs (it is replaced),
    or holds a report that was never finished (a run that stopped: there is no report to keep).
    :func:`finish_report` writes ``inputs.json`` once the report is written, so a folder whose run
    stopped never claims a report. The name is read in Unicode NFC, so a name pasted in decomposed
    form (``cafe`` + combining accent, as macOS gives file names) is the same as typed.

    Args:
        name: a plain folder name (letters, digits, spaces and ``. _ -``; no path separator, not
            starting with a dot), e.g. ``"library_hours"``; see :func:`default_report_name`.
        inputs: what the report is about, e.g. ``{"corpus": "/abs/path", "golden": "/abs/path.csv"}``
            (str to str); kept in ``inputs.json`` inside the folder when the report is finished.
        output_dir: the output folder (``output/`` of the project by default).

    Returns:
        The folder's path, which exists afterwards.

    Raises:
        ReportNameError: the name is empty, contains a path separator or other character outside the
            list above, starts with a dot, or the folder already holds a finished report of other
            inputs (the message names both and says how to choose another name), holds files of no
            report, or holds an ``inputs.json`` that cannot be read (names it).

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    folder = check_report_folder(name, inputs, output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    inputs = {str(k): str(v) for k, v in inputs.items()}
    (folder / UNFINISHED_FILE).write_text(json.dumps(inputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / INPUTS_FILE).unlink(missing_ok=True)  # the report is being replaced: until it is finished, there is none
    return folder


def check_report_folder(name: str, inputs: Mapping[str, str], output_dir: str | Path = OUTPUT_DIR) -> Path:
    """The checks of :func:`report_folder`, without creating or changing anything: the folder's path.

    Args:
        name, inputs, output_dir: as :func:`report_folder`.

    Returns:
        ``output_dir/name`` (a Path; it may not exist yet).

    Raises:
        ReportNameError: as :func:`report_folder`.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    if isinstance(name, str):
        name = unicodedata.normalize("NFC", name)
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
    stored, unfinished = folder / INPUTS_FILE, folder / UNFINISHED_FILE
    if stored.exists() and not unfinished.exists():
        try:
            previous = json.loads(stored.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ReportNameError(f"output/{name}/{INPUTS_FILE} cannot be read ({exc}): delete output/{name} to "
                                  "replace its report, or choose another REPORT name") from None
        if previous != inputs:
            described = _describe(previous) if isinstance(previous, dict) else repr(previous)
            raise ReportNameError(
                f"output/{name} holds the report of other inputs ({described}), not of these "
                f"({_describe(inputs)}); choose another REPORT name, or delete output/{name} to replace it"
            )
    elif folder.exists() and not unfinished.exists() and any(folder.iterdir()):
        raise ReportNameError(f"output/{name} exists and holds files of no report; choose another REPORT name")
    return folder


def finish_report(folder: Path, inputs: Mapping[str, str]) -> None:
    """Mark the report in ``folder`` (from :func:`report_folder`) finished: write ``inputs.json``.

    Args:
        folder: the report folder :func:`report_folder` returned.
        inputs: the same inputs given to :func:`report_folder` (str to str).

    Raises:
        OSError: the file cannot be written.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    inputs = {str(k): str(v) for k, v in inputs.items()}
    (folder / INPUTS_FILE).write_text(json.dumps(inputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / UNFINISHED_FILE).unlink(missing_ok=True)


def default_report_name(path: str | Path, prefix: str = "") -> str:
    """A report name that :func:`report_folder` accepts, from the name of the folder holding ``path``.

    ``prefix`` + the folder name in NFC, each character other than letters, digits, spaces and
    ``. _ -`` replaced by ``_``, without leading or trailing spaces, dots or dashes, at most 100
    characters; ``"report"`` when nothing is left. E.g. ``-dash/golden.csv`` → ``"dash"``.

    Args:
        path: the qrels or golden file (str or Path); its folder's name is used.
        prefix: put before the name, e.g. ``"runs-"``.

    Returns:
        The name (str).

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    folder = unicodedata.normalize("NFC", Path(path).parent.name)
    name = (prefix + re.sub(r"[^\w .-]", "_", folder)).strip(" .-")[:100].rstrip(" .-")
    return name or "report"


def _describe(inputs: Mapping[str, str]) -> str:
    return ", ".join(f"{key} {value}" for key, value in inputs.items())
