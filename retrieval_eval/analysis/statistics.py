"""Uncertainty on a small golden set: intervals, paired tests, Holm's correction, power, and chance.
Everything works on per-question values: the question is what was sampled, so intervals resample questions
and tests flip or count them, always paired across runs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_list, check_probability, finite_number

N_RESAMPLES = 10_000  # bootstrap resamples, and random sign flips when a permutation test cannot be exact
SEED = 20091  # fixed: two runs print identical intervals and p-values
BATCH = 1000  # resamples SciPy draws at once: the same values, in bounded memory (5,000 questions: not GBs)
EXACT_LIMIT = 10**6  # a permutation test is exact when its null distribution needs at most this many sums
ALPHA = 0.05  # the family-wise error rate of the verdicts
POWER = 0.8  # the chance of detecting a real difference planners usually aim for
WILSON, BOOTSTRAP = "Wilson score", "percentile bootstrap"
MCNEMAR, PERMUTATION = "McNemar's exact test", "paired permutation test"


def _values(values, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers") from None
    if array.ndim != 1 or not np.isfinite(array).all():
        raise ValueError(f"{name} must be a flat list of finite numbers (one per question), got {values!r:.80}")
    return array


def _pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Paired values: two Series matched by question (index), lists by position."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        if set(a.index) != set(b.index):
            raise ValueError("the two Series hold different questions (index values)")
        b = b.reindex(a.index)
    a, b = _values(a, "a"), _values(b, "b")
    if len(a) != len(b) or not len(a):
        raise ValueError(f"paired values must have the same, non-zero length, got {len(a)} and {len(b)}")
    return a, b


def _binary(values: np.ndarray) -> bool:
    return bool(np.isin(values, (0.0, 1.0)).all())


def bootstrap_ci(values: Sequence[float], n_resamples: int = N_RESAMPLES, confidence: float = 0.95,
                 seed: int = SEED) -> tuple[float, float, float]:
    """``(mean, low, high)``: the percentile-bootstrap interval over questions (Efron & Tibshirani 1993).
    Identical values give a zero-width interval, which says nothing."""
    from scipy import stats
    values = _values(values, "values")
    if len(values) < 2:
        raise ValueError(f"need at least 2 values for a bootstrap interval, got {len(values)}")
    if np.all(values == values[0]):
        return float(values[0]), float(values[0]), float(values[0])
    result = stats.bootstrap((values,), np.mean, n_resamples=check_k(n_resamples, "n_resamples"),
                             confidence_level=check_probability(confidence, "confidence"), method="percentile",
                             rng=np.random.default_rng(seed), batch=BATCH)
    return float(values.mean()), float(result.confidence_interval.low), float(result.confidence_interval.high)


def wilson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """A share of successes and its Wilson score interval (Wilson 1927): ``(share, low, high)``.
    Unlike a bootstrap it does not collapse at 0 or n successes (15 of 15: about [0.80, 1.00])."""
    from scipy import stats
    n = check_k(n, "n")
    if isinstance(successes, bool) or not isinstance(successes, (int, np.integer)) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer between 0 and n = {n}, got {successes!r}")
    interval = stats.binomtest(int(successes), n).proportion_ci(check_probability(confidence, "confidence"), method="wilson")
    return successes / n, float(interval.low), float(interval.high)


def mean_interval(values: Sequence[float], confidence: float = 0.95, method: str | None = None) -> dict:
    """The mean with the interval that suits the values: Wilson when all are 0 or 1, else the percentile bootstrap."""
    values = _values(values, "values")
    method = method or (WILSON if _binary(values) else BOOTSTRAP)
    if method == WILSON:
        if not _binary(values):
            raise ValueError(f"a {WILSON} interval needs values of 0 or 1, got {sorted(set(values.tolist()) - {0.0, 1.0})[:3]}")
        mean, low, high = wilson_ci(int(values.sum()), len(values), confidence)
    elif method == BOOTSTRAP:
        mean, low, high = bootstrap_ci(values, confidence=confidence)
    else:
        raise ValueError(f"method must be {WILSON!r}, {BOOTSTRAP!r} or None, got {method!r}")
    return {"mean": mean, "low": low, "high": high, "interval": method}


def mcnemar_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """McNemar's exact test on paired 0/1 values (McNemar 1947): the two-sided binomial test of the wins among
    the questions that differ. ``mid_p`` (half the observed split's probability left out) is less conservative."""
    from scipy import stats
    a, b = _pairs(a, b)
    for name, values in (("a", a), ("b", b)):
        if not _binary(values):
            raise ValueError(f"McNemar's test needs 0 or 1 per question; {name} holds {sorted(set(values.tolist()) - {0.0, 1.0})[:3]}")
    wins, losses = int((a > b).sum()), int((a < b).sum())
    m = wins + losses
    p = float(stats.binomtest(wins, m, 0.5).pvalue) if m else 1.0
    mid_p = min(1.0, 2 * stats.binom.cdf(min(wins, losses), m, 0.5) - stats.binom.pmf(wins, m, 0.5)) if m else 1.0
    return {"test": MCNEMAR, "method": f"exact binomial on {m} questions that differ", "difference": float(np.mean(a - b)),
            "wins": wins, "ties": len(a) - m, "losses": losses, "p": p, "mid_p": float(mid_p), "se": 0.0}


@lru_cache(maxsize=1024)
def _null(gaps: tuple[tuple[float, int], ...], limit: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact null distribution of |Σ ± d| when each gap d (``(size, how many)``) takes either sign with chance
    1/2: its values and their chances, built one size at a time (a binomial each), equal sums merged; ``None`` when
    the sign counts per size combine in more than ``limit`` ways (checked first: no work is wasted). Remembered: pairs
    with the same gaps share one distribution."""
    from scipy import stats
    if math.prod(count + 1 for _, count in gaps) > limit:
        return None
    sums, chances = np.zeros(1), np.ones(1)
    for size, count in gaps:
        plus = np.arange(count + 1)
        sums = (sums[:, None] + size * (2 * plus - count)).ravel()
        chances = (chances[:, None] * stats.binom.pmf(plus, count, 0.5)).ravel()
        sums, where = np.unique(np.round(sums, 9), return_inverse=True)
        chances = np.bincount(where, chances)
    return np.abs(sums), chances


@lru_cache(maxsize=1024)
def _flip_p(nonzero: bytes, n_resamples: int, seed: int) -> float:
    """SciPy's random sign-flip p-value (remembered: notebooks test the same pair in several tables)."""
    from scipy import stats
    return float(stats.permutation_test(
        (np.frombuffer(nonzero),), lambda x, axis: np.abs(np.mean(x, axis=axis)), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, alternative="greater", rng=np.random.default_rng(seed),
        batch=BATCH).pvalue)


def permutation_test(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED,
                     exact_limit: int = EXACT_LIMIT) -> dict:
    """Two-sided paired permutation test of the mean difference (sign flips; Smucker, Allan & Carterette 2007).
    Only the m non-zero differences are flipped. Exact over all 2^m flips when the counts of + signs per size of
    difference combine in at most ``exact_limit`` ways (on a golden set's metrics at k, whose gaps take few sizes:
    no seed matters), else ``n_resamples`` random flips, p = (b + 1) / (N + 1) with its Monte Carlo error ``se``. A mean
    difference of exactly 0 has p = 1."""
    a, b = _pairs(a, b)
    exact_limit, n_resamples = check_k(exact_limit, "exact_limit"), check_k(n_resamples, "n_resamples")
    differences = a - b
    nonzero = differences[differences != 0]
    m = len(nonzero)
    result = {"test": PERMUTATION, "difference": float(differences.mean()), "wins": int((differences > 0).sum()),
              "ties": len(differences) - m, "losses": int((differences < 0).sum()), "mid_p": math.nan}
    zero_mean = abs(nonzero.sum()) <= 1e-9 * np.abs(nonzero).sum()  # 1/3 − 1/6 − 1/6 is not 0.0 in floating point
    if m < 2 or zero_mean:
        why = "no question differs" if m == 0 else "the mean difference is 0" if zero_mean else "exact, 2^1 flips"
        return {**result, "method": why, "p": 1.0, "se": 0.0}
    null = _null(tuple(zip(*np.unique(np.round(np.abs(nonzero), 12), return_counts=True))), max(exact_limit, 2))
    if null is not None:
        sums, chances = null
        p = float(min(1.0, chances[sums >= abs(nonzero.sum()) - 1e-7].sum()))
        return {**result, "method": f"exact, 2^{m} flips", "p": p, "se": 0.0}
    p = _flip_p(nonzero.tobytes(), n_resamples, seed)
    extreme = round(p * (n_resamples + 1)) - 1
    se = math.sqrt((extreme + 1) / (n_resamples + 2) * (1 - (extreme + 1) / (n_resamples + 2)) / n_resamples)
    return {**result, "method": f"Monte Carlo, {n_resamples:,} flips, ± {math.ceil(se * 1e4 - 1e-9) / 1e4:.4f}", "p": p, "se": se}


def paired_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """McNemar's exact test when every value is 0 or 1 (there it equals the exact permutation test), else the
    permutation test."""
    a, b = _pairs(a, b)
    return mcnemar_test(a, b) if _binary(a) and _binary(b) else permutation_test(a, b)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values for a family of tests (Holm 1979): a verdict "different" where
    the adjusted p is below α keeps the chance of any false verdict in the family at most α."""
    from statsmodels.stats.multitest import multipletests
    p_values = _values(p_values, "p_values")
    if not len(p_values):
        raise ValueError("p_values is empty: a family needs at least one test")
    if ((p_values < 0) | (p_values > 1)).any():
        raise ValueError(f"p_values must lie in [0, 1], got {p_values[(p_values < 0) | (p_values > 1)][:3].tolist()}")
    return multipletests(p_values, method="holm")[1]


def any_false_alarm(m: int, alpha: float = ALPHA) -> float:
    """The chance that at least one of m *independent* tests at level α rejects when nothing differs:
    1 − (1 − α)^m. Correlated tests (the same questions, several metrics) make it smaller."""
    return 1 - (1 - check_probability(alpha, "alpha")) ** check_k(m, "m")


# --- planning: what n questions can show --------------------------------------------------------


def fewest_discordant(alpha: float = ALPHA) -> int:
    """The fewest questions that must differ, all one way, before the exact test reaches α: p = 2 × 0.5^d
    (6 at 0.05, 9 at 0.05 / 9)."""
    alpha = check_probability(alpha, "alpha")
    return next(d for d in range(1, 10_000) if min(1.0, 2 * 0.5**d) <= alpha)


def best_case_detectable_difference(n_questions: int, alpha: float = ALPHA) -> float:
    """The smallest difference in hit rate n questions could ever show: :func:`fewest_discordant` / n (NaN when n is too small)."""
    n, d = check_k(n_questions, "n_questions"), fewest_discordant(alpha)
    return d / n if d <= n else math.nan


def _rejects(m: int, alpha: float, mid_p: bool) -> np.ndarray:
    """For each number of wins w in 0..m among m differing questions: does the test reject at α?"""
    from scipy import stats
    w = np.arange(m + 1)
    lower = stats.binom.cdf(np.minimum(w, m - w), m, 0.5)
    p = np.minimum(1.0, 2 * lower - (stats.binom.pmf(w, m, 0.5) if mid_p else 0))
    return p <= alpha


def _shares(p10, p01) -> None:
    for name, share in (("p10", p10), ("p01", p01)):
        if not finite_number(share) or not 0 <= share <= 1:
            raise ValueError(f"{name} must be a share in [0, 1], got {share!r}")
    if p10 + p01 > 1:
        raise ValueError(f"p10 + p01 is the share of questions that differ and cannot pass 1, got {p10} + {p01}")


def _called(m: int, alpha: float, share: float, mid_p: bool) -> float:
    """The chance the test calls a difference when m questions differ, each won by A with chance ``share``."""
    from scipy import stats
    return float(stats.binom.pmf(np.arange(m + 1), m, share)[_rejects(m, alpha, mid_p)].sum())


def mcnemar_power(n: int, p10: float, p01: float, alpha: float = ALPHA, mid_p: bool = False) -> float:
    """The exact chance that McNemar's test (or its mid-p version) calls a difference on n questions when a share
    p10 are found by A only and p01 by B only: summed over every number of differing questions and every split."""
    from scipy import stats
    n, alpha = check_k(n, "n"), check_probability(alpha, "alpha")
    _shares(p10, p01)
    if p10 + p01 == 0:
        return 0.0
    called = [_called(m, alpha, p10 / (p10 + p01), mid_p) for m in range(n + 1)]
    return float(stats.binom.pmf(np.arange(n + 1), n, p10 + p01) @ called)


def questions_needed(p10: float, p01: float, alpha: float = ALPHA, power: float = POWER, limit: int = 5000) -> float:
    """The fewest questions at which McNemar's exact test reaches ``power``, exactly; ``math.inf`` when p10 == p01
    or ``limit`` questions do not suffice."""
    from scipy import stats
    power, _ = check_probability(power, "power"), check_probability(alpha, "alpha")
    _shares(p10, p01)
    if p10 == p01:
        return math.inf
    called = [_called(0, alpha, p10 / (p10 + p01), False)]
    for n in range(1, limit + 1):  # upward, one n at a time: exact power saw-tooths, so a bisection can overshoot
        called.append(_called(n, alpha, p10 / (p10 + p01), False))
        if stats.binom.pmf(np.arange(n + 1), n, p10 + p01) @ called >= power:
            return n
    return math.inf


# --- chance: a positive control, and two slices ---------------------------------------------------


def _count(value, most: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and 0 <= value <= most


def chance_found(n_relevant: Sequence[int], n_chunks: int, k: int) -> np.ndarray:
    """Per question, the chance that a uniformly random order of n chunks puts one of its R relevant
    chunks in the top k: 1 − C(n − R, k) / C(n, k)."""
    n, k = check_k(n_chunks, "n_chunks"), check_k(k)
    bad = [r for r in check_list(n_relevant, "n_relevant", "counts (one per question)") if not _count(r, n)]
    if bad:
        raise ValueError(f"n_relevant must be whole numbers from 0 to n_chunks = {n}, got {bad[:3]}")
    return np.array([1 - math.comb(n - r, min(k, n)) / math.comb(n, min(k, n)) for r in n_relevant])


def beats_chance(found: int, chances: Sequence[float]) -> float:
    """The exact chance that a random order finds at least ``found`` questions, each question found with
    its own chance (a Poisson-binomial tail, by convolution): the p-value of "better than random"."""
    chances = _values(chances, "chances")
    if not _count(found, len(chances)) or ((chances < 0) | (chances > 1)).any():
        raise ValueError(f"found must be a whole number from 0 to {len(chances)} and every chance in [0, 1], "
                         f"got {found!r} and {chances[(chances < 0) | (chances > 1)][:3].tolist()}")
    distribution = np.array([1.0])
    for p in chances:
        distribution = np.convolve(distribution, [1 - p, p])
    return float(min(1.0, distribution[int(found):].sum()))


def two_slices(found_a: int, n_a: int, found_b: int, n_b: int) -> float:
    """Fisher's exact test (two-sided) of two shares from different questions, e.g. two slices."""
    from scipy import stats
    if not (_count(found_a, check_k(n_a, "n_a")) and _count(found_b, check_k(n_b, "n_b"))):
        raise ValueError(f"found_a and found_b must be whole numbers from 0 to n_a and n_b, got {found_a!r} of {n_a}, "
                         f"{found_b!r} of {n_b}")
    return float(stats.fisher_exact([[found_a, n_a - found_a], [found_b, n_b - found_b]]).pvalue)
