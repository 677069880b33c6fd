"""Input checks shared by the metrics and everything built on them.

Kept apart from :mod:`retrieval_eval.metrics` so that the metric definitions read in one sitting.
Each check raises ``ValueError`` with a message that says what was wrong, and returns the value in
the form the caller computes with.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import contextmanager

import numpy as np


def check_positive_int(value, name: str = "k") -> int:
    """``value`` as an ``int`` when it is an integer >= 1 (a cut-off k, a depth, a count).

    Args:
        value: what was passed: an ``int`` or NumPy integer (a bool, a float such as ``3.0`` or a
            string is refused).
        name: the argument's name in the message.

    Raises:
        ValueError: e.g. "k must be an integer >= 1, got 2.5" or "k must be >= 1, got 0".

    Not taught; used by every function that takes a cut-off or a count (e.g.
    :func:`~retrieval_eval.metrics.recall_at_k`).
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


@contextmanager
def naming_question(qid, where: str = ""):
    """Name the question in a ValueError raised inside the ``with`` block: "question 'q1': <message>".

    Every function that checks a run or qrels question by question uses it, so each message says
    which question holds the fault, in the same words.

    Args:
        qid: the question id (shown with ``repr``).
        where: put before "question", e.g. ``"hit rate, "``.

    Raises:
        ValueError: the one raised inside, its message prefixed (its traceback chain dropped).

    Not taught; used by the per-question checks of evaluation, batch, conventions, fusion, trec,
    retrievers, evaluate_runs and the RRF widget.
    """
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"{where}question {qid!r}: {exc}") from None


def check_list(value, name: str, what: str) -> list:
    """``value`` as a list when it is an ordered collection (a list, tuple, range, NumPy array or
    pandas Series); else ValueError naming ``name``.

    A single value where a list is expected (``ks=3``), a string (whose letters would be read one
    by one), a mapping, a set (no order) or an iterator (read only once) is refused, so that
    ``ks=3`` says so instead of failing inside ``len()`` or a loop.

    Args:
        value: what was passed.
        name: the argument's name, e.g. ``"ks"``.
        what: what the list holds, e.g. ``"cut-offs"``.

    Raises:
        ValueError: e.g. "ks must be a list of cut-offs, got 3".

    Not taught; used by every function that takes a list (e.g. :func:`check_ks`, :func:`~retrieval_eval.metrics.mrr`).
    """
    import pandas as pd

    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray, pd.Series, pd.Index)):
        raise ValueError(f"{name} must be a list of {what}, got {value!r:.60}")
    return list(value)


def check_ks(ks, name: str = "ks") -> list[int]:
    """The cut-offs ``ks`` as a list of distinct integers >= 1, in the order given.

    Args:
        ks: the cut-offs (a list, tuple or range of integers).
        name: the argument's name in the messages.

    Raises:
        ValueError: ``ks`` is not a list (:func:`check_list`: "ks must be a list of cut-offs, got 3"),
            is empty, holds a value that is not an integer >= 1 or holds one twice (names it).

    Not taught; used by the tables (e.g. :func:`~retrieval_eval.evaluation.evaluate`,
    :func:`~retrieval_eval.batch.batch_scores`).
    """
    values = check_list(ks, name, "cut-offs")
    try:
        values = [check_positive_int(k) for k in values]
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    if not values:
        raise ValueError(f"{name} is empty: give at least one cut-off")
    twice = sorted({k for k in values if values.count(k) > 1})
    if twice:
        raise ValueError(f"{name} holds the cut-off(s) {twice} twice; give each once")
    return values


def check_ids(ids: Iterable, where: str, at: str | None = None) -> None:
    """Refuse any id that is not a ``str``, naming the first one, its type and where it is.

    Ids of another type (``1``, ``None``, ``NaN``, ``b"a"``, a nested list or tuple) can never equal
    a chunk id, so they would score a silent 0; trec_eval refuses them too. Every entry point that
    takes ids (the metrics, the evaluation tables, the batch evaluator, RRF, the retrievers and the
    TREC writers) calls this one check, so they all refuse the same inputs.

    Args:
        ids: the ids to check, in order.
        where: the start of the message: what holds the ids, e.g. ``"the ranking holds"`` or
            ``"the qrels hold question id"``.
        at: how a position is named (``"rank"`` gives "at rank 3", counted from 1); ``None`` for
            collections without an order (a set of relevant ids, the keys of a mapping).

    Raises:
        ValueError: e.g. "the ranking holds 1 (int) at rank 1: ids must be str".

    Not taught; used by :func:`check_ranking`, :func:`check_relevant`, :func:`check_gains`,
    :func:`check_question_ids` and every entry point that takes ids.
    """
    for position, doc_id in enumerate(ids, start=1):
        if not isinstance(doc_id, str):
            place = f" at {at} {position}" if at else ""
            raise ValueError(f"{where} {doc_id!r:.60} ({type(doc_id).__name__}){place}: ids must be str")


def check_question_ids(run: Mapping | None, qrels: Mapping | None, name: str = "run") -> None:
    """Refuse question ids that are not str, in the qrels and in a run (:func:`check_ids`).

    Args:
        run: ``{question_id: ranking}``, or ``None`` when there is none to check.
        qrels: ``{question_id: {id: gain}}``, or ``None``.
        name: how the messages name the run.

    Raises:
        ValueError: ``run`` or ``qrels`` is not a mapping ("a list of rankings passed as one run"),
            or holds a question id that is not a str, e.g. "the qrels hold question id 1 (int): ids must be str".

    Not taught; used by :func:`check_qrels`, :func:`~retrieval_eval.batch.batch_scores` and the evaluation tables.
    """
    for what, value in (("the qrels", qrels), (name, run)):
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{what} must be a mapping {{question_id: ...}}, not {type(value).__name__} {value!r:.60}")
    if qrels is not None:
        check_ids(qrels, "the qrels hold question id")
    if run is not None:
        check_ids(run, f"{name} holds question id")


def check_qrels(qrels: Mapping) -> Mapping:
    """Qrels ``{question_id: {id: gain}}``: str question ids and each question's gains checked by
    :func:`check_gains` (the message names the question).

    Args:
        qrels: ``{question_id: {id: gain}}``, gains finite numbers.

    Returns:
        ``qrels``, unchanged.

    Raises:
        ValueError: ``qrels`` is not a mapping, or e.g. "question 'q1': the gains hold id 1 (int): ids must be str".

    Not taught; used by :func:`~retrieval_eval.evaluation.precision_ceiling` and the tables built on it.
    """
    check_question_ids(None, qrels)
    for qid, gains in qrels.items():
        with naming_question(qid):
            check_gains(gains)
    return qrels


def check_probability(value, name: str) -> float:
    """``value`` as a ``float`` strictly between 0 and 1 (a confidence, a significance level, a power).

    Args:
        value: what was passed (an int or float; a bool is refused).
        name: the argument's name in the message.

    Raises:
        ValueError: e.g. "alpha must be between 0 and 1 (e.g. 0.95 or 0.05), got 5".

    Not taught; used by the statistics (e.g. :func:`~retrieval_eval.statistics.mean_interval`,
    :func:`~retrieval_eval.power.questions_needed`).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (e.g. 0.95 or 0.05), got {value!r}")
    return float(value)


def check_ranking(ranked: Sequence[str]) -> list:
    """A ranking as a list: an ordered sequence (not a set, dict, iterator or string) of str ids
    (:func:`check_ids`), none repeated.

    Args:
        ranked: ids, best first (a list, tuple or NumPy array of str).

    Returns:
        The ranking as a new list.

    Raises:
        ValueError: ``ranked`` is a string, set, dict, iterator or another unordered type; an id is
            not a str (names its rank); an id appears twice (trec_eval refuses such a run: "duplicate docs").

    Not taught; used by the metrics (e.g. :func:`~retrieval_eval.metrics.recall_at_k`) and
    :func:`~retrieval_eval.batch.batch_scores`.
    """
    if isinstance(ranked, str) or not isinstance(ranked, (Sequence, np.ndarray)):
        raise ValueError(
            f"a ranking must be a list or tuple of ids, best first, not {type(ranked).__name__} {ranked!r:.60}"
            " (a set or dict has no order; an iterator can be read only once)"
        )
    ranked = list(ranked)
    check_ids(ranked, "the ranking holds", "rank")
    if len(set(ranked)) < len(ranked):
        seen = set()
        for doc_id in ranked:
            if doc_id in seen:
                raise ValueError(f"duplicate id {doc_id!r} in the ranking; each id may appear once")
            seen.add(doc_id)
    return ranked


def check_relevant(relevant: Collection[str]) -> set:
    """The relevant ids as a non-empty set of str.

    Args:
        relevant: the ids of the relevant items (a set, list or tuple of str).

    Returns:
        The ids as a new set.

    Raises:
        ValueError: ``relevant`` is a mapping of gains (pass ``relevant_ids(gains)``), a string or
            not a collection; an id is not a str; it is empty (a question with no relevant item
            cannot be scored).

    Not taught; used by :func:`~retrieval_eval.metrics.recall_at_k`,
    :func:`~retrieval_eval.metrics.precision_at_k` and :func:`~retrieval_eval.metrics.reciprocal_rank`.
    """
    if isinstance(relevant, Mapping):
        raise ValueError("relevant must be a collection of ids, not a mapping of gains: pass relevant_ids(gains)")
    if isinstance(relevant, str) or not isinstance(relevant, Collection):
        raise ValueError(f"relevant must be a collection of ids, not {type(relevant).__name__} {relevant!r:.60}")
    check_ids(relevant, "relevant holds")
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: a question with no relevant item cannot be scored")
    return relevant


def check_gains(gains: Mapping[str, float]) -> Mapping[str, float]:
    """Judged gains ``{id: gain}``: a mapping of str ids (:func:`check_ids`) to finite numbers.

    Args:
        gains: ``{id: gain}``, gains int or float (NumPy's too; a bool, NaN or infinity is refused).

    Returns:
        ``gains``, unchanged.

    Raises:
        ValueError: ``gains`` is not a mapping, an id is not a str, or a gain is not a finite
            number (names the first bad id).

    Not taught; used by :func:`~retrieval_eval.metrics.ndcg_at_k`,
    :func:`~retrieval_eval.metrics.relevant_ids` and :func:`check_qrels`.
    """
    if not isinstance(gains, Mapping):
        raise ValueError(f"gains must be a mapping {{id: gain}}, not {type(gains).__name__}")
    check_ids(gains, "the gains hold id")
    for doc_id, gain in gains.items():
        if not _finite_number(gain):
            raise ValueError(f"gain of {doc_id!r} must be a finite number, got {gain!r}")
    return gains


def check_gain_list(gains: Sequence[float], name: str = "gains_in_rank_order") -> list:
    """Gains in rank order (the gain at rank 1, 2, ...) as a list of finite numbers.

    A NaN would make DCG NaN and an infinite gain would make it infinite, silently; both are refused.

    Args:
        gains: an ordered sequence of numbers (int or float, NumPy scalars too), one per rank.
        name: the argument's name in the messages.

    Raises:
        ValueError: ``gains`` is not a list (:func:`check_list`), or a gain is not a finite number
            (names its rank), e.g. "gains_in_rank_order: the gain at rank 2 must be a finite number, got nan".

    Not taught; used by :func:`~retrieval_eval.metrics.dcg_at_k`.
    """
    values = check_list(gains, name, "gains (one per rank)")
    for rank, gain in enumerate(values, start=1):
        if not _finite_number(gain):
            raise ValueError(f"{name}: the gain at rank {rank} must be a finite number, got {gain!r}")
    return values


def check_questions(rankings: Sequence[Sequence[str]], relevants: Sequence[Collection[str]],
                    k: int | None) -> tuple[list, list, int | None]:
    """The input of a mean over questions: two lists, one entry per question in the same order, and a cut-off.

    Each ranking and each set of relevant ids is checked later, question by question, by the metric.

    Args:
        rankings: one ranking (a list of ids, best first) per question.
        relevants: one collection of relevant ids per question.
        k: ``None`` (no cut-off) or a cut-off, an integer >= 1.

    Returns:
        ``(rankings, relevants, k)`` as two lists and an ``int`` (or ``None``).

    Raises:
        ValueError: k is not ``None`` or an integer >= 1; ``rankings`` or ``relevants`` is a dict
            (pass two lists in the same question order) or not a list (:func:`check_list`);
            ``rankings`` is empty; the two differ in length.

    Not taught; used by :func:`~retrieval_eval.metrics.mrr`.
    """
    for name, value in (("rankings", rankings), ("relevants", relevants)):
        if isinstance(value, Mapping):
            raise ValueError(f"{name} must be a list, not a dict: pass rankings and relevants as two lists in the "
                             "same question order")
    if k is not None:
        k = check_positive_int(k)
    rankings = check_list(rankings, "rankings", "rankings (one list of ids per question)")
    relevants = check_list(relevants, "relevants", "collections of relevant ids (one per question)")
    if not rankings:
        raise ValueError("rankings is empty: MRR needs at least one question")
    if len(rankings) != len(relevants):
        raise ValueError(f"{len(rankings)} rankings but {len(relevants)} sets of relevant ids")
    return rankings, relevants, k


def _finite_number(value) -> bool:
    """Whether ``value`` is an int or float (NumPy's too, not a bool) that is finite."""
    return (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
            and math.isfinite(value))
