"""Agreement between two labellings of the same questions (two judges, a judge and the evidence rule, a judge and a
model): Cohen's kappa on relevant or not, weighted kappa on the grades, the confusion table (scikit-learn), and the
question that matters for evaluation: do the retrievers' order (Kendall's tau over the run means, SciPy) and the
paired verdicts survive the change of labeller?"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_qrels, check_runs
from .comparisons import SUCCESS, paired_comparisons, values_at_k
from .statistics import SEED

RESAMPLES = 1000  # bootstrap resamples of the questions for kappa's interval
DEPTH = 10  # the pool judged by default: the union of every run's top DEPTH, with every labelled chunk


class Agreement(NamedTuple):
    """What :func:`agreement` measured; ``summary()`` says it in words."""

    pairs: int  #: (question, chunk) pairs compared: the pool, an unlabelled chunk counting as grade 0
    questions: int  #: questions compared
    observed: float  #: share of pairs given the same grade
    kappa: float  #: Cohen's kappa on relevant (grade > 0) or not
    interval: tuple  #: kappa's 95% percentile bootstrap interval, resampling questions
    weighted_kappa: float  #: Cohen's kappa on the grades, linear weights
    confusion: pd.DataFrame  #: pairs by grade: rows the first labelling, columns the second
    names: tuple  #: the two labellings' names
    scored: int | None = None  #: with ``runs``: the questions both labellings give a relevant chunk (those scored)
    means: pd.DataFrame | None = None  #: run × labelling: the metric's mean at k on the ``scored`` questions
    tau: float | None = None  #: Kendall's tau-b between the runs' means under each labelling
    verdicts: pd.DataFrame | None = None  #: per pair of runs: the verdict under each labelling and whether it held

    def summary(self) -> str:
        """The agreement in a few Markdown sentences, every number computed."""
        a, b = self.names
        low, high = self.interval
        lines = [f"- {a} and {b} give the same grade to {self.observed:.0%} of {self.pairs} (question, chunk) pairs "
                 f"over {self.questions} questions; Cohen's kappa (relevant or not) **{self.kappa:.2f}** (95% interval "
                 f"{low:.2f} to {high:.2f}, resampling questions), weighted kappa on the grades {self.weighted_kappa:.2f}."]
        if self.means is not None:
            order = {name: "".join((" = " if v == last else " > ") + run for run, v, last in zip(
                ranked.index, ranked, [None, *ranked]))[3:] for name in self.names
                for ranked in [self.means[name].sort_values(ascending=False, kind="stable")]}  # ties shown as =, not ordered
            same = "the same" if order[a] == order[b] else "**a different**"
            held = int(self.verdicts["held"].sum())
            lines.append(f"- Order of the runs: {same} order ({a}: {order[a]}; {b}: {order[b]}), Kendall's tau "
                         + (f"{self.tau:.2f}" if self.tau == self.tau else "undefined (a labelling ties every run)") + f" over {len(self.means)} runs (scored on the {self.scored} questions both labellings give a relevant chunk); {held} of {len(self.verdicts)} paired verdicts "
                         "hold under both labellings.")
        return "\n".join(lines)


def agreement(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]], *,
              pool: Mapping[str, Collection[str]] | None = None, runs: Mapping | None = None, k: int = 3,
              metric: str = SUCCESS, names: tuple[str, str] = ("A", "B"), depth: int = DEPTH,
              resamples: int = RESAMPLES) -> Agreement:
    """Agreement between labellings ``a`` and ``b`` (qrels ``{question: {chunk: grade}}``, the same questions) over
    ``pool`` ``{question: chunk ids}`` (its questions alone, what a labelling leaves out graded 0): by default every chunk either labels, with every run's top ``depth`` (without
    ``runs`` or a pool, only labelled chunks are compared: give one). With
    ``runs``, also the runs' means of ``metric`` at ``k`` under each labelling (on the questions both give a relevant
    chunk: one set of questions), Kendall's tau between them, and the paired verdicts (:func:`.paired_comparisons`) under each. Grades are
    whole numbers; negative ones count as 0."""
    from scipy.stats import kendalltau  # here, not on import: the gate loads neither
    from sklearn.metrics import cohen_kappa_score, confusion_matrix
    a, b, k, depth = check_qrels(a, scorable=False), check_qrels(b, scorable=False), check_k(k), check_k(depth, "depth")
    if pool is not None:  # the pool's questions: one a labelling does not hold counts as all 0 (a judge's skipped pairs)
        a, b = ({q: labels.get(q, {}) for q in pool} for labels in (a, b))
        if not any(pool.values()):
            raise ValueError("the pool holds no (question, chunk) pair to compare")
    runs = None if runs is None else check_runs(runs, a, scorable=False)[0]
    fractional = [(name, q) for name, labels in zip(names, (a, b)) for q, g in labels.items() if any(v % 1 for v in g.values())]
    if fractional:
        raise ValueError(f"grades must be whole numbers: {fractional[0][0]} grades question {fractional[0][1]!r} "
                         f"{a[fractional[0][1]] if fractional[0][0] == names[0] else b[fractional[0][1]]}")
    if set(a) != set(b):
        raise ValueError(f"the labellings hold different questions: only in {names[0]} {sorted(set(a) - set(b))}, "
                         f"only in {names[1]} {sorted(set(b) - set(a))}")
    if pool is None:
        pool = {q: {*a[q], *b[q], *(c for run in (runs or {}).values() for c in run.get(q, [])[:depth])} for q in a}
    missing = sorted(set(a) - set(pool))
    if missing:
        raise ValueError(f"the pool holds no chunks for question(s) {missing}")
    units = pd.DataFrame([(q, c, max(int(a[q].get(c, 0)), 0), max(int(b[q].get(c, 0)), 0)) for q in a for c in sorted(pool[q])],
                         columns=["question", "chunk", "a", "b"])
    grades = sorted({*units["a"], *units["b"]})
    binary_a, binary_b = (units["a"] > 0).to_numpy(), (units["b"] > 0).to_numpy()
    questions = pd.factorize(units["question"])[0]
    cells = np.zeros((len(a), 4))  # per question: pairs (both relevant, A only, B only, neither)
    np.add.at(cells, (questions, 2 * ~binary_a + ~binary_b), 1)
    rng = np.random.default_rng(SEED)
    drawn = np.stack([np.bincount(rng.integers(len(a), size=len(a)), minlength=len(a))
                      for _ in range(check_k(resamples, "resamples"))]) @ cells
    resampled = _kappa(drawn)
    confusion = pd.DataFrame(confusion_matrix(units["a"], units["b"], labels=grades),
                             index=pd.Index(grades, name=names[0]), columns=pd.Index(grades, name=names[1]))
    result = Agreement(len(units), len(a), float((units["a"] == units["b"]).mean()),
                       float(cohen_kappa_score(binary_a, binary_b)), tuple(float(v) for v in np.nanpercentile(resampled, [2.5, 97.5])),
                       float(cohen_kappa_score(units["a"], units["b"], weights="linear")), confusion, tuple(names))
    if runs is None:
        return result
    common = [q for q in a if any(v > 0 for v in a[q].values()) and any(v > 0 for v in b[q].values())]
    scored = [({n: {q: run[q] for q in common} for n, run in runs.items()}, {q: labels[q] for q in common}) for labels in (a, b)]
    means = pd.DataFrame({name: values_at_k(*pair, k, metric).mean() for name, pair in zip(names, scored)})
    tests = [paired_comparisons(*pair, k, [metric])["verdict"] for pair in scored]
    verdicts = pd.DataFrame({names[0]: tests[0], names[1]: tests[1]}).droplevel("metric")
    verdicts["held"] = verdicts[names[0]] == verdicts[names[1]]
    return result._replace(scored=len(common), means=means, tau=float(kendalltau(means[names[0]], means[names[1]]).statistic), verdicts=verdicts)


def _kappa(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each row of 2 × 2 counts (both, A only, B only, neither), for the bootstrap's thousand
    resamples at once (scikit-learn's, one at a time, costs seconds; a test holds them equal); nan where p_e = 1."""
    n = cells.sum(axis=1)
    observed = (cells[:, 0] + cells[:, 3]) / n
    chance = ((cells[:, 0] + cells[:, 1]) * (cells[:, 0] + cells[:, 2]) + (cells[:, 2] + cells[:, 3]) * (cells[:, 1] + cells[:, 3])) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)
