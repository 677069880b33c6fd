"""Bring your own corpus and golden set: validation before any model loads, and notebook 05 run
end to end with papermill on the second example set (examples/library_hours), as `make evaluate` does."""

from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest
from nbconvert import HTMLExporter

import helpers as h

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "05_three_retrievers.ipynb"
EXAMPLE = ROOT / "examples" / "library_hours"
CHUNK_SIZE = 128  # small documents: 128 word pieces give 13 chunks


@pytest.fixture(scope="module")
def example_docs():
    return h.load_corpus(EXAMPLE / "corpus")


@pytest.fixture(scope="module")
def example_chunks(example_docs):
    return h.corpus_chunks(example_docs, EXAMPLE / "corpus", chunk_size=CHUNK_SIZE, progress=False)


def run_notebook(tmp_path, golden, **parameters):
    """Execute notebook 05 with papermill as `make evaluate` does; return the output path."""
    out = tmp_path / "report.ipynb"
    pm.execute_notebook(
        NOTEBOOK, out, cwd=NOTEBOOK.parent, progress_bar=False, kernel_name="python3",
        parameters={"CORPUS": str(EXAMPLE / "corpus"), "GOLDEN": str(golden), "CHUNK_SIZE": CHUNK_SIZE, **parameters},
    )
    return out


def broken_golden(tmp_path, chunks):
    """The example golden set with one problem of every kind, each on its own question."""
    golden = pd.read_csv(EXAMPLE / "golden.csv", dtype=str, keep_default_na=False)
    first, second = chunks[3], chunks[4]  # two neighbours in 02_borrowing
    assert first["doc"] == second["doc"]
    golden.loc[1, "question"] = " "  # lh02: blank question
    golden.loc[2, "evidence"] = "lent for 21 days"  # lh03: too short
    golden.loc[3, "evidence"] = "the library lends bicycles for a week"  # lh04: in no chunk
    golden.loc[4, "evidence"] = " ".join(first["text"].split()[-4:] + second["text"].split()[:4])  # lh05: cut
    golden.loc[6, "id"] = "lh06"  # lh07 becomes a second lh06
    path = tmp_path / "golden.csv"
    golden.to_csv(path, index=False)
    return path, first["id"], second["id"]


def test_polder_uses_the_stored_chunks_and_other_corpora_are_chunked(docs, chunks, example_docs, example_chunks):
    assert h.corpus_chunks(docs, progress=False) == chunks
    assert example_chunks == h.chunk_corpus(example_docs, h.load_tokenizer(), CHUNK_SIZE)
    assert max(c["n_tokens"] for c in example_chunks) <= CHUNK_SIZE


def test_chunk_size_larger_than_the_model_window_is_refused(example_docs):
    with pytest.raises(ValueError, match="chunk_size 1024 is larger than the model's window of 512"):
        h.corpus_chunks(example_docs, EXAMPLE / "corpus", chunk_size=1024, progress=False)


def test_example_golden_set_is_valid(example_docs, example_chunks):
    golden, qrels = h.load_golden_set(EXAMPLE / "golden.csv", example_chunks, example_docs)
    assert 5 <= len(golden) <= 10 and list(qrels) == list(golden["id"])


def test_every_problem_is_listed_at_once_with_question_ids(tmp_path, example_docs, example_chunks):
    path, first, second = broken_golden(tmp_path, example_chunks)
    with pytest.raises(h.GoldenSetError) as err:
        h.load_golden_set(path, example_chunks, example_docs)
    message = str(err.value)
    assert message.startswith("golden.csv has 5 problem(s)")
    for expected in [
        "question 'lh02': blank question",
        "question 'lh03': evidence 'lent for 21 days' is shorter than 20 characters",
        "question 'lh06': duplicate id",
        "question 'lh04': evidence 'the library lends bicycles for a week' is in no chunk and not in the corpus",
        f"question 'lh05': evidence",
        f"is cut by a chunk boundary between chunks ['{first}', '{second}']",
    ]:
        assert expected in message


def test_notebook_runs_end_to_end_on_the_example_set(tmp_path, example_docs, example_chunks):
    out = run_notebook(tmp_path, EXAMPLE / "golden.csv")
    nb = nbformat.read(out, as_version=4)
    golden, qrels = h.load_golden_set(EXAMPLE / "golden.csv", example_chunks, example_docs)
    bm25 = h.BM25Retriever(example_chunks, show_progress=False)
    vector = h.VectorRetriever(example_chunks, max_seq_length=CHUNK_SIZE, cache_dir=tmp_path, show_progress=False)
    runs = h.run_retrievers([bm25, vector, h.HybridRetriever(bm25, vector)], golden, progress=False)
    with pd.option_context("display.max_columns", 20, "display.width", 80):
        expected = repr(h.evaluate(runs, qrels).round(3))
    table_cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("table = h.evaluate("))
    assert "".join(table_cell.outputs[0]["data"]["text/plain"]) == expected
    data_cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("docs = h.load_corpus("))
    assert f"**{len(golden)} questions**" in data_cell.outputs[-1]["data"]["text/markdown"]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert "precision@3 ceiling" in html


def test_notebook_stops_before_any_model_loads_and_lists_every_problem(tmp_path, example_chunks):
    path, first, second = broken_golden(tmp_path, example_chunks)
    with pytest.raises(pm.PapermillExecutionError) as err:
        run_notebook(tmp_path, path)
    assert err.value.ename == "GoldenSetError"
    for qid in ("lh02", "lh03", "lh04", "lh05", "lh06"):
        assert f"question '{qid}'" in err.value.evalue
    nb = nbformat.read(tmp_path / "report.ipynb", as_version=4)
    retrievers = next(c for c in nb.cells if c.cell_type == "code" and "h.VectorRetriever(" in c.source)
    assert "VectorRetriever" in retrievers.source and retrievers.execution_count is None
