"""The golden set and its relevance labels (qrels), computed from the chunks.

A chunk is relevant to a question when it contains the question's evidence string, both sides
normalised by :func:`retrieval_eval.text.normalise`. Labels are computed every time, never stored.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from .checks import check_ids, check_qrels
from .corpus import check_chunks, chunk_spans
from .paths import GOLDEN_PATH, KNOWN_FALSE_NEGATIVES_PATH
from .text import normalise, read_text

MIN_EVIDENCE_CHARS = 20
GOLDEN_COLUMNS = ("id", "question", "evidence", "slice")
OPTIONAL_COLUMNS = ("partial_evidence",)  # hand-judged partial answers, for graded relevance


class GoldenSetError(ValueError):
    """The golden set is malformed; the message lists every problem with its question id.

    Taught in: notebook 05_three_retrievers.
    """


SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}  # the separators a golden file may use
SPREADSHEETS = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")
_SPREADSHEET_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0")  # zip (xlsx, ods, numbers), OLE (xls)


def read_golden_csv(path: str | Path = GOLDEN_PATH, problems: list[str] | None = None) -> pd.DataFrame:
    """Read and validate the golden set CSV (columns ``id, question, evidence, slice``).

    Reads the files people and spreadsheets write: the separator is a comma, a semicolon or a tab
    (whichever splits the header line into the expected column names; an Excel ``sep=;`` first
    line is honoured); column names in any case and with spaces around them (``ID; Question``);
    spaces after a separator are ignored; UTF-8 with or without a byte-order mark, UTF-16 with one
    (Excel's "Unicode text"), Windows line endings, quoted cells with line breaks, and blank rows
    (also rows of empty cells, ``,,,``), which are dropped. Other columns are ignored.

    All problems with the questions are collected and raised together, each naming its question id
    (or row, counted as in a spreadsheet: the header is row 1).

    Args:
        path: the CSV file.
        problems: when a list is given, blank cells, duplicate ids and short evidence strings are
            appended to it instead of raised (see :func:`load_golden_with_qrels`).

    Returns:
        A DataFrame with the four columns (and ``partial_evidence`` when the file has it), one row
        per question, in file order, all strings.

    Raises:
        FileNotFoundError: the file does not exist.
        GoldenSetError: the file is a spreadsheet (.xlsx, .ods, ...: "save it as CSV UTF-8"), is in
            another encoding (names the byte and its line), cannot be parsed as CSV (names the
            line), has two columns of one name or misses a column (shows the header line that was
            found and how to fix it); or a cell is blank, an id is duplicated or has spaces around
            it, or an evidence string is shorter than ``MIN_EVIDENCE_CHARS`` characters.

    Taught in: notebook 00_start_here.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"the golden file {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    with open(path, "rb") as f:
        start = f.read(4)
    if path.suffix.lower() in SPREADSHEETS or start.startswith(_SPREADSHEET_MAGIC):
        raise GoldenSetError(
            f"{path.name} is a spreadsheet file, not CSV text: save it as CSV UTF-8 (Excel: File > Save As > "
            "CSV UTF-8; LibreOffice: File > Save As > Text CSV, character set UTF-8)"
        )
    try:
        text = read_text(path)
    except ValueError as exc:
        raise GoldenSetError(f"{exc} (Excel: File > Save As > CSV UTF-8)") from None
    if not text.strip():
        raise GoldenSetError(f"{path.name} is empty: it needs a header line {','.join(GOLDEN_COLUMNS)} and one row per question")
    lines = text.split("\n")
    skipped = 0  # lines above the header line: blank ones and Excel's "sep=" line
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    hint = re.fullmatch(r"\s*sep=(.)\s*", lines[first])  # Excel's separator line
    if hint:
        lines, skipped = lines[first + 1 :], first + 1
        first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    header = lines[first] if lines else ""
    sep = hint[1] if hint else _separator(header)
    names = [_column_name(c) for c in next(csv.reader([header], delimiter=sep, skipinitialspace=True), [])]
    twice = sorted({n for n in names if names.count(n) > 1 and n in (*GOLDEN_COLUMNS, *OPTIONAL_COLUMNS)})
    if twice:
        raise GoldenSetError(f"{path.name}: the header line {header!r} names the column(s) {twice} twice; keep one of each")
    missing = [c for c in GOLDEN_COLUMNS if c not in names]
    if missing:
        raise GoldenSetError(
            f"{path.name} misses column(s) {missing}: its header line is {header!r}, read with the "
            f"{SEPARATORS.get(sep, repr(sep))} as separator as the columns {names}{_other_separator(header)}. The first "
            f"line must name the columns {', '.join(GOLDEN_COLUMNS)} (any case), separated by commas, semicolons or tabs"
        )
    too_long = _rows_longer_than_the_header(lines[first:], sep, len(names), skipped + first)
    if too_long:
        raise GoldenSetError(
            f"{path.name}: " + "; ".join(too_long) + f". The header has {len(names)} cells ({header!r}): a cell that "
            f"holds the separator ({SEPARATORS.get(sep, repr(sep))}) must be in double quotes, and a line must not end "
            "with a separator"
        )
    try:
        golden = pd.read_csv(io.StringIO("\n".join(lines)), sep=sep, dtype=str, keep_default_na=False,
                             skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise GoldenSetError(f"{path.name} is empty: it needs a header line {','.join(GOLDEN_COLUMNS)} and one row per question") from None
    except pd.errors.ParserError as exc:
        raise GoldenSetError(
            f"{path.name} is not a readable CSV file ({str(exc).split('C error: ')[-1].strip()}); a cell that holds the separator "
            f"({SEPARATORS.get(sep, repr(sep))}) or a line break must be in double quotes"
        ) from None
    golden.columns = [_column_name(c) for c in golden.columns]
    golden = golden[list(GOLDEN_COLUMNS) + [c for c in OPTIONAL_COLUMNS if c in golden.columns]].fillna("")
    golden = golden[golden.apply(lambda column: column.str.strip().ne("")).any(axis=1)]  # blank rows
    collect = problems is not None
    problems = problems if collect else []
    for row_number, row in zip(golden.index + 2, golden.itertuples(index=False)):
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
    return golden.reset_index(drop=True)


def _column_name(name: str) -> str:
    """A header cell as a column name: lower case, spaces around it dropped, inner spaces as ``_``."""
    return "_".join(str(name).split()).lower()


def _other_separator(header: str) -> str:
    """A hint when another character than the accepted separators splits the header into the column
    names (a Markdown table, a pipe-separated file), else ``""``."""
    for char in dict.fromkeys(header):
        if char.isalnum() or char.isspace() or char in SEPARATORS or char in "\"_":
            continue
        cells = [_column_name(c) for c in header.split(char)]
        if all(c in cells for c in GOLDEN_COLUMNS):
            kind = "a Markdown table" if char == "|" and header.strip().startswith("|") else f"a file separated by {char!r}"
            return f"; it looks like {kind}, which is not read: save it as CSV (commas, semicolons or tabs)"
    return ""


def _rows_longer_than_the_header(lines: list[str], sep: str, n_columns: int, offset: int) -> list[str]:
    """One line per row with more cells than the header, naming the row (counted as in a spreadsheet:
    the header is row 1) and its line in the file; ``offset`` lines of the file come before ``lines``."""
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=sep, skipinitialspace=True)
    found, start = [], 1
    for row, cells in enumerate(reader, start=1):
        if len(cells) > n_columns:
            trailing = " (the line ends with a separator)" if not any(c.strip() for c in cells[n_columns:]) else ""
            found.append(f"row {row} (line {offset + start}, starting {cells[0][:30]!r}) has {len(cells)} cells, "
                         f"the header {n_columns}{trailing}")
        start = reader.line_num + 1
    if len(found) > 5:
        found = found[:5] + [f"and {len(found) - 5} more row(s)"]
    return found


def _separator(header: str) -> str:
    """The separator (comma, semicolon or tab) that splits the header line into the most expected
    column names; between equals, the one the line holds most often."""

    def expected(sep: str) -> int:
        cells = next(csv.reader([header], delimiter=sep, skipinitialspace=True), [])
        return sum(_column_name(c) in (*GOLDEN_COLUMNS, *OPTIONAL_COLUMNS) for c in cells)

    return max(SEPARATORS, key=lambda sep: (expected(sep), header.count(sep)))


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
        docs: the corpus (``{document id: text}``); only used to explain a missing evidence string.
        problems: when a list is given, missing evidence strings are appended to it instead of
            raised, and their questions are left out of the qrels (see :func:`load_golden_with_qrels`).

    Returns:
        qrels ``{question_id: {chunk_id: 1}}``, questions in golden-set order, chunks in chunk order.

    Raises:
        GoldenSetError: some evidence string is in no chunk. The message names each question and
            says whether the string is cut by a chunk boundary (and between which chunks), is in a
            document but in none of its chunks (the chunks were made from another version of it),
            or is not in the corpus at all.
        ValueError: a question or document id is not a str (:func:`~retrieval_eval.checks.check_ids`),
            or the chunks fail :func:`~retrieval_eval.corpus.check_chunks`.

    Taught in: notebook 00_start_here.
    """
    check_ids(golden["id"], "the golden set holds question id", "row")
    chunks = check_chunks(chunks)
    if docs is not None:
        check_ids(docs, "the documents hold id")
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
    """Explain why a normalised evidence string is in no chunk: a chunk boundary, chunks of another
    version of the document, or not in the corpus."""
    for doc, text in (docs or {}).items():
        full = normalise(text)
        start = full.find(needle)
        if start < 0:
            continue
        try:  # overlapping chunks too; chunks made from another version of the document are not there
            spans = chunk_spans(text, [c for c in chunks if c.get("doc") == doc])
        except ValueError:
            spans = {}
        cut = [cid for cid, (b, e) in spans.items() if b < start + len(needle) and e > start]
        if len(cut) > 1:
            return f"is cut by a chunk boundary between chunks {cut}"
        return (f"is in the document {doc!r} but in none of its chunks: the chunks were not made from this text "
                "of the document (chunk it again)")
    return "is in no chunk" + ("" if docs is None else " and not in the corpus")


def load_golden_with_qrels(
    path: str | Path,
    chunks: Sequence[Mapping],
    docs: Mapping[str, str],
    n_tokens=None,
    window: int | None = None,
    query_prefix: str = "",
) -> tuple[pd.DataFrame, dict]:
    """Read a golden file and compute its relevance labels, reporting every problem at once.

    Runs the checks of :func:`read_golden_csv` (blank cells, duplicate ids, evidence strings too
    short), of :func:`label_chunks` (evidence in no chunk, or cut by a chunk boundary) and, given
    a token count, checks that every question fits the embedding model's window (a longer question
    would be cut silently), and raises one error listing all of them, so a user fixes the file in
    one pass. Needs no model, only its tokenizer: call it before building the retrievers.

    Args:
        path: a CSV file with columns ``id, question, evidence, slice`` (see :func:`read_golden_csv`).
        chunks: the chunks of the corpus, e.g. from :func:`stored_or_split_chunks`.
        docs: the corpus, ``{document id: text}`` (to explain a missing evidence string).
        n_tokens: ``text -> int``, the word pieces the model reads for a text, special tokens
            included (:func:`~retrieval_eval.models.token_counter`); ``None`` skips the length check.
        window: the vector retriever's window in word pieces (its ``max_seq_length``), needed
            with ``n_tokens``.
        query_prefix: the model's query prompt, read with each question
            (:func:`~retrieval_eval.models.query_prefix`).

    Returns:
        ``(golden, qrels)`` as :func:`read_golden_csv` and :func:`label_chunks` return them.

    Raises:
        GoldenSetError: one line per problem, each naming its question id (or row). A file that is
            not UTF-8 or misses a column is reported alone: nothing else can be checked.

    Not taught; used by evaluation_setup (every notebook) and ``make evaluate-runs``.
    """
    problems: list[str] = []
    golden = read_golden_csv(path, problems=problems)
    # Questions whose id or evidence already failed above are not labelled (no double report).
    labelled = golden[golden["id"].str.strip().ne("") & golden["evidence"].map(normalise).str.len().ge(MIN_EVIDENCE_CHARS)]
    qrels = label_chunks(labelled, chunks, docs, problems=problems)
    if n_tokens is not None:
        for qid, question in zip(golden["id"], golden["question"]):
            n = n_tokens(query_prefix + question)
            if n > window:
                problems.append(
                    f"question {qid!r}: the question is {n} word pieces long"
                    + (f" with the model's query prompt {query_prefix!r}" if query_prefix else "")
                    + f", more than the model's window of {window}; shorten it (the window is CHUNK_SIZE)"
                )
    if problems:
        raise GoldenSetError(
            f"{Path(path).name} has {len(problems)} problem(s); fix them all and run again:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
    return golden, qrels


def graded_labels(golden: pd.DataFrame, chunks: Sequence[Mapping]) -> dict:
    """Graded qrels: gain 2 for a chunk with the evidence string, 1 for one with the partial evidence.

    The golden set's optional ``partial_evidence`` column holds, for some questions, a verbatim span
    of the corpus that answers the question only in part (judged by hand). Gains stay computed
    from the chunks, like the binary labels of :func:`label_chunks`: a chunk that holds both the
    evidence and the partial evidence keeps gain 2, so with another chunking a question may have no
    chunk of gain 1.

    Args:
        golden: the golden set (a DataFrame with ``id``, ``evidence`` and optionally ``partial_evidence``).
        chunks: ``[{"id": str, "doc": str, "text": str, "n_tokens": int}, ...]`` in corpus order.

    Returns:
        ``{question_id: {chunk_id: 2 or 1}}``.

    Raises:
        GoldenSetError: the partial evidence is in no chunk (not in the corpus, or cut by a chunk
            boundary), or is part of the evidence string itself; the message names the question.
        ValueError: as :func:`label_chunks`.

    Taught in: notebook 08_beyond_the_averages.
    """
    full = label_chunks(golden, chunks)
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    qrels, problems = {}, []
    partial = golden["partial_evidence"] if "partial_evidence" in golden else pd.Series("", index=golden.index)
    for qid, span, evidence in zip(golden["id"], partial, golden["evidence"]):
        gains = {cid: 2 for cid in full[qid]}
        needle = normalise(span)
        if needle and needle in normalise(evidence):
            problems.append(f"question {qid!r}: partial evidence {span!r} is part of the evidence string")
        elif needle:
            hits = [cid for cid, text in texts.items() if needle in text]
            if not hits:
                problems.append(f"question {qid!r}: partial evidence {span!r} is in no chunk")
            gains.update({cid: 1 for cid in hits if cid not in gains})
        qrels[qid] = gains
    if problems:
        raise GoldenSetError("; ".join(problems))
    return qrels


FALSE_NEGATIVE_COLUMNS = ("id", "sentence", "note")


def read_known_false_negatives(
    chunks: Sequence[Mapping], qrels: Mapping[str, Mapping[str, float]], path: str | Path = KNOWN_FALSE_NEGATIVES_PATH,
) -> pd.DataFrame:
    """The known false negatives of the golden set: chunks that answer a question fully but are labelled 0.

    The evidence-string rule is strict: a chunk that gives the same answer in other words is not
    relevant. A label audit (reading every unlabelled chunk in a retriever's top 3) found such
    chunks; instead of changing the rule, they are listed in a CSV file with columns ``id`` (the
    question), ``sentence`` (the answering sentence, verbatim from the corpus) and ``note``. Like
    the labels, the chunk is found by its text, never stored: the sentence must be in exactly one
    chunk (after :func:`normalise`), and that chunk must not already be relevant.

    Args:
        chunks: the chunks (``id`` and ``text``).
        qrels: ``{question_id: {chunk_id: gain}}``, the labels computed from the evidence strings.
        path: the CSV file (UTF-8, comma-separated).

    Returns:
        A DataFrame with columns ``id``, ``sentence``, ``note`` and ``chunk`` (the chunk holding the
        sentence), one row per listed answer, in file order.

    Raises:
        ValueError: ``chunks`` or ``qrels`` are malformed, e.g. an id that is not a str (as
            :func:`~retrieval_eval.corpus.check_chunks` and :func:`~retrieval_eval.checks.check_qrels`).
        FileNotFoundError: the file does not exist.
        GoldenSetError: a column is missing, or a row names an unknown question, a sentence in no
            chunk or in several, or a chunk already relevant (every problem, each with its line).

    Taught in: notebook 08_beyond_the_averages.
    """
    chunks, qrels = check_chunks(chunks), check_qrels(qrels)
    table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    missing = [c for c in FALSE_NEGATIVE_COLUMNS if c not in table.columns]
    if missing:
        raise GoldenSetError(f"{path}: missing column(s) {missing}; the header must be {','.join(FALSE_NEGATIVE_COLUMNS)}")
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    found, problems = [], []
    for line, (qid, sentence) in enumerate(zip(table["id"], table["sentence"]), start=2):
        hits = [cid for cid, text in texts.items() if normalise(sentence) and normalise(sentence) in text]
        if qid not in qrels:
            problems.append(f"line {line}: no question {qid!r} in the golden set")
        elif len(hits) != 1:
            problems.append(f"line {line}, question {qid!r}: the sentence {sentence!r:.60} is in {len(hits)} chunks {hits}, not in one")
        elif hits[0] in qrels[qid]:
            problems.append(f"line {line}, question {qid!r}: chunk {hits[0]!r} is already relevant")
        found.append(hits[0] if len(hits) == 1 else None)
    if problems:
        raise GoldenSetError(f"{path}: " + "; ".join(problems))
    return table[list(FALSE_NEGATIVE_COLUMNS)].assign(chunk=found)


def with_known_false_negatives(qrels: Mapping[str, Mapping[str, float]], known: pd.DataFrame) -> dict:
    """The qrels with each known false negative added as relevant, at the question's highest gain.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        known: the output of :func:`read_known_false_negatives`.

    Returns:
        A new ``{question_id: {chunk_id: gain}}``; ``qrels`` is not changed.

    Raises:
        ValueError: ``qrels`` is malformed (:func:`~retrieval_eval.checks.check_qrels`).

    Taught in: notebook 08_beyond_the_averages.
    """
    qrels = check_qrels(qrels)
    fixed = {qid: dict(gains) for qid, gains in qrels.items()}
    for qid, chunk in zip(known["id"], known["chunk"]):
        fixed[qid][chunk] = max(qrels[qid].values())
    return fixed
