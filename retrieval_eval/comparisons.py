"""Tables that compare retrievers on a golden set, and the sentences that state them.

Per retriever: each metric's mean with an interval that suits its values. Per pair of retrievers:
the paired difference with its interval, wins, ties and losses, the paired test that suits the
values, Holm-adjusted p-values over the named family of tests, and a computed verdict. The same per
slice of the golden set, and how many questions a golden set would need to tell each pair apart.
The sentences are built from the tables, so a notebook never types a verdict by hand.
Built on :mod:`retrieval_eval.statistics` (the tests and intervals) and :mod:`retrieval_eval.power`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from .checks import check_list, check_positive_int, check_probability
from .evaluation import METRICS, _check_same_questions, per_question_scores, rank_groups, retriever_columns, verdict
from .power import POWER, fewest_discordant, smallest_detectable_difference
from .statistics import (
    ALPHA, BOOTSTRAP, MCNEMAR, N_RESAMPLES, SEED, WILSON, _is_binary, bootstrap_ci, holm, mean_interval, paired_test,
)

SUCCESS = "success"  # success@k, a metric name the tables accept beside those of METRICS


def per_question_table(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] = tuple(METRICS)) -> pd.DataFrame:
    """One value per question for each retriever and metric at cut-off k, side by side (paired by question).

    Besides the metrics of :data:`METRICS`, ``"success"`` is accepted: success@k is 1 when at least
    one relevant chunk is in the top k, else 0 — recall@k > 0, the "hit rate" (trec_eval's
    ``success_k``). It equals recall@k when every question has one relevant chunk, and is the
    binary value McNemar's test and the sample-size estimate need.

    Args:
        runs: ``{retriever name: {question_id: ranking}}``.
        qrels: ``{question_id: {chunk_id: gain}}``.
        k: the cut-off, an integer >= 1.
        metrics: metric names (recall, precision, MRR, nDCG, success).

    Returns:
        A DataFrame indexed by question id (in the order of ``qrels``) with columns
        ``(retriever, metric)``.

    Raises:
        ValueError: an unknown metric name (lists the known ones), an empty ``metrics``, or the
            checks of :func:`per_question_scores`.

    Taught in: notebook 08_beyond_the_averages.
    """
    metrics = _check_metrics(metrics)
    long = per_question_scores(runs, qrels, ks=[check_positive_int(k)])
    wide = long.pivot(index="question", columns=["retriever", "metric"], values="value").reindex(list(qrels))
    for name in runs:
        wide[(name, SUCCESS)] = (wide[(name, "recall")] > 0).astype(float)
    return wide[pd.MultiIndex.from_product([list(runs), metrics], names=["retriever", "metric"])]


def interval_table(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] = tuple(METRICS), **interval_args) -> pd.DataFrame:
    """Mean and 95% interval of each metric at cut-off k, per retriever, with the interval that suits the values.

    A metric whose per-question values are all 0 or 1 for every retriever gets the Wilson score
    interval, any other metric the percentile bootstrap for every retriever (see :func:`mean_interval`),
    so the intervals of one metric are of one kind.

    Args:
        runs, qrels, k, metrics: as :func:`per_question_table`.
        **interval_args: ``confidence``, ``n_resamples``, ``seed`` for :func:`mean_interval`.

    Returns:
        A DataFrame indexed by ``(retriever, metric)`` with columns ``mean``, ``low``, ``high``,
        ``interval`` (the method: "Wilson score" or "percentile bootstrap") and ``zero width``
        (True when low equals high: a bootstrap over identical values, which says nothing about
        the uncertainty).

    Raises:
        ValueError: as :func:`per_question_table` and :func:`mean_interval`.

    Taught in: notebook 08_beyond_the_averages.
    """
    wide = per_question_table(runs, qrels, k, metrics)
    return pd.DataFrame.from_dict(_intervals(wide, **interval_args), orient="index").rename_axis(["retriever", "metric"])


def slice_intervals(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, k: int = 3, metrics: Sequence[str] = ("recall",), **interval_args) -> pd.DataFrame:
    """Per slice of the golden set: each retriever's mean and 95% interval, with the slice's number of questions.

    Args:
        runs, qrels, k, metrics: as :func:`per_question_table`.
        golden: the golden set, with columns ``id`` and ``slice``.
        **interval_args: ``confidence``, ``n_resamples``, ``seed`` for :func:`mean_interval`.

    Returns:
        A DataFrame indexed by ``(slice, retriever, metric)`` with columns ``questions`` and those
        of :func:`interval_table`. The interval is chosen per slice and metric: a slice whose
        values are all 0 or 1 gets Wilson intervals even when another slice needs the bootstrap.

    Raises:
        ValueError: the golden set has no ``slice`` column or other questions than the qrels, or
            as :func:`interval_table`.

    Taught in: notebook 08_beyond_the_averages.
    """
    wide = per_question_table(runs, qrels, k, metrics)
    rows = {}
    for label, part in _slices(wide, golden):
        rows.update({(label, *key): {"questions": len(part), **row} for key, row in _intervals(part, **interval_args).items()})
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["slice", "retriever", "metric"])


def paired_comparisons(
    runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] = ("recall", "MRR", "nDCG"),
    pairs: Sequence[tuple[str, str]] | None = None, alpha: float = ALPHA, n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> pd.DataFrame:
    """Every pair of retrievers compared question by question on each metric at cut-off k: one family of tests.

    For each pair (A, B) and metric: the mean difference A − B with its paired-bootstrap 95%
    interval (questions resampled, the pair kept together; one interval on its own, not adjusted
    for the family, so it can exclude 0 where the verdict does not), the questions A wins, ties and loses,
    the paired test that suits the values (McNemar's exact test when every value is 0 or 1, else
    the paired permutation test; see :func:`paired_test`), its raw p-value, the Holm-adjusted
    p-value over the whole family (every row of the table: pairs × metrics) and the verdict at
    family-wise level ``alpha``, which uses the adjusted p only.

    Args:
        runs, qrels, k, metrics: as :func:`per_question_table`.
        pairs: ``[(A, B), ...]`` retriever names to compare (A − B); default every pair in the
            order of ``runs``.
        alpha: the family-wise error rate of the verdicts, in (0, 1).
        n_resamples, seed: for the bootstrap and, when it cannot enumerate, the permutation test.

    Returns:
        A DataFrame indexed by ``(pair, metric)`` (pair "A − B") with columns ``questions``,
        ``difference``, ``low``, ``high``, ``wins``, ``ties``, ``losses``, ``test``, ``method``,
        ``p``, ``p (Holm)``, ``verdict`` ("A higher", "B higher" or "not distinguishable") and
        ``few discordant`` (True when fewer questions differ than an all-one-way split needs to
        pass Holm's first step, α / (tests in the family): :func:`~retrieval_eval.power.fewest_discordant`).
        Its ``attrs`` hold ``k``, ``alpha``, ``family`` (the family named in words), ``questions``,
        ``tests`` (the family's size), ``min discordant`` (that number) and ``means`` (``{(retriever, metric): mean}``), read by :func:`comparison_sentences`,
        :func:`tested_verdict` and :func:`pair_sentence`.

    Raises:
        ValueError: a pair names an unknown retriever or the same one twice, ``alpha`` is not
            between 0 and 1, or as :func:`per_question_table`.

    Taught in: notebook 08_beyond_the_averages.
    """
    alpha = check_probability(alpha, "alpha")
    wide = per_question_table(runs, qrels, k, metrics)
    pairs = _check_pairs_of(runs, pairs)
    tests = len(pairs) * len(wide.columns.unique("metric"))
    family = f"{_count(tests, 'test')}: {_count(len(pairs), 'pair')} of retrievers × {_count(len(metrics), 'metric')} at k = {k}"
    return column_comparisons(wide, pairs, family, k, alpha, n_resamples, seed)


def column_comparisons(
    wide: pd.DataFrame, pairs: Sequence[tuple[str, str]], family: str, k: int | None,
    alpha: float = ALPHA, n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> pd.DataFrame:
    """Pairs of columns of a per-question table compared question by question on each metric: one family, Holm-adjusted.

    The one place where the series decides whether a difference is real: :func:`paired_comparisons`,
    :func:`~retrieval_eval.chunking.compare_settings` builds its
    per-question table and call it. For each pair (A, B) and each metric of ``wide``: the paired
    test that suits the values (:func:`~retrieval_eval.statistics.paired_test`: McNemar's exact test
    when every value is 0 or 1, else the paired permutation test), the paired-bootstrap 95% interval
    of A − B, and Holm's adjustment over every test of the table; the verdict uses the adjusted p only.

    Args:
        wide: one row per question, columns ``(name, metric)`` (a two-level column index whose
            second level is named ``"metric"``), every value finite.
        pairs: ``[(A, B), ...]``, names of the first column level (A − B is tested).
        family: the family in words, e.g. ``"9 tests: 3 pairs of retrievers × 3 metrics at k = 3"``.
        k: the cut-off of the metrics, printed as ``recall@3`` in sentences; ``None`` when the
            metric's name says it (e.g. ``"recall at 1536 word pieces"``).
        alpha, n_resamples, seed: as :func:`paired_comparisons`.

    Returns:
        The table of :func:`paired_comparisons`.

    Raises:
        ValueError: ``pairs`` is not a list of pairs of different names of ``wide``'s first column
            level, a pair names a column ``wide`` does not have, ``alpha`` is not between 0 and 1,
            or a value is missing or not finite (names the column and the questions).

    Taught in: notebook 08_beyond_the_averages (through paired_comparisons and slice_comparisons),
    and notebooks 05_three_retrievers and 09_chunking (through compare_settings).
    """
    alpha = check_probability(alpha, "alpha")
    pairs = _check_pairs_of(dict.fromkeys(wide.columns.unique(0)), pairs)
    metrics = list(wide.columns.unique("metric"))
    for first, second in pairs:
        for name in (first, second):
            for metric in metrics:
                if (name, metric) not in wide.columns:
                    raise ValueError(f"no column ({name!r}, {metric!r}) to compare; the table has {list(wide.columns)}")
                bad = ~np.isfinite(wide[(name, metric)].to_numpy(dtype=float))
                if bad.any():
                    raise ValueError(f"({name!r}, {metric!r}): no finite value for question(s) {list(wide.index[bad])[:5]}")
    table = pd.DataFrame.from_dict(_compare(wide, pairs, metrics, n_resamples, seed), orient="index").rename_axis(["pair", "metric"])
    return _adjust(table, pairs, family, k, alpha, wide)


def slice_comparisons(
    runs: Mapping, qrels: Mapping, golden: pd.DataFrame, k: int = 3, metrics: Sequence[str] = ("recall",),
    pairs: Sequence[tuple[str, str]] | None = None, alpha: float = ALPHA, n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> pd.DataFrame:
    """:func:`paired_comparisons` within each slice of the golden set: one family over slices × pairs × metrics.

    A slice holds a handful of questions, so a difference in it often rests on two or three
    questions that differ: the ``few discordant`` column flags the tests with too few to pass
    Holm's first step even all one way, and :func:`comparison_sentences` says how many they were.

    Args:
        golden: the golden set, with columns ``id`` and ``slice``.
        The others: as :func:`paired_comparisons`.

    Returns:
        A DataFrame indexed by ``(slice, pair, metric)`` with the columns of
        :func:`paired_comparisons` (``questions`` is the slice's size); Holm's adjustment runs over
        every row.

    Raises:
        ValueError: the golden set has no ``slice`` column or other questions than the qrels, or
            as :func:`paired_comparisons`.

    Taught in: notebook 08_beyond_the_averages.
    """
    alpha = check_probability(alpha, "alpha")
    wide = per_question_table(runs, qrels, k, metrics)
    pairs = _check_pairs_of(runs, pairs)
    rows, labels = {}, []
    for label, part in _slices(wide, golden):
        labels.append(label)
        rows.update({(label, *key): row for key, row in _compare(part, pairs, metrics, n_resamples, seed).items()})
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis(["slice", "pair", "metric"])
    family = (f"{_count(len(table), 'test')}: {_count(len(labels), 'slice')} × {_count(len(pairs), 'pair')} of retrievers"
              f" × {_count(len(metrics), 'metric')} at k = {k}")
    return _adjust(table, pairs, family, k, alpha, wide)


def comparison_sentences(table: pd.DataFrame) -> list[str]:
    """The comparison table as sentences: the family first, then one sentence per test with its verdict.

    For example "vector − BM25 recall@3: +0.191 [0.06, 0.32], 13 wins, 30 ties, 4 losses, McNemar
    exact p = 0.049, Holm p = 0.15: not distinguishable at family-wise 5%." A test flagged
    ``few discordant`` adds "— rests on 2 questions that differ (2–0); 9 that differ, all one way, are
    needed to pass Holm's first step (α/9)", the level of that step in a family of 9 tests.

    Args:
        table: the output of :func:`paired_comparisons` or :func:`slice_comparisons`.

    Returns:
        A list of str: the family sentence, then one per row, in the table's order.

    Raises:
        ValueError: ``table`` lacks the ``attrs`` those functions set (pass their output, not a copy
            rebuilt by hand).

    Taught in: notebook 08_beyond_the_averages.
    """
    _check_family(table)
    level = f"family-wise {table.attrs['alpha']:.0%}"
    sentences = [f"The family: {table.attrs['family']}; every verdict uses Holm-adjusted p-values at {level}."]
    return sentences + [_sentence(table, key) for key in table.index]


def pair_sentence(table: pd.DataFrame, first: str, second: str, metric: str) -> str:
    """The sentence of :func:`comparison_sentences` for one pair and metric, in either order of the pair.

    Args:
        table: the output of :func:`paired_comparisons`.
        first, second: the two compared names (retrievers, or retrievers with their setting).
        metric: a metric of the table.

    Returns:
        The sentence (str), e.g. "vector − hybrid recall@3: −0.011 [-0.09, 0.06], 4 wins, 38 ties,
        5 losses, McNemar exact p = 1, Holm p = 1: not distinguishable at family-wise 5%."

    Raises:
        ValueError: the table holds no such pair or metric (lists what it holds).

    Taught in: notebook 05_three_retrievers.
    """
    _check_family(table)
    return _sentence(table, tested_pair(table, first, second, metric).name)


def tested_pair(table: pd.DataFrame, first: str, second: str, metric: str) -> pd.Series:
    """The row of a comparison table for one pair and metric, whichever way round the table holds the pair.

    Args:
        table: the output of :func:`paired_comparisons`.
        first, second: the two compared names.
        metric: a metric of the table.

    Returns:
        The row (a Series named by its index key), e.g. ``row["verdict"]`` and ``row["p (Holm)"]``.

    Raises:
        ValueError: the table holds no such pair or metric (lists what it holds).

    Taught in: notebook 06_mistakes_and_interview.
    """
    for key in (f"{first} − {second}", f"{second} − {first}"):
        if (key, metric) in table.index:
            return table.loc[(key, metric)].rename((key, metric))
    raise ValueError(f"no test of {first} and {second} on {metric!r}; the table holds {list(table.index)}")


def tested_verdict(table: pd.DataFrame, metric: str, decimals: int = 3, short: bool = False) -> str:
    """Who leads on a metric, and whether the golden set can tell the leader from each of the others.

    The leader comes from the means, as in :func:`~retrieval_eval.evaluation.verdict` (names that
    are equal as printed tie); then, for every other retriever, the Holm-adjusted verdict of the
    family decides between "ahead of" and "cannot tell it from", each with the test's p-value and
    its Holm-adjusted p, and the sentence ends by naming the family. When no test of the family on
    ``metric`` tells any two retrievers apart, the sentence says so: "no retriever is
    distinguishable from another". So the sentence stays true when the numbers move. For example:
    "**hybrid** has the highest recall@3 (0.798), but no retriever is distinguishable from another:
    47 questions cannot tell it from **vector** (0.787; permutation test (exact, 2^5 flips) p = 1,
    Holm p = 1) or **BM25** (0.766; ...). Holm-adjusted over a family of 9 tests: 3 pairs of
    retrievers × 3 metrics at k = 3, family-wise 5%."

    ``short=True`` gives the same verdict in words a reader meets before the tests are taught (no
    p-values, no test names), with the means' spread in questions and a pointer to notebooks 05 and
    08: "**hybrid** has the highest recall@3 (0.798), but the 3 means lie within 0.032, 1.5
    questions' worth out of 47, and a paired test that allows for the 9 comparisons made at once
    tells no two retrievers apart (notebook 05 gives the tests, notebook 08 explains them)."

    Args:
        table: the output of :func:`paired_comparisons`, whose family holds a test of every pair on ``metric``.
        metric: the metric, e.g. ``"recall"``.
        decimals: the places the means are printed with.
        short: the short form for notebooks 01 to 03 (same verdicts, fewer terms).

    Returns:
        Markdown (str).

    Raises:
        ValueError: the table is not the output of :func:`paired_comparisons`, or it lacks ``metric``
            or a pair of retrievers (names them).

    Taught in: notebook 05_three_retrievers (the short form in 01_recall_at_k, 02_precision_at_k and 03_mrr).
    """
    _check_family(table)
    means = pd.Series({name: mean for (name, m), mean in table.attrs["means"].items() if m == metric}, dtype=float)
    if means.empty:
        metrics = sorted({m for _, m in table.attrs["means"]})
        raise ValueError(f"the table holds no test on {metric!r}; its metrics are {metrics}")
    k, n, level = table.attrs["k"], table.attrs["questions"], f"family-wise {table.attrs['alpha']:.0%}"
    leaders = rank_groups(means, decimals)[0]
    ahead, unclear = [], []
    for name in means.sort_values(ascending=False, kind="stable").index:
        if name in leaders:
            continue
        rows = [tested_pair(table, leader, name, metric) for leader in leaders]
        tests = "" if short else "; " + "; ".join(_test_phrase(row) for row in rows)
        clause = f"**{name}** ({means[name]:.{decimals}f}{tests})"
        (ahead if all(row["verdict"] != "not distinguishable" for row in rows) else unclear).append(clause)
    parts = [verdict(means, f"{metric}@{k}", decimals)]
    it = "it" if len(leaders) == 1 else "them"
    none_apart = (table.xs(metric, level="metric")["verdict"] == "not distinguishable").all()
    if short:
        spread = means.max() - means.min()
        tested = f"a paired test that allows for the {_count(table.attrs['tests'], 'comparison')} made at once"
        if none_apart:
            parts.append(f", but the {len(means)} means lie within {spread:.{decimals}f}, {spread * n:.1f} questions' "
                         f"worth out of {n}, and {tested} tells no two retrievers apart")
        else:
            parts.append(f", and {tested} tells {it} apart from {_listed(ahead, 'and')}" if ahead
                         else f", but {tested} cannot tell {it} from the others")
            parts.append(f" but not from {_listed(unclear, 'or')}" if ahead and unclear else "")
        return "".join(parts) + " (notebook 05 gives the tests, notebook 08 explains them)."
    if ahead:
        parts.append(f", ahead of {_listed(ahead, 'and')} beyond chance")
    if unclear and not ahead and none_apart:
        parts.append(f", but no retriever is distinguishable from another: {n} questions cannot tell {it} from "
                     f"{_listed(unclear, 'or')}")
    elif unclear:
        parts.append(f"{',' if not ahead else ';'} but {n} questions cannot tell {it} from {_listed(unclear, 'or')}")
    return "".join(parts) + f". Holm-adjusted over a family of {table.attrs['family']}, {level}."


def narrow_interval_reason(row: pd.Series, questions: int) -> str:
    """Why a percentile-bootstrap interval can exclude 0 where the exact paired test is far from significant.

    The bootstrap resamples all the questions, but a resample can only reuse the differences
    observed; with a few questions that differ, nearly all one way, almost no resample has a mean
    difference of 0 or below. The plainest way there, a resample that draws none of the questions
    won by the side with more, comes up only (1 − w/n)^n of the time (n draws with replacement).

    Args:
        row: one row of a comparison table (:func:`paired_comparisons`, :func:`slice_comparisons`,
            :func:`~retrieval_eval.chunking.compare_settings`), with ``wins`` and ``losses``.
        questions: the questions the bootstrap resampled (the slice's size for a slice), an integer >= 1.

    Returns:
        A sentence (str) without its final full stop, e.g. "the percentile bootstrap resamples all 47
        questions, but a resample can only reuse the differences observed: with 5 won and 0 lost, a
        resample draws none of the 5 only (1 − 5/47)^47 = 0.5% of the time, so almost none has a
        difference of 0 or below and the interval comes out too narrow".

    Raises:
        ValueError: ``questions`` is not a positive integer, no question differs, or wins + losses
            exceed ``questions``.

    Taught in: notebooks 05_three_retrievers, 08_beyond_the_averages and 09_chunking.
    """
    n, wins, losses = check_positive_int(questions, "questions"), int(row["wins"]), int(row["losses"])
    if not 0 < wins + losses <= n:
        raise ValueError(f"{wins} won and {losses} lost: no question differs, or more than the {n} questions")
    more = max(wins, losses)
    return (f"the percentile bootstrap resamples all {n} questions, but a resample can only reuse the differences "
            f"observed: with {wins} won and {losses} lost, a resample draws none of the {more} only "
            f"(1 − {more}/{n})^{n} = {(1 - more / n) ** n:.1%} of the time, so almost none has a difference of 0 or "
            "below and the interval comes out too narrow")


def power_table(
    runs: Mapping, qrels: Mapping, k: int = 3, metric: str = SUCCESS, pairs: Sequence[tuple[str, str]] | None = None,
    alpha: float = ALPHA, power: float = POWER,
) -> pd.DataFrame:
    """For each pair of retrievers: the smallest difference in hit rate this golden set can detect with McNemar's test.

    From the observed discordance: p10 = wins / questions, p01 = losses / questions (A hits and B
    misses, and the other way round). ``smallest detectable difference`` is
    :func:`smallest_detectable_difference` (Connor 1987) for this golden set's number of questions
    at the observed discordance ψ = p10 + p01. It assumes one test at level ``alpha``; for a family
    under Holm, pass alpha divided by the number of tests (the level of Holm's first step). The
    observed difference is shown but is no planning value: a sample size computed from it
    (post-hoc power) only restates the p-value; plan with
    :func:`~retrieval_eval.power.questions_needed` from the smallest difference that matters.

    Args:
        runs, qrels, k: as :func:`per_question_table`.
        metric: a binary metric: ``"success"``, or recall when every question has one relevant chunk.
        pairs: ``[(A, B), ...]`` as in :func:`paired_comparisons`.
        alpha: the two-sided significance level; power: the wanted power, both in (0, 1).

    Returns:
        A DataFrame indexed by pair "A − B" with columns ``questions``, ``wins``, ``losses``,
        ``discordance`` (p10 + p01), ``difference`` (p10 − p01, A − B in hit rate) and
        ``smallest detectable difference``
        (a share of questions; ``inf`` when none is detectable at this discordance, e.g. when no
        question is discordant).

    Raises:
        ValueError: the metric's values are not all 0 or 1 (names the retriever), or as
            :func:`paired_comparisons` and :func:`smallest_detectable_difference`.

    Taught in: notebook 08_beyond_the_averages.
    """
    wide = per_question_table(runs, qrels, k, [metric])
    for name in runs:
        if not _is_binary(wide[(name, metric)].to_numpy()):
            raise ValueError(f"{metric}@{k} of {name} is not 0 or 1 on every question; use metric='success'")
    rows = {}
    for first, second in _check_pairs_of(runs, pairs):
        a, b = wide[(first, metric)], wide[(second, metric)]
        n, wins, losses = len(a), int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        rows[f"{first} − {second}"] = {
            "questions": n, "wins": wins, "losses": losses, "discordance": (wins + losses) / n,
            "difference": (wins - losses) / n,
            "smallest detectable difference": (
                smallest_detectable_difference(n, (wins + losses) / n, alpha, power) if wins + losses else float("inf")
            ),
        }
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("pair")
    table.attrs.update(k=k, metric=metric, alpha=alpha, power=power)
    return table


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

    Raises:
        ValueError: ``ranks`` is not a table of first relevant ranks (:func:`~retrieval_eval.evaluation.retriever_columns`),
            a name is not one of its retrievers, or the two names are the same.

    Taught in: notebook 08_beyond_the_averages.
    """
    retrievers = retriever_columns(ranks)
    for name in (first, second):
        if name not in retrievers:
            raise ValueError(f"no retriever {name!r} in the rank table; choose from {retrievers}")
    if first == second:
        raise ValueError(f"compare two different retrievers, got {first!r} twice")
    table = ranks[["question", "slice", first, second]].copy()
    table["ranks gained"] = table[first] - table[second]
    return table.sort_values("ranks gained", ascending=False, na_position="last")


def _intervals(wide: pd.DataFrame, **interval_args) -> dict:
    """``{(retriever, metric): mean_interval(...)}``, one kind of interval per metric (Wilson when all of its values are 0 or 1)."""
    binary = {metric: _is_binary(wide.xs(metric, axis=1, level="metric").to_numpy().ravel()) for metric in wide.columns.unique("metric")}
    return {
        (name, metric): mean_interval(wide[(name, metric)].to_numpy(), method=WILSON if binary[metric] else BOOTSTRAP, **interval_args)
        for name, metric in wide.columns
    }


def _compare(wide: pd.DataFrame, pairs: list, metrics: Sequence[str], n_resamples: int, seed: int) -> dict:
    """``{(pair, metric): row}``: the paired test and the paired-bootstrap interval of the difference."""
    rows = {}
    for first, second in pairs:
        for metric in metrics:
            a, b = wide[(first, metric)].to_numpy(), wide[(second, metric)].to_numpy()
            test = paired_test(a, b, n_resamples, seed)
            _, low, high = bootstrap_ci(a - b, n_resamples=n_resamples, seed=seed)
            rows[(f"{first} − {second}", metric)] = {
                "questions": len(a), "difference": test["difference"], "low": low, "high": high,
                **{key: test[key] for key in ("wins", "ties", "losses", "test", "method", "p")},
            }
    return rows


def _adjust(table: pd.DataFrame, pairs: list, family: str, k: int, alpha: float, wide: pd.DataFrame) -> pd.DataFrame:
    """Add the Holm-adjusted p over every row, the verdict at ``alpha`` and the few-discordant flag; name the family."""
    table["p (Holm)"] = holm(table["p"].to_numpy())
    higher = {f"{a} − {b}": (a, b) for a, b in pairs}
    table["verdict"] = [
        (f"{higher[pair][0]} higher" if r["difference"] > 0 else f"{higher[pair][1]} higher") if r["p (Holm)"] < alpha
        else "not distinguishable"
        for pair, (_, r) in zip(table.index.get_level_values("pair"), table.iterrows())
    ]
    needed = fewest_discordant(alpha / len(table))  # an all-one-way split passing Holm's first step
    table["few discordant"] = table["wins"] + table["losses"] < needed
    means = {column: float(wide[column].mean()) for column in wide.columns}
    table.attrs.update(k=k, alpha=alpha, family=family, questions=len(wide), means=means, tests=len(table), **{"min discordant": needed})
    return table


def _check_family(table: pd.DataFrame) -> None:
    """ValueError unless ``table`` carries the attrs of a comparison table (its family named)."""
    if not {"k", "alpha", "family", "questions", "means", "tests", "min discordant"} <= set(table.attrs):
        raise ValueError("table must be the output of paired_comparisons, slice_comparisons or compare_settings "
                         "(its attrs name the family)")


def _sentence(table: pd.DataFrame, key: tuple) -> str:
    """One test of a comparison table in a sentence: difference, interval, counts, test, p, Holm p, verdict."""
    r = table.loc[key]
    *where, pair, metric = key
    level = f"family-wise {table.attrs['alpha']:.0%}"
    sentence = (
        f"{pair} {metric}{'' if table.attrs['k'] is None else '@' + str(table.attrs['k'])}"
        f"{' on ' + where[0] if where else ''}: {r['difference']:+.3f} "
        f"[{r['low']:.2f}, {r['high']:.2f}], {_count(r['wins'], 'win')}, {_count(r['ties'], 'tie')}, "
        f"{_count(r['losses'], 'loss')}, {_test_phrase(r)}: {r['verdict']} at {level}"
    )
    if r["wins"] + r["losses"] == 0:
        sentence += " — no question differs"
    elif r["few discordant"]:
        moved = r["wins"] + r["losses"]
        sentence += (f" — rests on {_count(moved, 'question')} that differ{'s' if moved == 1 else ''} ({r['wins']}–{r['losses']});"
                     f" {table.attrs['min discordant']} that differ, all one way, are needed to pass Holm's first step"
                     f" (α/{table.attrs['tests']})")
    return sentence + "."


def _test_phrase(r: pd.Series) -> str:
    """"McNemar exact p = 0.049, Holm p = 0.15" or "permutation test (exact, 2^9 flips) p = ..., Holm p = ..."."""
    test = "McNemar exact" if r["test"] == MCNEMAR else f"permutation test ({r['method']})"
    return f"{test} p = {_p(r['p'])}, Holm p = {_p(r['p (Holm)'])}"


def _listed(items: list[str], word: str) -> str:
    """"a", "a or b", "a, b or c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def _slices(wide: pd.DataFrame, golden: pd.DataFrame):
    """``(slice label, rows of wide)`` for each slice of the golden set, in sorted order."""
    if "slice" not in golden.columns:
        raise ValueError("the golden set has no 'slice' column to group the questions by")
    _check_same_questions(golden, dict.fromkeys(wide.index))
    labels = golden.set_index("id")["slice"].reindex(wide.index)
    return [(label, wide[labels == label]) for label in sorted(labels.unique())]


def _check_metrics(metrics: Sequence[str]) -> list[str]:
    """The metric names as a list, each known; ValueError naming an unknown one."""
    metrics, known = check_list(metrics, "metrics", "metric names"), [*METRICS, SUCCESS]
    if not metrics:
        raise ValueError(f"metrics is empty: choose from {known}")
    for metric in metrics:
        if metric not in known:
            raise ValueError(f"unknown metric {metric!r}; choose from {known}")
    return metrics


def _check_pairs_of(runs: Mapping, pairs) -> list[tuple[str, str]]:
    """The pairs to compare: every pair of ``runs`` by default; ValueError for an unknown or repeated name."""
    if pairs is None:
        return list(combinations(runs, 2))
    pairs = [tuple(pair) for pair in check_list(pairs, "pairs", "pairs (A, B)")]
    for pair in pairs:
        if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(runs):
            raise ValueError(f"pair {pair!r} must name two different retrievers of {list(runs)}")
    if not pairs:
        raise ValueError("pairs is empty: give at least one (A, B) or None for every pair")
    return pairs


def _count(n: int, word: str) -> str:
    """"1 test", "9 tests", "1 loss", "2 losses"."""
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"


def _p(p: float) -> str:
    """A p-value in two significant digits (scientific below 0.001)."""
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"
