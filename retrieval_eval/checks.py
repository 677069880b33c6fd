"""Input checks shared by the metrics and everything built on them.

Kept apart from :mod:`retrieval_eval.metrics` so that the metric definitions read in one sitting.
Each check raises ``ValueError`` with a message that says what was wrong, and returns the value in
the form the caller computes with.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np


def check_positive_int(value, name: str = "k") -> int:
    """``value`` as an ``int`` when it is an integer >= 1 (a cut-off k, a depth, a count); else ValueError naming ``name``.

    Taught in: notebook 01_recall_at_k.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


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

    Taught in: notebook 01_recall_at_k.
    """
    for position, doc_id in enumerate(ids, start=1):
        if not isinstance(doc_id, str):
            place = f" at {at} {position}" if at else ""
            raise ValueError(f"{where} {doc_id!r:.60} ({type(doc_id).__name__}){place}: ids must be str")


def check_question_ids(run: Mapping, qrels: Mapping, name: str = "run") -> None:
    """Refuse question ids that are not str, in the qrels and in a run (:func:`check_ids`).

    Raises:
        ValueError: e.g. "the qrels hold question id 1 (int): ids must be str".

    Taught in: notebook 01_recall_at_k.
    """
    check_ids(qrels, "the qrels hold question id")
    check_ids(run, f"{name} holds question id")


def check_probability(value, name: str) -> float:
    """``value`` as a ``float`` strictly between 0 and 1 (a confidence, a significance level, a power); else ValueError naming ``name``.

    Taught in: notebook 08_beyond_the_averages.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (e.g. 0.95 or 0.05), got {value!r}")
    return float(value)


def check_ranking(ranked: Sequence[str]) -> list:
    """A ranking as a list: an ordered sequence (not a set, dict, iterator or string) of str ids
    (:func:`check_ids`), none repeated.

    Taught in: notebook 01_recall_at_k.
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
    """The relevant ids as a non-empty set of str (a mapping of gains is refused: pass ``relevant_ids(gains)``).

    Taught in: notebook 01_recall_at_k.
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
    """Judged gains ``{id: gain}``: a mapping of str ids (:func:`check_ids`) to finite numbers (names the first bad id).

    Taught in: notebook 04_ndcg.
    """
    if not isinstance(gains, Mapping):
        raise ValueError(f"gains must be a mapping {{id: gain}}, not {type(gains).__name__}")
    check_ids(gains, "the gains hold id")
    for doc_id, gain in gains.items():
        if isinstance(gain, bool) or not isinstance(gain, (int, float, np.integer, np.floating)) or not math.isfinite(gain):
            raise ValueError(f"gain of {doc_id!r} must be a finite number, got {gain!r}")
    return gains
