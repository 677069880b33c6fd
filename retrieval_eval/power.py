"""What difference can n questions show? Planning a golden set for a paired comparison of hit rates.

The one place for this question. The comparison is McNemar's test on a binary value per question (a
hit within k or not, see :func:`retrieval_eval.statistics.mcnemar_test`). Only the *discordant*
questions inform it: p10, the share of questions where retriever A hits and B misses, and p01, the
other way round. Their sum ψ = p10 + p01 is the *discordance*, their difference δ = p10 − p01 is
the difference in hit rate. Two answers:

- the best case, :func:`fewest_discordant` and :func:`best_case_detectable_difference`: every
  discordant question goes one way, and the exact test needs d of them with 2 × 0.5^d ≤ α (6 at
  α = 0.05), so no difference below d / n can ever be significant on n questions, whatever the
  retrievers do;
- with power, :func:`questions_needed` and :func:`smallest_detectable_difference`: the
  normal-approximation sample size of Connor (1987, Biometrics 43(1):207–211, p. 209),

    n = [z_{α/2} √ψ + z_β √(ψ − δ²)]² / δ²

  with z_q the upper q-quantile of the standard normal distribution (z_{0.025} = 1.96 for α = 0.05
  two-sided, z_{0.2} = 0.84 for power 0.8). McNemar's *exact* test is a little more conservative
  than the approximation, so at n its power is slightly below the target on small n.
"""

from __future__ import annotations

import math
from itertools import count

import numpy as np

from .checks import check_positive_int, check_probability
from .statistics import ALPHA

POWER = 0.8  # the chance of detecting a real difference that planners usually aim for


def fewest_discordant(alpha: float = ALPHA) -> int:
    """The fewest questions that must differ between two retrievers before a paired test can reach level alpha.

    With d questions that differ (discordant: one retriever's value is higher), the exact paired
    tests of the series (McNemar's exact test on hits and misses, the exact paired permutation test
    on other values) are most significant when all d go the same way: p = 2 × 0.5^d. The smallest
    d with p <= α: 6 at α = 0.05, 8 at 0.05 / 6, 9 at 0.05 / 9. Holm's correction tests the
    smallest p of a family of m tests at α / m, so a test needs this many at α / m to pass on its
    own; with fewer, only a family whose other tests pass first can let it through, and with fewer
    than ``fewest_discordant(α)`` it can never pass.

    Args:
        alpha: the two-sided significance level, in (0, 1).

    Returns:
        d, an int >= 1.

    Raises:
        ValueError: ``alpha`` is not in (0, 1).

    Taught in: notebook 08_beyond_the_averages.
    """
    from scipy.stats import binomtest

    alpha = check_probability(alpha, "alpha")
    return next(d for d in count(1) if binomtest(d, d, 0.5).pvalue <= alpha)


def best_case_detectable_difference(n_questions: int, alpha: float = ALPHA) -> float:
    """The smallest difference in hit rate between two retrievers that n paired questions could ever show.

    McNemar's exact test (a two-sided binomial test on the discordant questions, those that one
    retriever finds and the other misses) is most significant when every discordant question goes
    the same way: it needs :func:`fewest_discordant` of them (6 at α = 0.05), so over n questions
    no difference in hit rate below that number / n can ever be called significant: a set of
    20 questions cannot show a difference below 6/20 = 0.30 in a single test at α = 0.05, whatever
    the retrievers do. In a family of m tests under Holm, pass α / m, the level of its strictest
    step. This is the best case; how many questions a realistic difference needs is
    :func:`questions_needed`, and what n questions detect at a realistic discordance is
    :func:`smallest_detectable_difference`.

    Args:
        n_questions: the number of questions, an integer >= 1.
        alpha: the two-sided significance level, in (0, 1).

    Returns:
        d / n, a float in (0, 1], or NaN when even n discordant questions all going one way are not
        enough (fewer than 6 questions at α = 0.05).

    Raises:
        ValueError: ``n_questions`` is not an integer >= 1 or ``alpha`` is not in (0, 1).

    Taught in: notebook 08_beyond_the_averages, and the README's "Audit your golden set".
    """
    n = check_positive_int(n_questions, "n_questions")
    d = fewest_discordant(alpha)
    return d / n if d <= n else float("nan")


def questions_needed(p10: float, p01: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """How many questions a golden set needs to detect a difference in hit rate with McNemar's test.

    Connor's (1987) sample size: n = [z_{α/2} √ψ + z_β √(ψ − δ²)]² / δ², rounded up, with
    ψ = p10 + p01 (the discordance) and δ = p10 − p01 (the difference in hit rate); see the module
    docstring. Estimate p10 and p01 from a pilot: p10 = (questions A hits and B misses) / (questions).

    Args:
        p10: the share of questions where A hits and B misses, in [0, 1].
        p01: the share of questions where B hits and A misses, in [0, 1]; p10 + p01 <= 1.
        alpha: the two-sided significance level, in (0, 1); divide it by the number of tests
            yourself if a family of tests is planned (Bonferroni).
        power: the wanted chance of detecting the difference, in (0, 1).

    Returns:
        The number of questions, an ``int`` (``math.inf`` when p10 == p01: there is no difference
        to detect, and no number of questions suffices).

    Raises:
        ValueError: p10 or p01 is not a number in [0, 1], their sum passes 1, or alpha or power is
            not between 0 and 1 (names the argument).

    Taught in: notebook 08_beyond_the_averages.
    """
    from scipy.stats import norm

    p10, p01 = _check_share(p10, "p10"), _check_share(p01, "p01")
    if p10 + p01 > 1:
        raise ValueError(f"p10 + p01 is the share of discordant questions and cannot pass 1, got {p10} + {p01}")
    z_alpha = norm.isf(check_probability(alpha, "alpha") / 2)
    z_beta = norm.ppf(check_probability(power, "power"))
    discordance, difference = p10 + p01, p10 - p01
    if difference == 0:
        return math.inf
    n = (z_alpha * math.sqrt(discordance) + z_beta * math.sqrt(discordance - difference**2)) ** 2 / difference**2
    return math.ceil(round(n, 9))  # round first: 23.0000000001 from floating point is 23 questions


def smallest_detectable_difference(n: int, discordance: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest difference in hit rate that n questions detect with McNemar's test, at a given discordance.

    Connor's (1987) formula solved for δ: with n questions, a share ψ of them discordant,
    n δ² = [z_{α/2} √ψ + z_β √(ψ − δ²)]² has the positive root

        δ = √ψ [z_{α/2} √n + z_β √(n − z_{α/2}² + z_β²)] / (n + z_β²).

    The difference can be at most ψ (every discordant question going one way); when the root
    passes ψ, no difference is detectable at this discordance.

    Args:
        n: the number of questions, an integer >= 1.
        discordance: ψ, the share of questions where exactly one of the two retrievers hits, in (0, 1].
        alpha: the two-sided significance level, in (0, 1).
        power: the wanted chance of detecting the difference, in (0, 1).

    Returns:
        δ, a share of questions in (0, ψ] (multiply by 100 for percentage points of hit rate), or
        ``math.inf`` when even δ = ψ is not detectable.

    Raises:
        ValueError: n is not an integer >= 1, discordance is not in (0, 1], or alpha or power is
            not between 0 and 1 (names the argument).

    Taught in: notebook 08_beyond_the_averages (through power_table).
    """
    from scipy.stats import norm

    n = check_positive_int(n, "n")
    discordance = _check_share(discordance, "discordance")
    if discordance == 0:
        raise ValueError("discordance must be above 0: with no discordant questions there is no difference to detect")
    z_alpha = norm.isf(check_probability(alpha, "alpha") / 2)
    z_beta = norm.ppf(check_probability(power, "power"))
    if n - z_alpha**2 + z_beta**2 < 0:  # the equation has no root: too few questions for any difference
        return math.inf
    difference = math.sqrt(discordance) * (z_alpha * math.sqrt(n) + z_beta * math.sqrt(n - z_alpha**2 + z_beta**2)) / (n + z_beta**2)
    return difference if difference <= discordance else math.inf


def _check_share(value, name: str) -> float:
    """``value`` as a float in [0, 1], or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a share of questions between 0 and 1, got {value!r}")
    return float(value)
