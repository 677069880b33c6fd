"""Bring your own corpus and golden set: notebook 05 run end to end with papermill on the second
example set (examples/library_hours); `make evaluate` on a corpus at a path with spaces, non-ASCII
letters and quotes; parameters checked before anything loads; a broken golden set stops it before
any model loads; reports only under output/. (The unit tests of the same example set are in
test_corpus.py and test_golden.py.)"""

import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest
from nbconvert import HTMLExporter

import helpers as h
from retrieval_eval.retrievers import VectorRetriever

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "05_three_retrievers.ipynb"


@pytest.fixture
def run_notebook(tmp_path, example_dir, example_chunk_size):
    """``run_notebook(golden, **parameters)``: execute notebook 05 with papermill as `make evaluate`
    does, on the example corpus; return the output path."""

    def run(golden, **parameters):
        out = tmp_path / "report.ipynb"
        pm.execute_notebook(
            NOTEBOOK, out, cwd=NOTEBOOK.parent, progress_bar=False, kernel_name="python3",
            parameters={"CORPUS": str(example_dir / "corpus"), "GOLDEN": str(golden), "CHUNK_SIZE": example_chunk_size,
                        **parameters},
        )
        return out

    return run


def test_notebook_runs_end_to_end_on_the_example_set(tmp_path, example_docs, example_chunks, example_dir,
                                                     example_chunk_size, run_notebook):
    out = run_notebook(example_dir / "golden.csv")
    nb = nbformat.read(out, as_version=4)
    golden, qrels = h.load_golden_with_qrels(example_dir / "golden.csv", example_chunks, example_docs)
    bm25 = h.BM25Retriever(example_chunks, show_progress=False)
    vector = VectorRetriever(example_chunks, max_seq_length=example_chunk_size, cache_dir=tmp_path, show_progress=False)
    runs = h.run_retrievers([bm25, vector, h.HybridRetriever(bm25, vector)], golden, progress=False)
    with pd.option_context("display.max_columns", 20, "display.width", 80):
        expected = repr(h.evaluate(runs, qrels).round(3))
    table_cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("table = h.evaluate("))
    assert "".join(table_cell.outputs[0]["data"]["text/plain"]) == expected
    data_cell = next(c for c in nb.cells if c.cell_type == "code" and "h.evaluation_setup(" in c.source)
    assert f"**{len(golden)} questions**" in data_cell.outputs[-1]["data"]["text/markdown"]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert "precision@3 ceiling" in html


def test_notebook_stops_before_any_model_loads_and_lists_every_problem(tmp_path, broken_golden, run_notebook):
    path, first, second = broken_golden
    with pytest.raises(pm.PapermillExecutionError) as err:
        run_notebook(path)
    assert err.value.ename == "GoldenSetError"
    for qid in ("lh02", "lh03", "lh04", "lh05", "lh06"):
        assert f"question '{qid}'" in err.value.evalue
    # Raised by the golden-set check inside evaluation_setup, which runs before cached_rankings (the model).
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err.value.traceback))
    frames = re.findall(r"^File .*, in (\w+)\(", traceback, flags=re.MULTILINE)
    assert frames[-2:] == ["evaluation_setup", "load_golden_with_qrels"], frames
    nb = nbformat.read(tmp_path / "report.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    failed = next(i for i, c in enumerate(code) if "h.evaluation_setup(" in c.source)
    assert all(c.execution_count is None for c in code[failed + 1:])


# --- parameters checked first --------------------------------------------------------------------


@pytest.mark.parametrize("parameters, expected", [
    ({"K": 0}, "K must be a whole number >= 1 (how many chunks the model reads), e.g. 3, got 0 (int)"),
    ({"K": 2.5}, "K must be a whole number >= 1 (how many chunks the model reads), e.g. 3, got 2.5 (float)"),
    ({"K": "abc", "CHUNK_SIZE": 1024}, "CHUNK_SIZE 1024 is larger than the model's window of 512 word pieces"),
])
def test_bad_parameters_stop_the_notebook_right_after_the_parameters_cell(tmp_path, example_dir, run_notebook,
                                                                          parameters, expected):
    """K=0 ended in a ZeroDivisionError in a toy cell; K=2.5 ran until both retrievers were built."""
    with pytest.raises(pm.PapermillExecutionError) as err:
        run_notebook(example_dir / "golden.csv", **parameters)
    assert err.value.ename == "ParameterError" and expected in err.value.evalue
    nb = nbformat.read(tmp_path / "report.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    failed = next(i for i, c in enumerate(code) if "h.check_parameters(" in c.source)
    assert "parameters" in code[failed - 2].metadata.get("tags", [])  # parameters, papermill's injected cell, the check
    assert all(c.execution_count is None for c in code[failed + 1:])  # nothing loaded


# --- make evaluate -------------------------------------------------------------------------------


def make_evaluate(*assignments: str, cache: Path) -> subprocess.CompletedProcess:
    """`make evaluate VAR=value ...` as a shell passes what a user types (each assignment one argument)."""
    env = {**os.environ, "RETRIEVAL_EVAL_CACHE": str(cache), "PWD": str(ROOT)}
    return subprocess.run(["make", "--no-print-directory", "evaluate", *assignments], cwd=ROOT, env=env,
                          capture_output=True, text=True)


@pytest.fixture
def report_name():
    """A report name of its own under output/, removed after the test."""
    name = f"test report é {uuid.uuid4().hex[:8]}"
    yield name
    shutil.rmtree(h.OUTPUT_DIR / name, ignore_errors=True)


def test_make_evaluate_hands_a_path_with_spaces_and_non_ascii_letters_over_unchanged(tmp_path, example_dir, report_name):
    """The issue's case: CORPUS="my data/corpus" reached papermill as a path the user never typed.
    Quotes and a "$" (which make would expand) must arrive unchanged too."""
    folder = tmp_path / "my data" / "bibliothèque 'Wren' d\"été\" $5"
    shutil.copytree(example_dir / "corpus", folder / "corpus")
    shutil.copy(example_dir / "golden.csv", folder / "golden.csv")
    result = make_evaluate(f"CORPUS={folder / 'corpus'}", f"GOLDEN={folder / 'golden.csv'}", "CHUNK_SIZE=128",
                           f"REPORT={report_name}", cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    for step in ("chunking", "BM25 indexing", "embedding chunks", "ranking"):  # progress in the terminal
        assert step in result.stderr, step
    report = h.OUTPUT_DIR / report_name
    assert sorted(p.name for p in report.iterdir()) == ["inputs.json", "report.html", "report.ipynb"]
    nb = nbformat.read(report / "report.ipynb", as_version=4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    given = {}
    exec(injected.source, given)  # papermill writes the values as Python literals
    assert given["CORPUS"] == str(folder / "corpus") and given["GOLDEN"] == str(folder / "golden.csv")  # as typed
    assert json.loads((report / "inputs.json").read_text(encoding="utf-8"))["corpus"] == str(folder / "corpus")
    assert f"Report: {report / 'report.html'}" in result.stdout


def test_make_evaluate_refuses_bad_parameters_and_reports_outside_output_before_anything_runs(tmp_path):
    notebook = ROOT / "notebooks" / "05_three_retrievers.ipynb"
    before = notebook.read_bytes()
    result = make_evaluate("REPORT=../notebooks/05_three_retrievers", cache=tmp_path / "cache")
    assert result.returncode != 0 and "report name '../notebooks/05_three_retrievers' must be a plain folder name" in result.stderr
    assert notebook.read_bytes() == before  # the tracked notebook is untouched
    result = make_evaluate("K=2.5", "CORPUS=no such folder", "MODEL_NAME=no/such-model", "CHUNK_SIZE=5_12",
                           "REPORT=../x", cache=tmp_path / "cache")
    assert result.returncode != 0
    assert "5 problem(s) with the parameters" in result.stderr  # the report's name among them
    assert "CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got '5_12' (str)" in result.stderr
    assert "Traceback" not in result.stderr  # one message, not hundreds of lines
    assert not (tmp_path / "cache").exists()  # nothing was built


def test_make_evaluate_names_the_folder_a_relative_path_was_read_from_and_the_current_one(tmp_path):
    """The tester's case: make -C started by a program whose PWD is out of date read CORPUS from that
    folder, and "no such folder" named neither it nor the real current folder."""
    stale = tmp_path / "stale"
    stale.mkdir()
    env = {**os.environ, "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache"), "PWD": str(stale)}
    result = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "evaluate", "CORPUS=data/corpus"],
                            cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 2
    assert (f"CORPUS 'data/corpus': no such folder {stale / 'data' / 'corpus'} (a relative path is read from {stale} "
            f"(START_DIR, the folder make was started from); this process runs in {ROOT}, where 'data/corpus' exists: "
            "is START_DIR or PWD out of date?)") in result.stderr


def test_the_default_report_name_comes_from_the_golden_files_folder_and_is_always_valid(tmp_path):
    """The tester's case: CORPUS=-dash/corpus GOLDEN=-dash/golden.csv (no REPORT) stopped with "report name
    '-dash' must be a plain folder name"."""
    from retrieval_eval.evaluate_report import read_parameters
    from retrieval_eval.reports import check_report_folder

    p = read_parameters({"CORPUS": "-dash/corpus", "GOLDEN": "-dash/golden.csv", "START_DIR": str(tmp_path)})
    assert p["report"] == "dash" and p["golden"] == tmp_path / "-dash" / "golden.csv"
    check_report_folder(p["report"], {}, tmp_path / "output")
