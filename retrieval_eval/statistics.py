"""Uncertainty on a small golden set: intervals for one retriever, paired tests for two, Holm's correction.

Everything here works on per-question values (one number per question, e.g. each question's
recall@3). The question is the unit that was sampled: intervals resample questions, and tests flip
or count questions, always paired across retrievers. The tables over retrievers, metrics and
slices are in :mod:`retrieval_eval.comparisons`; sample sizes in :mod:`retrieval_eval.power`.

SciPy and statsmodels are imported inside the functions that use them, so that ``import helpers``
stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from .checks import check_positive_int, check_probability

N_RESAMPLES = 10_000  # bootstrap resamples, and random sign flips when a permutation test cannot enumerate
SEED = 20091  # fixed so two runs print identical intervals and p-values
EXACT_LIMIT = 10**6  # a permutation test enumerates every sign flip when 2^m is at most this
ALPHA = 0.05  # the family-wise error rate of the verdicts
WILSON, BOOTSTRAP = "Wilson score", "percentile bootstrap"  # the two intervals of mean_interval
MCNEMAR, PERMUTATION = "McNemar's exact test", "paired permutation test"  # the two tests of paired_test


def bootstrap_ci(values: Sequence[float], n_resamples: int = N_RESAMPLES, confidence: float = 0.95, seed: int = SEED) -> tuple[float, float, float]:
    """The mean and a percentile-bootstrap confidence interval over questions (Efron & Tibshirani 1993).

    Questions are resampled with replacement ``n_resamples`` times with SciPy's
    ``scipy.stats.bootstrap`` (``method="percentile"``, which stays defined when every value is
    the same, unlike BCa). When every value is the same, every resample has the same mean and the
    interval has zero width: that says nothing about the uncertainty. For values that are all 0 or
    1 (a hit or a miss per question) use :func:`wilson_ci`, or :func:`mean_interval`, which picks.

    Args:
        values: one metric value per question (floats).
        n_resamples: number of bootstrap resamples.
        confidence: the interval's coverage, e.g. 0.95.
        seed: the random seed; the same seed gives the same interval.

    Returns:
        ``(mean, low, high)``.

    Raises:
        ValueError: fewer than two values, a value that is not a finite number, ``confidence``
            outside (0, 1) or ``n_resamples`` < 1.

    Taught in: notebook 08_beyond_the_averages.
    """
    from scipy import stats

    values = _check_values(values, "values")
    if len(values) < 2:
        raise ValueError(f"need at least 2 values for a bootstrap interval, got {len(values)}")
    confidence = check_probability(confidence, "confidence")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if np.all(values == values[0]):
        return float(values[0]), float(values[0]), float(values[0])
    result = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", rng=np.random.default_rng(seed),
    )
    return float(values.mean()), float(result.confidence_interval.low), float(result.confidence_interval.high)


def wilson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """The share of successes and its Wilson score interval (Wilson 1927).

    For a binary value per question (a hit within k or not): ``successes`` of ``n`` questions. Unlike
    a bootstrap, the Wilson interval does not collapse to a point at 0 or n successes: 15 of 15 gives
    about [0.80, 1.00] at 95%. Computed by ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``.

    Args:
        successes: how many questions score 1, an integer in [0, n].
        n: how many questions, an integer >= 1.
        confidence: the interval's coverage, e.g. 0.95.

    Returns:
        ``(share, low, high)``, each in [0, 1].

    Raises:
        ValueError: ``n`` is not an integer >= 1, ``successes`` is not an integer in [0, n], or
            ``confidence`` is outside (0, 1).

    Taught in: notebook 08_beyond_the_averages (through interval_table and slice_intervals, by way of mean_interval).
    """
    from scipy import stats

    n = check_positive_int(n, "n")
    if isinstance(successes, bool) or not isinstance(successes, (int, np.integer)) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer between 0 and n = {n}, got {successes!r}")
    interval = stats.binomtest(int(successes), n).proportion_ci(check_probability(confidence, "confidence"), method="wilson")
    return successes / n, float(interval.low), float(interval.high)


def mean_interval(values: Sequence[float], confidence: float = 0.95, n_resamples: int = N_RESAMPLES, seed: int = SEED, method: str | None = None) -> dict:
    """The mean of per-question values with the interval that suits them.

    Values that are all 0 or 1 (a hit or a miss per question) get the Wilson score interval
    (:func:`wilson_ci`); any other values the percentile bootstrap (:func:`bootstrap_ci`).
    ``method`` forces one, e.g. to give every retriever of a table the same kind of interval.

    Args:
        values: one metric value per question (floats).
        confidence: the interval's coverage, e.g. 0.95.
        n_resamples, seed: passed to :func:`bootstrap_ci`.
        method: ``"Wilson score"``, ``"percentile bootstrap"`` or ``None`` (pick from the values).

    Returns:
        ``{"mean", "low", "high", "interval", "zero width"}``: ``interval`` names the method;
        ``zero width`` is True when low equals high, which happens only for a bootstrap over
        identical values and tells nothing about the uncertainty.

    Raises:
        ValueError: an unknown ``method``, ``"Wilson score"`` for values other than 0 and 1, or
            as :func:`bootstrap_ci` and :func:`wilson_ci`.

    Taught in: notebook 08_beyond_the_averages (through interval_table and slice_intervals).
    """
    values = _check_values(values, "values")
    if method is None:
        method = WILSON if _is_binary(values) else BOOTSTRAP
    if method == WILSON:
        if not _is_binary(values):
            raise ValueError(f"a {WILSON} interval needs values of 0 or 1, got {sorted(set(values.tolist()) - {0.0, 1.0})[:3]}")
        mean, low, high = wilson_ci(int(values.sum()), len(values), confidence)
    elif method == BOOTSTRAP:
        mean, low, high = bootstrap_ci(values, n_resamples, confidence, seed)
    else:
        raise ValueError(f"method must be {WILSON!r}, {BOOTSTRAP!r} or None, got {method!r}")
    return {"mean": mean, "low": low, "high": high, "interval": method, "zero width": low == high}


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Exact two-sided sign test on paired per-question values (ties dropped).

    Counts the questions where ``a`` is higher (wins) and lower (losses) and asks how likely a
    split at least that uneven is if each were a fair coin flip: ``scipy.stats.binomtest``
    (the sign test; see Smucker, Allan & Carterette 2007 on its use in IR). On values that are all
    0 or 1 it is McNemar's exact test (:func:`mcnemar_test`).

    Args:
        a, b: the two retrievers' per-question values, in the same question order (equal-length
            sequences of finite floats).

    Returns:
        ``{"wins": int, "losses": int, "ties": int, "p": float}`` (p = 1.0 when every pair ties).

    Raises:
        ValueError: the two sequences differ in length, are empty, or hold a value that is not a
            finite number.

    Taught in: notebook 08_beyond_the_averages.
    """
    from scipy import stats

    a, b = _check_pairs(a, b)
    wins, losses = int((a > b).sum()), int((a < b).sum())
    p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    return {"wins": wins, "losses": losses, "ties": len(a) - wins - losses, "p": float(p)}


def mcnemar_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """McNemar's exact test on paired binary values: is A's hit rate different from B's?

    Only the *discordant* questions count: ``wins`` where A hits and B misses, ``losses`` the other
    way round. Under the null hypothesis each discordant question is a fair coin flip, so the
    two-sided p-value is the exact binomial test of ``wins`` out of ``wins + losses`` at 1/2
    (McNemar 1947; the exact form is the sign test on the discordant pairs), computed by
    ``scipy.stats.binomtest``.

    Args:
        a, b: one value per question for each retriever, each 0 or 1 (e.g. success@k, or recall@k
            when every question has one relevant chunk). Lists are paired by position, two pandas
            Series by question (index).

    Returns:
        ``{"test", "method", "difference", "wins", "ties", "losses", "p", "se"}``: the test's name
        ("McNemar's exact test"), how it was computed, the mean difference A − B, the counts, the
        p-value (1.0 when no question is discordant) and its Monte Carlo error (0.0: exact).

    Raises:
        ValueError: a value other than 0 or 1 (names ``a`` or ``b``), or the checks of :func:`sign_test`.

    Taught in: notebook 08_beyond_the_averages.
    """
    a, b = _check_pairs(a, b)
    for name, values in (("a", a), ("b", b)):
        if not _is_binary(values):
            other = sorted(set(values.tolist()) - {0.0, 1.0})
            raise ValueError(f"McNemar's test needs 0 or 1 per question; {name} holds {other[:3]}")
    counts = sign_test(a, b)
    return {
        "test": MCNEMAR, "method": f"exact binomial on {counts['wins'] + counts['losses']} discordant questions",
        "difference": float(np.mean(a - b)), "wins": counts["wins"], "ties": counts["ties"],
        "losses": counts["losses"], "p": counts["p"], "se": 0.0,
    }


def permutation_test(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED, exact_limit: int = EXACT_LIMIT) -> dict:
    """Two-sided paired permutation test of the mean difference A − B (sign flips).

    Under the null hypothesis the two retrievers are exchangeable on every question, so each
    per-question difference is as likely to have the opposite sign. The p-value is the share of
    sign flips whose mean difference is at least as far from 0 as the observed one. A question
    whose difference is 0 is unchanged by a flip, so only the m non-zero differences are flipped:

    - when 2^m ≤ ``exact_limit`` (or ≤ ``n_resamples``) every one of the 2^m flips is enumerated:
      the p-value is exact;
    - otherwise ``n_resamples`` random flips (seed ``seed``) give p = (b + 1) / (N + 1), where b
      counts the random flips at least as extreme: never 0, and valid as a p-value (Phipson &
      Smyth 2010). Its Monte Carlo error is :func:`monte_carlo_error` of b and N, never 0 (also
      at p = 1, when every flip is as extreme).

    Computed with ``scipy.stats.permutation_test`` (``permutation_type="samples"`` on the
    differences flips signs; the statistic is |mean|, so ``alternative="greater"`` is two-sided).
    On paired tests in IR evaluation: Smucker, Allan & Carterette (2007).

    Args:
        a, b: one value per question for each retriever; lists are paired by position, two pandas
            Series by question (index).
        n_resamples: random flips when the test cannot enumerate (an integer >= 1).
        seed: the random seed; the same seed gives the same p-value.
        exact_limit: the largest number of flips that is enumerated (an integer >= 1).

    Returns:
        ``{"test", "method", "difference", "wins", "ties", "losses", "p", "se"}``: the test's name
        ("paired permutation test"), how it was computed ("exact, 2^m flips" or "Monte Carlo,
        N flips, ± se", the error rounded up to four decimals), the mean difference A − B, how
        many questions A scores higher, the same, lower, the p-value in (0, 1] and its Monte Carlo
        standard error (0.0 when exact, above 0 otherwise).

    Raises:
        ValueError: the inputs are empty, differ in length or hold a non-finite value;
            ``n_resamples`` or ``exact_limit`` is not an integer >= 1.

    Taught in: notebook 08_beyond_the_averages (through paired_comparisons, by way of paired_test).
    """
    a, b = _check_pairs(a, b)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    exact_limit = check_positive_int(exact_limit, "exact_limit")
    differences = a - b
    nonzero = differences[differences != 0]
    m = len(nonzero)
    result = {
        "test": PERMUTATION, "difference": float(differences.mean()), "wins": int((differences > 0).sum()),
        "ties": len(differences) - m, "losses": int((differences < 0).sum()),
    }
    if m == 0:
        return {**result, "method": "no question differs", "p": 1.0, "se": 0.0}
    if m == 1:  # SciPy needs two values; the two flips of one difference are equally extreme
        return {**result, "method": "exact, 2^1 flips", "p": 1.0, "se": 0.0}
    exact = 2**m <= max(exact_limit, n_resamples)  # SciPy also enumerates when n_resamples covers every flip
    p = _flip_p(nonzero.tobytes(), exact, n_resamples, seed)
    if exact:
        return {**result, "method": f"exact, 2^{m} flips", "p": p, "se": 0.0}
    extreme = round(p * (n_resamples + 1)) - 1  # b: SciPy's Monte Carlo p is (b + 1) / (N + 1)
    se = monte_carlo_error(extreme, n_resamples)
    return {**result, "method": f"Monte Carlo, {n_resamples:,} flips, ± {_rounded_up(se)}", "p": p, "se": se}


def monte_carlo_error(extreme: int, n_resamples: int) -> float:
    """The Monte Carlo standard error of a permutation p-value estimated from ``n_resamples`` random flips.

    b of the N random flips were at least as extreme as the observed difference. The binomial
    standard error √(p (1 − p) / N) is 0 at p = 0 and p = 1, which would claim an exact p-value
    after b = N (every flip as extreme, e.g. when the observed mean difference is 0) or b = 0. So
    p is taken as (b + 1) / (N + 2), the add-one (Laplace) estimate, which is never 0 or 1: at b = N
    or b = 0 the error is about 1 / N, the resolution N flips give; elsewhere it is close to the
    plug-in error √(p (1 − p) / N) with p = (b + 1) / (N + 1).

    Args:
        extreme: b, the random flips at least as extreme, an integer in [0, N].
        n_resamples: N, the random flips, an integer >= 1.

    Returns:
        √(p̃ (1 − p̃) / N) with p̃ = (b + 1) / (N + 2), a float > 0.

    Raises:
        ValueError: ``n_resamples`` is not an integer >= 1, or ``extreme`` is not an integer in [0, N].

    Taught in: notebook 08_beyond_the_averages (through paired_comparisons, by way of permutation_test).
    """
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if isinstance(extreme, bool) or not isinstance(extreme, (int, np.integer)) or not 0 <= extreme <= n_resamples:
        raise ValueError(f"extreme must be an integer between 0 and n_resamples = {n_resamples}, got {extreme!r}")
    p = (extreme + 1) / (n_resamples + 2)
    return math.sqrt(p * (1 - p) / n_resamples)


def paired_test(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """The paired test that suits the values: McNemar's exact test when every value is 0 or 1, else the permutation test.

    On values of 0 and 1 the two agree: flipping the signs of m differences of ±1 is m fair coin
    flips, so the exact permutation p-value is McNemar's. The name says what the values are.

    Args:
        a, b: the two retrievers' per-question values, in the same question order (equal-length
            sequences of finite floats).
        n_resamples, seed: as for :func:`permutation_test` (unused for 0/1 values).

    Returns:
        The result of :func:`mcnemar_test` or :func:`permutation_test` (the same keys; ``test`` says which).

    Raises:
        ValueError: as :func:`permutation_test`.

    Taught in: notebook 08_beyond_the_averages (through paired_comparisons and slice_comparisons).
    """
    a, b = _check_pairs(a, b)
    if _is_binary(a) and _is_binary(b):
        return mcnemar_test(a, b)
    return permutation_test(a, b, n_resamples, seed)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values for a family of tests (Holm 1979, step-down).

    Sort the m p-values; the i-th smallest (i = 1..m) becomes max over j ≤ i of (m − j + 1) × p_(j),
    capped at 1. A verdict "different at family-wise level α" for every test whose adjusted p is
    below α keeps the chance of any false verdict in the family at most α, and rejects at least as
    much as Bonferroni (m × p). Computed by ``statsmodels.stats.multitest.multipletests(method="holm")``.

    Args:
        p_values: the raw p-values of every test in the family, each in [0, 1] (a list or array).

    Returns:
        The adjusted p-values, a float array in the input's order.

    Raises:
        ValueError: an empty family, or a p-value that is not a number in [0, 1].

    Taught in: notebook 08_beyond_the_averages (through paired_comparisons and slice_comparisons).
    """
    from statsmodels.stats.multitest import multipletests

    p_values = _check_values(p_values, "p_values")
    if not len(p_values):
        raise ValueError("p_values is empty: a family needs at least one test")
    if ((p_values < 0) | (p_values > 1)).any():
        raise ValueError(f"p_values must lie in [0, 1], got {p_values[(p_values < 0) | (p_values > 1)][:3].tolist()}")
    return multipletests(p_values, method="holm")[1]


def _absolute_mean(x: np.ndarray, axis: int) -> np.ndarray:
    """|mean| along ``axis``: the two-sided statistic of the sign-flip test."""
    return np.abs(np.mean(x, axis=axis))


@lru_cache(maxsize=1024)
def _flip_p(nonzero: bytes, exact: bool, n_resamples: int, seed: int) -> float:
    """SciPy's sign-flip p-value of the non-zero differences (float64 bytes, in question order).

    Remembered for the process: a notebook tests the same pair in several tables (a family and its
    quotes), and enumerating 2^m flips takes SciPy up to half a second; the same differences,
    ``n_resamples`` and seed give the same p-value, so a remembered one is the one it would compute.
    """
    from scipy import stats

    test = stats.permutation_test(
        (np.frombuffer(nonzero),), _absolute_mean, permutation_type="samples", vectorized=True,
        n_resamples=np.inf if exact else n_resamples, alternative="greater", rng=np.random.default_rng(seed),
    )
    return float(test.pvalue)


def _rounded_up(se: float) -> str:
    """A Monte Carlo error in four decimals, rounded up: never printed as "0.0000", never below what it is."""
    return f"{math.ceil(se * 10_000 - 1e-9) / 10_000:.4f}"


def _is_binary(values: np.ndarray) -> bool:
    """True when every value is 0 or 1."""
    return bool(np.isin(values, (0.0, 1.0)).all())


def _check_values(values, name: str) -> np.ndarray:
    """A 1-D float array of finite values, or ValueError naming ``name``."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers") from None
    if array.ndim != 1 or not np.isfinite(array).all():
        raise ValueError(f"{name} must be a flat list of finite numbers (one per question), got {values!r:.80}")
    return array


def _check_pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Paired per-question values: two pandas Series are matched by question (index), lists by position."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        if set(a.index) != set(b.index):
            raise ValueError("the two Series hold different questions (index values)")
        b = b.reindex(a.index)
    a, b = _check_values(a, "a"), _check_values(b, "b")
    if len(a) != len(b) or not len(a):
        raise ValueError(f"paired values must have the same, non-zero length, got {len(a)} and {len(b)}")
    return a, b
