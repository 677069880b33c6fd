"""retrieval_eval/evaluation.py: the evaluation table against trec_eval, the ceiling, slices, ranks and bad runs."""

import math

import pandas as pd
import pytest
import pytrec_eval

import helpers as h
from retrieval_eval.evaluation import RANK_TABLE_COLUMNS, retriever_columns

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}
RUN = {"q1": ["a", "b"], "q2": ["b"]}


def test_evaluation_table_equals_trec_eval(runs, qrels):
    table = h.evaluate(runs, qrels)
    for name, run in runs.items():
        trec_run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
        for k in h.KS:
            per_q = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}"}).evaluate(trec_run)
            for metric, measure in [("precision", f"P_{k}"), ("recall", f"recall_{k}"), ("nDCG", f"ndcg_cut_{k}")]:
                expected = sum(v[measure] for v in per_q.values()) / len(qrels)
                assert table.loc[name, (metric, k)] == pytest.approx(expected, abs=1e-4), (name, metric, k)
            cut = {q: {d: s for d, s in ranked.items() if s > len(run[q]) - k} for q, ranked in trec_run.items()}
            rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
            assert table.loc[name, ("MRR", k)] == pytest.approx(sum(v["recip_rank"] for v in rr.values()) / len(qrels), abs=1e-4)


def test_empty_ranking_scores_zero_where_trec_eval_drops_the_question():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q2": []}
    trec_run = {q: {d: 1.0 for d in r} for q, r in run.items() if r}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"P.1"}).evaluate(trec_run)
    assert set(per_q) == {"q1"}  # pytrec_eval, as trec_eval up to 9.0 without -c: q2 silently gone, mean 1.0
    assert h.evaluate({"r": run}, qrels, ks=[1]).loc["r", ("precision", 1)] == 0.5  # ours, as trec_eval -c


def test_precision_ceiling():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 1}}
    assert h.precision_ceiling(qrels, 1) == 1.0
    assert h.precision_ceiling(qrels, 3) == pytest.approx((1 / 3 + 2 / 3) / 2)


def test_ceiling_bounds_every_precision(runs, qrels):
    table = h.evaluate(runs, qrels)
    for k in h.KS:
        assert (table[("precision", k)] <= h.precision_ceiling(qrels, k) + 1e-12).all()


def test_slice_report_equals_evaluating_each_slice(runs, qrels, golden):
    report = h.slice_report(runs, qrels, golden, k=3)
    for slice_name, group in golden.groupby("slice"):
        sub_qrels = {q: qrels[q] for q in group["id"]}
        sub_runs = {name: {q: run[q] for q in sub_qrels} for name, run in runs.items()}
        expected = h.evaluate(sub_runs, sub_qrels, ks=[3]).xs(3, axis=1, level="k")
        for name in runs:
            assert report.loc[(slice_name, name), "questions"] == len(group)
            for metric in h.METRICS:
                assert report.loc[(slice_name, name), metric] == pytest.approx(expected.loc[name, metric])


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.evaluate({"X": {"q1": iter(["a"]), "q2": ["b"]}}, QRELS), r"X, question 'q1': a ranking must be"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {"a": math.nan}, "q2": {"b": 1}}), r"X, question 'q1': gain of 'a'"),
        (lambda: h.evaluate({"X": RUN}, {}), "at least one entry"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[]), "ks is empty"),
        (lambda: h.precision_ceiling({"q1": {"a": 0}}, 3), r"\['q1'\] have no relevant chunk"),
        (lambda: h.precision_ceiling({}, 3), "qrels is empty"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_first_relevant_ranks_and_rank_differences_refuse_ambiguous_names():
    golden = pd.DataFrame({"id": ["q1", "q2"], "question": ["x", "y"], "evidence": ["-", "-"], "slice": ["s", "s"]})
    with pytest.raises(ValueError, match="clash with the table's own columns"):
        h.first_relevant_ranks({"question": RUN}, QRELS, golden)
    with pytest.raises(ValueError, match="X, question 'q1': duplicate id 'a'"):
        h.first_relevant_ranks({"X": {"q1": ["a", "a"], "q2": ["b"]}}, QRELS, golden)
    with pytest.raises(ValueError, match="only in the qrels"):
        h.first_relevant_ranks({"X": RUN}, {**QRELS, "q3": {"c": 1}}, golden)
    ranks = h.first_relevant_ranks({"X": RUN, "Y": {"q1": ["b", "a"], "q2": ["b"]}}, QRELS, golden)
    assert ranks[["X", "Y"]].values.tolist() == [[1, 2], [1, 1]]
    with pytest.raises(ValueError, match="no retriever 'n_relevant'"):
        h.rank_differences(ranks, "n_relevant", "X")
    assert retriever_columns(ranks) == ["X", "Y"]
    for not_a_rank_table in (ranks[["X", "Y"]], ranks[list(RANK_TABLE_COLUMNS)], ranks.to_dict()):
        with pytest.raises(ValueError, match="ranks must be the output of first_relevant_ranks"):
            retriever_columns(not_a_rank_table)


def test_qrels_naming_an_unknown_chunk_is_refused(runs, qrels, chunks):
    bad = {**qrels, "q01": {"no_such_chunk#00": 1}}
    with pytest.raises(ValueError, match=r"qrels of question 'q01' name unknown chunk ids \['no_such_chunk#00'\]"):
        h.evaluate(runs, bad, chunk_ids=[c["id"] for c in chunks])


def test_run_naming_an_unknown_chunk_is_refused(runs, qrels, chunks):
    run = {q: list(r) for q, r in runs["BM25"].items()}
    first = next(iter(run))
    run[first] = ["no_such_chunk#99"] + run[first]
    with pytest.raises(ValueError, match=rf"question '{first}': unknown chunk ids \['no_such_chunk#99'\]"):
        h.evaluate({"BM25": run}, qrels, chunk_ids=[c["id"] for c in chunks])


def test_run_missing_a_question_is_refused(runs, qrels):
    run = dict(runs["BM25"])
    dropped = run.popitem()[0]
    with pytest.raises(ValueError, match=rf"no ranking for question '{dropped}'"):
        h.evaluate({"BM25": run}, qrels)


# --- who leads: one verdict, ties said -----------------------------------------------------------


def test_rank_groups_puts_equal_values_in_one_group():
    assert h.rank_groups({"BM25": 0.5, "vector": 0.6, "hybrid": 0.6}) == [["vector", "hybrid"], ["BM25"]]
    assert h.rank_groups({"BM25": 0.5, "vector": 0.6, "hybrid": 0.6}, lowest=True) == [["BM25"], ["vector", "hybrid"]]
    # Values that print the same at the precision shown tie; one place more tells them apart.
    close = {"BM25": 0.57446, "vector": 0.57441, "hybrid": 0.5}
    assert h.rank_groups(close) == [["BM25", "vector"], ["hybrid"]]
    assert h.rank_groups(close, decimals=4) == [["BM25"], ["vector"], ["hybrid"]]
    with pytest.raises(ValueError, match=r"no finite value for \['vector'\]"):
        h.rank_groups({"BM25": 0.5, "vector": float("nan")})
    with pytest.raises(ValueError, match="no value to compare"):
        h.rank_groups({})


def test_verdict_names_every_leader_and_says_tie():
    """The issue's case: all three retrievers tied on the headline metric and the summary named BM25."""
    assert h.verdict({"BM25": 0.5, "vector": 0.5, "hybrid": 0.5}, "recall@3") == \
        "**BM25**, **vector** and **hybrid** tie on recall@3 (0.500)"
    assert h.verdict({"BM25": 0.4, "vector": 0.617, "hybrid": 0.617}, "recall@3") == \
        "**vector** and **hybrid** tie for the highest recall@3 (0.617)"
    assert h.verdict(pd.Series({"BM25": 0.4, "vector": 0.6, "hybrid": 0.5}), "MRR@3") == "**vector** has the highest MRR@3 (0.600)"
    assert h.verdict({"a": 0.4, "b": 0.6}, "recall@3 on a slice", lowest=True) == "**a** has the lowest recall@3 on a slice (0.400)"


def test_the_golden_set_verdict_agrees_with_the_table(runs, qrels):
    at_3 = h.evaluate(runs, qrels, ks=[3])[("recall", 3)]
    leaders = h.rank_groups(at_3)[0]
    assert {f"{at_3[name]:.3f}" for name in leaders} == {f"{at_3.max():.3f}"}
    assert all(f"{at_3[name]:.3f}" != f"{at_3.max():.3f}" for name in at_3.index if name not in leaders)


def test_rrf_tie_effect_by_hand():
    # q1: a and b tie (ranks 1 and 2 in one list, 2 and 1 in the other); b is relevant: rank 2 ours, 1 the other way.
    # q2: no tie near the relevant chunk.
    first, second = {"q1": ["a", "b"], "q2": ["c", "d"]}, {"q1": ["b", "a"], "q2": ["c", "e"]}
    effect = h.rrf_tie_effect([first, second], {"q1": {"b": 1}, "q2": {"c": 1}}, k=1)
    assert effect.questions.to_dict("index") == {"q1": {"id ascending": 2, "id descending": 1}}
    assert effect.means.loc["id ascending", "recall"] == 0.5 and effect.means.loc["id descending", "recall"] == 1.0
    assert effect.means.loc["spread", "MRR"] == 0.5 and effect.k == 1


def test_rrf_tie_effect_on_polder_keeps_our_hybrid_as_the_first_rule(runs, qrels):
    effect = h.rrf_tie_effect([runs["BM25"], runs["vector"]], qrels, k=3)
    ours = h.evaluate({"hybrid": runs["hybrid"]}, qrels, ks=[3]).xs(3, axis=1, level="k").loc["hybrid"]
    assert effect.means.loc[h.TIE_RULES[0]].tolist() == pytest.approx(ours.tolist())
    ranks = h.first_relevant_ranks(runs, qrels, h.read_golden_csv())["hybrid"]
    assert (effect.questions[h.TIE_RULES[0]] == ranks[effect.questions.index]).all()
    assert (effect.questions[h.TIE_RULES[0]] != effect.questions[h.TIE_RULES[1]]).all()
