"""Input checks shared by the metrics and everything built on them.

Kept apart from :mod:`retrieval_eval.metrics` so that the metric definitions read in one sitting.
Each check raises ``ValueError`` with a message that says what was wrong, and returns the value in
the form the caller computes with.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

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


def check_probability(value, name: str) -> float:
    """``value`` as a ``float`` strictly between 0 and 1 (a confidence, a significance level, a power); else ValueError naming ``name``.

    Taught in: notebook 08_beyond_the_averages.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (e.g. 0.95 or 0.05), got {value!r}")
    return float(value)


def check_ranking(ranked: Sequence[str]) -> list:
    """A ranking as a list: an ordered sequence (not a set, dict, iterator or string) without a repeated id.

    Taught in: notebook 01_recall_at_k.
    """
    if isinstance(ranked, str) or not isinstance(ranked, (Sequence, np.ndarray)):
        raise ValueError(
            f"a ranking must be a list or tuple of ids, best first, not {type(ranked).__name__} {ranked!r:.60}"
            " (a set or dict has no order; an iterator can be read only once)"
        )
    ranked = list(ranked)
    seen = set()
    for doc_id in ranked:
        if doc_id in seen:
            raise ValueError(f"duplicate id {doc_id!r} in the ranking; each id may appear once")
        seen.add(doc_id)
    return ranked


def check_relevant(relevant: Collection[str]) -> set:
    """The relevant ids as a non-empty set (a mapping of gains is refused: pass ``relevant_ids(gains)``).

    Taught in: notebook 01_recall_at_k.
    """
    if isinstance(relevant, Mapping):
        raise ValueError("relevant must be a collection of ids, not a mapping of gains: pass relevant_ids(gains)")
    if isinstance(relevant, str) or not isinstance(relevant, Collection):
        raise ValueError(f"relevant must be a collection of ids, not {type(relevant).__name__} {relevant!r:.60}")
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: a question with no relevant item cannot be scored")
    return relevant


def check_gains(gains: Mapping[str, float]) -> Mapping[str, float]:
    """Judged gains ``{id: gain}``: a mapping whose every gain is a finite number (names the first bad id).

    Taught in: notebook 04_ndcg.
    """
    if not isinstance(gains, Mapping):
        raise ValueError(f"gains must be a mapping {{id: gain}}, not {type(gains).__name__}")
    for doc_id, gain in gains.items():
        if isinstance(gain, bool) or not isinstance(gain, (int, float, np.integer, np.floating)) or not math.isfinite(gain):
            raise ValueError(f"gain of {doc_id!r} must be a finite number, got {gain!r}")
    return gains
