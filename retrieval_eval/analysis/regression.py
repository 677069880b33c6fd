"""Regression checks: is a candidate run worse than a baseline, question by question (:func:`gate`, behind ``make
gate``), and what an approximate index costs against exact search (:func:`ann_tradeoff`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_list, check_probability
from ..core.evaluation import per_question_scores
from ..core.metrics import first_relevant_rank, relevant_ids
from ..core.registry import METRICS
from .statistics import (
    ALPHA,
    CORRECTION,
    SEED,
    SIDES,
    _score,
    fewest_losses,
    margin_test,
    paired_test,
    wilson_ci,
)

DIFF_COLUMNS = ("question", "baseline", "candidate", "baseline rank", "candidate rank")


MODES = SIDES  # fail when shown worse beyond the margin; fail unless shown within it


@dataclass(frozen=True)
class Verdict:
    """What :func:`gate` found: both means, the test (:func:`~retrieval_eval.analysis.statistics.paired_test` at margin
    0 in mode "worse", else :func:`~retrieval_eval.analysis.statistics.margin_test`), its one-sided ``p`` (None when
    the candidate is not below the baseline: nothing to test), ``worse`` (the gate fails), the ``mode``, ``bound`` (the
    score test's one-sided bound of the mean drop: lower in mode "worse", upper in "non-inferiority"; None at margin 0),
    ``smallest`` (mode "worse": the fewest questions lost, none gained, that it can show worse, None when no loss on
    these questions can; "non-inferiority": the upper bound of an unchanged candidate, below which no margin passes),
    ``notes`` (what the caller adds to the sentence, e.g. about the baseline) and the per-question ``diff`` (the
    questions whose value changed, losses first, with both first relevant ranks; 0 = none retrieved)."""

    metric: str
    margin: float
    n: int
    baseline: float
    candidate: float
    test: dict
    p: float | None
    worse: bool
    diff: pd.DataFrame
    mode: str = "worse"
    bound: float | None = None
    smallest: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def status(self) -> int:
        return 1 if self.worse else 0

    @property
    def label(self) -> str:
        if self.mode == "worse":
            return "worse" if self.worse else "not shown worse"
        return "not shown within the margin" if self.worse else "within the margin"

    @property
    def lost(self) -> int:
        return int((self.diff["candidate"] < self.diff["baseline"]).sum())

    @property
    def sentence(self) -> str:
        change = (f"{self.metric} went from {self.baseline:.3f} to {self.candidate:.3f} on {self.n:,} questions "
                  f"({self.candidate - self.baseline:+.3f}; {self.lost:,} question{'s' * (self.lost != 1)} lost, "
                  f"{len(self.diff) - self.lost:,} gained)")
        level, test = f"one-sided {1 - ALPHA:.0%}", f"{self.test['test']}, p = {self.p:.2g}" if self.p is not None else ""
        if self.mode != "worse":
            text = (f"{self.label.capitalize()}: {change}; the {level} upper bound of the drop, {self.bound:+.3f} ({test}), "
                    f"is {'not ' * self.worse}below the margin {self.margin:g}. On {self.n:,} questions even an unchanged "
                    f"candidate's bound is {self.smallest:.3f}: no margin at or below it can pass.")
        elif self.worse:
            shown = (f"the {level} lower bound of the drop, {self.bound:+.3f} ({test}), is above the margin {self.margin:g}"
                     if self.margin else f"a one-sided paired test shows it worse ({test}; {self.test['method']})")
            text = f"Worse: {change}; {shown}."
        else:
            beyond = f" by more than the margin {self.margin:g}" if self.margin else ""
            why = f"p = {self.p:.2g} ≥ {ALPHA}" if self.p is not None else "the candidate is not below the baseline"
            reach = (f"it can see at best a loss of {self.smallest:.0f} question{'s' * (self.smallest != 1)} with none "
                     f"gained ({self.smallest / self.n:.3f})"
                     if self.smallest is not None else f"no loss of these questions can show it worse{beyond}")
            text = (f"Not shown worse: {change}; a one-sided paired test does not show it worse{beyond} ({why}). On "
                    f"{self.n:,} questions {reach}; smaller losses pass (MODE=non-inferiority fails unless the drop is "
                    "shown within the margin).")
        return " ".join((text, *self.notes))

    def as_dict(self) -> dict:
        return {"verdict": self.label, "exit": self.status, "sentence": self.sentence, "mode": self.mode,
                "metric": self.metric, "margin": self.margin, "questions": self.n, "baseline": self.baseline,
                "candidate": self.candidate, "p_one_sided": self.p, "alpha": ALPHA, "test": self.test["test"],
                "method": self.test["method"], "drop_bound": self.bound,
                "drop_bound_side": None if self.bound is None else "lower" if self.mode == "worse" else "upper",
                "smallest": self.smallest, "notes": list(self.notes), "diff": self.diff.to_dict(orient="records")}


def decide(baseline: np.ndarray, candidate: np.ndarray, margin: float = 0.0, mode: str = "worse") -> tuple:
    """The gate's decision on per-question values (the same order in both): ``(test, p, bound, worse)``."""
    drops = baseline - candidate
    if mode == "worse" and not margin:
        test = paired_test(baseline, candidate)
        p = test["p"] / 2 if drops.mean() > 1e-12 else None  # one-sided: the sign-flip null is symmetric
        return test, p, None, p is not None and p < ALPHA
    test = margin_test(drops, margin, mode)
    return test, test["p"], test["bound"], (test["p"] < ALPHA) == (mode == "worse")


def gate(baseline: Mapping[str, Sequence[str]], candidate: Mapping[str, Sequence[str]], qrels: Mapping,
         metric: str = "recall", k: int = 3, margin: float = 0.0, scores: pd.DataFrame | None = None,
         mode: str = "worse") -> Verdict:
    """Does the gate fail ``candidate`` against ``baseline`` (rankings by question) at ``metric``@``k``?
    ``mode="worse"``: fail when shown worse by more than ``margin`` (H0: the mean drop is at most the margin), by
    McNemar's exact test (0/1 values) or the exact sign-flip test at margin 0, and by the score test of
    :func:`~retrieval_eval.analysis.statistics.margin_test` above it. ``mode="non-inferiority"``: fail unless that
    test's one-sided 95% upper bound of the mean drop is below ``margin`` (> 0). Error rates by simulation:
    :func:`gate_error_rates`. ``scores``: the two runs' :func:`~retrieval_eval.core.evaluation.per_question_scores`
    (runs "baseline" and "candidate"), if at hand."""
    if metric not in METRICS:
        raise ValueError(f"metric must be a registered metric {list(METRICS)}, got {metric!r}")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise ValueError(f"margin must be a number from 0 up to 1, got {margin!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if mode != "worse" and not margin:
        raise ValueError("mode non-inferiority needs a margin above 0: the drop you accept (e.g. margin=0.02)")
    if scores is None or not ((scores["metric"] == metric) & (scores["k"] == k)).any():
        scores = per_question_scores({"baseline": baseline, "candidate": candidate}, qrels, [k], [metric])
    scores = scores[(scores["metric"] == metric) & (scores["k"] == k)]
    table = scores.pivot(index="question", columns="run", values="value").reindex(list(qrels))
    base, cand = table["baseline"], table["candidate"]
    test, p, bound, worse = decide(base.to_numpy(), cand.to_numpy(), margin, mode)
    smallest = (fewest_losses(len(table), margin) if mode == "worse"
                else margin_test(np.zeros(len(table)), margin, mode)["bound"])
    changed = (base != cand).to_numpy()
    diff = table[changed].rename_axis(columns=None).reset_index()
    diff = diff.assign(**{name: [first_relevant_rank(run.get(q, []), relevant_ids(qrels[q])) or 0 for q in diff["question"]]
                          for name, run in (("baseline rank", baseline), ("candidate rank", candidate))})[list(DIFF_COLUMNS)]
    diff = diff.assign(order=diff["candidate"] - diff["baseline"]).sort_values(["order", "question"], kind="stable")
    return Verdict(METRICS[metric].at(k), float(margin), len(table), float(base.mean()), float(cand.mean()), test, p,
                   worse, diff.drop(columns="order").reset_index(drop=True), mode, bound, smallest)


SIMULATED = ("0/1", "graded")  # per question: lost or gained whole; or by a uniform amount in (0, 1]


def _simulated(rng, kind: str, n: int, drop: float, churn: float, simulations: int) -> tuple[np.ndarray, np.ndarray]:
    """The summed losses and gains of ``simulations`` candidates on n questions whose true mean drop is ``drop``."""
    lose = churn + drop * (2 if kind == "graded" else 1)  # a graded change averages 1/2
    changed = rng.multinomial(n, [lose, churn, 1 - lose - churn], size=simulations)[:, :2]
    if kind == "0/1":
        return changed[:, 0].astype(float), changed[:, 1].astype(float)
    sizes = 1 - rng.random((simulations, 2, changed.max()))  # (0, 1]
    sums = np.where(np.arange(changed.max()) < changed[:, :, None], sizes, 0).sum(axis=2)
    return sums[:, 0], sums[:, 1]


def gate_error_rates(ns: Sequence[int] = (5, 20, 47, 300, 10_000), margin: float = 0.05, simulations: int = 2_000,
                     churn: float = 0.1, seed: int = SEED) -> pd.DataFrame:
    """The gate's error rates by simulation, per kind of value and n: how often it fails a candidate whose true mean
    drop is 0 (mode "worse", margin 0: McNemar's test, 0/1 values only), fails one whose true drop equals ``margin``
    (mode "worse" at that margin) and passes one whose true drop equals the margin (mode "non-inferiority"): promises
    of at most α, and "at most α" says whether the rate's interval reaches α; and how often non-inferiority fails a
    candidate whose true drop is 0 (its price, which more questions and fewer changed ones lower). Each simulated
    question is gained with chance ``churn`` and lost with chance ``churn`` + the drop (graded: + twice the drop,
    changes of uniform size), independently. Each rate with its 95% Wilson interval over ``simulations`` candidates;
    :func:`decide`'s own rules, vectorised over the candidates (a test checks they agree)."""
    from scipy import stats
    ns = [check_k(n, "ns: a question count") for n in check_list(ns, "ns", "question counts")]
    margin, simulations = check_probability(margin, "margin"), check_k(simulations, "simulations")
    if isinstance(churn, bool) or not isinstance(churn, (int, float)) or not 0 <= churn <= 0.5 - margin:
        raise ValueError(f"churn must be a share from 0 to 0.5 - margin ({0.5 - margin:g}): a graded question is lost "
                         f"with chance churn + 2 × margin and gained with chance churn; got {churn!r}")
    rng, rows = np.random.default_rng(seed), {}
    critical = stats.norm.ppf(1 - ALPHA)
    for kind in SIMULATED:
        for n in ns:
            rates = {}
            if kind == "0/1":
                lost, gained = _simulated(rng, kind, n, 0.0, churn, simulations)
                p = stats.binom.cdf(gained, lost + gained, 0.5)  # McNemar one-sided: P(wins <= gained)
                rates["false fail at drop 0 (margin 0)"] = (lost > gained) & (p < ALPHA)
            lost, gained = _simulated(rng, kind, n, margin, churn, simulations)
            rates[f"false fail at drop {margin:g} (margin {margin:g})"] = _score(lost, gained, n, margin, -CORRECTION) > critical
            rates[f"false pass at drop {margin:g} (non-inferiority)"] = _score(lost, gained, n, margin, CORRECTION) < -critical
            lost, gained = _simulated(rng, kind, n, 0.0, churn, simulations)
            rates["fail at drop 0 (non-inferiority)"] = ~(_score(lost, gained, n, margin, CORRECTION) < -critical)
            for name, hits in rates.items():
                share, low, high = wilson_ci(int(hits.sum()), simulations)
                promise = not name.startswith("fail at drop 0")  # the last is a price, promised nothing
                rows[(kind, n, name)] = {"rate": share, "low": low, "high": high, "at most α": low <= ALPHA if promise else None}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis(["values", "questions", "error"])
    table.attrs.update(alpha=ALPHA, margin=margin, simulations=simulations, churn=churn)
    return table


ANN_SETTINGS = ((4, 4), (4, 16), (8, 16), (16, 16), (16, 64))  # (M, ef_search) of the HNSW graphs compared


def ann_tradeoff(n_chunks: int = 10_000, n_questions: int = 1_000, dim: int = 128, k: int = 3,
                 settings: Sequence[tuple[int, int]] = ANN_SETTINGS, noise: float = 0.5, seed: int = SEED) -> pd.DataFrame:
    """What an HNSW index (:func:`~retrieval_eval.retrieval.retrievers.hnsw_search`) costs against exact search, at a
    scale where it loses answers: ``n_chunks`` synthetic unit vectors with a low-dimensional structure, as embeddings
    have; each question is one chunk's vector plus noise, and that chunk is its one relevant chunk. Per setting
    (M, ef_search): the share of exact search's top k the index returns (overlap), recall@k of both, the gate's
    verdict (exact as baseline), and the seconds to build the graph and to search it for all questions, timed apart.
    ``attrs["exact"]``: recall@k, and the seconds to build and search faiss's exact ``IndexFlatIP`` (one thread)."""
    import faiss

    from ..retrieval.retrievers import hnsw_search
    settings = check_list(settings, "settings", "(M, ef_search) pairs")
    rng = np.random.default_rng(seed)
    chunks = rng.standard_normal((n_chunks, 16), dtype=np.float32) @ rng.standard_normal((16, dim), dtype=np.float32)
    chunks += 0.5 * rng.standard_normal((n_chunks, dim), dtype=np.float32)
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    source = rng.choice(n_chunks, n_questions, replace=False)
    queries = chunks[source] + noise * rng.standard_normal((n_questions, dim), dtype=np.float32) / np.sqrt(dim) * 4
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids = [f"c{i:06d}" for i in range(n_chunks)]
    qrels = {f"q{j:05d}": {ids[i]: 1} for j, i in enumerate(source)}

    def exact_top():
        scores = queries @ chunks.T
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        return [list(row[np.lexsort((row, -s[row]))]) for row, s in zip(top, scores)]

    exact = {q: [ids[i] for i in row] for q, row in zip(qrels, exact_top())}
    faiss.omp_set_num_threads(1)
    start, flat = time.perf_counter(), faiss.IndexFlatIP(dim)
    flat.add(chunks)
    built = time.perf_counter()
    flat.search(queries, k)
    exact_seconds = {"build": built - start, "search": time.perf_counter() - built}
    rows = {}
    for m, ef in settings:
        seconds = {}
        found = hnsw_search(chunks, queries, k, m, ef, seconds=seconds)
        run = {q: [ids[i] for i in row] for q, row in zip(qrels, found)}
        verdict = gate(exact, run, qrels, "recall", k)
        overlap = np.mean([len(set(a) & set(b)) / k for a, b in zip(exact.values(), run.values())])
        rows[f"M {m}, ef {ef}"] = {"overlap with exact": overlap, f"recall@{k}": verdict.candidate,
                                   "answers lost": int((verdict.diff["candidate"] < verdict.diff["baseline"]).sum()),
                                   "answers gained": int((verdict.diff["candidate"] > verdict.diff["baseline"]).sum()),
                                   "gate": verdict.label, "p": verdict.p,
                                   "build, s": seconds["build"], "search, s": seconds["search"]}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis(f"HNSW, {n_chunks:,} chunks, {n_questions:,} questions")
    table.attrs["exact"] = {f"recall@{k}": gate(exact, exact, qrels, "recall", k).baseline, "build, s": exact_seconds["build"],
                             "search, s": exact_seconds["search"]}
    return table
