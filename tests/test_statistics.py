"""retrieval_eval/statistics.py: tests, intervals and rank differences on inputs with known answers, and bad input."""

import math

import numpy as np
import pandas as pd
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


def test_rank_differences(runs, qrels, golden):
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    diff = h.rank_differences(ranks, "BM25", "vector")
    row = diff.dropna().iloc[0]
    assert row["ranks gained"] == row["BM25"] - row["vector"] == diff["ranks gained"].max()
    with pytest.raises(ValueError, match="no retriever 'bm25'"):
        h.rank_differences(ranks, "bm25", "vector")


def test_paired_series_are_matched_by_question():
    a = pd.Series([1.0, 0.0], index=["q1", "q2"])
    b = pd.Series([0.0, 1.0], index=["q2", "q1"])
    assert h.sign_test(a, b) == {"wins": 0, "losses": 0, "ties": 2, "p": 1.0}


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.bootstrap_ci([0.5, math.nan, 1.0]), "finite numbers"),
        (lambda: h.bootstrap_ci([0.5, 1.0], confidence=95), "confidence must be between 0 and 1"),
        (lambda: h.permutation_p([1, math.nan], [1, math.nan]), "finite numbers"),
        (lambda: h.sign_test([], []), "non-zero length"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_paired_values_must_match_in_length():
    with pytest.raises(ValueError, match="same, non-zero length"):
        h.sign_test([1, 0], [1])
