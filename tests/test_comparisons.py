"""retrieval_eval/comparisons.py: comparison tables, families and sentences on toy runs with known answers and on Polder."""

import math

import pandas as pd
import pytest
import pytrec_eval

import helpers as h

# Twelve questions, one relevant chunk each. A finds it at rank 1 on every question; B on q01–q02
# only, C on q01–q10; the slices are q01–q06 "short" and q07–q12 "long".
QUESTIONS = [f"q{i:02d}" for i in range(1, 13)]
QRELS = {q: {f"{q}-doc": 1} for q in QUESTIONS}
RUNS = {
    "A": {q: [f"{q}-doc", "x"] for q in QUESTIONS},
    "B": {q: [f"{q}-doc"] if i < 2 else ["x"] for i, q in enumerate(QUESTIONS)},
    "C": {q: [f"{q}-doc"] if i < 10 else ["x"] for i, q in enumerate(QUESTIONS)},
}
GOLDEN = pd.DataFrame({"id": QUESTIONS, "slice": ["short"] * 6 + ["long"] * 6})


def test_success_equals_trec_eval(runs, qrels):
    table = h.per_question_table(runs, qrels, k=3, metrics=["success", "recall"])
    for name, run in runs.items():
        trec_run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
        per_q = pytrec_eval.RelevanceEvaluator(qrels, {"success.3"}).evaluate(trec_run)
        assert table[(name, "success")].to_dict() == {q: per_q[q]["success_3"] for q in qrels}
    # success@k and recall@k differ only where a question has more than one relevant chunk
    differ = table.index[(table.xs("success", axis=1, level="metric") != table.xs("recall", axis=1, level="metric")).any(axis=1)]
    assert all(len(h.relevant_ids(qrels[q])) > 1 for q in differ)


def test_paired_comparisons_on_toy_runs():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success", "MRR"])
    assert table.attrs["family"] == "6 tests: 3 pairs of retrievers × 2 metrics at k = 1"
    row = table.loc[("A − B", "success")]
    # 10 discordant questions, all won by A: McNemar p = 2 / 2^10
    assert (row["wins"], row["ties"], row["losses"]) == (10, 2, 0)
    assert row["test"] == "McNemar's exact test" and row["p"] == pytest.approx(2 / 2**10)
    assert row["difference"] == pytest.approx(10 / 12)
    assert table.loc[("A − B", "MRR"), "test"] == "McNemar's exact test"  # the values decide: RR@1 is 0 or 1
    second = {"A": RUNS["A"], "D": {q: ["x", f"{q}-doc"] for q in QUESTIONS}}  # RR@2 of D is 1/2
    assert h.paired_comparisons(second, QRELS, k=2, metrics=["MRR"]).loc[("A − D", "MRR"), "test"] == "paired permutation test"
    assert table["p (Holm)"].to_numpy() == pytest.approx(h.holm(table["p"].to_numpy()))
    assert (table["p (Holm)"] >= table["p"]).all()
    assert row["verdict"] == "A higher"
    assert table.loc[("B − C", "success"), "verdict"] == "C higher"
    assert table.loc[("A − C", "success"), "verdict"] == "not distinguishable"  # 2 to 0
    assert table.loc[("A − C", "success"), "few discordant"]
    # the flag follows the family: 3 pairs × 2 metrics, Holm's first step at 0.05 / 6 needs 8 all one way
    assert table.attrs["min discordant"] == 8 and table.attrs["tests"] == 6
    assert (table["few discordant"] == (table["wins"] + table["losses"] < 8)).all()
    assert (table["wins"] + table["ties"] + table["losses"] == table["questions"]).all()


def test_comparison_sentences_state_the_family_and_each_verdict():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success"], pairs=[("A", "C")])
    low, high = table.loc[("A − C", "success"), ["low", "high"]]
    assert h.comparison_sentences(table) == [
        "The family: 1 test: 1 pair of retrievers × 1 metric at k = 1; every verdict uses Holm-adjusted "
        "p-values at family-wise 5%.",
        f"A − C success@1: +0.167 [{low:.2f}, {high:.2f}], 2 wins, 10 ties, 0 losses, McNemar exact p = 0.5, "
        "Holm p = 0.5: not distinguishable at family-wise 5% — rests on 2 questions that differ (2–0); "
        "6 that differ, all one way, are needed to pass Holm's first step (α/1).",
    ]
    with pytest.raises(ValueError, match="output of paired_comparisons, slice_comparisons or compare_settings"):
        h.comparison_sentences(pd.DataFrame(table))


def test_tested_verdict_follows_the_holm_adjusted_verdicts():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success", "MRR"])
    b, c = (h.tested_pair(table, "A", name, "success") for name in ("B", "C"))
    assert (b["verdict"], c["verdict"]) == ("A higher", "not distinguishable")

    def p(row):
        return f"McNemar exact p = {row['p']:.2g}, Holm p = {row['p (Holm)']:.2g}"

    assert h.tested_verdict(table, "success") == (
        f"**A** has the highest success@1 (1.000), ahead of **B** (0.167; {p(b)}) beyond chance; but 12 questions "
        f"cannot tell it from **C** (0.833; {p(c)}). Holm-adjusted over a family of 6 tests: 3 pairs of retrievers "
        "× 2 metrics at k = 1, family-wise 5%."
    )
    # two leaders that tie as printed are named together, each tested against the others
    tied = h.paired_comparisons({"A": RUNS["A"], "A2": RUNS["A"], "C": RUNS["C"]}, QRELS, k=1, metrics=["success"])
    assert h.tested_verdict(tied, "success").startswith(
        "**A** and **A2** tie for the highest success@1 (1.000), but no retriever is distinguishable from another: 12 "
        "questions cannot tell them from **C** (0.833; "
        "McNemar exact p = 0.5, Holm p = 1; McNemar exact p = 0.5, Holm p = 1).")
    # when no test on the metric tells two retrievers apart, the sentence says so before naming them
    close = h.paired_comparisons({"A": RUNS["A"], "C": RUNS["C"]}, QRELS, k=1, metrics=["success"])
    assert h.tested_verdict(close, "success").startswith(
        "**A** has the highest success@1 (1.000), but no retriever is distinguishable from another: 12 questions cannot "
        "tell it from **C** (0.833; McNemar exact p = 0.5, Holm p = 0.5).")
    with pytest.raises(ValueError, match=r"the table holds no test on 'nDCG'; its metrics are \['MRR', 'success'\]"):
        h.tested_verdict(table, "nDCG")


def test_the_short_tested_verdict_gives_the_same_verdicts_without_the_tests():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success", "MRR"])
    pointer = " (notebook 05 gives the tests, notebook 08 explains them)."
    tested = "a paired test that allows for the 6 comparisons made at once"
    # A is ahead of B (Holm) but not of C: both named, no p-value, no test name
    assert h.tested_verdict(table, "success", short=True) == (
        f"**A** has the highest success@1 (1.000), and {tested} tells it apart from **B** (0.167) but not from "
        f"**C** (0.833){pointer}"
    )
    # no pair apart: the means' spread in questions (1.000 − 0.833 = 2 of 12 questions)
    close = h.paired_comparisons({"A": RUNS["A"], "C": RUNS["C"]}, QRELS, k=1, metrics=["success"])
    assert h.tested_verdict(close, "success", short=True) == (
        "**A** has the highest success@1 (1.000), but the 2 means lie within 0.167, 2.0 questions' worth out of 12, "
        f"and a paired test that allows for the 1 comparison made at once tells no two retrievers apart{pointer}"
    )


def test_tested_pair_and_pair_sentence_take_the_pair_either_way_round():
    table = h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success"])
    assert h.tested_pair(table, "C", "A", "success").name == ("A − C", "success")
    assert h.pair_sentence(table, "C", "A", "success") == h.comparison_sentences(table)[2]
    with pytest.raises(ValueError, match="no test of A and D on 'success'"):
        h.tested_pair(table, "A", "D", "success")


def test_slice_comparisons_adjust_over_slices_pairs_and_metrics():
    table = h.slice_comparisons(RUNS, QRELS, GOLDEN, k=1, metrics=["success"], pairs=[("A", "B"), ("A", "C")])
    assert table.attrs["family"] == "4 tests: 2 slices × 2 pairs of retrievers × 1 metric at k = 1"
    assert list(table.index.get_level_values("slice")) == ["long", "long", "short", "short"]
    assert table.loc[("short", "A − B", "success"), ["wins", "losses", "questions"]].tolist() == [4, 0, 6]
    assert table.loc[("short", "A − B", "success"), "p"] == pytest.approx(2 / 2**4)
    assert table.loc[("short", "A − C", "success"), "p"] == 1.0
    assert table["p (Holm)"].to_numpy() == pytest.approx(h.holm(table["p"].to_numpy()))
    sentences = h.comparison_sentences(table)
    assert sentences[0].startswith("The family: 4 tests: 2 slices")
    assert "A − B success@1 on short: +0.667" in sentences[3] and "rests on 4 questions that differ (4–0)" in sentences[3]
    assert sentences[4].endswith("— no question differs.")


def test_interval_tables_pick_wilson_for_binary_values():
    table = h.interval_table(RUNS, QRELS, k=1, metrics=["success", "MRR"])
    assert table.loc[("A", "success"), "interval"] == "Wilson score"
    assert table.loc[("A", "success"), ["low", "high"]].tolist() == pytest.approx(h.wilson_ci(12, 12)[1:])
    assert not table["zero width"].any()
    slices = h.slice_intervals(RUNS, QRELS, GOLDEN, k=1, metrics=["success"])
    assert slices.loc[("short", "C", "success"), ["questions", "mean"]].tolist() == [6, 1.0]
    assert slices.loc[("short", "C", "success"), "low"] == pytest.approx(h.wilson_ci(6, 6)[1])


def test_interval_table_on_polder(runs, qrels):
    table = h.interval_table(runs, qrels, k=3, metrics=["success", *h.METRICS])
    assert list(table.columns) == ["mean", "low", "high", "interval", "zero width"]
    kinds = table["interval"].unstack("metric")
    assert (kinds["success"] == "Wilson score").all()
    assert kinds.nunique().eq(1).all()  # one kind of interval per metric, whatever each retriever's values
    means = h.evaluate(runs, qrels, ks=[3])
    for (name, metric), row in table.drop("success", level="metric").iterrows():
        assert row["mean"] == pytest.approx(means.loc[name, (metric, 3)])
        assert row["low"] <= row["mean"] <= row["high"]


def test_paired_comparisons_on_polder_count_the_family(runs, qrels):
    metrics = ["success", "recall", "MRR", "nDCG"]
    table = h.paired_comparisons(runs, qrels, k=3, metrics=metrics)
    assert len(table) == 3 * len(metrics)
    assert table.attrs["family"].startswith(f"{3 * len(metrics)} tests: 3 pairs of retrievers × 4 metrics")
    assert (table.xs("success", level="metric")["test"] == "McNemar's exact test").all()
    for (pair, metric), row in table.iterrows():
        if row["verdict"] == "not distinguishable":
            assert row["p (Holm)"] >= h.ALPHA
        else:
            assert row["p (Holm)"] < h.ALPHA
            assert row["verdict"] == f"{pair.split(' − ')[0 if row['difference'] > 0 else 1]} higher"
    assert len(h.comparison_sentences(table)) == len(table) + 1


def test_power_table_on_toy_runs():
    table = h.power_table(RUNS, QRELS, k=1, pairs=[("A", "C"), ("C", "B")])
    row = table.loc["C − B"]
    assert row[["questions", "wins", "losses"]].tolist() == [12, 8, 0]
    assert row["smallest detectable difference"] == pytest.approx(h.smallest_detectable_difference(12, 8 / 12))
    ties = h.power_table({"A": RUNS["A"], "A2": RUNS["A"]}, QRELS, k=1)
    assert "questions needed" not in ties.columns  # planned from the difference that matters, not the observed one
    assert ties.loc["A − A2", "smallest detectable difference"] == math.inf


def test_rank_differences(runs, qrels, golden):
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    diff = h.rank_differences(ranks, "BM25", "vector")
    row = diff.dropna().iloc[0]
    assert row["ranks gained"] == row["BM25"] - row["vector"] == diff["ranks gained"].max()
    with pytest.raises(ValueError, match="no retriever 'bm25'"):
        h.rank_differences(ranks, "bm25", "vector")


# --- bad input ---------------------------------------------------------------------------------

GRADED = {"q01": {"q01-doc": 1, "other": 1}, **{q: QRELS[q] for q in QUESTIONS[1:]}}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.per_question_table(RUNS, QRELS, metrics=["Recall"]), "unknown metric 'Recall'"),
        (lambda: h.per_question_table(RUNS, QRELS, metrics="recall"), "metrics must be a list of metric names"),
        (lambda: h.per_question_table(RUNS, QRELS, metrics=[]), "metrics is empty"),
        (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[("A", "D")]), r"pair \('A', 'D'\) must name two different"),
        (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[("A", "A")]), "two different retrievers"),
        (lambda: h.paired_comparisons(RUNS, QRELS, pairs=[]), "pairs is empty"),
        (lambda: h.paired_comparisons(RUNS, QRELS, alpha=5), "alpha must be between 0 and 1"),
        (lambda: h.slice_comparisons(RUNS, QRELS, GOLDEN[["id"]]), "no 'slice' column"),
        (lambda: h.slice_intervals(RUNS, QRELS, GOLDEN.iloc[1:]), "the golden set and the qrels differ"),
        (lambda: h.power_table({"A": RUNS["A"], "B": RUNS["B"]}, GRADED, k=1, metric="recall"), "recall@1 of A is not 0 or 1"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_column_comparisons_is_the_engine_of_paired_comparisons_and_refuses_bad_columns():
    wide = h.per_question_table(RUNS, QRELS, k=1, metrics=["success"])
    family = "3 tests: 3 pairs of retrievers × 1 metric at k = 1"
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    assert h.column_comparisons(wide, pairs, family, 1).equals(h.paired_comparisons(RUNS, QRELS, k=1, metrics=["success"]))
    with pytest.raises(ValueError, match=r"pair \('A', 'D'\) must name two different retrievers of \['A', 'B', 'C'\]"):
        h.column_comparisons(wide, [("A", "D")], family, 1)
    with pytest.raises(ValueError, match=r"no column \('C', 'recall'\) to compare"):
        h.column_comparisons(wide.join(wide[["A"]].rename(columns={"success": "recall"})), [("A", "C")], family, 1)
    holed = wide.copy()
    holed.loc["q03", ("B", "success")] = float("nan")
    with pytest.raises(ValueError, match=r"\('B', 'success'\): no finite value for question\(s\) \['q03'\]"):
        h.column_comparisons(holed, pairs, family, 1)


def test_narrow_interval_reason_gives_the_chance_of_a_resample_without_the_wins():
    row = pd.Series({"wins": 5, "losses": 0})
    assert h.narrow_interval_reason(row, 47) == (
        "the percentile bootstrap resamples all 47 questions, but a resample can only reuse the differences observed: "
        "with 5 won and 0 lost, a resample draws none of the 5 only (1 − 5/47)^47 = 0.5% of the time, so almost none "
        "has a difference of 0 or below and the interval comes out too narrow"
    )
    assert "draws none of the 7 only (1 − 7/47)^47 = 0.1%" in h.narrow_interval_reason(pd.Series({"wins": 1, "losses": 7}), 47)
    with pytest.raises(ValueError, match="no question differs"):
        h.narrow_interval_reason(pd.Series({"wins": 0, "losses": 0}), 47)
    with pytest.raises(ValueError, match="more than the 6 questions"):
        h.narrow_interval_reason(pd.Series({"wins": 5, "losses": 2}), 6)
