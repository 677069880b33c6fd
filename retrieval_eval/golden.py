"""The golden set and its relevance labels (qrels), computed from the chunks.

A chunk is relevant to a question when it contains the question's evidence string, both sides
normalised by :func:`retrieval_eval.text.normalise`. Labels are computed every time, never stored.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from .paths import GOLDEN_PATH
from .text import normalise

MIN_EVIDENCE_CHARS = 20
GOLDEN_COLUMNS = ("id", "question", "evidence", "slice")
OPTIONAL_COLUMNS = ("partial_evidence",)  # hand-judged partial answers, for graded relevance


class GoldenSetError(ValueError):
    """The golden set is malformed; the message lists every problem with its question id.

    Taught in: notebook 05_three_retrievers.
    """


def read_golden_csv(path: str | Path = GOLDEN_PATH, problems: list[str] | None = None) -> pd.DataFrame:
    """Read and validate the golden set CSV (columns ``id, question, evidence, slice``).

    All problems are collected and raised together, each naming its question id (or row).

    Args:
        path: a UTF-8 CSV file with a header row.
        problems: when a list is given, blank cells, duplicate ids and short evidence strings are
            appended to it instead of raised (see :func:`load_golden_with_qrels`).

    Returns:
        A DataFrame with the four columns (and ``partial_evidence`` when the file has it), one row
        per question, in file order, all strings.

    Raises:
        GoldenSetError: the file is not UTF-8, a column is missing, a cell is blank, an id is
            duplicated, or an evidence string is shorter than ``MIN_EVIDENCE_CHARS`` characters.

    Taught in: notebook 00_start_here.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenSetError(f"{path.name} is not UTF-8 ({exc}); save it as UTF-8") from None
    try:
        golden = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise GoldenSetError(f"{path.name} is not a readable CSV file: {exc}") from None
    missing = [c for c in GOLDEN_COLUMNS if c not in golden.columns]
    if missing:
        raise GoldenSetError(f"{path.name} misses column(s) {missing}; expected {list(GOLDEN_COLUMNS)}")
    golden = golden[list(GOLDEN_COLUMNS) + [c for c in OPTIONAL_COLUMNS if c in golden.columns]]
    collect = problems is not None
    problems = problems if collect else []
    for row_number, row in enumerate(golden.itertuples(index=False), start=2):
        name = f"question {row.id!r}" if row.id.strip() else f"row {row_number}"
        for column in GOLDEN_COLUMNS:
            if not getattr(row, column).strip():
                problems.append(f"{name}: blank {column}")
        if row.id != row.id.strip():
            problems.append(f"{name}: the id has leading or trailing spaces")
        for column in ("evidence", *[c for c in OPTIONAL_COLUMNS if c in golden.columns]):
            span = getattr(row, column)
            if span.strip() and len(normalise(span)) < MIN_EVIDENCE_CHARS:
                problems.append(
                    f"{name}: {column} {span!r} is shorter than {MIN_EVIDENCE_CHARS} characters "
                    "and may match by accident"
                )
    for qid in golden.loc[golden["id"].duplicated() & golden["id"].str.strip().ne(""), "id"].unique():
        problems.append(f"question {qid!r}: duplicate id")
    if golden.empty:
        problems.append("the file holds no question")
    if problems and not collect:
        raise GoldenSetError(f"{path.name}: " + "; ".join(problems))
    return golden


def label_chunks(
    golden: pd.DataFrame, chunks: Sequence[Mapping], docs: Mapping[str, str] | None = None, problems: list[str] | None = None
) -> dict:
    """Compute the relevance labels: a chunk is relevant when it contains the evidence string.

    Both sides go through :func:`normalise`; every relevant chunk gets gain 1 (binary relevance).
    Labels are computed each time from the chunks, never stored, so they cannot go stale when the
    chunking changes.

    Args:
        golden: the golden set from :func:`read_golden_csv`.
        chunks: the chunks from :func:`load_chunks` or :func:`split_into_chunks`.
        docs: the corpus (``{document stem: text}``); only used to explain a missing evidence string.
        problems: when a list is given, missing evidence strings are appended to it instead of
            raised, and their questions are left out of the qrels (see :func:`load_golden_with_qrels`).

    Returns:
        qrels ``{question_id: {chunk_id: 1}}``, questions in golden-set order, chunks in chunk order.

    Raises:
        GoldenSetError: some evidence string is in no chunk. The message names each question and
            says whether the string is cut by a chunk boundary (and between which chunks) or is
            not in the corpus at all.

    Taught in: notebook 00_start_here.
    """
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    collect = problems is not None
    problems = problems if collect else []
    qrels = {}
    for qid, evidence in zip(golden["id"], golden["evidence"]):
        needle = normalise(evidence)
        if len(needle) < MIN_EVIDENCE_CHARS:
            problems.append(f"question {qid!r}: evidence {evidence!r} is shorter than {MIN_EVIDENCE_CHARS} characters")
            continue
        hits = {cid: 1 for cid, text in texts.items() if needle in text}
        if hits:
            qrels[qid] = hits
        else:
            problems.append(f"question {qid!r}: evidence {evidence!r} {_why_missing(needle, chunks, docs)}")
    if problems and not collect:
        raise GoldenSetError("; ".join(problems))
    return qrels


def _why_missing(needle: str, chunks: Sequence[Mapping], docs: Mapping[str, str] | None) -> str:
    """Explain why a normalised evidence string is in no chunk: a chunk boundary, or not in the corpus."""
    for doc, text in (docs or {}).items():
        full = normalise(text)
        start = full.find(needle)
        if start < 0:
            continue
        # Place each chunk of this document in the normalised document text, in order.
        spans, cursor = [], 0
        for chunk in (c for c in chunks if c["doc"] == doc):
            piece = normalise(chunk["text"])
            begin = full.find(piece, cursor)
            spans.append((chunk["id"], begin, begin + len(piece)))
            cursor = begin + len(piece)
        cut = [cid for cid, b, e in spans if b < start + len(needle) and e > start]
        return f"is cut by a chunk boundary between chunks {cut}"
    return "is in no chunk" + ("" if docs is None else " and not in the corpus")


def load_golden_with_qrels(path: str | Path, chunks: Sequence[Mapping], docs: Mapping[str, str]) -> tuple[pd.DataFrame, dict]:
    """Read a golden file and compute its relevance labels, reporting every problem at once.

    Runs the checks of :func:`read_golden_csv` (blank cells, duplicate ids, evidence strings too
    short) and of :func:`label_chunks` (evidence in no chunk, or cut by a chunk boundary) and
    raises one error listing all of them, so a user fixes the file in one pass. Needs no model:
    call it before building the retrievers.

    Args:
        path: a UTF-8 CSV file with columns ``id, question, evidence, slice``.
        chunks: the chunks of the corpus, e.g. from :func:`stored_or_split_chunks`.
        docs: the corpus, ``{document stem: text}`` (to explain a missing evidence string).

    Returns:
        ``(golden, qrels)`` as :func:`read_golden_csv` and :func:`label_chunks` return them.

    Raises:
        GoldenSetError: one line per problem, each naming its question id (or row). A file that is
            not UTF-8 or misses a column is reported alone: nothing else can be checked.

    Taught in: notebook 05_three_retrievers.
    """
    problems: list[str] = []
    golden = read_golden_csv(path, problems=problems)
    # Questions whose id or evidence already failed above are not labelled (no double report).
    labelled = golden[golden["id"].str.strip().ne("") & golden["evidence"].map(normalise).str.len().ge(MIN_EVIDENCE_CHARS)]
    qrels = label_chunks(labelled, chunks, docs, problems=problems)
    if problems:
        raise GoldenSetError(
            f"{Path(path).name} has {len(problems)} problem(s); fix them all and run again:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
    return golden, qrels


def graded_labels(golden: pd.DataFrame, chunks: Sequence[Mapping]) -> dict:
    """Graded qrels: gain 2 for a chunk with the evidence string, 1 for one with the partial evidence.

    The golden set's optional ``partial_evidence`` column holds, for some questions, a verbatim span
    of another chunk that answers the question only in part (judged by hand). Gains stay computed
    from the chunks, like the binary labels of :func:`label_chunks`.

    Returns:
        ``{question_id: {chunk_id: 2 or 1}}``.

    Raises:
        GoldenSetError: the partial evidence is in no chunk, or only in chunks that already hold the
            evidence string (it would add nothing); the message names the question.

    Taught in: notebook 08_beyond_the_averages.
    """
    full = label_chunks(golden, chunks)
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    qrels, problems = {}, []
    partial = golden["partial_evidence"] if "partial_evidence" in golden else pd.Series("", index=golden.index)
    for qid, span in zip(golden["id"], partial):
        gains = {cid: 2 for cid in full[qid]}
        if span.strip():
            hits = [cid for cid, text in texts.items() if normalise(span) in text and cid not in gains]
            if not hits:
                problems.append(f"question {qid!r}: partial evidence {span!r} is in no chunk other than the evidence chunk")
            gains.update({cid: 1 for cid in hits})
        qrels[qid] = gains
    if problems:
        raise GoldenSetError("; ".join(problems))
    return qrels
