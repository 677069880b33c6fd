"""retrieval_eval/analysis/statistics.py: paired tests, Holm, intervals, exact power and chance, each against a hand
computation, a brute-force enumeration, statsmodels or SciPy, or a seeded simulation; and bad input."""

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

import helpers as h
from retrieval_eval.analysis.statistics import (
    BOOTSTRAP,
    SEED,
    beats_chance,
    bootstrap_ci,
    chance_found,
    mean_interval,
    paired_test,
    wilson_ci,
)


def brute_force_p(a, b):
    """Two-sided sign-flip p-value by enumerating every flip of every question, in exact fractions
    (values read as the fractions they stand for: 0.333... as 1/3)."""
    differences = [Fraction(x).limit_denominator(1000) - Fraction(y).limit_denominator(1000) for x, y in zip(a, b)]
    observed = abs(sum(differences))
    flips = list(itertools.product((1, -1), repeat=len(differences)))
    return sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed for signs in flips) / len(flips)


# --- McNemar's exact test ------------------------------------------------------------------------


def test_mcnemar_p_and_mid_p_by_hand():
    # 9 questions won, 2 lost, 36 the same: p = 2 P(X <= 2), X ~ Binomial(11, 1/2); mid-p leaves out half of P(X = 2)
    a = [1] * 9 + [0] * 2 + [1] * 20 + [0] * 16
    b = [0] * 9 + [1] * 2 + [1] * 20 + [0] * 16
    result = h.mcnemar_test(a, b)
    assert result["p"] == pytest.approx(2 * (1 + 11 + 55) / 2**11)
    assert result["mid_p"] == pytest.approx(2 * (1 + 11 + 55 / 2) / 2**11)
    assert result["test"] == "McNemar's exact test" and result["method"] == "exact binomial on 11 questions that differ"
    assert (result["wins"], result["ties"], result["losses"]) == (9, 36, 2)
    assert result["difference"] == pytest.approx(7 / 47) and result["error"] == 0.0
    assert paired_test(a, b) == result
    # on values of 0 and 1 the sign-flip permutation test is the same exact test: the same p
    assert h.permutation_test(a, b)["p"] == pytest.approx(result["p"])
    assert paired_test([1, 0.5], [0, 0.5])["test"] == "paired permutation test"


def test_mcnemar_when_nothing_or_everything_differs_one_way():
    same = h.mcnemar_test([1, 0, 1], [1, 0, 1])
    assert (same["p"], same["mid_p"]) == (1.0, 1.0)
    six = h.mcnemar_test([1] * 6, [0] * 6)
    assert six["p"] == 2 / 2**6 and six["mid_p"] == pytest.approx(1 / 2**6)
    even = h.mcnemar_test([1, 0, 1, 0], [0, 1, 0, 1])  # 2 to 2: the mid-p is 1 too
    assert (even["p"], even["mid_p"]) == (1.0, pytest.approx(1.0))


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 15), st.integers(0, 15))
def test_mcnemar_p_and_mid_p_against_scipy(wins, losses):
    a, b = [1] * wins + [0] * losses + [1], [0] * wins + [1] * losses + [1]
    result = h.mcnemar_test(a, b)
    m = wins + losses
    assert result["p"] == pytest.approx(stats.binomtest(wins, m, 0.5).pvalue if m else 1.0)
    tail = stats.binom.cdf(min(wins, losses), m, 0.5) - stats.binom.pmf(min(wins, losses), m, 0.5) / 2 if m else 0.5
    assert result["mid_p"] == pytest.approx(min(1.0, 2 * tail))
    assert result["mid_p"] <= result["p"]


# --- the permutation test ------------------------------------------------------------------------


def test_permutation_test_is_exact_on_five_pairs():
    # 2^5 = 32 equally likely sign patterns; only "all +" and "all −" are as extreme: p = 2/32.
    result = h.permutation_test([1, 1, 1, 1, 1], [0, 0, 0, 0, 0])
    assert result["p"] == pytest.approx(2 / 32)
    assert result["method"] == "exact, 2^5 flips" and result["error"] == 0.0
    assert h.permutation_test([1, 0, 1], [1, 0, 1]) == {
        "test": "paired permutation test", "method": "no question differs", "difference": 0.0,
        "wins": 0, "ties": 3, "losses": 0, "mid_p": pytest.approx(math.nan, nan_ok=True), "p": 1.0, "error": 0.0,
    }


def test_zero_differences_do_not_count_as_flips():
    # 47 questions, 3 of which differ: 2^3 flips are enumerated, and p is that of the three alone (2/8)
    result = h.permutation_test([1] * 3 + [0.5] * 44, [0] * 3 + [0.5] * 44)
    assert result["method"] == "exact, 2^3 flips"
    assert result["p"] == pytest.approx(2 / 8) == pytest.approx(brute_force_p([1, 1, 1], [0, 0, 0]))
    assert (result["wins"], result["ties"], result["losses"]) == (3, 44, 0)


@pytest.mark.parametrize("a, b", [
    ([1, 0.5], [0, 1]),  # +1 and −0.5: mean +0.25
    ([0.5, 0.5, 1, 0, 0.5, 0.5] * 5, [0, 1, 0.5, 0.5, 0.5, 0.5] * 5),  # +0.5, −0.5 many times: 20 non-zero, Monte Carlo range
    # reciprocal ranks: 1/3 + 1/5 − 1/6 − 1/6 − 1/5 is 0 in fractions, not in floating point
    ([1 / 3, 0, 0, 1 / 5, 0] * 6, [0, 1 / 6, 1 / 6, 0, 1 / 5] * 6),
    ([1 / 3, 0, 0], [0, 1 / 4, 1 / 12]),
])
def test_a_mean_difference_of_zero_has_p_one_exactly(a, b):
    differences = [Fraction(x).limit_denominator(1000) - Fraction(y).limit_denominator(1000) for x, y in zip(a, b)]
    result = h.permutation_test(a, b)
    if sum(differences) == 0:
        assert (result["p"], result["error"], result["method"]) == (1.0, 0.0, "the mean difference is 0")
    else:
        assert result["p"] == pytest.approx(brute_force_p(a, b))


@pytest.mark.parametrize("a, b", [
    ([1, 1, 1, 0, 1, 1, 0, 0, 1, 0], [0, 0, 0, 1, 1, 1, 0, 0, 1, 0]),
    ([1, 1 / 2, 1 / 3, 0, 1, 1 / 3, 1 / 2, 1, 0], [1 / 2, 1, 0, 1 / 3, 1 / 2, 1 / 2, 1 / 3, 0, 1]),
    ([0.25, 0.75, 1.0, 0.0, 0.5, 0.5], [0.5, 0.25, 0.0, 0.0, 0.75, 0.25]),
])
def test_exact_permutation_p_equals_brute_force_and_scipy(a, b):
    result = h.permutation_test(a, b)
    m = sum(x != y for x, y in zip(a, b))
    assert result["method"] == f"exact, 2^{m} flips"
    assert result["p"] == pytest.approx(brute_force_p(a, b))
    scipy_p = stats.permutation_test(
        (np.array(a), np.array(b)), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=np.inf).pvalue
    assert result["p"] == pytest.approx(scipy_p)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1 / 3, 1 / 2, 1]), st.sampled_from([0, 1 / 3, 1 / 2, 1])), min_size=1, max_size=9))
def test_exact_permutation_p_equals_brute_force_on_random_cases(pairs):
    a, b = zip(*pairs)
    assert h.permutation_test(a, b)["p"] == pytest.approx(brute_force_p(a, b))


def test_monte_carlo_p_is_b_plus_one_over_n_plus_one_and_never_zero():
    # 25 questions, A ahead on all (gaps of two sizes), the exact limit set below the 126 sums: no random flip of
    # 10,000 reaches the observed sum, so p = 1 / 10,001
    a, b = [1] * 20 + [0.5] * 5, [0] * 25
    result = h.permutation_test(a, b, exact_limit=10)
    assert result["p"] == 1 / 10_001
    assert result["method"] == "Monte Carlo, 10,000 flips, ± 0.0001" and result["error"] > 0
    assert h.permutation_test(a, b, n_resamples=99, exact_limit=10)["p"] == 1 / 100
    assert h.permutation_test(a, b)["p"] == pytest.approx(2 / 2**25)  # exact by default


TWO_SIZES = ([1] * 12 + [0] * 4 + [0.5] * 6 + [0] * 3, [0] * 12 + [1] * 4 + [0] * 6 + [0.5] * 3)  # ±1 and ±0.5


def test_monte_carlo_p_agrees_with_the_exact_p_within_its_error():
    exact = h.permutation_test(*TWO_SIZES)
    assert exact["method"] == "exact, 2^25 flips" and exact["p"] == pytest.approx(two_size_p(12, 4, 6, 3))
    for n_resamples, seed in [(10_000, SEED), (2_000, 7)]:
        result = h.permutation_test(*TWO_SIZES, n_resamples=n_resamples, seed=seed, exact_limit=10)
        extreme = result["p"] * (n_resamples + 1) - 1
        assert extreme == pytest.approx(round(extreme)) and 0 <= round(extreme) <= n_resamples
        assert result["error"] == pytest.approx(math.sqrt(result["p"] * (1 - result["p"]) / n_resamples), rel=0.01)
        assert abs(result["p"] - exact["p"]) < 4 * result["error"]
    assert h.permutation_test(*TWO_SIZES) == h.permutation_test(*TWO_SIZES, seed=7)  # exact: no seed matters


def test_exact_limit_decides_between_the_exact_distribution_and_sampling():
    a, b = [1] * 5 + [0.5] * 3, [0] * 8  # two sizes: 6 × 4 = 24 combinations of + signs; 2^8 > 50 flips
    assert h.permutation_test(a, b, exact_limit=24)["method"] == "exact, 2^8 flips"
    sampled = h.permutation_test(a, b, exact_limit=23, n_resamples=50)
    assert sampled["method"].startswith("Monte Carlo, 50 flips")
    assert sampled["p"] * 51 == pytest.approx(round(sampled["p"] * 51))


# --- at the sizes users run: 64 to 1,000,000 differing questions ------------------------------------


def two_size_p(up1: int, down1: int, up_half: int, down_half: int) -> float:
    """The exact two-sided sign-flip p of gaps ±1 and ±0.5 from SciPy's binomial alone (a reference in another form:
    the sum over the half-size signs of the whole-size tail), at any size."""
    m1, mh = up1 + down1, up_half + down_half
    observed = abs((up1 - down1) + 0.5 * (up_half - down_half))
    j = np.arange(mh + 1)  # + signs among the half-size gaps
    rest = observed - 0.5 * (2 * j - mh)  # the whole-size sum needed: S1 >= rest or S1 <= -observed - half part
    upper = stats.binom.sf(np.ceil((rest + m1) / 2 - 1e-9) - 1, m1, 0.5)
    lower = stats.binom.cdf(np.floor((-observed - 0.5 * (2 * j - mh) + m1) / 2 + 1e-9), m1, 0.5)
    return float(min(1.0, (stats.binom.pmf(j, mh, 0.5) * (upper + lower)).sum()))


@pytest.mark.parametrize("wins, losses", [(10, 20), (25, 40), (40, 70), (250, 300), (2_400, 2_600),
                                          (498_500, 501_500)])
def test_the_paired_tests_equal_scipys_exact_sign_test_at_any_size(wins, losses):
    """30, 65, 110, 550, 5,000 and 1,000,000 differing questions of 0/1 values: McNemar and the permutation test are
    scipy.stats.binomtest's exact p, never an overflow (2^64 no longer fits the counts)."""
    a = np.r_[np.ones(wins), np.zeros(losses), np.ones(7)]
    b = np.r_[np.zeros(wins), np.ones(losses), np.ones(7)]
    reference = stats.binomtest(wins, wins + losses, 0.5).pvalue
    for test in (h.mcnemar_test, h.permutation_test, paired_test):
        result = test(a, b)
        assert result["p"] == pytest.approx(reference, rel=1e-9, abs=1e-300) and result["error"] == 0
    graded = h.permutation_test(a * 0.5, b * 0.5)  # one size of gap, 0.5: the same sign test
    assert graded["p"] == pytest.approx(reference, rel=1e-9) and graded["method"].startswith("exact")


@pytest.mark.parametrize("scale, method", [(1, "exact"), (10, "exact"), (100, "Monte Carlo"), (20_000, "normal")])
def test_graded_differences_of_two_sizes_against_scipys_binomial_at_scale(scale, method):
    """Gaps of ±1 and ±0.5 on 25 to 500,000 differing questions: exact while the sums are few, then random flips,
    then the normal approximation, each within its stated error of the exact p (SciPy's binomial, two_size_p)."""
    counts = [12 * scale, 4 * scale + (scale > 1), 6 * scale, 3 * scale]
    a = np.r_[np.ones(counts[0]), np.zeros(counts[1]), np.full(counts[2], 0.5), np.zeros(counts[3])]
    b = np.r_[np.zeros(counts[0]), np.ones(counts[1]), np.zeros(counts[2]), np.full(counts[3], 0.5)]
    result, reference = h.permutation_test(a, b), two_size_p(*counts)
    assert result["method"].startswith(method)
    assert abs(result["p"] - reference) <= max(4 * result["error"], 1e-9 * reference)
    if method == "normal":
        assert 0 < result["error"] < 0.01


def test_the_normal_approximation_holds_a_million_graded_differences_in_bounded_memory():
    """1,000,000 differing questions of many sizes: the normal approximation, within its Berry–Esseen bound of a
    Monte Carlo reference built from the same differences' sign flips (drawn here, 2,000 of them, in blocks)."""
    rng = np.random.default_rng(3)
    gaps = rng.choice([1, 0.5, 1 / 3, 0.25, 0.2], 1_000_000) * rng.choice([1, -1], 1_000_000, p=[0.5008, 0.4992])
    result = h.permutation_test(gaps, np.zeros_like(gaps))
    assert result["method"].startswith("normal approximation, 1,000,000 differing questions")
    flips = np.concatenate([(rng.choice([-1.0, 1.0], (100, len(gaps))) @ gaps) for _ in range(20)])
    monte_carlo = (np.abs(flips) >= abs(gaps.sum())).mean()
    assert abs(result["p"] - monte_carlo) <= result["error"] + 4 * math.sqrt(0.25 / len(flips))


def test_bootstrap_memory_is_linear_in_n_and_the_normal_interval_takes_over_past_its_cost():
    from retrieval_eval.analysis.statistics import BOOTSTRAP, NORMAL
    rng = np.random.default_rng(5)
    values = rng.choice([0, 0.25, 0.5, 1], 20_001)
    normal = mean_interval(values)
    assert normal["interval"] == NORMAL
    half = stats.norm.ppf(0.975) * values.std(ddof=1) / math.sqrt(len(values))
    assert (normal["low"], normal["high"]) == pytest.approx((values.mean() - half, values.mean() + half))
    sampled = bootstrap_ci(values[:5_000])  # 5,000 × 10,000 draws: the percentile bootstrap, close to the normal
    assert mean_interval(values[:5_000])["interval"] == BOOTSTRAP
    half = stats.norm.ppf(0.975) * values[:5_000].std(ddof=1) / math.sqrt(5_000)
    assert sampled[1:] == pytest.approx((values[:5_000].mean() - half, values[:5_000].mean() + half), abs=0.002)


def test_a_repeated_permutation_test_is_remembered_and_gives_the_same_result():
    from retrieval_eval.analysis.statistics import _null

    a, b = [1, 0.5, 0, 1, 0.25, 1, 0, 0.5], [0, 0.5, 1, 0, 0, 0.5, 0.25, 1]
    first = h.permutation_test(a, b)
    hits = _null.cache_info().hits
    assert h.permutation_test(a, b) == first and _null.cache_info().hits == hits + 1
    # another pair with the same gaps (sizes and counts) shares the null distribution
    assert h.permutation_test(b, a)["p"] == first["p"] and _null.cache_info().hits == hits + 2
    assert first["p"] == pytest.approx(brute_force_p(a, b))


@pytest.mark.slow  # 2^16 flips by hand in Python
def test_exact_p_on_repeated_gap_sizes_equals_brute_force():
    # 16 differing questions whose reciprocal-rank gaps take four sizes: the grouped distribution, 2^16 flips by hand
    a = [1, 1 / 2, 1 / 3, 0, 1, 1, 1 / 2, 0, 1 / 3, 1, 0, 1 / 2, 1, 1 / 3, 1, 1 / 2]
    b = [0, 1, 0, 1 / 3, 1 / 2, 0, 0, 1, 1, 1 / 3, 1 / 2, 1 / 3, 0, 0, 1 / 2, 0]
    result = h.permutation_test(a, b)
    assert result["method"] == "exact, 2^16 flips" and result["p"] == pytest.approx(brute_force_p(a, b))


def test_the_golden_sets_verdicts_do_not_depend_on_the_seed(tmp_path):
    """Every permutation test on notebook 05's runs (Lucene English BM25 beside ours) is exact: two seeds, one table."""
    from retrieval_eval.analysis import comparisons, statistics

    polder = h.evaluation_setup(retrievers={"BM25, Lucene English": h.BM25(**h.LUCENE_ENGLISH)}, cache_dir=tmp_path)
    tables = []
    for seed in (1, 2):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(statistics, "permutation_test", functools.partial(statistics.permutation_test, seed=seed))
            tables.append(comparisons.paired_comparisons(polder.runs, polder.qrels, k=3))
    pd.testing.assert_frame_equal(*tables)
    assert len(tables[0]) == 18 and tables[0]["method"].str.startswith("exact").all()


def test_paired_series_are_matched_by_question():
    a = pd.Series([1.0, 0.0], index=["q1", "q2"])
    b = pd.Series([0.0, 1.0], index=["q2", "q1"])
    assert h.mcnemar_test(a, b)["p"] == 1.0 and h.mcnemar_test(a, b)["wins"] == 0
    with pytest.raises(ValueError, match="the two Series hold different questions"):
        h.mcnemar_test(a, pd.Series([0.0, 1.0], index=["q2", "q3"]))


# --- Holm ----------------------------------------------------------------------------------------


def holm_by_hand(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - step) * p[i]))
        adjusted[i] = running
    return adjusted


def test_holm_equals_a_hand_computation():
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → running max 0.02, 0.03, 0.06, 0.06
    assert h.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert h.holm([0.5]) == pytest.approx([0.5])
    assert h.holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1


@settings(max_examples=examples(4), deadline=None)  # statsmodels' Holm runs gc.collect() on every call (0.2 s): a few cases
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_equals_statsmodels_and_a_hand_computation(p_values):
    adjusted = h.holm(p_values)
    assert adjusted.tolist() == pytest.approx(multipletests(p_values, method="holm")[1].tolist())
    assert adjusted.tolist() == pytest.approx(holm_by_hand(p_values))
    assert (adjusted >= np.array(p_values) - 1e-12).all()


def test_any_false_alarm_by_hand():
    assert h.any_false_alarm(1) == pytest.approx(0.05)
    assert h.any_false_alarm(9) == pytest.approx(1 - 0.95**9)


# --- intervals -----------------------------------------------------------------------------------


def test_bootstrap_interval_contains_the_mean_and_narrows_with_more_questions():
    small = np.array([0, 1, 1, 0, 1] * 10, dtype=float) * 0.5
    large = np.tile(small, 10)
    mean_s, low_s, high_s = bootstrap_ci(small)
    mean_l, low_l, high_l = bootstrap_ci(large)
    assert mean_s == pytest.approx(0.3) and low_s <= mean_s <= high_s and low_l <= mean_l <= high_l
    assert high_l - low_l < (high_s - low_s) / 2
    assert bootstrap_ci(small) == (mean_s, low_s, high_s)  # same seed, same interval
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)


def test_wilson_interval_of_15_out_of_15_is_not_zero_width():
    share, low, high = wilson_ci(15, 15)
    z = stats.norm.isf(0.025)
    assert share == high == 1.0
    assert low == pytest.approx(15 / (15 + z**2))  # Wilson's lower bound at n/n, by hand: n / (n + z²)
    assert wilson_ci(0, 15)[1:] == pytest.approx((0.0, 1 - low))


def test_mean_interval_picks_wilson_for_binary_values():
    binary = mean_interval([1.0] * 15)
    assert binary["interval"] == "Wilson score" and (binary["low"], binary["high"]) == pytest.approx(wilson_ci(15, 15)[1:])
    graded = mean_interval([1.0, 0.5, 0.0, 1.0])
    assert graded["interval"] == "percentile bootstrap"
    assert (graded["mean"], graded["low"], graded["high"]) == bootstrap_ci([1.0, 0.5, 0.0, 1.0])
    forced = mean_interval([1.0, 0.0, 1.0, 1.0], method=BOOTSTRAP)
    assert forced["interval"] == BOOTSTRAP and forced["high"] - forced["low"] > 0


# --- exact power ---------------------------------------------------------------------------------


def power_by_enumeration(n, p10, p01, alpha=0.05):
    """Every split of n questions into won, lost and equal, with its multinomial chance; the test rejects
    where SciPy's exact binomial p is at most alpha."""
    total = 0.0
    for wins in range(n + 1):
        for losses in range(n - wins + 1):
            ties = n - wins - losses
            chance = math.factorial(n) / (math.factorial(wins) * math.factorial(losses) * math.factorial(ties)) * (
                p10**wins * p01**losses * (1 - p10 - p01) ** ties)
            m = wins + losses
            if m and stats.binomtest(wins, m, 0.5).pvalue <= alpha:
                total += chance
    return total


@pytest.mark.parametrize("n, p10, p01", [(6, 0.5, 0.0), (8, 0.3, 0.1), (10, 0.25, 0.05), (12, 0.2, 0.2), (15, 0.4, 0.05)])
def test_mcnemar_power_equals_brute_force_enumeration(n, p10, p01):
    assert h.mcnemar_power(n, p10, p01) == pytest.approx(power_by_enumeration(n, p10, p01), abs=1e-12)
    assert h.mcnemar_power(n, p10, p01, alpha=0.01) == pytest.approx(power_by_enumeration(n, p10, p01, 0.01), abs=1e-12)


def test_mcnemar_power_at_47_questions_agrees_with_a_seeded_simulation():
    n, p10, p01, sets = 47, 0.17, 0.04, 40_000
    counts = np.random.default_rng(7).multinomial(n, [p10, p01, 1 - p10 - p01], size=sets)
    wins, m = counts[:, 0], counts[:, 0] + counts[:, 1]
    rejected = np.minimum(1, 2 * stats.binom.cdf(np.minimum(wins, m - wins), m, 0.5)) <= 0.05
    power = h.mcnemar_power(n, p10, p01)
    assert abs(rejected.mean() - power) < 4 * math.sqrt(power * (1 - power) / sets)


@pytest.mark.parametrize("n", [10, 23, 47, 100])
@pytest.mark.parametrize("discordance", [0.1, 0.3, 0.6, 1.0])
def test_the_exact_test_rejects_less_often_than_alpha_when_nothing_differs(n, discordance):
    size = h.mcnemar_power(n, discordance / 2, discordance / 2)  # its size: nothing differs
    assert 0 <= size < 0.05
    assert size <= h.mcnemar_power(n, discordance / 2, discordance / 2, mid_p=True) + 1e-12  # the mid-p rejects at least as often


@pytest.mark.parametrize("p10, p01", [(0.05, 0.45), (0.45, 0.05), (0.3, 0.0), (0.4, 0.1), (0.25, 0.05)])
def test_questions_needed_is_the_smallest_number_reaching_the_power(p10, p01):
    n = h.questions_needed(p10, p01)
    powers = [h.mcnemar_power(m, p10, p01) for m in range(1, n + 1)]
    assert powers[-1] >= 0.8 and all(p < 0.8 for p in powers[:-1])
    assert h.questions_needed(p01, p10) == n  # the direction does not matter


def test_questions_needed_is_the_fewest_where_the_power_saw_tooths():
    """Exact power is not monotone in n: here 94 questions reach 0.82, 96 do not, 97 do again; a bisection
    answered 97."""
    p10, p01, alpha = 0.6754, 0.3164, 0.01
    powers = {n: h.mcnemar_power(n, p10, p01, alpha) for n in range(1, 98)}
    assert powers[94] >= 0.82 > powers[96] and powers[97] >= 0.82
    fewest = min(n for n, p in powers.items() if p >= 0.82)
    assert h.questions_needed(p10, p01, alpha=alpha, power=0.82) == fewest == 94


def test_questions_needed_is_infinite_without_a_difference_or_past_the_limit():
    assert h.questions_needed(0.1, 0.1) == math.inf
    assert h.questions_needed(0.11, 0.1, limit=200) == math.inf


def test_fewest_discordant_and_the_best_case_by_hand():
    # 2 × 0.5^d <= alpha: 2 × 0.5^5 = 0.0625, 2 × 0.5^6 = 0.031; at 0.05 / 9, 2 × 0.5^9 = 0.0039
    assert h.fewest_discordant() == 6
    assert h.fewest_discordant(0.05 / 6) == 8 and h.fewest_discordant(0.05 / 9) == 9
    assert h.best_case_detectable_difference(47) == 6 / 47
    assert h.best_case_detectable_difference(6) == 1.0
    assert math.isnan(h.best_case_detectable_difference(5))  # 5 questions can never give p <= 0.05
    assert h.best_case_detectable_difference(20, alpha=0.01) == 8 / 20


# --- chance --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, k", [(4, 1), (5, 2), (6, 3), (5, 7)])
def test_chance_found_is_the_closed_form_and_every_order_counted(n, k):
    chunks = list(range(n))
    orders = list(itertools.permutations(chunks))
    for r in range(n + 1):
        brute = sum(any(c < r for c in order[:k]) for order in orders) / len(orders)  # chunks 0..r-1 are relevant
        closed = 1 - math.comb(n - r, min(k, n)) / math.comb(n, min(k, n))
        assert chance_found([r], n, k)[0] == pytest.approx(brute) == pytest.approx(closed)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.1, 1 / 3, 0.5, 0.9, 1.0]), min_size=1, max_size=10), st.data())
def test_beats_chance_equals_brute_force(chances, data):
    found = data.draw(st.integers(0, len(chances)))
    brute = 0.0
    for outcome in itertools.product((0, 1), repeat=len(chances)):
        if sum(outcome) >= found:
            brute += math.prod(p if o else 1 - p for p, o in zip(chances, outcome))
    assert beats_chance(found, chances) == pytest.approx(brute, abs=1e-12)


def test_two_slices_is_fishers_exact_test():
    assert h.two_slices(8, 10, 2, 10) == pytest.approx(stats.fisher_exact([[8, 2], [2, 8]]).pvalue)
    assert h.two_slices(3, 3, 3, 3) == 1.0


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: bootstrap_ci([0.5, math.nan, 1.0]), "finite numbers"),
    (lambda: bootstrap_ci([0.5, 1.0], confidence=95), "confidence must be between 0 and 1"),
    (lambda: bootstrap_ci([0.5]), "at least 2 values"),
    (lambda: h.permutation_test([1, 0], [0, 1], n_resamples=0), "n_resamples must be >= 1"),  # checked even when p = 1
    (lambda: h.permutation_test([1, 0, 1], [0, 1, 0], exact_limit=1.5), "exact_limit must be an integer"),
    (lambda: h.permutation_test([], []), "same, non-zero length"),
    (lambda: h.permutation_test([1, 0], [1]), "same, non-zero length"),
    (lambda: h.permutation_test([[1, 0]], [[0, 1]]), "flat list of finite numbers"),
    (lambda: h.mcnemar_test([1, 0.5], [1, 0]), r"a holds \[0.5\]"),
    (lambda: h.mcnemar_test([1, 0], [2, 0]), r"b holds \[2.0\]"),
    (lambda: wilson_ci(16, 15), "successes must be an integer between 0 and n = 15"),
    (lambda: wilson_ci(1.0, 15), "successes must be an integer"),
    (lambda: wilson_ci(0, 0), "n must be >= 1"),
    (lambda: mean_interval([1.0, 0.5], method="Wilson score"), r"needs values of 0 or 1, got \[0.5\]"),
    (lambda: mean_interval([1.0, 0.5], method="wilson"), "method must be 'Wilson score', 'percentile bootstrap' or None"),
    (lambda: h.holm([]), "p_values is empty"),
    (lambda: h.holm([0.5, 1.2]), r"p_values must lie in \[0, 1\], got \[1.2\]"),
    (lambda: h.holm([0.5, math.nan]), "p_values must be a flat list of finite numbers"),
    (lambda: h.any_false_alarm(0), "m must be >= 1"),
    (lambda: h.mcnemar_power(0, 0.1, 0.2), "n must be >= 1"),
    (lambda: h.mcnemar_power(10, -0.1, 0.2), r"p10 must be a share in \[0, 1\], got -0.1"),
    (lambda: h.mcnemar_power(10, 0.1, "0.2"), r"p01 must be a share in \[0, 1\], got '0.2'"),
    (lambda: h.mcnemar_power(10, math.nan, 0.2), r"p10 must be a share in \[0, 1\], got nan"),
    (lambda: h.mcnemar_power(10, 0.6, 0.5), r"p10 \+ p01 is the share of questions that differ and cannot pass 1"),
    (lambda: h.mcnemar_power(10, 0.1, 0.2, alpha=0), "alpha must be between 0 and 1"),
    (lambda: h.questions_needed(-0.1, -0.1), r"p10 must be a share in \[0, 1\], got -0.1"),
    (lambda: h.questions_needed(0.1, 0.1, alpha=5), "alpha must be between 0 and 1"),
    (lambda: h.questions_needed(0.1, 0.2, power=80), "power must be between 0 and 1"),
    (lambda: h.fewest_discordant(0), "alpha must be between 0 and 1"),
    (lambda: h.best_case_detectable_difference(10.0), "n_questions must be an integer"),
    (lambda: chance_found([5], 3, 1), r"n_relevant must be whole numbers from 0 to n_chunks = 3, got \[5\]"),
    (lambda: chance_found([1], 3, 0), "k must be >= 1"),
    (lambda: beats_chance(-1, [0.5]), "found must be a whole number from 0 to 1"),
    (lambda: beats_chance(1.5, [0.5, 0.5]), "found must be a whole number"),
    (lambda: beats_chance(1, [1.5]), r"every chance in \[0, 1\], got 1 and \[1.5\]"),
    (lambda: h.two_slices(5, 3, 1, 4), "found_a and found_b must be whole numbers from 0 to n_a and n_b, got 5 of 3"),
])
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
