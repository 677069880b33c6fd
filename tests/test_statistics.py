"""Per-slice report, graded labels and the statistics, on inputs with known answers."""

import numpy as np
import pytest

import helpers as h


def test_sign_test_by_hand():
    a = [1, 1, 1, 1, 1, 0, 0.5]
    b = [0, 0, 0, 0, 0, 0, 0.5]
    assert h.sign_test(a, b) == {"wins": 5, "losses": 0, "ties": 2, "p": pytest.approx(2 * 0.5**5)}
    assert h.sign_test([1, 0], [1, 0])["p"] == 1.0


def test_permutation_test_is_exact_on_five_pairs():
    # 2^5 = 32 equally likely sign patterns; only "all +" and "all −" are as extreme: p = 2/32.
    assert h.permutation_p([1, 1, 1, 1, 1], [0, 0, 0, 0, 0]) == pytest.approx(2 / 32)
    assert h.permutation_p([1, 0, 1], [1, 0, 1]) == 1.0


def test_bootstrap_interval_contains_the_mean_and_narrows_with_more_questions():
    small = np.array([0, 1, 1, 0, 1] * 10, dtype=float)
    large = np.tile(small, 10)
    mean_s, low_s, high_s = h.bootstrap_ci(small)
    mean_l, low_l, high_l = h.bootstrap_ci(large)
    assert mean_s == pytest.approx(0.6)
    assert low_s <= mean_s <= high_s
    assert low_l <= mean_l <= high_l
    assert high_l - low_l < (high_s - low_s) / 2
    assert h.bootstrap_ci(small) == (mean_s, low_s, high_s)  # same seed, same interval
    assert h.bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="at least 2 values"):
        h.bootstrap_ci([0.5])


def test_paired_values_must_match_in_length():
    with pytest.raises(ValueError, match="same, non-zero length"):
        h.sign_test([1, 0], [1])


def test_graded_labels(golden, chunks, qrels):
    graded = h.graded_labels(golden, chunks)
    assert {qid: {c for c, g in gains.items() if g == 2} for qid, gains in graded.items()} == {q: set(g) for q, g in qrels.items()}
    partial = [qid for qid, gains in graded.items() if 1 in gains.values()]
    assert len(partial) >= 15


def test_partial_evidence_only_in_the_evidence_chunk_is_refused(golden, chunks):
    bad = golden.head(1).copy()
    bad["partial_evidence"] = bad["evidence"]
    with pytest.raises(h.GoldenSetError, match=rf"question '{bad.iloc[0]['id']}': partial evidence"):
        h.graded_labels(bad, chunks)


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


def test_rank_differences(runs, qrels, golden):
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    diff = h.rank_differences(ranks, "BM25", "vector")
    row = diff.dropna().iloc[0]
    assert row["ranks gained"] == row["BM25"] - row["vector"] == diff["ranks gained"].max()
    with pytest.raises(ValueError, match="no retriever 'bm25'"):
        h.rank_differences(ranks, "bm25", "vector")
