"""retrieval_eval/widgets/rrf.py: the RRF explainer, checked against reciprocal_rank_fusion and the registry.

Every term, score and fused position is recomputed here from the definition (1 / (k + rank), summed
over the rankings that hold the chunk in their top depth); at the defaults the fused ranking is the
teaching set's hybrid run. Hidden, the candidates are in the order of their best input rank.
"""

import math
import re

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.core.registry import METRICS, shown_metrics
from retrieval_eval.course.widgets.rrf import FUSED, fusion_cases, rrf_explanation, rrf_table_html


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.parametrize("rrf_k, depth", [(60, 10), (0, 10), (5, 3), (100, 20)])
def test_terms_scores_and_order_follow_the_definition(setup, rrf_k, depth):
    runs, qrels = setup.runs, setup.qrels
    for qid in list(qrels)[::5]:
        inputs = {"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}
        result = rrf_explanation(inputs, qrels[qid], rrf_k, depth, k=3)
        fused = h.reciprocal_rank_fusion(list(inputs.values()), k=rrf_k, depth=depth)
        assert result["fused"] == fused and list(result["table"]["chunk"]) == fused
        assert set(fused) == {c for r in inputs.values() for c in r[:depth]}
        for _, row in result["table"].iterrows():
            total = 0.0
            for name, ranking in inputs.items():
                rank = ranking.index(row["chunk"]) + 1 if row["chunk"] in ranking else None
                assert (None if pd.isna(row[f"{name} rank"]) else row[f"{name} rank"]) == rank
                term = 1 / (rrf_k + rank) if rank is not None and rank <= depth else 0.0
                assert row[f"{name} term"] == term
                total += term
            assert math.isclose(row["fused score"], total, rel_tol=1e-12)


def test_at_the_defaults_the_fused_ranking_is_the_hybrid_run_and_the_metrics_the_registry_s(setup):
    runs, qrels = setup.runs, setup.qrels
    for qid in qrels:
        result = rrf_explanation({"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}, qrels[qid], k=3)
        assert result["fused"] == runs["hybrid"][qid]
        for name, ranking in (("BM25", runs["BM25"][qid]), (FUSED, runs["hybrid"][qid])):
            for metric in map(METRICS.get, shown_metrics()):
                assert result["metrics"].loc[name, metric.at(3)] == metric.score(ranking, qrels[qid], 3)


def test_the_verdict_compares_the_first_relevant_ranks(setup):
    cases = fusion_cases(setup.runs, setup.qrels)
    ranks = h.first_relevant_ranks(setup.runs, setup.qrels)
    for qid, row in cases.iterrows():
        assert [None if pd.isna(row[n]) else row[n] for n in ("BM25", "vector")] == [
            None if pd.isna(ranks.loc[qid, n]) else ranks.loc[qid, n] for n in ("BM25", "vector")]
        best = min((r for r in (row["BM25"], row["vector"]) if not pd.isna(r)), default=math.inf)
        fused = math.inf if pd.isna(row[FUSED]) else row[FUSED]
        assert row["verdict"] == ("helps" if fused < best else "same" if fused == best else "hurts"), qid


def test_the_sentence_names_what_outscored_the_relevant_chunk():
    inputs = {"BM25": ["c1", "x", "y"], "vector": ["z", "x", "w", "v", "c1"]}
    result = rrf_explanation(inputs, {"c1": 1}, rrf_k=60, depth=10, k=3)
    shown = text(result["sentence"])
    assert result["fused"][:2] == ["x", "c1"] and result["verdict"] == "hurts"
    assert "Fusion hurts: fusion puts the first relevant chunk at rank 2, below BM25's rank 1." in shown
    assert f"c1 (BM25 rank 1, vector rank 5) scores {1 / 61:.4f} + {1 / 65:.4f} = {1 / 61 + 1 / 65:.4f}" in shown
    assert f"Above it: x (BM25 rank 2, vector rank 2) {2 / 62:.4f}, which gets a term from every list." in shown
    assert rrf_explanation(inputs, {"c1": 1}, rrf_k=0)["verdict"] == "same"
    assert rrf_explanation(inputs, {"c1": 1}, depth=4)["table"].set_index("chunk").loc["c1", "vector term"] == 0.0


def test_a_tie_is_named_and_no_relevant_chunk_within_the_depth_is_said():
    result = rrf_explanation({"BM25": ["a", "b"], "vector": ["b", "a"]}, {"b": 1})
    assert result["fused"] == ["a", "b"] and result["tied"] == ["a"] and "ties go by chunk id" in result["sentence"]
    result = rrf_explanation({"BM25": ["a", "b", "c", "r"], "vector": ["b", "a", "c"]}, {"r": 1}, depth=3)
    assert "r" not in result["fused"] and "A greater depth would bring in BM25's rank 4." in result["sentence"]


def test_hidden_the_candidates_come_in_input_order_without_terms():
    result = rrf_explanation({"A": ["c1", "x", "y"], "B": ["z", "x", "w", "v", "c1"]}, {"c1": 1})
    hidden, shown = (rrf_table_html(result, ["A", "B"], 60, 10, s) for s in (False, True))
    order = lambda html: re.findall(r"<td class=rw-left style=white-space:nowrap>([^ <]+)", html)  # noqa: E731
    assert order(shown) == result["fused"] and order(hidden) == ["c1", "z", "x", "w", "y", "v"]
    assert f"{1 / 61:.4f}" in shown and f"{1 / 61:.4f}" not in hidden and "rw-relevant" in hidden


def test_the_widget_starts_where_fusion_hurts_and_the_change_line_follows(setup):
    widget = h.rrf_widget(setup.runs, setup.qrels, setup.golden, k=3)
    assert widget.inputs == ["BM25", "vector"]  # the first two runs unless named
    qid = widget.question.value
    cases = fusion_cases(setup.runs, setup.qrels)
    assert cases.loc[qid, "verdict"] == "hurts" and not cases.loc[qid, "tie"]
    assert "Fusion hurts" not in widget.sentence.value and "Predict" in widget.sentence.value
    widget.rrf_k.value = 0
    widget.reveal.value = True
    before = rrf_explanation({n: setup.runs[n][qid] for n in ("BM25", "vector")}, setup.qrels[qid], 60, 10, 3)["metrics"]
    after = widget.state["metrics"]
    for name, metric in ((m, METRICS[m]) for m in shown_metrics()):
        old, new = before.loc[FUSED, metric.at(3)], after.loc[FUSED, metric.at(3)]
        assert (f"{old:.3f} → {new:.3f}" in widget.change.value) == (f"{old:.3f}" != f"{new:.3f}"), name
    widget.question.value = "q13"  # another question: a new round
    assert "the question was changed" in widget.change.value and "→" not in widget.change.value
    widget.reset()
    assert (widget.question.value, widget.rrf_k.value, widget.depth.value, widget.k.value) == (qid, 60, 10, 3)


def test_rrf_refuses_bad_input(setup):
    with pytest.raises(ValueError, match="at least two rankings"):
        rrf_explanation({"A": ["a"]}, {"a": 1})
    with pytest.raises(ValueError, match="names the fused ranking"):
        rrf_explanation({FUSED: ["a"], "B": ["a"]}, {"a": 1})
    with pytest.raises(ValueError, match="no relevant chunk"):
        rrf_explanation({"A": ["a"], "B": ["a"]}, {"a": 0})
    with pytest.raises(ValueError, match="k must be a finite number >= 0"):
        rrf_explanation({"A": ["a"], "B": ["a"]}, {"a": 1}, rrf_k=-1)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        rrf_explanation({"A": ["a"], "B": ["a"]}, {"a": 1}, depth=0)
    with pytest.raises(ValueError, match=r"inputs \['splade'\] are not runs"):
        h.rrf_widget(setup.runs, setup.qrels, setup.golden, inputs=["BM25", "splade"])
    with pytest.raises(ValueError, match="question 'q99' is not in the qrels"):
        h.rrf_widget(setup.runs, setup.qrels, setup.golden, question="q99")


@pytest.mark.parametrize("argument, value", [("k", 11), ("rrf_k", 101), ("depth", 0), ("depth", 21)])
def test_a_starting_value_outside_its_slider_is_refused_not_moved(setup, argument, value):
    with pytest.raises(ValueError, match=rf"{argument} = {value} is outside the slider.s range"):
        h.rrf_widget(setup.runs, setup.qrels, setup.golden, **{argument: value})
