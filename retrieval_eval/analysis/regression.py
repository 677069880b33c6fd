"""Regression checks: is a candidate run worse than a baseline, question by question (:func:`gate`, behind ``make
gate``), and what an approximate index costs against exact search (:func:`ann_tradeoff`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.checks import check_list
from ..core.evaluation import per_question_scores
from ..core.metrics import first_relevant_rank, relevant_ids
from ..core.registry import METRICS
from .statistics import ALPHA, SEED, bootstrap_ci, fewest_discordant, paired_test, permutation_test

DIFF_COLUMNS = ("question", "baseline", "candidate", "baseline rank", "candidate rank")


MODES = ("worse", "non-inferiority")  # fail when shown worse beyond the margin; fail unless shown within it


@dataclass(frozen=True)
class Verdict:
    """What :func:`gate` found: both means, the drop beyond the margin, the paired test and its one-sided ``p``
    (None when the candidate is not below baseline − margin: nothing to test), ``worse`` (the gate fails), the
    ``mode``, ``bound`` (the one-sided 95% upper bound of the mean drop; None in mode "worse") and the per-question ``diff`` (the questions
    whose value changed, losses first, with both first relevant ranks; 0 = none retrieved)."""

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

    @property
    def status(self) -> int:
        return 1 if self.worse else 0

    @property
    def label(self) -> str:
        if self.mode == "worse":
            return "worse" if self.worse else "not shown worse"
        return "not shown within the margin" if self.worse else "within the margin"

    @property
    def sentence(self) -> str:
        lost = int((self.diff["candidate"] < self.diff["baseline"]).sum())
        change = (f"{self.metric} went from {self.baseline:.3f} to {self.candidate:.3f} on {self.n} questions "
                  f"({self.candidate - self.baseline:+.3f}; {lost} questions lost, {len(self.diff) - lost} gained)")
        if self.mode != "worse":
            return (f"{self.label.capitalize()}: {change}; the one-sided {1 - ALPHA:.0%} upper bound of the drop, "
                    f"{self.bound:+.3f}, is {'not ' * self.worse}below the margin {self.margin:g}.")
        beyond = f" by more than the margin {self.margin:g}" if self.margin else ""
        if self.worse:
            return (f"Worse: {change}; a one-sided paired test shows it worse{beyond} "
                    f"({self.test['test']}, {self.test['method']}: p = {self.p:.2g} < {ALPHA}).")
        why = (f"p = {self.p:.2g} ≥ {ALPHA}" if self.p is not None
               else f"the candidate is not below the baseline{' minus the margin' * bool(self.margin)}")
        fewest = fewest_discordant(2 * ALPHA)  # one-sided: 0.5^d < α
        return (f"Not shown worse: {change}; a one-sided paired test does not show it worse{beyond} ({why}). "
                f"On {self.n} questions it can see at best a loss of {fewest} questions with none gained "
                f"({fewest / self.n:.3f}{' beyond the margin' * bool(self.margin)}); "
                f"smaller losses pass (MODE=non-inferiority fails unless the drop is shown within the margin).")

    def as_dict(self) -> dict:
        return {"verdict": self.label, "exit": self.status, "sentence": self.sentence, "mode": self.mode,
                "metric": self.metric, "margin": self.margin, "questions": self.n, "baseline": self.baseline,
                "candidate": self.candidate, "p_one_sided": self.p, "alpha": ALPHA, "test": self.test["test"],
                "method": self.test["method"], "drop_upper_bound": self.bound,
                "diff": self.diff.to_dict(orient="records")}


def gate(baseline: Mapping[str, Sequence[str]], candidate: Mapping[str, Sequence[str]], qrels: Mapping,
         metric: str = "recall", k: int = 3, margin: float = 0.0, scores: pd.DataFrame | None = None,
         mode: str = "worse") -> Verdict:
    """Does the gate fail ``candidate`` against ``baseline`` (rankings by question) at ``metric``@``k``?
    ``mode="worse"``: fail when shown worse by more than ``margin`` (H0: the mean drop is at most the margin; the
    per-question drops minus the margin are tested one-sided with the paired test of
    :mod:`~retrieval_eval.analysis.statistics`: exact McNemar when the margin is 0 and the values 0 or 1, else sign
    flips of the shifted drops; its two-sided p halves). ``mode="non-inferiority"``: fail unless the one-sided 95%
    bootstrap upper bound of the mean drop is below ``margin`` (> 0). ``scores``: the two runs'
    :func:`~retrieval_eval.core.evaluation.per_question_scores` (runs "baseline" and "candidate"), if at hand."""
    if metric not in METRICS:
        raise ValueError(f"metric must be a registered metric {list(METRICS)}, got {metric!r}")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise ValueError(f"margin must be a number from 0 up to 1, got {margin!r}")
    if mode not in MODES or (mode != "worse" and not margin):
        raise ValueError(f"mode must be one of {list(MODES)} (non-inferiority with a margin above 0), got {mode!r}")
    if scores is None or not ((scores["metric"] == metric) & (scores["k"] == k)).any():
        scores = per_question_scores({"baseline": baseline, "candidate": candidate}, qrels, [k], [metric])
    scores = scores[(scores["metric"] == metric) & (scores["k"] == k)]
    table = scores.pivot(index="question", columns="run", values="value").reindex(list(qrels))
    base, cand = table["baseline"], table["candidate"]
    test = paired_test(base, cand) if margin == 0 else permutation_test(base - margin, cand)
    drop = float((base - cand).mean()) - margin
    p = test["p"] / 2 if drop > 1e-12 else None
    bound = bootstrap_ci(base - cand, confidence=1 - 2 * ALPHA)[2] if mode != "worse" else None
    worse = p is not None and p < ALPHA if mode == "worse" else not bound < margin
    diff = table[base != cand].rename_axis(columns=None).reset_index()
    diff = diff.assign(**{name: [first_relevant_rank(run.get(q, []), relevant_ids(qrels[q])) or 0 for q in diff["question"]]
                          for name, run in (("baseline rank", baseline), ("candidate rank", candidate))})[list(DIFF_COLUMNS)]
    diff = diff.assign(order=diff["candidate"] - diff["baseline"]).sort_values(["order", "question"], kind="stable")
    return Verdict(METRICS[metric].at(k), float(margin), len(table), float(base.mean()), float(cand.mean()), test, p,
                   worse, diff.drop(columns="order").reset_index(drop=True), mode, bound)


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
