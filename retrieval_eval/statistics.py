"""Uncertainty on a small golden set: bootstrap intervals and paired tests over questions.

SciPy is imported inside the functions that use it, so that ``import helpers`` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from .checks import check_list, check_positive_int
from .evaluation import METRICS, per_question_scores

N_RESAMPLES = 10_000  # bootstrap resamples and permutation-test resamples
SEED = 20091  # fixed so two runs print identical intervals and p-values


def bootstrap_ci(values: Sequence[float], n_resamples: int = N_RESAMPLES, confidence: float = 0.95, seed: int = SEED) -> tuple[float, float, float]:
    """The mean and a percentile-bootstrap confidence interval over questions (Efron & Tibshirani 1993).

    Questions are resampled with replacement ``n_resamples`` times with SciPy's
    ``scipy.stats.bootstrap`` (``method="percentile"``, which stays defined when every value is
    the same, unlike BCa).

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
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence!r}")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    if np.all(values == values[0]):
        return float(values[0]), float(values[0]), float(values[0])
    result = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", rng=np.random.default_rng(seed),
    )
    return float(values.mean()), float(result.confidence_interval.low), float(result.confidence_interval.high)


def interval_table(runs: Mapping, qrels: Mapping, k: int = 3, **bootstrap_args) -> pd.DataFrame:
    """Mean and 95% bootstrap interval of each metric at cut-off k, per retriever.

    Returns:
        A DataFrame indexed by ``(retriever, metric)`` with columns ``mean``, ``low``, ``high``.

    Taught in: notebook 08_beyond_the_averages.
    """
    long = per_question_scores(runs, qrels, ks=[check_positive_int(k)])
    rows = {
        (name, metric): bootstrap_ci(group["value"].values, **bootstrap_args)
        for (name, metric), group in long.groupby(["retriever", "metric"], sort=False)
    }
    return pd.DataFrame(rows.values(), index=pd.MultiIndex.from_tuples(rows, names=["retriever", "metric"]), columns=["mean", "low", "high"])


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


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Exact two-sided sign test on paired per-question values (ties dropped).

    Counts the questions where ``a`` is higher (wins) and lower (losses) and asks how likely a
    split at least that uneven is if each were a fair coin flip: ``scipy.stats.binomtest``
    (the sign test; see Smucker, Allan & Carterette 2007 on its use in IR).

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


def permutation_p(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided paired permutation test of the mean difference (randomly swaps a and b per question).

    Uses ``scipy.stats.permutation_test`` with ``permutation_type="samples"``; exact when there are
    few enough distinct swaps, otherwise ``n_resamples`` random ones with a fixed seed. On paired
    tests in IR evaluation: Smucker, Allan & Carterette (2007).

    Args:
        a, b: one value per question for each retriever, paired as in :func:`_check_pairs`.
        n_resamples: random swaps when the exact test is too large.
        seed: the random seed; the same seed gives the same p-value.

    Returns:
        The two-sided p-value, a float in (0, 1] (1.0 when ``a`` equals ``b``).

    Raises:
        ValueError: the inputs are empty, differ in length or hold a non-finite value.

    Taught in: notebook 08_beyond_the_averages.
    """
    from scipy import stats


    a, b = _check_pairs(a, b)
    if np.array_equal(a, b):
        return 1.0
    result = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def paired_comparisons(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] = ("recall", "MRR", "nDCG")) -> pd.DataFrame:
    """Every pair of retrievers compared on per-question values at cut-off k.

    For each pair (A, B) and metric: the mean difference A − B, its paired-bootstrap 95% interval,
    the paired permutation-test p-value, and the exact sign test on per-question wins and losses
    (read it first on reciprocal rank, where a win means the relevant chunk came higher).

    Returns:
        A DataFrame indexed by ``(pair, metric)`` with columns ``difference``, ``low``, ``high``,
        ``p (permutation)``, ``wins``, ``losses``, ``ties``, ``p (sign test)``.

    Raises:
        ValueError: ``metrics`` is not a list of names of :data:`~retrieval_eval.evaluation.METRICS`,
            or as :func:`~retrieval_eval.evaluation.per_question_scores`.

    Taught in: notebook 08_beyond_the_averages.
    """

    metrics = check_list(metrics, "metrics", "metric names")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"metrics names unknown metric(s) {unknown}; choose from {list(METRICS)}")
    long = per_question_scores(runs, qrels, ks=[check_positive_int(k)])
    wide = long.pivot_table(index="question", columns=["retriever", "metric"], values="value")
    rows = {}
    for first, second in combinations(list(runs), 2):
        for metric in metrics:
            a, b = wide[(first, metric)].values, wide[(second, metric)].values
            mean, low, high = bootstrap_ci(a - b)
            test = sign_test(a, b)
            rows[(f"{first} − {second}", metric)] = {
                "difference": mean, "low": low, "high": high, "p (permutation)": permutation_p(a, b),
                "wins": test["wins"], "losses": test["losses"], "ties": test["ties"], "p (sign test)": test["p"],
            }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["pair", "metric"])


def rank_differences(ranks: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """Per question, how many ranks the first relevant chunk moves from one retriever to another.

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        first, second: two retriever names (columns of ``ranks``).

    Returns:
        ``question``, ``slice``, the two ranks and ``ranks gained`` = rank in ``first`` − rank in
        ``second`` (positive: ``second`` puts it higher), sorted by ``ranks gained``, largest first;
        ``<NA>`` when either ranking misses the relevant chunk. Sort it any other way with
        ``.sort_values(...)``.

    Taught in: notebook 08_beyond_the_averages.
    """
    retrievers = list(ranks.columns[3:])
    for name in (first, second):
        if name not in retrievers:
            raise ValueError(f"no retriever {name!r} in the rank table; choose from {retrievers}")
    if first == second:
        raise ValueError(f"compare two different retrievers, got {first!r} twice")
    table = ranks[["question", "slice", first, second]].copy()
    table["ranks gained"] = table[first] - table[second]
    return table.sort_values("ranks gained", ascending=False, na_position="last")

