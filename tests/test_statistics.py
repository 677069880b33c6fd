"""retrieval_eval/statistics.py: tests, intervals and Holm's correction on inputs with known answers, and bad input."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import helpers as h


def brute_force_p(a, b):
    """Two-sided sign-flip p-value by enumerating every flip of every question, in exact fractions.

    Values are read as the fractions they stand for (0.333... as 1/3), as the test's tolerance for
    floating-point sums does: the float 1/3 - 1/6 - 1/6 is not 0, the fraction is."""
    differences = [Fraction(x).limit_denominator(1000) - Fraction(y).limit_denominator(1000) for x, y in zip(a, b)]
    observed = abs(sum(differences))
    flips = list(itertools.product((1, -1), repeat=len(differences)))
    return sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed for signs in flips) / len(flips)


# --- paired tests --------------------------------------------------------------------------------


def test_sign_test_by_hand():
    a = [1, 1, 1, 1, 1, 0, 0.5]
    b = [0, 0, 0, 0, 0, 0, 0.5]
    assert h.sign_test(a, b) == {"wins": 5, "losses": 0, "ties": 2, "p": pytest.approx(2 * 0.5**5)}
    assert h.sign_test([1, 0], [1, 0])["p"] == 1.0


def test_permutation_test_is_exact_on_five_pairs():
    # 2^5 = 32 equally likely sign patterns; only "all +" and "all −" are as extreme: p = 2/32.
    result = h.permutation_test([1, 1, 1, 1, 1], [0, 0, 0, 0, 0])
    assert result["p"] == pytest.approx(2 / 32)
    assert result["method"] == "exact, 2^5 flips" and result["se"] == 0.0
    assert h.permutation_test([1, 1, 1, 1, 1], [0, 0, 0, 0, 0])["p"] == result["p"]
    assert h.permutation_test([1, 0, 1], [1, 0, 1]) == {
        "test": "paired permutation test", "method": "no question differs", "difference": 0.0,
        "wins": 0, "ties": 3, "losses": 0, "p": 1.0, "se": 0.0,
    }


def test_zero_differences_do_not_count_as_flips():
    # 47 questions, 3 of which differ: 2^3 flips are enumerated (not 2^47 sampled), and the
    # p-value is the one of the three differences alone (2/8: all + or all −).
    a, b = [1] * 3 + [0.5] * 44, [0] * 3 + [0.5] * 44
    result = h.permutation_test(a, b)
    assert result["method"] == "exact, 2^3 flips"
    assert result["p"] == pytest.approx(2 / 8) == pytest.approx(brute_force_p([1, 1, 1], [0, 0, 0]))
    assert (result["wins"], result["ties"], result["losses"]) == (3, 44, 0)


@pytest.mark.parametrize(
    "a, b",
    [
        ([1, 1, 1, 0, 1, 1, 0, 0, 1, 0], [0, 0, 0, 1, 1, 1, 0, 0, 1, 0]),
        # reciprocal ranks: sums of thirds and halves tie exactly in fractions, not always in floats
        ([1, 1 / 2, 1 / 3, 0, 1, 1 / 3, 1 / 2, 1, 0], [1 / 2, 1, 0, 1 / 3, 1 / 2, 1 / 2, 1 / 3, 0, 1]),
        ([0.25, 0.75, 1.0, 0.0, 0.5, 0.5], [0.5, 0.25, 0.0, 0.0, 0.75, 0.25]),
    ],
)
def test_exact_permutation_p_equals_brute_force_and_scipy(a, b):
    result = h.permutation_test(a, b)
    m = sum(x != y for x, y in zip(a, b))
    assert result["method"] == f"exact, 2^{m} flips"
    assert result["p"] == pytest.approx(brute_force_p(a, b))
    # SciPy swapping a and b within each pair (two samples, 2^n patterns, its own two-sided rule)
    scipy_p = stats.permutation_test(
        (np.array(a), np.array(b)), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=np.inf,
    ).pvalue
    assert result["p"] == pytest.approx(scipy_p)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1 / 3, 1 / 2, 1]), st.sampled_from([0, 1 / 3, 1 / 2, 1])), min_size=1, max_size=9))
def test_exact_permutation_p_equals_brute_force_on_random_cases(pairs):
    a, b = zip(*pairs)
    assert h.permutation_test(a, b)["p"] == pytest.approx(brute_force_p(a, b))


def test_monte_carlo_p_is_b_plus_one_over_n_plus_one_and_never_zero():
    # 25 questions, A wins all: 2^25 flips exceed the limit; the exact p is 2 / 2^25, and no random
    # flip of 10,000 reaches |mean| = 1 with this seed, so b = 0 and p = 1 / 10,001, not 0.
    result = h.permutation_test([1] * 25, [0] * 25)
    assert result["p"] == 1 / 10_001
    assert result["method"] == f"Monte Carlo, 10,000 flips, ± {result['se']:.4f}"
    assert h.permutation_test([1] * 25, [0] * 25, n_resamples=99)["p"] == 1 / 100


def test_monte_carlo_p_agrees_with_the_exact_p_within_its_error():
    # 18 wins and 7 losses of 1 each: T = number of + among 25 fair signs, exact two-sided
    # p = P(|2X − 25| >= 11) with X ~ Binomial(25, 1/2) = 2 P(X >= 18).
    a, b = [1] * 18 + [0] * 7, [0] * 18 + [1] * 7
    exact = 2 * stats.binom.sf(17, 25, 0.5)
    for n_resamples, seed in [(10_000, h.SEED), (2_000, 7)]:
        result = h.permutation_test(a, b, n_resamples=n_resamples, seed=seed)
        extreme = result["p"] * (n_resamples + 1) - 1  # b, the random flips at least as extreme
        assert extreme == pytest.approx(round(extreme)) and 0 <= round(extreme) <= n_resamples
        assert result["se"] == pytest.approx(h.monte_carlo_error(round(extreme), n_resamples))
        assert result["se"] == pytest.approx(math.sqrt(result["p"] * (1 - result["p"]) / n_resamples), rel=0.01)
        assert abs(result["p"] - exact) < 4 * result["se"]
    assert h.permutation_test(a, b) == h.permutation_test(a, b)  # fixed seed, same p


def test_monte_carlo_p_of_one_has_an_error_above_zero():
    # 26 questions, differences +0.5 and −0.5 thirteen times each: the observed mean difference is 0, so every
    # random flip is at least as extreme (b = N) and p = 1. The plug-in error √(p (1 − p) / N) would be 0 and
    # print "± 0.0000", as if the p-value were exact; with b = N the error is about 1 / N.
    a, b = [1] * 13 + [0] * 13, [0.5] * 26
    result = h.permutation_test(a, b)
    assert result["p"] == 1.0 and result["method"].startswith("Monte Carlo")
    assert result["se"] == pytest.approx(1 / 10_000, rel=1e-3) and result["se"] > 0
    assert result["method"] == "Monte Carlo, 10,000 flips, ± 0.0001"
    sampled = h.permutation_test(a, b, n_resamples=100_000)
    assert sampled["p"] == 1.0 and sampled["method"] == "Monte Carlo, 100,000 flips, ± 0.0001"  # rounded up, never 0


@pytest.mark.parametrize("n", [1, 99, 10_000])
def test_monte_carlo_error_is_never_zero_and_symmetric(n):
    errors = [h.monte_carlo_error(b, n) for b in range(0, n + 1, max(1, n // 50))]
    assert all(e > 0 for e in errors)
    assert h.monte_carlo_error(0, n) == pytest.approx(h.monte_carlo_error(n, n))
    assert h.monte_carlo_error(n // 2, n) == max(h.monte_carlo_error(b, n) for b in range(n + 1))


@pytest.mark.parametrize("extreme, n, message", [
    (-1, 10, "extreme must be an integer between 0 and n_resamples = 10"),
    (11, 10, "extreme must be an integer between 0 and n_resamples = 10"),
    (2.5, 10, "extreme must be an integer"),
    (True, 10, "extreme must be an integer"),
    (1, 0, "n_resamples"),
])
def test_monte_carlo_error_bad_input(extreme, n, message):
    with pytest.raises(ValueError, match=message):
        h.monte_carlo_error(extreme, n)


def test_exact_limit_decides_between_enumeration_and_sampling():
    a, b = [1] * 6, [0] * 6
    assert h.permutation_test(a, b, exact_limit=64)["method"] == "exact, 2^6 flips"
    sampled = h.permutation_test(a, b, exact_limit=32, n_resamples=50)
    assert sampled["method"].startswith("Monte Carlo, 50 flips")
    assert (sampled["p"] * 51) == pytest.approx(round(sampled["p"] * 51))


def test_mcnemar_equals_a_hand_binomial():
    # 9 discordant questions won, 2 lost, 36 concordant: p = 2 × P(X <= 2), X ~ Binomial(11, 1/2)
    a = [1] * 9 + [0] * 2 + [1] * 20 + [0] * 16
    b = [0] * 9 + [1] * 2 + [1] * 20 + [0] * 16
    result = h.mcnemar_test(a, b)
    assert result["p"] == pytest.approx(2 * (1 + 11 + 55) / 2**11)
    assert result["test"] == "McNemar's exact test"
    assert result["method"] == "exact binomial on 11 discordant questions"
    assert (result["wins"], result["ties"], result["losses"]) == (9, 36, 2)
    assert result["difference"] == pytest.approx(7 / 47)
    assert h.paired_test(a, b) == result
    # on values of 0 and 1 the sign-flip permutation test is the same exact test: the same p
    assert h.permutation_test(a, b)["p"] == pytest.approx(result["p"])
    assert h.paired_test([1, 0.5], [0, 0.5])["test"] == "paired permutation test"


def test_holm_equals_a_hand_computation():
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → running max 0.02, 0.03, 0.06, 0.06
    assert h.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert h.holm([0.5]) == pytest.approx([0.5])
    assert h.holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1


@settings(max_examples=20, deadline=None)  # statsmodels collects garbage on every call: a few cases suffice
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_is_monotone_and_between_raw_and_bonferroni(p_values):
    p, adjusted = np.array(p_values), h.holm(p_values)
    order = np.argsort(p, kind="stable")
    assert (np.diff(adjusted[order]) >= -1e-12).all()  # a smaller raw p never gets a larger adjusted p
    assert (adjusted >= p - 1e-12).all()
    assert (adjusted <= np.minimum(1, len(p) * p) + 1e-12).all()


# --- intervals -----------------------------------------------------------------------------------


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


def test_wilson_interval_of_15_out_of_15_is_not_zero_width():
    share, low, high = h.wilson_ci(15, 15)
    z = stats.norm.isf(0.025)
    assert share == high == 1.0
    assert low == pytest.approx(15 / (15 + z**2))  # Wilson's lower bound at 15/15, by hand: n / (n + z²)
    scipy_ci = stats.binomtest(15, 15).proportion_ci(0.95, method="wilson")
    assert (low, high) == pytest.approx((scipy_ci.low, scipy_ci.high))
    assert h.wilson_ci(0, 15)[1:] == pytest.approx((0.0, 1 - low))


def test_mean_interval_picks_wilson_for_binary_values_and_flags_zero_width():
    binary = h.mean_interval([1.0] * 15)
    assert binary["interval"] == "Wilson score" and not binary["zero width"]
    assert (binary["low"], binary["high"]) == pytest.approx(h.wilson_ci(15, 15)[1:])
    graded = h.mean_interval([1.0, 0.5, 0.0, 1.0])
    assert graded["interval"] == "percentile bootstrap" and not graded["zero width"]
    assert h.mean_interval([0.5, 0.5, 0.5]) == {
        "mean": 0.5, "low": 0.5, "high": 0.5, "interval": "percentile bootstrap", "zero width": True,
    }


def test_mean_interval_can_be_told_which_interval():
    forced = h.mean_interval([1.0, 0.0, 1.0, 1.0], method=h.BOOTSTRAP)
    assert forced["interval"] == "percentile bootstrap"
    assert (forced["mean"], forced["low"], forced["high"]) == h.bootstrap_ci([1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"a Wilson score interval needs values of 0 or 1, got \[0.5\]"):
        h.mean_interval([1.0, 0.5], method=h.WILSON)
    with pytest.raises(ValueError, match="method must be 'Wilson score', 'percentile bootstrap' or None"):
        h.mean_interval([1.0, 0.5], method="wilson")


def test_paired_series_are_matched_by_question():
    a = pd.Series([1.0, 0.0], index=["q1", "q2"])
    b = pd.Series([0.0, 1.0], index=["q2", "q1"])
    assert h.sign_test(a, b) == {"wins": 0, "losses": 0, "ties": 2, "p": 1.0}
    assert h.mcnemar_test(a, b)["p"] == 1.0


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.bootstrap_ci([0.5, math.nan, 1.0]), "finite numbers"),
        (lambda: h.bootstrap_ci([0.5, 1.0], confidence=95), "confidence must be between 0 and 1"),
                (lambda: h.permutation_test([1, 0], [0, 1], n_resamples=0), "n_resamples must be >= 1"),
        (lambda: h.permutation_test([1, 0], [0, 1], exact_limit=1.5), "exact_limit must be an integer"),
        (lambda: h.sign_test([], []), "non-zero length"),
        (lambda: h.mcnemar_test([1, 0.5], [1, 0]), r"a holds \[0.5\]"),
        (lambda: h.mcnemar_test([1, 0], [2, 0]), r"b holds \[2.0\]"),
        (lambda: h.wilson_ci(16, 15), "successes must be an integer between 0 and n = 15"),
        (lambda: h.wilson_ci(1.0, 15), "successes must be an integer"),
        (lambda: h.wilson_ci(0, 0), "n must be >= 1"),
        (lambda: h.wilson_ci(3, 5, confidence=0), "confidence must be between 0 and 1"),
        (lambda: h.holm([]), "p_values is empty"),
        (lambda: h.holm([0.5, 1.2]), r"p_values must lie in \[0, 1\], got \[1.2\]"),
        (lambda: h.holm([0.5, math.nan]), "p_values must be a flat list of finite numbers"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_paired_values_must_match_in_length():
    with pytest.raises(ValueError, match="same, non-zero length"):
        h.sign_test([1, 0], [1])


def test_a_repeated_permutation_test_is_remembered_and_gives_the_same_result():
    from retrieval_eval.statistics import _flip_p

    a, b = [1, 0.5, 0, 1, 0.25, 1, 0, 0.5], [0, 0.5, 1, 0, 0, 0.5, 0.25, 1]
    first = h.permutation_test(a, b)
    hits = _flip_p.cache_info().hits
    assert h.permutation_test(a, b) == first and _flip_p.cache_info().hits == hits + 1
    assert first["p"] == pytest.approx(brute_force_p(a, b))  # the remembered p is the exact one
