"""The batch evaluator: the four metrics for thousands of questions at once, with NumPy.

The same values as the per-question functions of :mod:`retrieval_eval.metrics` (equal to 1e-12;
the tests check it on random cases), computed on arrays for all questions at once instead of calling
the metric functions question by question.
:func:`batch_scores` runs four numbered steps, one function each.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from .checks import check_gains, check_ks, check_question_ids, check_ranking, naming_question
from .evaluation import KS, METRICS, check_run


def batch_scores(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    ks: Sequence[int] = KS,
    chunk_ids: Collection[str] | None = None,
) -> pd.DataFrame:
    """Recall@k, precision@k, reciprocal rank at k and nDCG@k for many questions at once, with NumPy.

    The same values as :func:`~retrieval_eval.metrics.recall_at_k`,
    :func:`~retrieval_eval.metrics.precision_at_k`, :func:`~retrieval_eval.metrics.reciprocal_rank`
    (with cut-off k) and :func:`~retrieval_eval.metrics.ndcg_at_k` question by question, in four steps:

    1. check the input (the checks of the per-question functions, done in bulk) and read each
       question's ranking and judged gains (:func:`_read_questions`);
    2. a gains matrix, questions × depth (depth = the largest k), holds the judged gain of the chunk
       at each rank, 0 when unjudged or when the ranking is shorter (:func:`_gains_matrix`);
    3. the ideal gains: every judged gain of each question, highest first (:func:`_ideal_matrix`);
    4. cumulative sums along the ranks, read at column k − 1 (:func:`_scores_at`): recall@k =
       hits@k / |relevant|, precision@k = hits@k / k (trec_eval's ``P_k``), reciprocal rank =
       1 / rank of the first relevant chunk when it is within k, nDCG@k = DCG@k / IDCG@k.

    Use it for thousands of questions; the per-question functions stay the readable definition.

    Args:
        run: ``{question_id: ranking}``, each ranking a list of chunk ids, best first (may be
            empty or shorter than k: missing ranks are not relevant).
        qrels: ``{question_id: {chunk_id: gain}}``; every question must have a gain > 0.
            Questions are scored in qrels order; run questions not in the qrels are ignored.
        ks: the cut-offs, integers >= 1.
        chunk_ids: when given, every id in the run and qrels must be one of these
            (see :func:`~retrieval_eval.evaluation.check_run`).

    Returns:
        A DataFrame indexed by question id (``question``) with columns ``(metric, k)`` for metric
        in recall, precision, MRR, nDCG (as :func:`~retrieval_eval.evaluation.evaluate`); its
        ``.mean()`` is the row ``evaluate`` gives for this run.

    Raises:
        ValueError: ``qrels`` is empty, or ``ks`` is not a list of distinct integers >= 1
            (:func:`~retrieval_eval.checks.check_ks`: "ks must be a list of cut-offs, got 3");
            an id is not a str (:func:`~retrieval_eval.checks.check_ids`, the same message as the
            per-question functions); a question of the qrels has no ranking, a ranking is a string
            or repeats an id, a gain is not a finite number, or a question has no relevant chunk
            (each message names the question).

    Taught in: the README's "Your own data" (no notebook: the notebooks use the per-question functions).
    """
    ks = check_ks(ks)
    if chunk_ids is not None:
        check_run(run, qrels, chunk_ids)
    qids, rankings, judged, flat, n_relevant = _read_questions(run, qrels)
    depth = max(ks)
    gains = _gains_matrix(rankings, judged, depth)
    ideal = _ideal_matrix(flat, depth)
    table = pd.DataFrame(_scores_at(gains, ideal, n_relevant, ks), index=pd.Index(qids, name="question"))
    table.columns.names = ["metric", "k"]
    return table.reindex(columns=pd.MultiIndex.from_product([list(METRICS), ks], names=["metric", "k"]))


class _Judged(NamedTuple):
    """Every question's judged gains, flattened once in step 1 and read by step 3."""

    counts: np.ndarray  #: per question, how many ids are judged
    rows: np.ndarray  #: per judged id, its question's row
    gains: np.ndarray  #: per judged id, its gain (float), questions in order


def _read_questions(run: Mapping, qrels: Mapping) -> tuple[list, list, list, _Judged, np.ndarray]:
    """Step 1: the question ids (qrels order), their rankings, judged gains (as dicts and flattened)
    and numbers of relevant chunks.

    The checks of the per-question functions, done in bulk and fast when the input is sound: a
    ranking must be an ordered sequence of str ids without a repeated id; gains must map str ids to
    finite numbers, at least one above 0. Only a question that fails is read id by id, with the
    per-question checks (:func:`~retrieval_eval.checks.check_ranking`,
    :func:`~retrieval_eval.checks.check_gains`), so that the error names the id and the question.
    """
    check_question_ids(run, qrels)
    qids = list(qrels)
    if not qids:
        raise ValueError("qrels is empty: there is no question to score")
    missing = [q for q in qids if q not in run]
    if missing:
        raise ValueError(f"the run has no ranking for question(s) {missing[:5]} (they would drop out of the mean)")
    rankings = [run[q] for q in qids]
    for q, ranked in zip(qids, rankings):
        if not _sound_ranking(ranked):  # another kind of sequence, or a fault: the per-question check accepts or names it
            with naming_question(q):
                check_ranking(ranked)
    judged = [qrels[q] for q in qids]
    flat = _flat_gains(judged) if all(isinstance(gains, Mapping) for gains in judged) else None
    if flat is None:
        for q in qids:
            with naming_question(q):
                check_gains(qrels[q])
        flat = _flat_gains(judged, checked=True)
    n_relevant = np.bincount(flat.rows, weights=flat.gains > 0, minlength=len(qids))
    if (n_relevant == 0).any():
        empty = [qids[i] for i in np.flatnonzero(n_relevant == 0)[:5]]
        raise ValueError(f"question(s) {empty} have no relevant chunk (no gain > 0) and cannot be scored")
    return qids, rankings, judged, flat, n_relevant


def _sound_ranking(ranked) -> bool:
    """Whether ``ranked`` is a list or tuple of distinct str ids (the quick test; :func:`check_ranking` says why not)."""
    if not isinstance(ranked, (list, tuple)):
        return False
    try:
        "".join(ranked)  # a TypeError, raised in C, is the quickest sign of an id that is not a str
    except TypeError:
        return False
    return len(set(ranked)) == len(ranked)


def _flat_gains(judged: list, checked: bool = False) -> _Judged | None:
    """Every judged gain in one array, or ``None`` when an id is not a str or a gain not a finite number
    (``infer_dtype`` over all at once; ``checked``: the gains already passed the per-question check)."""
    counts = np.fromiter(map(len, judged), dtype=np.int64, count=len(judged))
    total = int(counts.sum())
    gains = np.fromiter(chain.from_iterable(g.values() for g in judged), dtype=object, count=total)
    if not checked:
        ids = np.fromiter(chain.from_iterable(judged), dtype=object, count=total)
        if (infer_dtype(ids, skipna=False) not in ("string", "empty")
                or infer_dtype(gains, skipna=False) not in ("integer", "floating", "mixed-integer-float", "empty")
                or not np.isfinite(gains.astype(float)).all()):
            return None
    return _Judged(counts, np.repeat(np.arange(len(judged)), counts), gains.astype(float))


def _gains_matrix(rankings: list, judged: list, depth: int) -> np.ndarray:
    """Step 2: questions × depth, the judged gain (>= 0) of the chunk at each rank, 0 if unjudged or empty.

    Each id of the top ``depth`` ranks is looked up in its question's judged gains (a dict lookup,
    done in one stream), and the gains are placed into the matrix with one NumPy assignment.
    """
    n = len(rankings)
    top_lengths = np.minimum(np.fromiter(map(len, rankings), dtype=np.int64, count=n), depth)
    n_top = int(top_lengths.sum())
    top_gains = np.fromiter(
        chain.from_iterable([gains.get(doc_id, 0.0) for doc_id in ranked[:depth]] for ranked, gains in zip(rankings, judged)),
        dtype=float, count=n_top,
    )
    rows = np.repeat(np.arange(n), top_lengths)
    ranks = np.arange(n_top) - np.repeat(np.cumsum(top_lengths) - top_lengths, top_lengths)
    gains = np.zeros((n, depth))
    gains[rows, ranks] = top_gains
    return np.maximum(gains, 0.0)  # negative labels are not relevant (trec_eval)


def _ideal_matrix(judged: _Judged, depth: int) -> np.ndarray:
    """Step 3: questions × depth, every judged gain of a question sorted highest first (trec_eval's ideal)."""
    by_gain = np.lexsort((-judged.gains, judged.rows))
    ideal_rank = np.arange(len(by_gain)) - np.repeat(np.cumsum(judged.counts) - judged.counts, judged.counts)
    keep = ideal_rank < depth
    ideal = np.zeros((len(judged.counts), depth))
    ideal[judged.rows[by_gain][keep], ideal_rank[keep]] = np.maximum(judged.gains[by_gain][keep], 0.0)
    return ideal


def _scores_at(gains: np.ndarray, ideal: np.ndarray, n_relevant: np.ndarray, ks: list[int]) -> dict:
    """Step 4: cumulative hits and DCG along the ranks, read at each cut-off k: ``{(metric, k): values}``."""
    relevant = gains > 0
    depth = gains.shape[1]
    hits = np.cumsum(relevant, axis=1)
    discount = np.log2(np.arange(2, depth + 2))
    dcg, idcg = np.cumsum(gains / discount, axis=1), np.cumsum(ideal / discount, axis=1)
    first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, depth + 1)
    columns = {}
    for k in ks:
        columns[("recall", k)] = hits[:, k - 1] / n_relevant
        columns[("precision", k)] = hits[:, k - 1] / k
        columns[("MRR", k)] = np.where(first <= k, 1.0 / first, 0.0)
        columns[("nDCG", k)] = dcg[:, k - 1] / idcg[:, k - 1]
    return columns
