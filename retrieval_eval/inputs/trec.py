"""TREC qrels and run files: written for trec_eval, ranx and ir_measures, read as trec_eval 10.0 reads them: qrels ``qid
iter docid rel`` (4 fields), runs ``qid Q0 docid rank score tag`` (6 or more; ``iter``, ``Q0``, rank not read), split at
C's ``isspace``, re-sorted by score then docid descending as bytes, ``#`` a comment. Stricter: a label must be an
integer, a score a number (not nan), a document once per question. Errors name file and line."""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.checks import (
    check_gains,
    check_ids,
    check_ranking,
    naming_question,
)
from ..core.errors import TrecFormatError
from ..core.metrics import relevant_ids
from ..core.paths import OUTPUT_DIR
from .text import plain_integer


def write_trec_qrels(qrels: Mapping[str, Mapping[str, float]], path: str | Path) -> Path:
    """Write qrels as a TREC qrels file, ``question_id 0 chunk_id gain`` (whole gains, ids without whitespace)."""
    Path(path).write_text(qrels_text(qrels), encoding="utf-8")
    return Path(path)


def qrels_text(qrels: Mapping[str, Mapping[str, float]]) -> str:
    """The qrels as the text of a TREC qrels file, checked (see :func:`write_trec_qrels`)."""
    check_ids(qrels, "the qrels hold question id")
    lines = []
    for qid, gains in qrels.items():
        with naming_question(qid):
            check_gains(gains)
        for doc_id, gain in gains.items():
            _check_trec_id(qid)
            _check_trec_id(doc_id)
            if gain != int(gain):
                raise ValueError(f"question {qid!r}, chunk {doc_id!r}: gain {gain} is not a whole number")
            lines.append(f"{qid} 0 {doc_id} {int(gain)}")
    return "\n".join(lines) + "\n"


def write_trec_run(run: Mapping[str, Sequence[str]], path: str | Path, tag: str) -> Path:
    """Write one run as a TREC run file, ``question_id Q0 chunk_id rank score tag``. The score is
    ``len(ranking) − rank + 1``, so trec_eval's re-sort keeps our order; an empty ranking gets no line
    (``trec_eval -c`` scores it 0, as we do)."""
    Path(path).write_text(run_text(run, tag), encoding="utf-8")
    return Path(path)


def run_text(run: Mapping[str, Sequence[str]], tag: str) -> str:
    """One run as the text of a TREC run file, checked (see :func:`write_trec_run`)."""
    if not isinstance(tag, str):
        raise ValueError(f"the tag must be a str, got {tag!r}")
    _check_trec_id(tag)
    check_ids(run, "the run holds question id")
    blocks = []  # one string per question, not per line: a tenth of the memory at 100 ranks
    for qid, ranked in run.items():
        with naming_question(qid):
            ranked = check_ranking(ranked)
        if ranked:
            _check_trec_id(qid)
        for doc_id in ranked:
            _check_trec_id(doc_id)
        blocks.append("".join(f"{qid} Q0 {doc_id} {rank} {len(ranked) - rank + 1} {tag}\n"
                              for rank, doc_id in enumerate(ranked, start=1)))
    return "".join(blocks) or "\n"


def _check_trec_id(name: str) -> None:
    if not name or re.search(r"\s", name):
        raise ValueError(f"{name!r} cannot be written to a TREC file: it is empty or contains whitespace")


def export_trec(runs: Mapping, qrels: Mapping, folder: str | Path = OUTPUT_DIR / "trec") -> list[Path]:
    """Write ``qrels.txt`` and a ``run.<name>.txt`` per run (``make trec``), all checked before any is written; e.g.
    ``trec_eval -m P.3 -m recall.3 -m recip_rank -m ndcg_cut.3 qrels.txt run.BM25.txt``."""
    if not isinstance(runs, Mapping):
        raise ValueError(f"runs must be a mapping {{retriever name: {{question_id: ranking}}}}, got {runs!r:.60}")
    texts = {"qrels.txt": qrels_text(qrels)}
    for name, run in runs.items():
        try:
            texts[f"run.{name}.txt"] = run_text(run, name)
        except ValueError as exc:
            raise ValueError(f"run {name!r}: {exc}") from None
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for filename, text in texts.items():
        (folder / filename).write_text(text, encoding="utf-8")
    return [folder / filename for filename in texts]


# --- reading ------------------------------------------------------------------------------------

# Characters that Python's str.split() takes as whitespace but C's isspace() does not.
_NOT_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_SPACE = re.compile("[ \t\n\r\x0b\x0c]+")
_COMMENT = re.compile(rb"\n[ \t]*#")  # a line whose first field starts with "#" (a docid may hold one: "doc#3")


@dataclass(frozen=True)
class Run:
    """One run file as :func:`read_run` reads it: ``rankings`` in trec_eval's order with their ``scores`` (arrays), the
    ``tag`` of the last line (trec_eval's ``runid``), every tag, and the questions ``reordered`` on reading."""

    rankings: dict
    scores: dict
    tag: str
    tags: tuple
    reordered: tuple = ()
    path: str = ""


def _data(path: str | os.PathLike) -> bytes:
    """The file's bytes, lines ending at LF (CRLF and a lone CR too: old Mac tools; trec_eval would read one long line)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TrecFormatError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data


def _text(path: str | os.PathLike, data: bytes | None = None) -> str:
    """The file's text (:func:`_data` decoded), invalid UTF-8 named by its line."""
    data = _data(path) if data is None else data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.end].rsplit(b"\n", 1)[-1] + data[exc.end :].split(b"\n", 1)[0]
        raise TrecFormatError(path, data[: exc.start].count(b"\n") + 1, f"is not valid UTF-8 (byte {data[exc.start]:#04x})",
                              line) from None


def _lines(path: str | os.PathLike, text: str | None = None) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, line, fields) for each line of the file that is neither blank nor a comment."""
    text = _text(path) if text is None else text
    split = str.split if text.isascii() or not _NOT_C_SPACE.search(text) else (lambda line: _C_SPACE.split(line.strip(" \t\n\r\x0b\x0c")))
    for number, line in enumerate(text.split("\n"), start=1):
        fields = split(line)
        if fields and fields != [""] and not fields[0].startswith("#"):
            yield number, line, fields


def _raise_first_duplicate(path: str | os.PathLike, verb: str) -> None:
    """Read the file again to find the first (question, docid) seen before; raise naming both lines."""
    first_line: dict[tuple[str, str], int] = {}
    for number, line, fields in _lines(path):
        key = (fields[0], fields[2])
        if key in first_line:
            raise TrecFormatError(path, number, f"document {key[1]!r} is {verb} twice for question {key[0]!r} "
                                  f"(first on line {first_line[key]}); trec_eval refuses duplicate docs", line)
        first_line[key] = number


def read_qrels(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """A TREC qrels file as ``{question id: {docid: gain}}`` in file order; relevant is gain >= 1, as in trec_eval."""
    qrels: dict[str, dict[str, int]] = {}
    for _, qid, docid, gain in judgements(path):
        qrels.setdefault(qid, {})[docid] = gain
    return qrels


def judgements(path: str | os.PathLike) -> list[tuple[int, str, str, int]]:
    """``(line, question id, document id, gain)`` of each judgement of a TREC qrels file, checked."""
    rows = []
    for number, line, fields in _lines(path):
        if len(fields) != 4:
            hint = " (it looks like a run line: is this a run file?)" if len(fields) == 6 else ""
            raise TrecFormatError(path, number,
                                  f"a qrels line needs 4 fields (qid iter docid rel), found {len(fields)}{hint}", line)
        gain = plain_integer(fields[3])
        if gain is None:
            raise TrecFormatError(path, number, f"relevance {fields[3]!r} is not an integer", line)
        rows.append((number, fields[0], fields[2], gain))
    if len({(q, d) for _, q, d, _ in rows}) != len(rows):
        _raise_first_duplicate(path, "judged")
    if not rows:
        raise TrecFormatError(path, None, "holds no judgement (empty, or only blank and comment lines)")
    return rows


def read_run(path: str | os.PathLike, progress: bool = False) -> Run:
    """A TREC run file as a :class:`Run`, each question's documents in trec_eval's order: score descending, then docid
    descending (UTF-8 ``strcmp`` orders as Python compares strings; ``rank_by_score`` breaks ties ascending instead).
    Read a block at a time, never whole; each docid is one string object however many questions rank it, and each
    question's scores are a view of one NumPy array: two runs of 1,000,000 questions × 100 ranks fit in 8 GiB.
    ``progress``: a bar over the file's bytes."""
    columns = _run_columns(path, f"reading {Path(path).name}" if progress else None)
    if columns is None:  # a comment, a short line, a doubtful score: read line by line, to name the line
        columns = _run_lines(path, _text(path))
    codes, questions, docs, names, scores, tags = columns
    if not len(codes):
        raise TrecFormatError(path, None, "holds no result (empty, or only blank and comment lines)")
    if (codes[1:] < codes[:-1]).any():  # a question's lines apart: bring them together, in file order
        order = np.argsort(codes, kind="stable")
        codes, docs, scores = codes[order], docs[order], scores[order]
        del order
    pairs = codes.astype(np.int64)
    pairs *= len(names)
    pairs += docs
    pairs.sort()  # in place: a duplicate (question, docid) is two equal neighbours
    if (pairs[1:] == pairs[:-1]).any():
        _raise_first_duplicate(path, "listed")
    del pairs
    # trec_eval's order: score descending, then docid descending; re-sort only the questions not already in it
    in_order = scores[:-1] > scores[1:]
    tied = np.flatnonzero(scores[:-1] == scores[1:])
    in_order[tied] = names[docs[tied]] > names[docs[tied + 1]]
    reordered = np.unique(codes[1:][(codes[1:] == codes[:-1]) & ~in_order])
    del in_order, tied
    rows = np.flatnonzero(np.isin(codes, reordered))
    by_id = pd.factorize(names[docs[rows]], sort=True)[0]
    resorted = rows[np.lexsort((-by_id, -scores[rows], codes[rows]))]
    docs[rows], scores[rows] = docs[resorted], scores[resorted]
    del rows, by_id, resorted
    ends = np.cumsum(np.bincount(codes))[:-1]
    del codes
    rankings = dict(zip(questions, (names[ids].tolist() for ids in np.split(docs, ends))))
    return Run(rankings, dict(zip(questions, np.split(scores, ends))), tags[-1], tuple(dict.fromkeys(tags)),
               tuple(questions[reordered]), str(path))


CHUNK_BYTES = 1 << 25  # bytes pandas parses at once (32 MiB, about a million lines): a block's strings live only until
# its ids are coded


def _blocks(path: str | os.PathLike) -> Iterator[bytes]:
    """The file's bytes as :func:`_data` makes them, a block of whole lines at a time."""
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below, as the generator ends
    except OSError as exc:
        raise TrecFormatError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    with file:
        rest, first = b"", True
        while block := file.read(CHUNK_BYTES):
            block = rest + (block.removeprefix(b"\xef\xbb\xbf") if first else block)
            first = False
            if b"\r" in block:  # a CRLF cut between blocks leaves a blank line, which is skipped
                block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield block[:cut]
        if rest:
            yield rest


class _Ids:
    """Codes for ids met block by block, in order of first appearance; ``ids[code]`` is one string object per id. The
    index of the ids seen (its hash table) is rebuilt only when a block brings new ones."""

    def __init__(self):
        self.ids = np.empty(0, dtype=object)
        self.index = pd.Index(self.ids)

    def code(self, column: np.ndarray) -> np.ndarray:
        codes, uniques = pd.factorize(column)
        where = self.index.get_indexer(uniques)
        new = where < 0
        if new.any():
            where[new] = len(self.ids) + np.arange(new.sum())
            self.ids = np.concatenate([self.ids, uniques[new]])
            self.index = pd.Index(self.ids, dtype=object)
        return where[codes].astype(np.int32)


def _run_columns(path: str | os.PathLike, progress: str | None = None) -> tuple | None:
    """(question codes, question ids, docid codes, docids, scores, tags in order) of a run's lines, read by pandas' C
    reader a block at a time; None when the text needs the reader line by line (a comment, C whitespace pandas does not
    split at, a line of under 6 fields, a score that is not a plain number, invalid UTF-8). ``progress``: the bar's
    label, shown from two blocks on."""
    from tqdm import tqdm
    questions, docs, tags, columns = _Ids(), _Ids(), [], ([], [], [])
    size = Path(path).stat().st_size if Path(path).is_file() else 0
    with tqdm(total=size, desc=progress, unit="B", unit_scale=True, disable=progress is None or size < 2 * CHUNK_BYTES) as bar:
        for data in _blocks(path):
            bar.update(len(data))
            if (b"#" in data and _COMMENT.search(b"\n" + data) or b"\x0b" in data or b"\x0c" in data
                    or not data.isascii() and _NOT_C_SPACE.search(data.decode("utf-8", "replace"))):
                return None
            try:  # invalid UTF-8 is a UnicodeDecodeError: a ValueError
                table = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, usecols=[0, 2, 4, 5], dtype=object,
                                    quoting=csv.QUOTE_NONE, na_filter=False, engine="c")
            except (ValueError, KeyError, IndexError):  # pandas: ParserError and EmptyDataError are ValueErrors
                return None
            raw, tag = table[4].to_numpy(dtype=object), table[5].to_numpy(dtype=object)
            try:
                scores = raw.astype(float)
            except ValueError:
                return None
            raw = "".join(raw.tolist())  # float() also takes "1_0" and other scripts' digits, which C atof reads differently
            if np.isnan(scores).any() or "_" in raw or not raw.isascii() or not all(tag):
                return None
            for column, part in zip(columns, (questions.code(table[0].to_numpy(dtype=object)),
                                              docs.code(table[2].to_numpy(dtype=object)), scores)):
                column.append(part)
            tags += [*pd.unique(tag), tag[-1]]
    if not tags:
        return None
    joined = []
    for column in columns:  # one column's blocks at a time: at most one column is held twice
        joined.append(np.concatenate(column))
        column.clear()
    codes, doc_codes, scores = joined
    return codes, questions.ids, doc_codes, docs.ids, scores, list(dict.fromkeys(tags[:-1])) + [tags[-1]]


def _run_lines(path: str | os.PathLike, text: str) -> tuple:
    """:func:`_run_columns` line by line, each bad line a :class:`TrecFormatError` naming it."""
    rows = []
    for number, line, fields in _lines(path, text):
        if len(fields) < 6:
            hint = " (it looks like a qrels line: is this the qrels file?)" if len(fields) == 4 else ""
            raise TrecFormatError(path, number,
                                  f"a run line needs 6 fields (qid Q0 docid rank score tag), found {len(fields)}{hint}", line)
        raw = fields[4]
        try:
            score = float(raw)
        except ValueError:
            score = math.nan
        if math.isnan(score) or "_" in raw or not raw.isascii():
            raise TrecFormatError(path, number, f"score {raw!r} is not a number", line)
        rows.append((fields[0], fields[2], score, fields[5]))
    qids, docids, scores, tags = zip(*rows) if rows else ((), (), (), ())
    questions, docs = _Ids(), _Ids()
    codes, doc_codes = questions.code(np.array(qids, dtype=object)), docs.code(np.array(docids, dtype=object))
    return codes, questions.ids, doc_codes, docs.ids, np.array(scores, dtype=float), list(dict.fromkeys(tags)) + list(tags[-1:])


def find_line(path: str | os.PathLike, question_id: str, docid: str) -> int | None:
    """The number of the first line of a TREC file for this question and document, or None."""
    return next((number for number, _, fields in _lines(path) if fields[0] == question_id and fields[2] == docid), None)


# --- which questions meet -----------------------------------------------------------------------


class Coverage(NamedTuple):
    """Which questions of a run and the qrels meet (:func:`align_run`): ``scored`` (a relevant document),
    ``run_only`` (ignored, as by trec_eval), ``missing`` (scored 0, as ``trec_eval -c``), ``no_relevant`` (left
    out, where trec_eval scores them 0)."""

    scored: tuple
    run_only: tuple
    missing: tuple
    no_relevant: tuple


def align_run(run: Run | Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> tuple[dict, Coverage]:
    """Match a run's questions to the qrels' as ``trec_eval -c`` does: ``({question id: ranking}, coverage)``
    for every scored question in qrels order, ``[]`` for a missing one."""
    rankings = run.rankings if isinstance(run, Run) else run
    check_ids(qrels, "the qrels hold question id")
    if not isinstance(run, Run):  # read_run's rankings were checked as the file was read
        check_ids(rankings, "the run holds question id")
        for qid, ranked in rankings.items():
            with naming_question(qid):
                check_ranking(ranked)
    answerable = {q: bool(relevant_ids(gains)) for q, gains in qrels.items()}
    no_relevant = tuple(q for q, yes in answerable.items() if not yes)
    scored = tuple(q for q, yes in answerable.items() if yes)
    coverage = Coverage(scored=scored, run_only=tuple(q for q in rankings if q not in qrels),
                        missing=tuple(q for q in scored if q not in rankings), no_relevant=no_relevant)
    return {q: list(rankings.get(q, ())) for q in scored}, coverage
