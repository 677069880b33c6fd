"""retrieval_eval/widgets/rrf.py: the RRF explainer, checked against reciprocal_rank_fusion and the metric functions.

Every term, score and fused position it shows is recomputed here from the definition (1 / (k + rank),
summed over the rankings that hold the chunk in their top depth); the fused order is the one
reciprocal_rank_fusion gives, and at the defaults it is the notebooks' hybrid run.
"""

import math
import re

import pandas as pd
import pytest

import helpers as h


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.parametrize("rrf_k, depth", [(60, 10), (0, 10), (5, 3), (100, 20)])
def test_terms_scores_and_order_follow_the_definition(runs, qrels, rrf_k, depth):
    for qid in list(qrels)[::5]:
        inputs = {"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}
        result = h.rrf_explanation(inputs, qrels[qid], rrf_k, depth, k=3)
        fused = h.reciprocal_rank_fusion(list(inputs.values()), k=rrf_k, depth=depth)
        assert result["fused"] == fused
        table = result["table"]
        assert list(table["chunk"]) == fused and list(table.index) == list(range(1, len(fused) + 1))
        in_a_top = {c for r in inputs.values() for c in r[:depth]}
        assert set(fused) == in_a_top  # every chunk in either top depth, and no other
        for _, row in table.iterrows():
            total = 0.0
            for name, ranking in inputs.items():
                rank = ranking.index(row["chunk"]) + 1 if row["chunk"] in ranking else None
                assert (None if pd.isna(row[f"{name} rank"]) else row[f"{name} rank"]) == rank
                term = 1 / (rrf_k + rank) if rank is not None and rank <= depth else 0.0
                assert row[f"{name} term"] == term
                total += term
            assert math.isclose(row["fused score"], total, rel_tol=1e-12)
            assert row["gain"] == qrels[qid].get(row["chunk"], 0)
        scores = list(table["fused score"])
        assert scores == sorted(scores, reverse=True)


def test_at_the_defaults_the_fused_ranking_is_the_hybrid_run(runs, qrels):
    for qid in qrels:
        result = h.rrf_explanation({"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}, qrels[qid])
        assert result["fused"] == runs["hybrid"][qid]


def test_metrics_equal_the_metric_functions(runs, qrels):
    for qid in ("q02", "q04", "q13"):
        relevant = h.relevant_ids(qrels[qid])
        for k in (1, 3, 5):
            metrics = h.rrf_explanation({"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}, qrels[qid], k=k)["metrics"]
            for name in runs:
                ranking = runs[name][qid]
                assert metrics.loc[name, f"recall@{k}"] == h.recall_at_k(ranking, relevant, k)
                assert metrics.loc[name, f"precision@{k}"] == h.precision_at_k(ranking, relevant, k)
                assert metrics.loc[name, f"RR@{k}"] == h.reciprocal_rank(ranking, relevant, k)
                assert metrics.loc[name, f"nDCG@{k}"] == h.ndcg_at_k(ranking, qrels[qid], k)


def test_the_verdict_compares_the_first_relevant_ranks(runs, qrels, golden):
    cases = h.fusion_cases(runs, qrels)
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    for qid, row in cases.iterrows():
        for name in runs:
            assert pd.isna(row[name]) == pd.isna(ranks.loc[qid, name]), (qid, name)
            assert pd.isna(row[name]) or row[name] == ranks.loc[qid, name], (qid, name)
        best = min((r for r in (row["BM25"], row["vector"]) if not pd.isna(r)), default=math.inf)
        fused = math.inf if pd.isna(row["hybrid"]) else row["hybrid"]
        assert row["verdict"] == ("helps" if fused < best else "same" if fused == best else "hurts"), qid


def test_the_sentence_names_what_outscored_the_relevant_chunk():
    # c1 is relevant: BM25 rank 1, vector rank 5; x is rank 2 in both and outscores it at RRF constant 60.
    inputs = {"BM25": ["c1", "x", "y"], "vector": ["z", "x", "w", "v", "c1"]}
    result = h.rrf_explanation(inputs, {"c1": 1}, rrf_k=60, depth=10, k=3)
    assert result["fused"][:2] == ["x", "c1"] and result["verdict"] == "hurts"
    shown = text(result["sentence"])
    assert "Fusion hurts: hybrid puts the first relevant chunk at rank 2, below BM25's rank 1." in shown
    assert f"c1 (BM25 rank 1, vector rank 5) scores {1 / 61:.4f} + {1 / 65:.4f} = {1 / 61 + 1 / 65:.4f}" in shown
    assert f"Above it: x (BM25 rank 2, vector rank 2) {2 / 62:.4f}, which gets a term from every list." in shown
    # With RRF constant 0 rank 1 weighs 1/1: c1 comes first, as in BM25.
    result = h.rrf_explanation(inputs, {"c1": 1}, rrf_k=0, depth=10, k=3)
    assert result["fused"][0] == "c1" and result["verdict"] == "same"
    # With depth 4, vector's rank 5 no longer counts for c1.
    result = h.rrf_explanation(inputs, {"c1": 1}, rrf_k=60, depth=4, k=3)
    assert result["table"].set_index("chunk").loc["c1", "vector term"] == 0.0


def test_a_tie_is_named_and_broken_by_chunk_id():
    inputs = {"BM25": ["a", "b"], "vector": ["b", "a"]}
    result = h.rrf_explanation(inputs, {"b": 1}, rrf_k=60, depth=10, k=3)
    assert result["fused"] == ["a", "b"] and result["tied"] == ["a"]
    assert "ties with it on score; ties go by chunk id" in result["sentence"]


def test_no_relevant_chunk_in_either_top_depth():
    inputs = {"BM25": ["a", "b", "c", "r"], "vector": ["b", "a", "c"]}
    result = h.rrf_explanation(inputs, {"r": 1}, rrf_k=60, depth=3, k=3)
    assert "r" not in result["fused"] and result["verdict"] == "hurts"
    assert "No relevant chunk is in the top 3 of any input" in result["sentence"]
    assert "A greater depth would bring in BM25's rank 4." in result["sentence"]


def test_the_widget_shows_the_explanation_and_marks_changes(runs, qrels, golden):
    widget = h.rrf_widget(runs, qrels, golden, k=3)
    qid = widget.question.value
    cases = h.fusion_cases(runs, qrels)
    assert cases.loc[qid, "verdict"] == "hurts" and not cases.loc[qid, "tie"]  # a question where fusion loses
    expected = h.rrf_explanation({"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}, qrels[qid], 60, 10, 3)
    assert widget.result["fused"] == expected["fused"] and widget.result["sentence"] in widget.sentence.value
    for chunk in expected["fused"]:
        assert f"<code>{chunk}</code>" in widget.fused_html.value
    before = widget.result["metrics"].loc["hybrid", "RR@3"]
    widget.rrf_k.value = 0
    after = widget.result["metrics"].loc["hybrid", "RR@3"]
    assert widget.result["fused"] == h.reciprocal_rank_fusion([runs["BM25"][qid], runs["vector"][qid]], k=0, depth=10)
    if f"{before:.3f}" != f"{after:.3f}":
        assert f"hybrid RR@3 <span class='rw-num'>{before:.3f} → {after:.3f}</span>" in widget.sentence.value
    widget.question.value = "q13"  # another question: nothing to compare with
    assert "Changed" not in widget.sentence.value
    widget.reset()
    assert (widget.question.value, widget.rrf_k.value, widget.depth.value, widget.k.value) == (qid, 60, 10, 3)


def test_rrf_explanation_refuses_bad_input():
    with pytest.raises(ValueError, match="at least two rankings"):
        h.rrf_explanation({"BM25": ["a"]}, {"a": 1})
    with pytest.raises(ValueError, match="'hybrid' names the fused ranking"):
        h.rrf_explanation({"BM25": ["a"], "hybrid": ["a"]}, {"a": 1})
    with pytest.raises(ValueError, match="no relevant chunk"):
        h.rrf_explanation({"BM25": ["a"], "vector": ["a"]}, {"a": 0})
    with pytest.raises(ValueError, match="k must be a finite number >= 0"):
        h.rrf_explanation({"BM25": ["a"], "vector": ["a"]}, {"a": 1}, rrf_k=-1)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        h.rrf_explanation({"BM25": ["a"], "vector": ["a"]}, {"a": 1}, depth=0)
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        h.rrf_explanation({"BM25": ["a", "a"], "vector": ["a"]}, {"a": 1})


@pytest.mark.parametrize("argument, value", [("k", 11), ("k", 0), ("depth", 0), ("rrf_k", -1), ("rrf_k", 10_000)])
def test_a_starting_value_outside_its_slider_is_refused_not_moved(runs, qrels, golden, argument, value):
    with pytest.raises(ValueError, match=rf"{argument} = {value} is outside the slider.s range"):
        h.rrf_widget(runs, qrels, golden, **{argument: value})
