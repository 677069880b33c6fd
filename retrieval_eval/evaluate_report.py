"""``make evaluate``: notebook 05 run on your corpus and golden set, saved as a report under ``output/``.

Run as ``python -m retrieval_eval.evaluate_report``; the Makefile exports its variables to it. The
parameters come from the environment, so a path arrives exactly as typed: spaces, non-ASCII letters
and quotes included (make's path functions would split it at spaces).

- ``CORPUS``, ``GOLDEN``: the corpus folder and the golden-set CSV file (default: the Polder set).
  A relative path is read from ``START_DIR``, the folder ``make`` was started from (the Makefile
  sets it), else from the current folder.
- ``CHUNK_SIZE`` (default 512), ``K`` (default 3): numbers as typed (``2.5`` and ``abc`` reach the
  check as a float and a str, and are refused there, as papermill's ``-p`` would hand them over).
- ``MODEL_NAME``: a local sentence-transformers model (default: the bundled all-MiniLM-L6-v2).
- ``REPORT``: the report's folder name under ``output/`` (default: the golden file's folder name).

Steps: check every parameter (:func:`~retrieval_eval.parameters.check_parameters`); choose the
report folder (:func:`~retrieval_eval.reports.report_folder`: only under ``output/``, never the
report of other inputs); build the evaluation in this terminal with progress bars for chunking,
BM25 indexing, embedding and ranking (:func:`~retrieval_eval.pipeline.evaluation_setup`, which fills
the rankings cache); then run the notebook with papermill, which reads the cached rankings, and
write ``output/<REPORT>/report.ipynb`` and ``report.html``. A problem stops the run with one
message naming its cause (exit status 2 for parameters, 1 for data), not a traceback.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from .corpus import CHUNK_SIZE
from .golden import GoldenSetError
from .parameters import ParameterError, check_parameters
from .paths import CORPUS_DIR, GOLDEN_PATH, ROOT, typed_path
from .pipeline import evaluation_setup
from .reports import ReportNameError, report_folder
from .retrievers import unindexable_message

NOTEBOOK = ROOT / "notebooks" / "05_three_retrievers.ipynb"
K_DEFAULT = 3


def read_parameters(environ: Mapping[str, str]) -> dict:
    """The run's parameters from environment variables (see the module docstring), paths made absolute.

    Returns:
        ``{"corpus": Path, "golden": Path, "model_name": str | None, "chunk_size": int | float | str,
        "k": int | float | str, "report": str}``; numbers are parsed but not checked.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    def path(name: str, default: Path) -> Path:
        text = environ.get(name, "")
        return typed_path(text, environ.get("START_DIR")) if text else default

    golden = path("GOLDEN", GOLDEN_PATH)
    default_report = re.sub(r"[^\w .-]", "_", golden.parent.name).strip(" .") or "report"
    return {
        "corpus": path("CORPUS", CORPUS_DIR),
        "golden": golden,
        "model_name": environ.get("MODEL_NAME") or None,
        "chunk_size": _number(environ.get("CHUNK_SIZE", ""), CHUNK_SIZE),
        "k": _number(environ.get("K", ""), K_DEFAULT),
        "report": environ.get("REPORT") or default_report,
    }


def _number(text: str, default):
    """``"3"`` → 3, ``"2.5"`` → 2.5, anything else stays the text (for the check to name); empty → default."""
    text = text.strip()
    if not text:
        return default
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Run ``make evaluate`` (see the module docstring); return the exit status.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    import papermill as pm
    from nbconvert import HTMLExporter

    p = read_parameters(environ)
    try:
        check_parameters(p["corpus"], p["golden"], p["model_name"], p["chunk_size"], p["k"])
        inputs = {"corpus": p["corpus"], "golden": p["golden"], "model": p["model_name"] or "bundled all-MiniLM-L6-v2",
                  "chunk_size": p["chunk_size"], "k": p["k"]}
        folder = report_folder(p["report"], inputs)
    except (ParameterError, ReportNameError) as exc:
        print(f"make evaluate: {exc}", file=sys.stderr)
        return 2
    print(f"Corpus {p['corpus']}\nGolden set {p['golden']}\nReport folder {folder}", flush=True)
    try:
        with warnings.catch_warnings():  # listed below, with everything else the evaluation cannot see
            warnings.filterwarnings("ignore", message="chunk .* has no word BM25 can index")
            setup = evaluation_setup(p["corpus"], p["golden"], p["model_name"], p["chunk_size"], progress=True)
    except (GoldenSetError, ValueError, OSError) as exc:
        print(f"make evaluate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    for path, reason in setup.skipped:
        print(f"not read: {path}: {reason}")
    if setup.unindexable:
        print(unindexable_message(setup.unindexable))
    for name, questions in setup.unranked.items():
        if questions:
            print(f"{name} ranked no chunk for {len(questions)} question(s): {', '.join(questions)}")
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
    print(f"Report: {folder / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
