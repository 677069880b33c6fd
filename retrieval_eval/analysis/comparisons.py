"""Is a difference real? Paired tests over a family of comparisons, and the same verdicts in plain words
(``plain_*``, for the core lessons). A verdict says "ahead" only where the family's test says so, never off
means alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_list, check_probability, check_runs
from ..core.evaluation import first_relevant_ranks, per_question_scores
from ..core.registry import METRICS, tested_metrics
from .statistics import (
    ALPHA,
    beats_chance,
    chance_found,
    holm,
    mean_interval,
    paired_test,
    two_slices,
)

SUCCESS = "success"  # found at k: any relevant chunk in the top k (success@k, the hit rate)
TOO_CLOSE = "too close to call"


def values_at_k(runs: Mapping, qrels: Mapping, k: int, metric: str) -> pd.DataFrame:
    """Per question (rows) and run (columns), one metric at k: a registered metric, or ``"success"``."""
    k = check_k(k)
    if metric == SUCCESS:
        ranks = first_relevant_ranks(runs, qrels)
        return pd.DataFrame({name: (ranks[name].fillna(k + 1) <= k).astype(float) for name in runs}).rename_axis("question")
    if metric not in METRICS:
        raise ValueError(f"metric must be {SUCCESS!r} or a registered metric {list(METRICS)}, got {metric!r}")
    long = per_question_scores(runs, qrels, [k], [metric])
    return long.pivot(index="question", columns="run", values="value").loc[list(qrels), list(runs)]


def paired_comparisons(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] | None = None,
                       pairs: Sequence[tuple[str, str]] | None = None, alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair of runs on every metric at k (the registry's tested metrics unless named), tested question by
    question as one Holm family: rows
    ``(pair "A − B", metric)`` with the means, the difference, wins, ties, losses, the test, p, mid-p (McNemar
    only), Holm's p and the verdict ("A ahead", "B ahead" or "too close to call" at family-wise ``alpha``)."""
    runs, qrels = check_runs(runs, qrels)
    alpha, k = check_probability(alpha, "alpha"), check_k(k)
    metrics = _metric_names(tested_metrics() if metrics is None else metrics)
    pairs = list(combinations(runs, 2)) if pairs is None else [
        p if isinstance(p, str) else tuple(p) for p in check_list(pairs, "pairs", "pairs of run names")]
    bad = [p for p in pairs if isinstance(p, str) or len(p) != 2 or p[0] == p[1] or any(name not in runs for name in p)]
    if bad or not pairs or len({frozenset(p) for p in pairs}) < len(pairs):
        raise ValueError(f"pairs must name two different runs of {list(runs)} each, each pair once, got {pairs}")
    rows = {}
    for metric in metrics:
        wide = values_at_k(runs, qrels, k, metric)
        for a, b in pairs:
            test = paired_test(wide[a], wide[b])
            rows[(f"{a} − {b}", metric)] = {"A": a, "B": b, "mean A": wide[a].mean(), "mean B": wide[b].mean(),
                                            **{key: test[key] for key in ("difference", "wins", "ties", "losses",
                                                                            "test", "method", "p", "mid_p")}}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis(["pair", "metric"])
    table["Holm p"] = holm(table["p"].to_numpy())
    table["verdict"] = [(f"{r.A} ahead" if r.difference > 0 else f"{r.B} ahead") if r["Holm p"] < alpha else TOO_CLOSE
                        for _, r in table.iterrows()]
    table.attrs.update(alpha=alpha, k=k, questions=len(qrels),
                       family=f"{_count(len(table), 'test')}: {_count(len(pairs), 'pair')} × {_count(len(metrics), 'metric')} at k = {k}")
    return table


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _metric_names(metrics) -> list:
    metrics = check_list(metrics, "metrics", "metric names")
    if not metrics:
        raise ValueError("metrics is empty: give at least one metric")
    return metrics


def _metric_label(metric: str, k: int) -> str:
    return f"found in the top {k}" if metric == SUCCESS else METRICS[metric].at(k)


def plain_verdict(table: pd.DataFrame, a: str, b: str, metric: str) -> str:
    """One comparison in plain words, e.g. "hybrid and BM25 differ on 8 of 47 questions, 5 to 3 for hybrid:
    too close to call"."""
    key = (f"{a} − {b}", metric) if (f"{a} − {b}", metric) in table.index else (f"{b} − {a}", metric)
    if key not in table.index:
        raise ValueError(f"the table holds no test of {a} and {b} on {metric!r}")
    row, n = table.loc[key], table.attrs["questions"]
    differ = int(row["wins"] + row["losses"])
    if not differ:
        same = f"result (found in the top {table.attrs['k']} or not)" if metric == SUCCESS else METRICS[metric].at(table.attrs["k"])
        return f"{a} and {b} give every one of the {n} questions the same {same}"
    leader, more, fewer = (row["A"], row["wins"], row["losses"]) if row["wins"] >= row["losses"] else (row["B"], row["losses"], row["wins"])
    split = f"{more} to {fewer} for {leader}" if more != fewer else f"{more} each way"
    ahead = row["verdict"].replace(" ahead", "")
    if row["verdict"] != TOO_CLOSE and (ahead != leader or more == fewer):  # the test reads the mean, not the count
        split += f", but {ahead} wins by more"
    outcome = f"**{ahead} is ahead**, more than luck explains" if row["verdict"] != TOO_CLOSE else f"**{TOO_CLOSE}**"
    return f"{a} and {b} differ on {differ} of {n} questions, {split}: {outcome}"


def plain_summary(table: pd.DataFrame, metric: str | None = None) -> str:
    """The verdicts (on one metric, or all) in one sentence: who is clearly ahead of whom; every other gap too close;
    and how many tests were judged together."""
    rows = table if metric is None else table.xs(metric, level="metric", drop_level=False)
    k, n = table.attrs["k"], table.attrs["questions"]
    ahead = [f"{r.verdict.replace(' ahead', '')} over {r.B if r.verdict == f'{r.A} ahead' else r.A} on "
             f"{_metric_label(m, k)} ({max(r.wins, r.losses)}–{min(r.wins, r.losses)})"
             for (_, m), r in rows.iterrows() if r.verdict != TOO_CLOSE]
    where = f"On {_metric_label(metric, k)}, " if metric else ""
    text = where + (f"no gap between them passed the test on these {n} questions: every one is too close to call" if not ahead
                    else "clearly ahead: " + "; ".join(ahead) + ". Every other gap is too close to call")
    text += f" ({table.attrs['family']}, judged together)"  # the family size beside the verdicts
    return text[0].upper() + text[1:]  # a sentence of its own, with or without the metric in front


def plain_table(table: pd.DataFrame) -> pd.DataFrame:
    """The comparisons as a grid in plain words, a row per pair and a column per metric, e.g. "vector +0.085
    (14–4): too close to call". The gap's sign names the leader: the tests weigh how much each question moved."""
    def cell(r) -> str:
        if not r["wins"] + r["losses"]:
            return "no question differs"
        leader, more, fewer = (r["A"], r["wins"], r["losses"]) if r["difference"] >= 0 else (r["B"], r["losses"], r["wins"])
        return f"{leader} +{abs(r['difference']):.3f} ({more}–{fewer}): " + (TOO_CLOSE if r["verdict"] == TOO_CLOSE else "ahead")

    grid = table.apply(cell, axis=1).unstack("metric")[list(dict.fromkeys(table.index.get_level_values("metric")))]
    grid.columns = [_metric_label(m, table.attrs["k"]) for m in grid.columns]
    return grid.loc[list(dict.fromkeys(table.index.get_level_values("pair")))].rename_axis(
        f"mean gap (questions won each way), of {table.attrs['questions']}")


def against_chance(runs: Mapping, qrels: Mapping, n_chunks: int, k: int = 3) -> pd.DataFrame:
    """The positive control: per run, the questions found in the top k against what a random order of the chunks
    finds (exactly: each question has its own chance), and the chance of doing as well by luck."""
    ranks = first_relevant_ranks(runs, qrels)
    k = check_k(k)
    chances = chance_found(ranks["n_relevant"].tolist(), n_chunks, k)
    rows = {name: {"found": int((ranks[name].fillna(k + 1) <= k).sum()), "by chance": float(chances.sum()),
                   "p": beats_chance(int((ranks[name].fillna(k + 1) <= k).sum()), chances)} for name in runs}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("run")
    table.attrs.update(k=k, questions=len(ranks))
    return table


def plain_chance(table: pd.DataFrame, alpha: float = ALPHA) -> str:
    """:func:`against_chance` in plain words: found, against about what luck finds, and whether that is a clear yes."""
    k, n = table.attrs["k"], table.attrs["questions"]
    parts = [f"{name} finds {int(r['found'])} of {n}" for name, r in table.iterrows()]
    clear = all(table["p"] * len(table) < alpha)
    return (f"In the top {k}, {', '.join(parts)}; a random order of the chunks finds about {table['by chance'].iloc[0]:.0f}. "
            + ("**Every run beats chance, far beyond what luck explains: a clear yes.**" if clear else
               "Not every run is clearly better than chance."))


def interval_table(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Each run's mean of each metric at k (success and the registry's tested metrics unless named) with a 95%
    interval over the questions (Wilson for 0/1 values, else the percentile bootstrap): rows ``(run, metric)``."""
    rows = {}
    for metric in _metric_names([SUCCESS, *tested_metrics()] if metrics is None else metrics):
        wide = values_at_k(runs, qrels, k, metric)
        for name in wide:
            rows[(name, metric)] = mean_interval(wide[name])
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["run", "metric"])


def rank_groups(values: Mapping[str, float] | pd.Series, decimals: int = 3) -> list[list[str]]:
    """Names best first; names equal as printed with ``decimals`` places share a group (no winner the table hides)."""
    series = pd.Series(values, dtype=float)
    if series.empty or not np.isfinite(series).all():
        raise ValueError(f"rank_groups needs finite values, got {dict(series)}")
    printed = series.map(lambda value: f"{value:.{decimals}f}")  # as a table prints it (np.round differs: 0.9175)
    return [list(printed.index[printed == level]) for level in sorted(set(printed), key=float, reverse=True)]


def slice_gap(ranks: pd.DataFrame, run: str, k: int = 3, alpha: float = ALPHA) -> tuple[pd.DataFrame, str]:
    """One run's questions found in the top k per slice, and in plain words whether the two slices differ by more
    than luck (Fisher's exact test: the slices hold different questions, so not paired)."""
    found = (ranks[run].fillna(check_k(k) + 1) <= k).groupby(ranks["slice"]).agg(["sum", "count"])
    found.columns = ["found", "questions"]
    if len(found) != 2:
        raise ValueError(f"slice_gap compares two slices, the table has {len(found)}: {list(found.index)}")
    (a, ra), (b, rb) = found.iterrows()
    p = two_slices(int(ra["found"]), int(ra["questions"]), int(rb["found"]), int(rb["questions"]))
    words = "far more than luck explains" if p < alpha else TOO_CLOSE
    return found, (f"{run} finds {int(ra['found'])} of {int(ra['questions'])} {a} questions and {int(rb['found'])} of "
                   f"{int(rb['questions'])} {b} questions in the top {k}: **{words}**")
