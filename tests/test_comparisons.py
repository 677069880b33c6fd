"""retrieval_eval/analysis/comparisons.py: paired tests over a family (Holm), the same verdicts in plain words,
the positive control against chance, intervals, and who leads as printed."""

import re

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from statsmodels.stats.multitest import multipletests

import helpers as h
from retrieval_eval.analysis.comparisons import SUCCESS, TOO_CLOSE, rank_groups, values_at_k
from retrieval_eval.analysis.statistics import ALPHA, beats_chance, chance_found, wilson_ci

# Twelve questions, one relevant chunk each. A finds it at rank 1 on every question; B on q01-q02
# only, C on q01-q10.
QUESTIONS = [f"q{i:02d}" for i in range(1, 13)]
QRELS = {q: {f"{q}-doc": 1} for q in QUESTIONS}
RUNS = {
    "A": {q: [f"{q}-doc", "x"] for q in QUESTIONS},
    "B": {q: [f"{q}-doc"] if i < 2 else ["x"] for i, q in enumerate(QUESTIONS)},
    "C": {q: [f"{q}-doc"] if i < 10 else ["x"] for i, q in enumerate(QUESTIONS)},
}
WORDS_OF_THE_DEEP_DIVE = ("McNemar", "Holm", "permutation", "p =", "α")


def test_values_at_k_are_the_per_question_values(runs, qrels):
    success = values_at_k(runs, qrels, 3, SUCCESS)
    recall = values_at_k(runs, qrels, 3, "recall")
    assert list(success.index) == list(recall.index) == list(qrels) and list(success.columns) == list(runs)
    for name, run in runs.items():
        scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
        trec = pytrec_eval.RelevanceEvaluator(qrels, {"success.3"}).evaluate(scored)
        assert success[name].tolist() == [trec[q]["success_3"] for q in qrels]
        assert recall[name].tolist() == h.batch_scores(run, qrels, [3], ["recall"])[("recall", 3)].tolist()
    # success@k and recall@k differ only where a question has more than one relevant chunk
    differ = success.index[(success != recall).any(axis=1)]
    assert all(len(h.relevant_ids(qrels[q])) > 1 for q in differ)


def test_paired_comparisons_by_hand():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=[SUCCESS, "MRR"])
    assert table.attrs == {"alpha": 0.05, "k": 1, "questions": 12, "family": "6 tests: 3 pairs × 2 metrics at k = 1"}
    row = table.loc[("A − B", SUCCESS)]
    # 10 questions differ, all won by A: McNemar p = 2 / 2^10, mid-p half of that
    assert (row["wins"], row["ties"], row["losses"]) == (10, 2, 0)
    assert row["test"] == "McNemar's exact test" and row["p"] == pytest.approx(2 / 2**10)
    assert row["mid_p"] == pytest.approx(1 / 2**10)
    assert row["difference"] == pytest.approx(10 / 12) and (row["mean A"], row["mean B"]) == (1.0, pytest.approx(2 / 12))
    assert table.loc[("A − B", "MRR"), "test"] == "McNemar's exact test"  # RR@1 is 0 or 1
    second = {"A": RUNS["A"], "D": {q: ["x", f"{q}-doc"] for q in QUESTIONS}}  # RR@2 of D is 1/2
    graded = h.paired_comparisons(second, QRELS, k=2, metrics=["MRR"]).loc[("A − D", "MRR")]
    assert graded["test"] == "paired permutation test" and graded["p"] == pytest.approx(2 / 2**12)
    assert table["Holm p"].tolist() == pytest.approx(multipletests(table["p"], method="holm")[1].tolist())
    assert table["verdict"].tolist() == ["A ahead", TOO_CLOSE, "C ahead"] * 2
    assert (table["wins"] + table["ties"] + table["losses"] == 12).all()


def test_the_verdict_comes_from_holms_p_only():
    """Six questions that differ, all one way: raw p = 2 / 2^6 = 0.031 < 0.05 on its own; in a family of two
    such tests Holm's p is 0.0625: too close to call."""
    six = {q: [f"{q}-doc"] if i < 6 else ["x"] for i, q in enumerate(QUESTIONS)}
    none = {q: ["x"] for q in QUESTIONS}
    runs = {"six": six, "none": none, "also none": dict(none)}
    alone = h.paired_comparisons(runs, QRELS, k=1, metrics=[SUCCESS], pairs=[("six", "none")])
    assert alone["p"].item() == pytest.approx(2 / 2**6) and alone["verdict"].item() == "six ahead"
    family = h.paired_comparisons(runs, QRELS, k=1, metrics=[SUCCESS], pairs=[("six", "none"), ("also none", "six")])
    assert (family["p"] < ALPHA).all() and (family["Holm p"] >= ALPHA).all()
    assert family["verdict"].tolist() == [TOO_CLOSE, TOO_CLOSE]
    strict = h.paired_comparisons(runs, QRELS, k=1, metrics=[SUCCESS], pairs=[("six", "none")], alpha=0.01)
    assert strict["verdict"].item() == TOO_CLOSE


def test_paired_comparisons_on_the_teaching_set_follow_holm(runs, qrels):
    metrics = [SUCCESS, "recall", "MRR", "nDCG"]
    table = h.paired_comparisons(runs, qrels, k=3, metrics=metrics)
    assert len(table) == 3 * len(metrics) and table.attrs["family"] == "12 tests: 3 pairs × 4 metrics at k = 3"
    assert (table.xs(SUCCESS, level="metric")["test"] == "McNemar's exact test").all()
    for (_pair, _metric), row in table.iterrows():
        if row["Holm p"] >= ALPHA:
            assert row["verdict"] == TOO_CLOSE
        else:
            assert row["verdict"] == f"{row['A'] if row['difference'] > 0 else row['B']} ahead"
    assert table.equals(h.paired_comparisons(runs, qrels, k=3, metrics=metrics))  # deterministic


# --- the same verdicts in plain words ----------------------------------------------------------------


def test_plain_words_state_the_counts_and_never_name_the_tests(runs, qrels):
    toy = h.paired_comparisons(RUNS, QRELS, k=1, metrics=[SUCCESS, "MRR"])
    assert h.plain_verdict(toy, "A", "B", SUCCESS) == (
        "A and B differ on 10 of 12 questions, 10 to 0 for A: **A is ahead**, more than luck explains")
    assert h.plain_verdict(toy, "C", "A", SUCCESS) == "C and A differ on 2 of 12 questions, 2 to 0 for A: **too close to call**"
    same = h.paired_comparisons({"A": RUNS["A"], "A2": RUNS["A"]}, QRELS, k=1, metrics=["MRR"])
    assert h.plain_verdict(same, "A", "A2", "MRR") == "A and A2 give every one of the 12 questions the same MRR@1"
    found = h.paired_comparisons({"A": RUNS["A"], "A2": RUNS["A"]}, QRELS, k=1, metrics=[SUCCESS])
    assert h.plain_verdict(found, "A", "A2", SUCCESS) == (
        "A and A2 give every one of the 12 questions the same result (found in the top 1 or not)")
    assert h.plain_summary(toy, "MRR") == ("On MRR@1, clearly ahead: A over B on MRR@1 (10–0); C over B on MRR@1 (8–0). "
                                           "Every other gap is too close to call (6 tests: 3 pairs × 2 metrics at k = 1, "
                                           "judged together)")
    close = h.paired_comparisons({"A": RUNS["A"], "C": RUNS["C"]}, QRELS, k=1, metrics=[SUCCESS])
    assert h.plain_summary(close, SUCCESS) == ("On found in the top 1, no gap between them passed the test on these 12 "
                                                 "questions: every one is too close to call (1 test: 1 pair × 1 metric at k = 1, judged together)")
    assert h.plain_summary(close).startswith("No gap between them passed the test on these 12 questions: every one is")
    assert h.plain_summary(toy).startswith("Clearly ahead: A over B on found in the top 1 (10–0)")  # a sentence of its own
    table = h.paired_comparisons(runs, qrels, k=3, metrics=[SUCCESS, "MRR"])
    chance = h.against_chance(runs, qrels, 34, k=3)
    texts = [h.plain_verdict(table, a, b, m) for (pair, m), (a, b) in zip(table.index, table[["A", "B"]].values)]
    texts += [h.plain_summary(table, m) for m in (SUCCESS, "MRR")] + [h.plain_chance(chance)]
    for text in texts:
        assert not [w for w in WORDS_OF_THE_DEEP_DIVE if w in text], text
    for ((_pair, _metric), row), text in zip(table.iterrows(), texts):
        differ, more, fewer = row["wins"] + row["losses"], max(row["wins"], row["losses"]), min(row["wins"], row["losses"])
        assert f"differ on {differ} of {len(qrels)} questions" in text or differ == 0, text
        assert (f"{more} to {fewer} for" in text) or (more == fewer and (f"{more} each way" in text or differ == 0)), text
        assert ("too close to call" in text) == (row["verdict"] == TOO_CLOSE), text
    found = [int((h.first_relevant_ranks({n: r}, qrels)[n].fillna(4) <= 3).sum()) for n, r in runs.items()]
    assert texts[-1].startswith("In the top 3, " + ", ".join(f"{n} finds {f} of {len(qrels)}" for n, f in zip(runs, found)))


def test_plain_words_never_contradict_the_verdict_when_the_count_and_the_mean_disagree():
    """MRR@3: A wins 60 questions by 1/2 − 1/3, B wins 24 by 1 − 0; the mean (what the test reads) favours B."""
    qrels = {f"q{i:03d}": {f"r{i}": 1} for i in range(120)}
    a, b = {}, {}
    for i, q in enumerate(qrels):
        r, j = f"r{i}", i % 40
        a[q], b[q] = (["x", r], ["x", "y", r]) if j < 20 else (["x", "y", "z"], [r]) if j < 28 else ([r], [r])
    table = h.paired_comparisons({"A": a, "B": b}, qrels, k=3, metrics=["MRR"])
    row = table.loc[("A − B", "MRR")]
    assert (row["wins"], row["losses"], row["verdict"]) == (60, 24, "B ahead") and row["difference"] < 0
    assert h.plain_verdict(table, "A", "B", "MRR") == (
        "A and B differ on 84 of 120 questions, 60 to 24 for A, but B wins by more: **B is ahead**, more than luck explains")


def test_plain_verdict_needs_a_test_of_the_pair():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["MRR"])
    with pytest.raises(ValueError, match="the table holds no test of A and D on 'MRR'"):
        h.plain_verdict(table, "A", "D", "MRR")
    with pytest.raises(ValueError, match="the table holds no test of A and B on 'recall'"):
        h.plain_verdict(table, "A", "B", "recall")


# --- the positive control ------------------------------------------------------------------------------


def test_against_chance_by_hand_and_in_plain_words():
    table = h.against_chance(RUNS, QRELS, n_chunks=12, k=1)
    assert table["found"].to_dict() == {"A": 12, "B": 2, "C": 10}
    assert table["by chance"].tolist() == pytest.approx([1.0] * 3)  # each question: 1 of 12 chunks in the top 1
    chances = chance_found([1] * 12, 12, 1)
    assert table["p"].tolist() == [beats_chance(f, chances) for f in (12, 2, 10)]
    assert table.loc["A", "p"] == pytest.approx((1 / 12) ** 12)
    assert h.plain_chance(table) == ("In the top 1, A finds 12 of 12, B finds 2 of 12, C finds 10 of 12; a random order of "
                                     "the chunks finds about 1. Not every run is clearly better than chance.")
    clear = h.against_chance({"A": RUNS["A"], "C": RUNS["C"]}, QRELS, n_chunks=12, k=1)
    assert h.plain_chance(clear).endswith("**Every run beats chance, far beyond what luck explains: a clear yes.**")


def test_every_teaching_run_beats_chance(runs, qrels, chunks):
    table = h.against_chance(runs, qrels, len(chunks), k=3)
    assert (table["p"] < 1e-6).all() and (table["found"] > 3 * table["by chance"]).all()
    n_relevant = [len(h.relevant_ids(g)) for g in qrels.values()]
    assert table["by chance"].iloc[0] == pytest.approx(sum(chance_found(n_relevant, len(chunks), 3)))


# --- intervals and who leads ------------------------------------------------------------------------


def test_interval_table_picks_wilson_for_binary_values_and_the_bootstrap_else(runs, qrels):
    table = h.interval_table(RUNS, QRELS, k=1)
    assert list(table.columns) == ["mean", "low", "high", "interval"]
    assert table.loc[("A", SUCCESS), "interval"] == "Wilson score"
    assert table.loc[("A", SUCCESS), ["low", "high"]].tolist() == pytest.approx(list(wilson_ci(12, 12)[1:]))
    teaching = h.interval_table(runs, qrels, k=3, metrics=[SUCCESS, "MRR", "nDCG"])
    kinds = teaching["interval"].unstack("metric")
    assert (kinds[SUCCESS] == "Wilson score").all() and (kinds["MRR"] == "percentile bootstrap").all()
    means = h.evaluate(runs, qrels, ks=[3])
    for (name, metric), row in teaching.drop(SUCCESS, level="metric").iterrows():
        assert row["mean"] == pytest.approx(means.loc[name, (metric, 3)])
        assert row["low"] <= row["mean"] <= row["high"]


def test_rank_groups_ties_by_printed_value():
    assert rank_groups({"BM25": 0.5, "vector": 0.6, "hybrid": 0.6}) == [["vector", "hybrid"], ["BM25"]]
    close = {"BM25": 0.57446, "vector": 0.57441, "hybrid": 0.5}
    assert rank_groups(close) == [["BM25", "vector"], ["hybrid"]]
    assert rank_groups(close, decimals=4) == [["BM25"], ["vector"], ["hybrid"]]
    # binary halves: 0.9175 prints 0.917 (np.round says 0.918); 0.7774000000000001 and 0.7775 both print 0.777
    assert f"{0.9175:.3f}" == "0.917" and rank_groups({"a": 0.9175, "b": 0.91833}) == [["b"], ["a"]]
    assert f"{0.7775:.3f}" == f"{0.7774000000000001:.3f}" and rank_groups({"a": 0.7774000000000001, "b": 0.7775}) == [["a", "b"]]
    rng = np.random.default_rng(0)
    values = dict(zip("abcdefgh", rng.integers(0, 2000, 8) / 2000))
    for group in rank_groups(values):
        assert len({f"{values[n]:.3f}" for n in group}) == 1
    printed = [f"{values[g[0]]:.3f}" for g in rank_groups(values)]
    assert printed == sorted(set(printed), key=float, reverse=True)
    with pytest.raises(ValueError, match="rank_groups needs finite values"):
        rank_groups({"BM25": 0.5, "vector": float("nan")})
    with pytest.raises(ValueError, match="rank_groups needs finite values"):
        rank_groups({})


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[("A", "D")]), "pairs must name two different runs of"),
    (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[("A", "A")]), "pairs must name two different runs"),
    (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[("A", "B"), ("B", "A")]), "each pair once"),
    (lambda: h.paired_comparisons(RUNS, QRELS, pairs=("A", "B")), re.escape("got ['A', 'B']")),
    (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[]), "pairs must name two different runs"),
    (lambda: h.paired_comparisons(RUNS, QRELS, alpha=5), "alpha must be between 0 and 1"),
    (lambda: h.paired_comparisons(RUNS, QRELS, k=0), "k must be >= 1"),
    (lambda: h.paired_comparisons(RUNS, QRELS, metrics="recall"), "metrics must be a list of metric names, got 'recall'"),
    (lambda: h.paired_comparisons(RUNS, QRELS, metrics=[]), "metrics is empty"),
    (lambda: h.paired_comparisons(RUNS, QRELS, metrics=["Recall"]), "metric must be 'success' or a registered metric"),
    (lambda: h.paired_comparisons({"A": RUNS["A"], "B": {"q01": ["x"]}}, QRELS), r"B has no ranking for question\(s\)"),
    (lambda: h.interval_table(RUNS, QRELS, metrics="MRR"), "metrics must be a list of metric names, got 'MRR'"),
    (lambda: values_at_k(RUNS, QRELS, 0, "MRR"), "k must be >= 1"),
    (lambda: h.against_chance(RUNS, QRELS, 0), "n_chunks must be >= 1"),
    (lambda: h.against_chance({"A": {**RUNS["A"], "q01": [1]}}, QRELS, 12), r"A, question 'q01': the ranking holds 1 \(int\)"),
])
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_metric_registered_later_is_compared_too(restore_metrics):
    from retrieval_eval.core.registry import METRICS, Metric

    h.register_metric(Metric("hits", "hits@{k}", "num_rel_ret", lambda r, g, k: float(len(h.relevant_ids(g) & set(r[:k]))),
                             lambda judged, k: judged.hits(k).astype(float)))
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["hits"])
    assert "hits" in METRICS and table["verdict"].tolist() == ["A ahead", TOO_CLOSE, "C ahead"]
    assert h.plain_verdict(table, "A", "B", "hits").startswith("A and B differ on 10 of 12 questions")
    pd.testing.assert_series_equal(values_at_k(RUNS, QRELS, 1, "hits")["C"], values_at_k(RUNS, QRELS, 1, SUCCESS)["C"])
