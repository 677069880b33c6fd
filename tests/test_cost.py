"""retrieval_eval.retrieval.stages.serving_cost: each retriever timed one question at a time with its index built once,
a stage that reads earlier runs charged their time too, the index sized; the report's cost section and the history."""

import math
from pathlib import Path

import numpy as np

import helpers as h
from retrieval_eval.retrieval.fusion import Fusion
from retrieval_eval.retrieval.retrievers import BM25
from retrieval_eval.retrieval.stages import Context, Function, run_registry, serving_cost
from retrieval_eval.tool.history import history_rows
from retrieval_eval.tool.report import Evaluation, cost_section


def test_each_retriever_costs_its_time_per_question_and_its_index(tmp_path):
    polder = h.evaluation_setup()
    chunks, asked = polder.chunks, dict(zip(polder.golden["id"], polder.golden["question"]))
    calls = []
    registry = {"BM25": BM25(), "first chunk": Function(lambda q: calls.append(q) or [chunks[0]["id"]], "first chunk"),
                "fused": Fusion(("BM25", "first chunk"))}
    runs = run_registry(registry, chunks, asked, tmp_path, committed=False)
    cost = serving_cost(registry, Context(chunks, asked, runs, Path(tmp_path), False), questions=10)
    assert list(cost.columns) == ["ms per question, median", "ms per question, p95", "index, MB"] and cost.attrs["questions"] == 10
    assert len(calls) == len(asked) + 11  # the run, then one warm-up and ten timed questions, one at a time
    assert cost.loc["BM25", "index, MB"] > 0 and math.isnan(cost.loc["first chunk", "index, MB"])
    assert (cost["ms per question, p95"] >= cost["ms per question, median"]).all()
    assert cost.loc["fused", "ms per question, median"] >= cost.loc["BM25", "ms per question, median"]  # charged BM25's time
    ev = Evaluation({name: {q: run[q] for q in polder.qrels} for name, run in runs.items()}, polder.qrels, 3, [3], cost=cost)
    assert "What each retriever costs" in cost_section(ev)._repr_html_()
    rows = history_rows(ev)
    assert [set(row["cost"]) for row in rows] == [set(cost.columns)] * 3 and rows[1]["cost"]["index, MB"] is None
    assert np.isclose(rows[0]["cost"]["ms per question, median"], cost.loc["BM25", "ms per question, median"])
