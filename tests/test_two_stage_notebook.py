"""Notebook 06's cross-encoder cell, run from the notebook's own source: with a reranker installed (a stand-in object
here: no model can be downloaded) it shows that reranker's run beside the sentence reranker's; without one, one line."""

import json

import pandas as pd

import helpers as h
from retrieval_eval.core.paths import ROOT

CELLS = [c for c in json.loads((ROOT / "notebooks" / "06_two_stage.ipynb").read_text(encoding="utf-8"))["cells"]
         if c["cell_type"] == "code"]


class WordOverlap:
    """A stand-in reranker: the share of the question's words in the chunk."""

    def score(self, question, texts):
        words = set(question.lower().split())
        return [len(words & set(text.lower().split())) / len(words) for text in texts]

    def key(self):
        return "word overlap"


def run_cells(spec):
    """Run the notebook's cells up to its cross-encoder cell (skipping plots and widgets) with ``spec`` as CROSS_ENCODER."""
    shown, namespace = [], {"display": lambda *items: shown.extend(items)}
    for cell in CELLS:
        source = "".join(cell["source"])
        if source.startswith("CROSS_ENCODER ="):
            exec(source.replace(source.split("\n")[0], "CROSS_ENCODER = spec"), namespace | {"spec": spec})
            return shown
        if "import helpers" in source or "evaluation_setup()" in source or "reranked_runs(" in source or \
                source.startswith("before_after ="):
            exec(source, namespace)
    raise AssertionError("notebook 06 has no CROSS_ENCODER cell")


def test_an_installed_reranker_is_shown_beside_the_sentence_reranker():
    (table,) = run_cells(WordOverlap())
    assert list(table.index) == ["hybrid", "hybrid + rerank", "hybrid + cross-encoder"]
    s = h.evaluation_setup()
    texts, questions = {c["id"]: c["text"] for c in s.chunks}, dict(zip(s.golden["id"], s.golden["question"]))
    expected = h.evaluate({"x": h.rerank(s.runs["hybrid"], WordOverlap(), texts, questions)}, s.qrels, ks=[1, 3, 10],
                          metrics=["recall", "MRR"]).round(3)
    pd.testing.assert_series_equal(table.loc["hybrid + cross-encoder"], expected.loc["x"], check_names=False)


def test_without_one_the_cell_says_so_in_one_line(capsys):
    assert run_cells("no/such-cross-encoder") == []
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("No trained cross-encoder installed here (no/such-cross-encoder)")
