"""What valid data is: the types every module passes around (their comments are the glossary; a **cut-off k** is how
many ranks from the top are read), and the checks at the door, run once where data enters (the loaders,
:func:`~retrieval_eval.retrieval.setup.evaluation_setup`, the public table functions, the make targets); inner
functions trust it. Every check raises ``ValueError`` with a message naming the question, run, id or argument at fault."""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

import numpy as np

Ranking = list[str]  # a **ranking**: chunk ids, best first (rank 1 is the first element)
Run = dict[str, Ranking]  # a **run**: one ranking per question, {question id: ranking}
Runs = dict[str, Run]  # **runs**: several, {run name: run}
Gains = dict[str, float]  # **gains**: one question's judgements, {chunk id: gain}; **relevant** when the gain is > 0
Qrels = dict[str, Gains]  # **qrels**: {question id: gains}
Chunk = dict  # a **chunk**, the unit a retriever returns: {"id": "03_battery_care#01", "doc", "text", "n_tokens"}


def check_k(value, name: str = "k") -> int:
    """``value`` as an int when it is an integer >= 1 (a bool, ``3.0`` or ``"3"`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def check_list(value, name: str, what: str) -> list:
    """``value`` as a list when it is ordered (list, tuple, range, array, Series): a single value,
    a string, a set, a mapping or an iterator is refused, naming ``name``."""
    import pandas as pd
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray, pd.Series, pd.Index)):
        raise ValueError(f"{name} must be a list of {what}, got {value!r:.60}")
    return list(value)


def check_ks(ks, name: str = "ks") -> list[int]:
    """Distinct cut-offs >= 1, in the order given."""
    values = check_list(ks, name, "cut-offs")
    try:
        values = [check_k(k) for k in values]
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    if not values:
        raise ValueError(f"{name} is empty: give at least one cut-off")
    twice = sorted({k for k in values if values.count(k) > 1})
    if twice:
        raise ValueError(f"{name} holds the cut-off(s) {twice} twice; give each once")
    return values


def check_probability(value, name: str) -> float:
    """A confidence, a significance level or a power: a number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (e.g. 0.95 or 0.05), got {value!r}")
    return float(value)


@contextmanager
def naming_question(qid, where: str = ""):
    """Prefix a ValueError raised inside the block with "<where>question '<qid>': "."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"{where}question {qid!r}: {exc}") from None


def check_ids(ids: Iterable, where: str, at: str | None = None) -> None:
    """Refuse an id that is not a str (``1``, ``None``, ``NaN``, bytes): it could never match and would score a silent 0."""
    for position, doc_id in enumerate(ids, start=1):
        if not isinstance(doc_id, str):
            place = f" at {at} {position}" if at else ""
            raise ValueError(f"{where} {doc_id!r:.60} ({type(doc_id).__name__}){place}: ids must be str")


def check_ranking(ranked: Sequence[str]) -> Ranking:
    """A ranking as a new list: ordered (not a set, dict, iterator or string), str ids, none twice
    (trec_eval refuses a run with "duplicate docs"; counted twice, an id pushes a metric above 1)."""
    if isinstance(ranked, (list, tuple)):
        if _all_str(ranked) and len(set(ranked)) == len(ranked):
            return list(ranked)
    elif isinstance(ranked, str) or not isinstance(ranked, (Sequence, np.ndarray)):
        raise ValueError(f"a ranking must be a list or tuple of ids, best first, not {type(ranked).__name__} "
                         f"{ranked!r:.60} (a set or dict has no order; an iterator can be read only once)")
    ranked = list(ranked)
    check_ids(ranked, "the ranking holds", "rank")
    seen = set()
    twice = next((d for d in ranked if d in seen or seen.add(d)), None)
    if twice is not None:
        raise ValueError(f"duplicate id {twice!r} in the ranking; each id may appear once")
    return ranked


def check_relevant(relevant: Collection[str]) -> set:
    """The relevant ids as a non-empty set of str."""
    if isinstance(relevant, Mapping):
        raise ValueError("relevant must be a collection of ids, not a mapping of gains: pass relevant_ids(gains)")
    if isinstance(relevant, str) or not isinstance(relevant, Collection):
        raise ValueError(f"relevant must be a collection of ids, not {type(relevant).__name__} {relevant!r:.60}")
    check_ids(relevant, "relevant holds")
    if not relevant:
        raise ValueError("relevant is empty: a question with no relevant item cannot be scored")
    return set(relevant)


def finite_number(value) -> bool:
    """Whether ``value`` is an int or float (NumPy's too, not a bool) that is finite."""
    return (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
            and math.isfinite(value))


def check_gains(gains: Mapping[str, float]) -> Mapping[str, float]:
    """One question's judgements: a mapping of str ids to finite numbers (names the first bad id)."""
    if not isinstance(gains, Mapping):
        raise ValueError(f"gains must be a mapping {{id: gain}}, not {type(gains).__name__}")
    check_ids(gains, "the gains hold id")
    bad = next((d for d, g in gains.items() if not finite_number(g)), None)
    if bad is not None:
        raise ValueError(f"gain of {bad!r} must be a finite number, got {gains[bad]!r}")
    return gains


def _all_str(ids: Iterable) -> bool:
    """Whether every id is a str, by the set of their types (built in C; a subclass of str goes the slow way)."""
    return set(map(type, ids)) <= {str}


def _valid_gains(judgements: list) -> bool:
    """Whether every question's gains are a dict of str ids to finite int or float gains, checked per set in C;
    False sends the caller to the per-element checks, which name the first fault."""
    if not set(map(type, judgements)) <= {dict} or not _all_str(chain.from_iterable(judgements)):
        return False
    values = list(chain.from_iterable(map(dict.values, judgements)))
    try:
        return set(map(type, values)) <= {int, float} and bool(np.isfinite(np.array(values, dtype=float)).all())
    except OverflowError:  # an int beyond float's range
        return False


def check_qrels(qrels: Mapping, scorable: bool = True) -> Qrels:
    """Qrels with str question ids and valid gains; with ``scorable``, every question needs a relevant
    chunk (recall has no denominator otherwise). Returns them as plain dicts."""
    if not isinstance(qrels, Mapping):
        raise ValueError(f"the qrels must be a mapping {{question_id: {{chunk_id: gain}}}}, not {type(qrels).__name__}")
    if not qrels:
        raise ValueError("the qrels are empty: there is no question to score")
    if not _all_str(qrels) or not _valid_gains(list(qrels.values())):
        check_ids(qrels, "the qrels hold question id")
        for qid, gains in qrels.items():
            with naming_question(qid):
                check_gains(gains)
    if scorable:
        empty = [q for q, g in qrels.items() if max(g.values(), default=0) <= 0]
        if empty:
            raise ValueError(f"question(s) {empty[:5]} have no relevant chunk (no gain > 0) and cannot be scored")
    return {qid: dict(gains) for qid, gains in qrels.items()}


def check_run(run: Mapping, qrels: Mapping, name: str = "run", chunk_ids: Collection[str] | None = None) -> Run:
    """A run that ranks every question of the qrels (a missing one would silently leave the mean) with valid
    rankings, and with ``chunk_ids`` only those ids; in qrels order, the run's other questions dropped."""
    if not isinstance(run, Mapping):
        raise ValueError(f"{name} must be a mapping {{question_id: ranking}}, not {type(run).__name__} {run!r:.60}")
    if not _all_str(run):
        check_ids(run, f"{name} holds question id")
    missing = [q for q in qrels if q not in run]
    if missing:
        raise ValueError(f"{name} has no ranking for question(s) {missing[:5]} (they would silently drop out of the mean)")
    rankings = [run[qid] for qid in qrels]
    kinds = set(map(type, rankings))
    if (kinds <= {list, tuple} and _all_str(chain.from_iterable(rankings))
            and list(map(len, map(set, rankings))) == list(map(len, rankings))):  # per set: no id twice
        checked = dict(zip(qrels, rankings if kinds == {list} else map(list, rankings)))  # the lists, not copies
    else:  # the per-element checks name the first fault
        checked = {}
        for qid in qrels:
            with naming_question(qid, f"{name}, "):
                checked[qid] = check_ranking(run[qid])
    if chunk_ids is not None:
        known = chunk_ids if isinstance(chunk_ids, (set, frozenset)) else set(chunk_ids)
        for qid, ranked in checked.items():
            unknown = [d for d in ranked if d not in known]
            if unknown:
                raise ValueError(f"{name}, question {qid!r}: unknown chunk ids {unknown[:5]}")
    return checked


def check_runs(runs: Mapping, qrels: Mapping, chunk_ids: Collection[str] | None = None,
               scorable: bool = True) -> tuple[Runs, Qrels]:
    """The door of every table: runs ``{name: run}`` and qrels, checked once; returns both as plain dicts
    (``scorable``: as :func:`check_qrels`)."""
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"runs must be a non-empty mapping {{run name: {{question_id: ranking}}}}, got {runs!r:.80}")
    qrels = check_qrels(qrels, scorable)
    if chunk_ids is not None:
        check_ids(chunk_ids, "chunk_ids holds", "position")
        chunk_ids = set(chunk_ids)
        for qid, gains in qrels.items():
            unknown = sorted(set(gains) - chunk_ids)
            if unknown:
                raise ValueError(f"qrels of question {qid!r} name unknown chunk ids {unknown[:5]}")
    return {str(name): check_run(run, qrels, str(name), chunk_ids) for name, run in runs.items()}, qrels


def path_problem(name: str, path, kind: str) -> str | None:
    """What is wrong with a path parameter (``kind``: "folder", "file", "file or folder"...), or None."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        return f"{name} must be the path of a {kind}, got {path!r}"
    path = Path(path)
    if not path.exists():
        return f"{name} {str(path)!r}: no such {kind} (from {Path.cwd()})"
    if kind == "folder" and not path.is_dir():
        return f"{name} {str(path)!r} is a file; give the folder that holds the documents"
    if kind == "file" and not path.is_file():
        return f"{name} {str(path)!r} is a folder; give the file"
    return None
