"""TREC qrels and run files, for trec_eval, ranx and ir_measures."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .checks import check_gains, check_ids, check_ranking
from .paths import OUTPUT_DIR


def write_trec_qrels(qrels: Mapping[str, Mapping[str, float]], path: str | Path) -> Path:
    """Write qrels in TREC format: one line ``question_id 0 chunk_id gain`` per judged chunk.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``; gains are written as integers (trec_eval reads
            integer labels).
        path: the file to write.

    Raises:
        ValueError: an id is not a str (:func:`~retrieval_eval.checks.check_ids`), a gain is not a
            whole number, or an id contains whitespace (names it).

    Taught in: the README's "Trust the numbers" (``make trec``); notebook 06 puts trec_eval beside our functions.
    """
    check_ids(qrels, "the qrels hold question id")
    lines = []
    for qid, gains in qrels.items():
        try:
            check_gains(gains)
        except ValueError as exc:
            raise ValueError(f"question {qid!r}: {exc}") from None
        for doc_id, gain in gains.items():
            _check_trec_id(qid)
            _check_trec_id(doc_id)
            if gain != int(gain):
                raise ValueError(f"question {qid!r}, chunk {doc_id!r}: gain {gain} is not a whole number")
            lines.append(f"{qid} 0 {doc_id} {int(gain)}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def write_trec_run(run: Mapping[str, Sequence[str]], path: str | Path, tag: str) -> Path:
    """Write one retriever's rankings as a TREC run: ``question_id Q0 chunk_id rank score tag``.

    trec_eval ignores the rank column and re-sorts by score (descending), breaking ties by chunk id
    (descending). So the score written is ``len(ranking) − rank + 1``: strictly decreasing with
    rank, it makes trec_eval read exactly our order. A question with an empty ranking gets no line;
    trec_eval then leaves it out of its means unless run with ``-c``, while our :func:`evaluate`
    scores it 0.

    Args:
        run: ``{question_id: ranking}``.
        path: the file to write.
        tag: the run name (no whitespace), e.g. "BM25".

    Raises:
        ValueError: an id is not a str (:func:`~retrieval_eval.checks.check_ids`), a ranking repeats
            an id, or an id or the tag contains whitespace (names the question).

    Taught in: the README's "Trust the numbers" (``make trec``); notebook 06 puts trec_eval beside our functions.
    """
    if not isinstance(tag, str):
        raise ValueError(f"the tag must be a str, got {tag!r}")
    _check_trec_id(tag)
    check_ids(run, "the run holds question id")
    lines = []
    for qid, ranked in run.items():
        try:
            ranked = check_ranking(ranked)
        except ValueError as exc:
            raise ValueError(f"question {qid!r}: {exc}") from None
        for rank, doc_id in enumerate(ranked, start=1):
            _check_trec_id(qid)
            _check_trec_id(doc_id)
            lines.append(f"{qid} Q0 {doc_id} {rank} {len(ranked) - rank + 1} {tag}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def _check_trec_id(name: str) -> None:
    if not name or re.search(r"\s", name):
        raise ValueError(f"{name!r} cannot be written to a TREC file: it is empty or contains whitespace")


def export_trec(runs: Mapping, qrels: Mapping, folder: str | Path = OUTPUT_DIR / "trec") -> list[Path]:
    """Write ``qrels.txt`` and one ``run.<retriever>.txt`` per retriever to a folder.

    The files are for trec_eval, ranx or ir_measures, e.g. ``trec_eval -m P.3 -m recall.3
    -m recip_rank -m ndcg_cut.3 qrels.txt run.BM25.txt``.

    Returns:
        The paths written, qrels first.

    Taught in: the README's "Trust the numbers" (``make trec``); notebook 06 puts trec_eval beside our functions.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [write_trec_qrels(qrels, folder / "qrels.txt")]
    paths += [write_trec_run(run, folder / f"run.{name}.txt", name) for name, run in runs.items()]
    return paths
