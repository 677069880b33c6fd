"""retrieval_eval/power.py: the best case by hand, the McNemar sample size against a published example, a simulation and its inverse; bad input."""

import math

import numpy as np
import pytest
from scipy import stats

import helpers as h


def test_questions_needed_matches_a_worked_example():
    # Connor (1987) two-sided, alpha 0.05, power 0.8, p01 = 0.45, p10 = 0.05: 23 pairs (the worked
    # example of powerandsamplesize.com's McNemar calculator, which cites Connor 1987, p. 209).
    assert h.questions_needed(0.05, 0.45) == 23
    assert h.questions_needed(0.45, 0.05) == 23  # the direction does not matter
    assert h.questions_needed(0.1, 0.1) == math.inf  # no difference: no number of questions suffices


def simulated_power(n, p10, p01, alpha=0.05, golden_sets=4000, seed=1):
    """Share of simulated golden sets of n questions where McNemar's test rejects: (asymptotic, exact)."""
    counts = np.random.default_rng(seed).multinomial(n, [p10, p01, 1 - p10 - p01], size=golden_sets)
    wins, losses = counts[:, 0], counts[:, 1]
    discordant = wins + losses
    z = np.divide(wins - losses, np.sqrt(discordant), out=np.zeros(golden_sets), where=discordant > 0)
    exact_p = np.minimum(1, 2 * stats.binom.cdf(np.minimum(wins, losses), discordant, 0.5))
    return (np.abs(z) > stats.norm.isf(alpha / 2)).mean(), (exact_p < alpha).mean()


@pytest.mark.parametrize("p10, p01", [(0.15, 0.05), (5 / 47, 3 / 47)])
def test_the_computed_number_of_questions_reaches_the_power_in_a_simulation(p10, p01):
    n = h.questions_needed(p10, p01)
    asymptotic, exact = simulated_power(n, p10, p01)
    assert asymptotic == pytest.approx(0.8, abs=0.04)  # the test the formula is derived for
    assert 0.72 < exact < 0.8  # McNemar's exact test is conservative: a few points short
    assert simulated_power(n // 2, p10, p01)[0] < 0.6  # half the questions: clearly less power


@pytest.mark.parametrize("n, discordance", [(47, 0.17), (47, 0.36), (200, 0.1), (1000, 0.5)])
def test_smallest_detectable_difference_inverts_questions_needed(n, discordance):
    difference = h.smallest_detectable_difference(n, discordance)
    assert 0 < difference <= discordance
    p10, p01 = (discordance + difference) / 2, (discordance - difference) / 2
    assert h.questions_needed(p10, p01) == n
    assert h.questions_needed((discordance + 0.99 * difference) / 2, (discordance - 0.99 * difference) / 2) > n
    assert h.smallest_detectable_difference(4 * n, discordance) < difference


def test_no_detectable_difference_is_infinite():
    assert h.smallest_detectable_difference(47, 0.01) == math.inf  # even 0.01 − 0 needs more questions
    assert h.smallest_detectable_difference(3, 1.0) == math.inf  # too few questions for any difference


def test_fewest_discordant_by_hand():
    # 2 × 0.5^d <= alpha: 2 × 0.5^5 = 0.0625, 2 × 0.5^6 = 0.031; at 0.05 / 6 = 0.0083, 2 × 0.5^8 = 0.0078
    assert h.fewest_discordant() == 6
    assert h.fewest_discordant(0.05 / 6) == 8
    assert h.fewest_discordant(0.05 / 9) == 9  # 2 × 0.5^8 = 0.0078 > 0.0056 >= 2 × 0.5^9 = 0.0039
    assert h.fewest_discordant(0.05 / 15) == 10
    with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
        h.fewest_discordant(0)


def test_best_case_detectable_difference_by_hand():
    # the best case: every discordant question goes one way (exact McNemar test)
    # p = 2 × 0.5^d when all d discordant questions go one way: d = 5 gives 0.0625, d = 6 gives 0.03125
    assert stats.binomtest(5, 5).pvalue > 0.05 >= stats.binomtest(6, 6).pvalue
    assert h.best_case_detectable_difference(47) == 6 / 47
    assert h.best_case_detectable_difference(6) == 1.0
    assert math.isnan(h.best_case_detectable_difference(5))  # 5 questions can never give p <= 0.05
    assert h.best_case_detectable_difference(20, alpha=0.01) == 8 / 20  # 2 × 0.5^8 = 0.0078; 2 × 0.5^7 = 0.0156


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.questions_needed(-0.1, 0.2), "p10 must be a share of questions between 0 and 1"),
        (lambda: h.questions_needed(0.1, "0.2"), "p01 must be a share"),
        (lambda: h.questions_needed(0.6, 0.5), "p10 \\+ p01 is the share of discordant questions and cannot pass 1"),
        (lambda: h.questions_needed(0.1, 0.2, alpha=0), "alpha must be between 0 and 1"),
        (lambda: h.questions_needed(0.1, 0.2, power=80), "power must be between 0 and 1"),
        (lambda: h.smallest_detectable_difference(0, 0.2), "n must be >= 1"),
        (lambda: h.smallest_detectable_difference(47.0, 0.2), "n must be an integer"),
        (lambda: h.smallest_detectable_difference(47, 0), "discordance must be above 0"),
        (lambda: h.smallest_detectable_difference(47, math.nan), "discordance must be a share"),
        (lambda: h.best_case_detectable_difference(0), "n_questions must be >= 1"),
        (lambda: h.best_case_detectable_difference(10.0), "n_questions must be an integer"),
        (lambda: h.best_case_detectable_difference(10, alpha=1.5), "alpha must be between 0 and 1"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
