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
BATCH = 1000  # resamples SciPy draws at once, fewer when n is large: BATCH_CELLS values at most (memory linear in n)
BATCH_CELLS = 10**7  # 80 MB of float64
EXACT_LIMIT = 10**6  # a permutation test is exact when its null distribution needs at most this many sums
SAMPLED_CELLS = 2 * 10**8  # resamples × questions worth drawing (10,000 of 20,000); beyond, the normal approximation
BERRY_ESSEEN = 0.56  # Shevtsova (2010): |F − Φ| <= 0.56 Σ E|X|³ / (Σ Var X)^(3/2), independent X of any distributions
CORRECTION = 1.0  # the score bound's continuity correction, in questions (its size: margin_test)
ALPHA = 0.05  # the family-wise error rate of the verdicts
POWER = 0.8  # the chance of detecting a real difference planners usually aim for
WILSON, BOOTSTRAP, NORMAL = "Wilson score", "percentile bootstrap", "normal (central limit)"
MCNEMAR, PERMUTATION, SCORE = "McNemar's exact test", "paired permutation test", "Tango's score test"


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


def _batch(n: int) -> int:
    return min(BATCH, max(1, BATCH_CELLS // n))


def _sampled(n: int, n_resamples: int = N_RESAMPLES) -> bool:
    """Whether drawing ``n_resamples`` resamples of n values is worth it (:data:`SAMPLED_CELLS`): else the normal."""
    return n * n_resamples <= SAMPLED_CELLS


def bootstrap_ci(values: Sequence[float], n_resamples: int = N_RESAMPLES, confidence: float = 0.95,
                 seed: int = SEED) -> tuple[float, float, float]:
    """``(mean, low, high)``: the percentile-bootstrap interval over questions (Efron & Tibshirani 1993), in memory
    linear in n. Past :data:`SAMPLED_CELLS` (20,000 questions at 10,000 resamples) the normal interval, mean ± z·s/√n,
    which the percentile interval tends to as n grows (a test compares them there). Identical values give a
    zero-width interval, which says nothing."""
    from scipy import stats
    values = _values(values, "values")
    n_resamples, confidence = check_k(n_resamples, "n_resamples"), check_probability(confidence, "confidence")
    if len(values) < 2:
        raise ValueError(f"need at least 2 values for a bootstrap interval, got {len(values)}")
    mean = float(values.mean())
    if np.all(values == values[0]):
        return mean, mean, mean
    if not _sampled(len(values), n_resamples):
        half = float(stats.norm.ppf((1 + confidence) / 2) * values.std(ddof=1) / math.sqrt(len(values)))
        return mean, mean - half, mean + half
    result = stats.bootstrap((values,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                             method="percentile", rng=np.random.default_rng(seed), batch=_batch(len(values)))
    return mean, float(result.confidence_interval.low), float(result.confidence_interval.high)


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
    """The mean with the interval that suits the values: Wilson when all are 0 or 1, else the percentile bootstrap
    (the normal interval past 20,000 questions: :func:`bootstrap_ci`)."""
    values = _values(values, "values")
    method = method or (WILSON if _binary(values) else BOOTSTRAP)
    if method == WILSON:
        if not _binary(values):
            raise ValueError(f"a {WILSON} interval needs values of 0 or 1, got {sorted(set(values.tolist()) - {0.0, 1.0})[:3]}")
        mean, low, high = wilson_ci(int(values.sum()), len(values), confidence)
    elif method == BOOTSTRAP:
        mean, low, high = bootstrap_ci(values, confidence=confidence)
        method = BOOTSTRAP if _sampled(len(values)) else NORMAL
    else:
        raise ValueError(f"method must be {WILSON!r}, {BOOTSTRAP!r} or None, got {method!r}")
    return {"mean": mean, "low": low, "high": high, "interval": method}


def mcnemar_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """McNemar's exact test on paired 0/1 values (McNemar 1947): the two-sided binomial test of the wins among
    the questions that differ. ``mid_p`` (half the observed split's probability left out) is less conservative."""
    a, b = _pairs(a, b)
    for name, values in (("a", a), ("b", b)):
        if not _binary(values):
            raise ValueError(f"McNemar's test needs 0 or 1 per question; {name} holds {sorted(set(values.tolist()) - {0.0, 1.0})[:3]}")
    wins, losses = int((a > b).sum()), int((a < b).sum())
    m = wins + losses
    p, mid_p = _sign_p(wins, losses)
    return {"test": MCNEMAR, "method": f"exact binomial on {m:,} questions that differ", "difference": float(np.mean(a - b)),
            "wins": wins, "ties": len(a) - m, "losses": losses, "p": p, "mid_p": mid_p, "error": 0.0}


def _sign_p(wins: int, losses: int) -> tuple[float, float]:
    """The exact two-sided sign test (binomial, chance 1/2) and its mid-p, from SciPy's binomial distribution function
    (the regularised incomplete beta): exact at any number of differing questions (never 2^m in fixed-width integers).
    scipy.special, not scipy.stats, on the gate's path: it loads in a sixth of the time."""
    from scipy import special
    m, fewer = wins + losses, min(wins, losses)
    lower = float(special.bdtr(fewer, m, 0.5))
    below = float(special.bdtr(fewer - 1, m, 0.5)) if fewer else 0.0
    return min(1.0, 2 * lower), min(1.0, lower + below)


@lru_cache(maxsize=128)
def _null(gaps: tuple[tuple[float, int], ...], limit: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact null distribution of |Σ ± d| when each gap d (``(size, how many)``) takes either sign with chance
    1/2: its values and their chances, built one size at a time (a binomial each), equal sums merged; ``None`` when
    the sign counts per size combine in more than ``limit`` ways (checked first: no work is wasted). Remembered: pairs
    with the same gaps share one distribution."""
    from scipy import special
    if math.prod(int(count) + 1 for _, count in gaps) > limit:
        return None
    sums, chances = np.zeros(1), np.ones(1)
    for size, count in gaps:
        plus = np.arange(count + 1)
        sums = (sums[:, None] + size * (2 * plus - count)).ravel()
        binomial = np.exp(special.gammaln(count + 1) - special.gammaln(plus + 1) - special.gammaln(count - plus + 1)
                          - count * math.log(2))  # the binomial's chances, in log space
        chances = (chances[:, None] * binomial).ravel()
        sums, where = np.unique(np.round(sums, 9), return_inverse=True)
        chances = np.bincount(where, chances)
    return np.abs(sums), chances


@lru_cache(maxsize=128)
def _flip_p(nonzero: bytes, n_resamples: int, seed: int) -> float:
    """SciPy's random sign-flip p-value (remembered: notebooks test the same pair in several tables)."""
    from scipy import stats
    values = np.frombuffer(nonzero)
    return float(stats.permutation_test(
        (values,), lambda x, axis: np.abs(np.mean(x, axis=axis)), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, alternative="greater", rng=np.random.default_rng(seed),
        batch=_batch(len(values))).pvalue)


def permutation_test(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED,
                     exact_limit: int = EXACT_LIMIT) -> dict:
    """Two-sided paired permutation test of the mean difference (sign flips; Smucker, Allan & Carterette 2007).
    Only the m non-zero differences are flipped. Which p, by this rule, with its stated ``error``:

    - exact over all 2^m flips when the differences take one size (the sign test, SciPy's binomial: any m), or when the
      counts of + signs per size combine in at most ``exact_limit`` ways (a golden set's metrics at k take few sizes):
      no seed matters, ``error`` 0;
    - else ``n_resamples`` random flips while they cost at most :data:`SAMPLED_CELLS` values (20,000 differing
      questions at 10,000 flips): p = (b + 1) / (N + 1), ``error`` its Monte Carlo standard error;
    - else the normal approximation of the sign-flip sum (mean 0, variance Σd²), ``error`` its Berry–Esseen bound
      2 × 0.56 Σ|d|³ / (Σd²)^(3/2) on the two-sided p.

    A mean difference of exactly 0 has p = 1."""
    from scipy import special
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
        return {**result, "method": why, "p": 1.0, "error": 0.0}
    sizes, counts = np.unique(np.round(np.abs(nonzero), 12), return_counts=True)
    if len(sizes) == 1:
        return {**result, "method": f"exact, 2^{m:,} flips", "p": _sign_p(result["wins"], result["losses"])[0], "error": 0.0}
    null = _null(tuple(zip(sizes.tolist(), counts.tolist())), max(exact_limit, 2))
    if null is not None:
        sums, chances = null
        p = float(min(1.0, chances[sums >= abs(nonzero.sum()) - 1e-7].sum()))
        return {**result, "method": f"exact, 2^{m:,} flips", "p": p, "error": 0.0}
    if _sampled(m, n_resamples):
        p = _flip_p(nonzero.tobytes(), n_resamples, seed)
        extreme = round(p * (n_resamples + 1)) - 1
        se = math.sqrt((extreme + 1) / (n_resamples + 2) * (1 - (extreme + 1) / (n_resamples + 2)) / n_resamples)
        return {**result, "method": f"Monte Carlo, {n_resamples:,} flips, ± {math.ceil(se * 1e4 - 1e-9) / 1e4:.4f}",
                "p": p, "error": se}
    square = float((nonzero**2).sum())
    p = min(1.0, 2 * float(special.ndtr(-abs(nonzero.sum()) / math.sqrt(square))))
    error = 2 * BERRY_ESSEEN * float((np.abs(nonzero) ** 3).sum()) / square**1.5
    return {**result, "method": f"normal approximation, {m:,} differing questions, ± {math.ceil(error * 1e4) / 1e4:.4f} "
            "at most (Berry–Esseen)", "p": p, "error": error}


def paired_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """McNemar's exact test when every value is 0 or 1 (there it equals the exact permutation test), else the
    permutation test."""
    a, b = _pairs(a, b)
    return mcnemar_test(a, b) if _binary(a) and _binary(b) else permutation_test(a, b)


def _score(lost, gained, n: int, drop, correction: float):
    """Tango's (1998) score statistic for H0 "the mean drop is ``drop``" on paired 0/1 values: L lost, G gained of n,
    the gain rate at its maximum-likelihood estimate under H0, the numerator moved by ``correction`` (arrays too)."""
    a, b, c = 2 * n, -lost - gained + (2 * n - lost + gained) * drop, -gained * drop * (1 - drop)
    gain_rate = (np.sqrt(np.maximum(b * b - 4 * a * c, 0)) - b) / (2 * a)
    return (lost - gained - n * drop + correction) / np.sqrt(np.maximum(n * (2 * gain_rate + drop * (1 - drop)), 1e-300))


SIDES = ("worse", "non-inferiority")  # H1: the mean drop is above the margin; H1: it is below


def margin_test(drops: Sequence[float], margin: float, side: str = "worse", alpha: float = ALPHA) -> dict:
    """Is the mean of per-question drops d (baseline − candidate, each in [−1, 1]) beyond ``margin``? Tango's score
    test for paired proportions (1998; Liu et al. 2002), on the summed losses L = Σ max(d, 0) and gains G = Σ max(−d, 0),
    with a continuity correction of one question (:data:`CORRECTION`). ``side="worse"``: H1 "the drop is above the
    margin", ``bound`` the drop's one-sided (1 − α) lower bound; ``"non-inferiority"``: H1 "below", ``bound`` the upper
    bound. ``p`` is one-sided; p < α exactly when the bound is beyond the margin (the score crosses its critical value
    once).

    For 0/1 values its size (the chance of rejecting at a true drop equal to the margin), computed exactly and
    maximised over the gain rate, stays below α = 0.05 on a grid of 5 to 500 questions and margins 0.005 to 0.2, its
    worst where most questions change; without the correction it reaches about 0.09 (tests/test_gate.py computes
    both). Graded values enter the variance with |d| in place of d², never smaller, so there it is cautious. Unlike a
    bootstrap bound it is not 0 without evidence: with nothing changed, the upper bound on n questions is the drop
    n unchanged pairs cannot rule out, about 1.45 times the exact 1 − α^(1/n) (the correction's price)."""
    from scipy import optimize, special
    drops = _values(drops, "drops")
    if side not in SIDES:
        raise ValueError(f"side must be one of {list(SIDES)}, got {side!r}")
    if not len(drops) or (np.abs(drops) > 1 + 1e-12).any():
        raise ValueError("drops must be one difference per question, each in [−1, 1] (metrics between 0 and 1), got "
                         f"{drops[np.abs(drops) > 1][:3].tolist() or 'none'}")
    if not finite_number(margin) or not -1 < margin < 1:
        raise ValueError(f"margin must be a number between −1 and 1, got {margin!r}")
    n, lost, gained = len(drops), float(np.clip(drops, 0, None).sum()), float(np.clip(-drops, 0, None).sum())
    sign = -1 if side == "worse" else 1  # the correction moves the score towards H0
    z = special.ndtri(1 - check_probability(alpha, "alpha"))
    score = float(_score(lost, gained, n, margin, sign * CORRECTION))
    p = float(special.ndtr(-score if side == "worse" else score))
    crossing = lambda drop: float(_score(lost, gained, n, drop, sign * CORRECTION)) + sign * z  # noqa: E731
    ends = (-1 + 1e-12, 1 - 1e-12)
    bound = (optimize.brentq(crossing, *ends, xtol=1e-12) if crossing(ends[0]) * crossing(ends[1]) < 0
             else ends[int(crossing(ends[0]) > 0)] if side == "worse" else ends[int(crossing(ends[1]) > 0)])
    return {"test": SCORE, "method": f"score on {lost:g} lost and {gained:g} gained of {n:,}, corrected by one question",
            "side": side, "difference": float(drops.mean()), "margin": float(margin), "lost": lost, "gained": gained,
            "p": p, "bound": float(bound), "alpha": alpha}


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values for a family of tests (Holm 1979): a verdict "different" where
    the adjusted p is below α keeps the chance of any false verdict in the family at most α."""
    p_values = _values(p_values, "p_values")
    if not len(p_values):
        raise ValueError("p_values is empty: a family needs at least one test")
    if ((p_values < 0) | (p_values > 1)).any():
        raise ValueError(f"p_values must lie in [0, 1], got {p_values[(p_values < 0) | (p_values > 1)][:3].tolist()}")
    order = np.argsort(p_values)  # the i-th smallest times (m - i), never below the one before, at most 1
    adjusted = np.minimum(1.0, np.maximum.accumulate(p_values[order] * np.arange(len(p_values), 0, -1)))
    return adjusted[np.argsort(order)]


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


def fewest_losses(n: int, margin: float = 0.0, alpha: float = ALPHA) -> int | None:
    """The fewest of n questions a candidate must lose, gaining none, before the gate shows it worse beyond ``margin``
    at ``alpha``: McNemar's one-sided exact test at margin 0 (0.5^L < α: 5 at 0.05), else :func:`margin_test`'s
    score; None when no loss of at most n questions is enough."""
    from scipy import special
    n, alpha = check_k(n, "n"), check_probability(alpha, "alpha")
    if margin == 0:  # the gate's rule is p < α, strictly
        fewest = next(d for d in range(1, 10_000) if 0.5**d < alpha)
        return fewest if fewest <= n else None
    lost = np.arange(n + 1)
    shown = _score(lost, 0, n, margin, -CORRECTION) > special.ndtri(1 - alpha)
    return int(lost[shown][0]) if shown.any() else None


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
