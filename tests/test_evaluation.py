"""retrieval_eval/core/evaluation.py: the one engine of every table against trec_eval and the per-question
definitions, its door (bad runs and qrels named), and the tables built on it."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.evaluation import RANK_COLUMNS, disagree_at_k, run_columns
from retrieval_eval.core.registry import METRICS, shown_metrics

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}
RUN = {"q1": ["a", "b"], "q2": ["b"]}


def trec_eval(run, qrels, measure):
    """Per-question values of one trec_eval measure (scores fall with rank: trec_eval keeps our order)."""
    scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
    out = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(scored)
    return {q: out[q][measure.replace(".", "_")] for q in qrels}


def trec_per_question(metric, run, qrels, k):
    if not metric.trec:  # F1 and context precision: built from trec_eval's P, recall and map_cut
        p, r, ap = (trec_eval(run, qrels, f"{m}.{k}") for m in ("P", "recall", "map_cut"))
        return {q: (2 * p[q] * r[q] / (p[q] + r[q]) if metric.name == "F1" else ap[q] / r[q]) if r[q] else 0.0 for q in qrels}
    if "{k}" in metric.trec:
        return trec_eval(run, qrels, metric.trec.format(k=k))
    return trec_eval({q: r[:k] for q, r in run.items()}, qrels, metric.trec)


# --- the teaching set against trec_eval ----------------------------------------------------------


def test_every_table_equals_trec_eval_per_question_on_the_teaching_set(runs, qrels, chunks):
    ids = [c["id"] for c in chunks]
    assert list(h.evaluate(runs, qrels, chunk_ids=ids).columns) == [(m, k) for m in shown_metrics() for k in h.KS]
    every = list(METRICS)  # the metrics beyond the four appear when they are named
    table = h.evaluate(runs, qrels, chunk_ids=ids, metrics=every)
    long = h.per_question_scores(runs, qrels, chunk_ids=ids, metrics=every)
    assert list(table.index) == list(h.default_retrievers())
    assert list(table.columns) == [(m, k) for m in METRICS for k in h.KS]
    for name, run in runs.items():
        batch = h.batch_scores(run, qrels, chunk_ids=ids, metrics=every)
        assert list(batch.index) == list(qrels)
        for metric in METRICS.values():
            for k in h.KS:
                trec = trec_per_question(metric, run, qrels, k)
                assert batch[(metric.name, k)].tolist() == pytest.approx([trec[q] for q in qrels], abs=1e-4), (name, metric.name, k)
                assert table.loc[name, (metric.name, k)] == pytest.approx(batch[(metric.name, k)].mean(), rel=1e-12)
                rows = long[(long["run"] == name) & (long["metric"] == metric.name) & (long["k"] == k)]
                assert rows["value"].tolist() == batch[(metric.name, k)].tolist()
    assert list(long.columns) == ["run", "question", "metric", "k", "value"]
    assert len(long) == len(runs) * len(qrels) * len(METRICS) * len(h.KS)


def test_two_calls_give_identical_tables(runs, qrels):
    pd.testing.assert_frame_equal(h.evaluate(runs, qrels), h.evaluate(runs, qrels))


def test_empty_ranking_scores_zero_where_trec_eval_drops_the_question():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q2": []}
    trec_run = {q: {d: 1.0 for d in r} for q, r in run.items() if r}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"P.1"}).evaluate(trec_run)
    assert set(per_q) == {"q1"}  # pytrec_eval, as trec_eval up to 9.0 without -c: q2 silently gone, mean 1.0
    assert h.evaluate({"r": run}, qrels, ks=[1]).loc["r", ("precision", 1)] == 0.5  # ours, as trec_eval -c


# --- batch_scores (the old batch evaluator) on random cases ---------------------------------------

POOL = [f"d{i}" for i in range(15)]


@st.composite
def batches(draw):
    """A run and qrels for 1-6 questions: rankings of any length (empty too), graded and negative gains."""
    run, qrels = {}, {}
    for i in range(draw(st.integers(1, 6))):
        qid = f"q{i}"
        run[qid] = draw(st.permutations(POOL).map(lambda p: p[: draw(st.integers(0, len(POOL)))]))
        judged = draw(st.dictionaries(st.sampled_from(POOL + ["never_retrieved"]), st.integers(-1, 3), min_size=1))
        if not any(g > 0 for g in judged.values()):
            judged[draw(st.sampled_from(POOL))] = draw(st.integers(1, 3))
        qrels[qid] = judged
    ks = draw(st.lists(st.sampled_from([1, 2, 3, 5, 10, 15, 20]), min_size=1, max_size=4, unique=True))
    return run, qrels, ks


@settings(max_examples=examples(80), deadline=None)
@given(batches())
def test_batch_scores_equal_the_per_question_functions_on_random_cases(case):
    run, qrels, ks = case
    table = h.batch_scores(run, qrels, ks)
    assert list(table.index) == list(qrels)
    for qid, gains in qrels.items():
        ranked, relevant = run[qid], h.relevant_ids(gains)
        for k in ks:
            assert table.loc[qid, ("recall", k)] == h.recall_at_k(ranked, relevant, k)
            assert table.loc[qid, ("precision", k)] == h.precision_at_k(ranked, relevant, k)
            assert table.loc[qid, ("MRR", k)] == h.reciprocal_rank(ranked, relevant, k)
            assert table.loc[qid, ("nDCG", k)] == pytest.approx(h.ndcg_at_k(ranked, gains, k), rel=1e-12, abs=1e-15)


def test_run_questions_not_in_the_qrels_are_ignored():
    table = h.batch_scores({"q1": ["a", "b"], "extra": ["a"]}, {"q1": {"b": 1}}, ks=[1, 2])
    assert list(table.index) == ["q1"]
    assert table.loc["q1", ("MRR", 2)] == 0.5


def test_a_subset_of_metrics_and_cut_offs_in_the_order_given():
    table = h.evaluate({"X": RUN}, QRELS, ks=[3, 1], metrics=["MRR", "recall"])
    assert list(table.columns) == [("MRR", 3), ("MRR", 1), ("recall", 3), ("recall", 1)]
    assert h.evaluate({"X": RUN}, QRELS, ks=np.array([1, 3])).shape == (1, 8)  # any ordered container of ints


# --- bad input: one ValueError naming the run and question, or the argument -------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        # a run missing a question
        (lambda: h.evaluate({"X": {"q1": ["a"]}}, QRELS), r"X has no ranking for question\(s\) \['q2'\]"),
        (lambda: h.batch_scores({"q1": ["a"]}, QRELS), r"run has no ranking for question\(s\) \['q2'\]"),
        # a run that is not a mapping; a list of rankings passed as a run; a ranking passed as a run
        (lambda: h.evaluate({"X": [["a"], ["b"]]}, QRELS), r"X must be a mapping \{question_id: ranking\}, not list"),
        (lambda: h.batch_scores([["a"], ["b"]], QRELS), r"run must be a mapping \{question_id: ranking\}, not list"),
        (lambda: h.evaluate({"X": ["a", "b"]}, QRELS), "X must be a mapping"),
        (lambda: h.evaluate({"X": None}, QRELS), "X must be a mapping"),
        (lambda: h.evaluate([RUN], QRELS), r"runs must be a non-empty mapping \{run name"),
        (lambda: h.evaluate({}, QRELS), "runs must be a non-empty mapping"),
        (lambda: h.evaluate({"X": {"q1": "ab", "q2": ["b"]}}, QRELS), "X, question 'q1': a ranking must be a list or tuple"),
        (lambda: h.evaluate({"X": {"q1": iter(["a"]), "q2": ["b"]}}, QRELS), "X, question 'q1': a ranking must be"),
        (lambda: h.evaluate({"X": {"q1": {"a": 1.0}, "q2": ["b"]}}, QRELS), "X, question 'q1': a ranking must be"),
        (lambda: h.evaluate({"X": {"q1": [["a"]], "q2": ["b"]}}, QRELS),
         r"X, question 'q1': the ranking holds \['a'\] \(list\) at rank 1"),
        # ids that are not str
        (lambda: h.evaluate({"X": {"q1": ["a", 1], "q2": ["b"]}}, QRELS), r"X, question 'q1': the ranking holds 1 \(int\) at rank 2"),
        (lambda: h.evaluate({"X": {"q1": [math.nan], "q2": ["b"]}}, QRELS), r"X, question 'q1': the ranking holds nan \(float\)"),
        (lambda: h.evaluate({"X": {"q1": [None], "q2": ["b"]}}, QRELS), r"X, question 'q1': the ranking holds None \(NoneType\)"),
        (lambda: h.evaluate({"X": {"q1": [b"a"], "q2": ["b"]}}, QRELS), r"X, question 'q1': the ranking holds b'a' \(bytes\)"),
        (lambda: h.evaluate({"X": {**RUN, math.nan: ["a"]}}, QRELS), r"X holds question id nan \(float\): ids must be str"),
        (lambda: h.evaluate({"X": RUN}, {math.nan: {"a": 1}}), r"the qrels hold question id nan \(float\)"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {None: 1}, "q2": {"b": 1}}), r"question 'q1': the gains hold id None"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {b"a": 1}, "q2": {"b": 1}}), r"question 'q1': the gains hold id b'a' \(bytes\)"),
        # duplicate ids
        (lambda: h.evaluate({"X": {"q1": ["a", "b", "a"], "q2": ["b"]}}, QRELS), "X, question 'q1': duplicate id 'a'"),
        (lambda: h.batch_scores({"q1": ["a"], "q2": ["b", "c", "b"]}, QRELS), "run, question 'q2': duplicate id 'b'"),
        # qrels that cannot be scored
        (lambda: h.evaluate({"X": RUN}, {"q1": {"a": 0}, "q2": {"b": 1}}), r"question\(s\) \['q1'\] have no relevant chunk"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {"a": -1}, "q2": {"b": 1}}), r"\['q1'\] have no relevant chunk"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {"a": math.nan}, "q2": {"b": 1}}), "question 'q1': gain of 'a' must be a finite"),
        (lambda: h.evaluate({"X": RUN}, {}), "the qrels are empty"),
        (lambda: h.evaluate({"X": RUN}, [("q1", "a")]), "the qrels must be a mapping"),
        # unknown chunk ids when chunk_ids is given
        (lambda: h.evaluate({"X": {"q1": ["a", "zzz"], "q2": ["b"]}}, QRELS, chunk_ids=["a", "b"]),
         r"X, question 'q1': unknown chunk ids \['zzz'\]"),
        (lambda: h.batch_scores({"q1": ["a", "zzz"], "q2": []}, QRELS, chunk_ids=["a", "b"]), r"run, question 'q1': unknown chunk ids"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {"zz": 1}, "q2": {"b": 1}}, chunk_ids=["a", "b"]),
         r"qrels of question 'q1' name unknown chunk ids \['zz'\]"),
        # the arguments
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=3), "ks must be a list of cut-offs, got 3"),
        (lambda: h.batch_scores(RUN, QRELS, ks=3), "ks must be a list of cut-offs, got 3"),
        (lambda: h.per_question_scores({"X": RUN}, QRELS, ks="13"), "ks must be a list of cut-offs"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[0]), "ks: k must be >= 1, got 0"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[2.5]), "ks: k must be an integer >= 1"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[]), "ks is empty"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[3, 1, 3]), r"ks holds the cut-off\(s\) \[3\] twice"),
        (lambda: h.evaluate({"X": RUN}, QRELS, metrics=["Recall"]), r"metrics must name registered metrics .*\['Recall'\]"),
        (lambda: h.evaluate({"X": RUN}, QRELS, metrics="recall"), "metrics must be a list of metric names, got 'recall'"),
        (lambda: h.evaluate({"X": RUN}, QRELS, metrics=[]), "metrics must name registered metrics"),
        (lambda: h.precision_ceiling(QRELS, 0), "k must be >= 1, got 0"),
        (lambda: h.precision_ceiling({"q1": {"a": 0}}, 3), r"\['q1'\] have no relevant chunk"),
        (lambda: h.precision_ceiling({}, 3), "the qrels are empty"),
        (lambda: h.random_baseline(QRELS, 0, 3), "n_chunks must be >= 1"),
        (lambda: h.random_baseline(QRELS, 5, 0), "k must be >= 1"),
        (lambda: h.random_baseline({"q": {"a": 1, "b": 1}}, 1, 3), r"question\(s\) \['q'\] have more relevant chunks than the 1"),
        (lambda: h.random_baseline({1: {"a": 1}}, 4, 3), r"the qrels hold question id 1 \(int\)"),
        (lambda: h.first_relevant_ranks({"X": {"q1": ["a"]}}, QRELS), r"X has no ranking for question\(s\) \['q2'\]"),
        (lambda: disagree_at_k(pd.DataFrame({"A": [1]}), 0), "k must be >= 1"),
    ],
)
def test_bad_input_raises_one_error_naming_the_run_question_or_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_teaching_runs_with_an_unknown_chunk_or_a_missing_question_are_refused(runs, qrels, chunks):
    ids = [c["id"] for c in chunks]
    run = {q: list(r) for q, r in runs["BM25"].items()}
    run["q07"] = ["no_such_chunk#99"] + run["q07"]
    with pytest.raises(ValueError, match=r"BM25, question 'q07': unknown chunk ids \['no_such_chunk#99'\]"):
        h.evaluate({"vector": runs["vector"], "BM25": run}, qrels, chunk_ids=ids)
    with pytest.raises(ValueError, match=r"qrels of question 'q01' name unknown chunk ids \['no_such_chunk#00'\]"):
        h.evaluate(runs, {**qrels, "q01": {"no_such_chunk#00": 1}}, chunk_ids=ids)
    dropped = dict(runs["BM25"])
    last = dropped.popitem()[0]
    with pytest.raises(ValueError, match=rf"BM25 has no ranking for question\(s\) \['{last}'\]"):
        h.evaluate({"BM25": dropped}, qrels)


# --- first_relevant_ranks, disagree_at_k -----------------------------------------------------------


GOLDEN = pd.DataFrame({"id": ["q1", "q2"], "question": ["x", "y"], "evidence": ["-", "-"], "slice": ["s", "t"]})


def test_first_relevant_ranks_by_hand():
    runs = {"X": RUN, "Y": {"q1": ["b", "a"], "q2": ["c"]}}
    ranks = h.first_relevant_ranks(runs, QRELS, GOLDEN)
    assert list(ranks.columns) == [*RANK_COLUMNS, "X", "Y"] and run_columns(ranks) == ["X", "Y"]
    assert ranks.index.name == "question_id" and list(ranks.index) == ["q1", "q2"]
    assert ranks["question"].tolist() == ["x", "y"] and ranks["slice"].tolist() == ["s", "t"]
    assert ranks["n_relevant"].tolist() == [1, 1]
    assert ranks["X"].tolist() == [1, 1] and ranks["Y"].tolist() == [2, pd.NA] and ranks["Y"].dtype == "Int64"
    assert h.first_relevant_ranks(runs, QRELS)["question"].tolist() == ["", ""]  # without the golden set
    assert disagree_at_k(ranks, 1).tolist() == [True, True]
    assert disagree_at_k(ranks, 2).tolist() == [False, True]  # q2: Y has none, X has it at 1


def test_first_relevant_ranks_refuses_clashing_names_and_questions_not_in_the_golden_set():
    with pytest.raises(ValueError, match=r"run name\(s\) \['question'\] clash with the table's own columns"):
        h.first_relevant_ranks({"question": RUN}, QRELS, GOLDEN)
    with pytest.raises(ValueError, match=r"question\(s\) \['q2'\] of the qrels are not in the golden set"):
        h.first_relevant_ranks({"X": RUN}, QRELS, GOLDEN.iloc[:1])
    with pytest.raises(ValueError, match="X, question 'q1': duplicate id 'a'"):
        h.first_relevant_ranks({"X": {"q1": ["a", "a"], "q2": ["b"]}}, QRELS, GOLDEN)


def test_first_relevant_ranks_agree_with_reciprocal_rank_on_the_teaching_set(runs, qrels, golden):
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    table = h.evaluate(runs, qrels, ks=[100])  # runs keep the top 100: MRR@100 reads the whole ranking
    for name in runs:
        rr = ranks[name].astype("Float64").rdiv(1).fillna(0)
        assert rr.mean() == pytest.approx(table.loc[name, ("MRR", 100)])
    disagree = disagree_at_k(ranks, 3)
    found = ranks[list(runs)].fillna(4) <= 3
    assert disagree.tolist() == (found.any(axis=1) & ~found.all(axis=1)).tolist()


# --- precision_ceiling, random_baseline -------------------------------------------------------------


def test_precision_ceiling_by_hand_and_on_the_teaching_set(runs, qrels):
    toy = {"q1": {"a": 1}, "q2": {"a": 1, "b": 1, "c": 0}}
    assert h.precision_ceiling(toy, 1) == 1.0
    assert h.precision_ceiling(toy, 3) == pytest.approx((1 / 3 + 2 / 3) / 2)
    table = h.evaluate(runs, qrels)
    for k in h.KS:
        assert (table[("precision", k)] <= h.precision_ceiling(qrels, k) + 1e-12).all()
        perfect = {q: sorted(g, key=lambda d: -g[d]) for q, g in qrels.items()}  # every relevant chunk first
        assert h.evaluate({"perfect": perfect}, qrels, [k]).iat[0, 1] == pytest.approx(h.precision_ceiling(qrels, k))


TINY_QRELS = {"one": {"c1": 1}, "graded": {"c2": 2, "c3": 1, "c4": 0}, "three": {"c1": 1, "c4": 1, "c5": 1},
              "negative": {"c6": -1, "c2": 1}}


@pytest.mark.parametrize("k", [1, 2, 3, 6, 8])
def test_random_baseline_equals_the_mean_over_every_permutation(k):
    """Every one of the 6! orders of six chunks, scored by each metric's definition and averaged."""
    chunks = [f"c{i}" for i in range(1, 7)]
    orders = list(itertools.permutations(chunks))
    expected = h.random_baseline(TINY_QRELS, len(chunks), k)
    assert list(expected.index) == shown_metrics() and expected.index.name == "metric"
    for name, metric in ((n, METRICS[n]) for n in shown_metrics()):
        total = sum(metric.score(list(order), gains, k) for order in orders for gains in TINY_QRELS.values())
        assert expected[name] == pytest.approx(total / len(orders) / len(TINY_QRELS), abs=1e-12), name


def test_random_baseline_on_the_teaching_set_by_formula(qrels, chunks):
    n = len(chunks)
    for k in (1, 3, 10):
        expected = h.random_baseline(qrels, n, k)
        assert expected["recall"] == pytest.approx(k / n)  # each relevant chunk is in the top k with chance k/N
        relevant = sum(len(h.relevant_ids(g)) for g in qrels.values())
        assert expected["precision"] == pytest.approx(relevant / len(qrels) / n)
    single = {q: g for q, g in qrels.items() if len(g) == 1}  # one relevant chunk: E[RR@3] = (1 + 1/2 + 1/3) / N
    assert h.random_baseline(single, n, 3)["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3) / n)
