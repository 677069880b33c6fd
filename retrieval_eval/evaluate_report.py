"""``make evaluate``: notebook 05 run on your corpus and golden set, saved as a report under ``output/``.

Run as ``python -m retrieval_eval.evaluate_report``; the Makefile exports its variables to it. The
parameters come from the environment, so a path arrives exactly as typed: spaces, non-ASCII letters
and quotes included (make's path functions would split it at spaces).

- ``CORPUS``, ``GOLDEN``: the corpus folder and the golden-set CSV file (default: the Polder set).
  A relative path is read from ``START_DIR``, the folder ``make`` was started from (the Makefile
  sets it), else from the current folder.
- ``CHUNK_SIZE`` (default 512), ``K`` (default 3): numbers as typed, in plain digits
  (:func:`~retrieval_eval.parameters.parse_number`: ``2.5``, ``abc`` and ``5_12`` reach the check
  as a float and strs, and are refused there, as papermill's ``-p`` would hand them over).
- ``MODEL_NAME``: a local sentence-transformers model (default: the bundled all-MiniLM-L6-v2).
- ``REPORT``: the report's folder name under ``output/`` (default: the golden file's folder name,
  made a valid name by :func:`~retrieval_eval.reports.default_report_name`).

Steps: check every parameter (:func:`~retrieval_eval.parameters.check_parameters`); choose the
report folder (:func:`~retrieval_eval.reports.report_folder`: only under ``output/``, never the
report of other inputs, and only marked as a report by ``inputs.json`` once it is written); build the evaluation in this terminal with progress bars for chunking,
BM25 indexing, embedding and ranking (:func:`~retrieval_eval.pipeline.evaluation_setup`, which fills
the rankings cache); then run the notebook with papermill, which reads the cached rankings, and
write ``output/<REPORT>/report.ipynb`` and ``report.html``. A problem stops the run with one
message naming its cause (exit status 2 for parameters, 1 for data), not a traceback.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from .corpus import CHUNK_SIZE
from .golden import GoldenSetError
from .parameters import ParameterError, check_parameters, parse_number, raise_problems
from .paths import CORPUS_DIR, GOLDEN_PATH, ROOT, typed_path
from .pipeline import evaluation_setup
from .reports import ReportNameError, check_report_folder, default_report_name, finish_report, report_folder

NOTEBOOK = ROOT / "notebooks" / "05_three_retrievers.ipynb"
K_DEFAULT = 3


def read_parameters(environ: Mapping[str, str]) -> dict:
    """The run's parameters from environment variables (see the module docstring), paths made absolute.

    Args:
        environ: the variables (``CORPUS``, ``GOLDEN``, ``MODEL_NAME``, ``CHUNK_SIZE``, ``K``,
            ``REPORT``, ``START_DIR``), str to str; an empty value counts as not given.

    Returns:
        ``{"corpus": Path, "golden": Path, "model_name": str | None, "chunk_size": int | float | str,
        "k": int | float | str, "report": str, "typed": {"corpus": str, "golden": str}, "start": str | None}``;
        numbers are parsed (:func:`~retrieval_eval.parameters.parse_number`) but not checked; ``typed``
        holds the paths as typed (or the default) and ``start`` the folder they are read from.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    start = environ.get("START_DIR") or None
    typed = {"corpus": environ.get("CORPUS") or str(CORPUS_DIR), "golden": environ.get("GOLDEN") or str(GOLDEN_PATH)}
    golden = typed_path(typed["golden"], start)
    return {
        "corpus": typed_path(typed["corpus"], start),
        "golden": golden,
        "model_name": environ.get("MODEL_NAME") or None,
        "chunk_size": parse_number(environ.get("CHUNK_SIZE", ""), CHUNK_SIZE),
        "k": parse_number(environ.get("K", ""), K_DEFAULT),
        "report": environ.get("REPORT") or default_report_name(golden),
        "typed": typed,
        "start": start,
    }


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Run ``make evaluate`` (see the module docstring); return the exit status.

    Args:
        environ: the variables, as :func:`read_parameters` reads them (default: the environment).

    Returns:
        0 when the report is written; 2 for wrong parameters or report name (every problem printed
        at once, nothing read); 1 for a problem with the data or the notebook run (one line).

    Raises:
        Nothing on bad input: every expected problem is printed to stderr and returned as the
        exit status; an unexpected error propagates.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    import papermill as pm
    from nbconvert import HTMLExporter

    p = read_parameters(environ)
    inputs = {"corpus": p["corpus"], "golden": p["golden"], "model": p["model_name"] or "bundled all-MiniLM-L6-v2",
              "chunk_size": p["chunk_size"], "k": p["k"]}
    problems = []  # every problem at once: the parameters' and the report folder's
    try:
        check_parameters(p["typed"]["corpus"], p["typed"]["golden"], p["model_name"], p["chunk_size"], p["k"], p["start"])
    except ParameterError as exc:
        problems += exc.problems
    try:
        check_report_folder(p["report"], inputs)
    except ReportNameError as exc:
        problems.append(str(exc))
    try:
        raise_problems(problems)
    except ParameterError as exc:
        print(f"make evaluate: {exc}", file=sys.stderr)
        return 2
    folder = report_folder(p["report"], inputs)
    print(f"Corpus {p['corpus']}\nGolden set {p['golden']}\nReport folder {folder}", flush=True)
    try:
        with warnings.catch_warnings():  # listed below, with everything else the evaluation cannot see
            warnings.filterwarnings("ignore", message="chunk .* has no word BM25 can index")
            setup = evaluation_setup(p["corpus"], p["golden"], p["model_name"], p["chunk_size"], progress=True)
    except (GoldenSetError, ValueError, OSError) as exc:
        print(f"make evaluate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for note in setup.notes:
        print(note)
    notebook = folder / "report.ipynb"
    print("Running notebook 05 (it reads the rankings just computed) ...", flush=True)
    try:
        pm.execute_notebook(
            NOTEBOOK, notebook, cwd=NOTEBOOK.parent, progress_bar=True,
            parameters={"CORPUS": str(p["corpus"]), "GOLDEN": str(p["golden"]), "MODEL_NAME": p["model_name"],
                        "CHUNK_SIZE": p["chunk_size"], "K": p["k"]},
        )
    except pm.PapermillExecutionError as exc:
        print(f"make evaluate: the notebook stopped with {exc.ename}: {exc.evalue}\n(see {notebook})", file=sys.stderr)
        return 1
    html, _ = HTMLExporter().from_filename(str(notebook))
    (folder / "report.html").write_text(html, encoding="utf-8")
    finish_report(folder, inputs)
    print(f"Report: {folder / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
