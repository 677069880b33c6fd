"""Bring your own corpus and golden set: notebook 05 run end to end with papermill on the second
example set (examples/library_hours), as `make evaluate` does; a broken golden set stops it before
any model loads. (The unit tests of the same example set are in test_corpus.py and test_golden.py.)"""

import re
from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest
from nbconvert import HTMLExporter

import helpers as h

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
    vector = h.VectorRetriever(example_chunks, max_seq_length=example_chunk_size, cache_dir=tmp_path, show_progress=False)
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
