"""Files in the shapes people and other tools write: chunks files, golden sets by relevant ids, BEIR folders, LlamaIndex
datasets, and TREC qrels with a questions file. Every error names the file, the line and the field. Field names compare
in lower case with spaces as ``_``, under the names other tools give them (:data:`CHUNK_FIELDS`). Ids are one line with
no space at either end; a JSON number is read as its digits."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..core.errors import FormatError, GoldenSetError
from ..core.paths import CHUNKS_PATH
from .text import plain_integer, read_text
from .trec import judgements

# Each field and the names it may have in a file, ours first.
CHUNK_FIELDS = {"id": ("id", "_id", "chunk_id"), "doc": ("doc", "doc_id", "document_id"), "title": ("title",),
                "text": ("text", "contents", "content"), "n_tokens": ("n_tokens",)}
QUESTION_FIELDS = {"id": ("id", "_id", "qid", "query_id", "question_id"), "question": ("question", "query", "text"),
                   "slice": ("slice",)}
GOLDEN_FIELDS = {**QUESTION_FIELDS, "relevant": ("relevant", "relevant_ids"), "gain": ("gain", "gains"),
                 "evidence": ("evidence",), "partial_evidence": ("partial_evidence",), "answerable": ("answerable",)}
# answerable: "no" marks a question the corpus cannot answer, its labels left empty (scored by abstention)
ANSWERABLE = {"yes": True, "true": True, "1": True, "": True, "none": True, "no": False, "false": False, "0": False}
SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}  # the separators a CSV file may use
SPREADSHEETS = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")
_SPREADSHEET_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0")  # zip (xlsx, ods, numbers), OLE (xls)
_SPACE = re.compile(r"[ \t\n\r]*")


class Labels(NamedTuple):
    """A golden set read from a labels file, before its ids are matched to the chunks."""

    golden: pd.DataFrame  #: one row per question: id, question, slice
    qrels: dict  #: ``{question id: {labelled id: gain}}``
    where: dict  #: ``{(question id, labelled id): "file:line"}``, for the errors
    notes: list  #: ``[(file, what was left out and why)]``


# --- reading records --------------------------------------------------------------------------------


def _file_text(path: Path) -> str:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    with open(path, "rb") as f:
        start = f.read(4)
    if path.suffix.lower() in SPREADSHEETS or start.startswith(_SPREADSHEET_MAGIC):
        raise FormatError(path, None, "is a spreadsheet file, not CSV text: save it as CSV UTF-8 (Excel: File > Save As > "
                                      "CSV UTF-8; LibreOffice: File > Save As > Text CSV, character set UTF-8)")
    try:
        return read_text(path, name=str(path))
    except ValueError as exc:
        raise FormatError(None, None, str(exc)) from None


def column_name(name: str) -> str:
    """A header cell or JSON key as a field name: lower case, spaces around it dropped, inner spaces as ``_``."""
    return "_".join(str(name).split()).lower()


def read_table(path: str | Path, fields: Mapping[str, Sequence[str]], required: Sequence[Sequence[str]],
               what: str = "row") -> tuple[list[str], list[tuple[int, dict]]]:
    """The rows of a CSV file as ``(line it starts on, {field: cell})``, and the fields found. The separator is a comma,
    semicolon or tab (the one that splits the header into the most known names; an Excel ``sep=;`` line is honoured);
    UTF-8 with or without BOM, or UTF-16 with one; blank rows dropped. ``required`` lists, per column, the fields of
    which one must be there."""
    path = Path(path)
    lines = _file_text(path).split("\n")
    known = {alias: name for name, aliases in fields.items() for alias in aliases}
    expected = ", ".join(" or ".join(names) for names in required)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    hint = re.fullmatch(r"\s*sep=(.)\s*", lines[first]) if first is not None else None  # Excel's separator line
    if hint:
        first = next((i for i in range(first + 1, len(lines)) if lines[i].strip()), None)
    if first is None:
        raise FormatError(path, None, f"is empty: it needs a header line naming the columns {expected} and one row per {what}")
    header = lines[first]
    sep = hint[1] if hint else max(SEPARATORS, key=lambda s: (sum(c in known for c in _cells(header, s)), header.count(s)))
    cells = _cells(header, sep)
    names = [known.get(cell) for cell in cells]
    twice = sorted({n for n in names if n and names.count(n) > 1})
    if twice:
        raise FormatError(path, first + 1, f"the header line {header!r} names the column(s) {twice} twice; keep one of each")
    missing = [" or ".join(alternatives) for alternatives in required if not set(alternatives) & set(names)]
    if missing:
        raise FormatError(path, first + 1, f"misses column(s) {missing}: its header line is {header!r}, read with the "
                          f"{SEPARATORS.get(sep, repr(sep))} as separator as the columns {cells}"
                          f"{_other_separator(header, known, required)}. The first line must name the columns {expected} "
                          f"(any case; optional: {', '.join(n for n in fields if n not in sum(map(list, required), []))}), "
                          "separated by commas, semicolons or tabs")
    csv.field_size_limit(2**31 - 1)  # a chunk can be longer than csv's default limit of 131,072 characters
    reader = csv.reader(io.StringIO("\n".join(lines[first + 1:])), delimiter=sep, skipinitialspace=True, strict=True)
    rows, too_long, consumed = [], [], 0
    try:
        for number, row in enumerate(reader, start=2):
            line, consumed = first + 2 + consumed, reader.line_num
            if len(row) > len(names):
                trailing = " (the line ends with a separator)" if not any(c.strip() for c in row[len(names):]) else ""
                too_long.append(f"row {number} (line {line}, starting {row[0][:30]!r}) has {len(row)} cells, the header "
                                f"{len(names)}{trailing}")
            elif any(cell.strip() for cell in row):
                row += [""] * (len(names) - len(row))
                rows.append((line, {name: cell for name, cell in zip(names, row) if name}))
    except csv.Error as exc:
        raise FormatError(path, first + 2 + consumed, f"is not readable CSV ({exc}): a cell that holds the separator "
                          f"({SEPARATORS.get(sep, repr(sep))}) or a line break must be in double quotes") from None
    if too_long:
        shown = too_long[:5] + [f"and {len(too_long) - 5} more row(s)"] * (len(too_long) > 5)
        raise FormatError(path, None, "; ".join(shown) + f". The header has {len(names)} cells ({header!r}): a cell that "
                          f"holds the separator ({SEPARATORS.get(sep, repr(sep))}) must be in double quotes, and a line "
                          "must not end with a separator")
    return [n for n in fields if n in names], rows


def _cells(line: str, sep: str) -> list[str]:
    return [column_name(c) for c in next(csv.reader([line], delimiter=sep, skipinitialspace=True), [])]


def _other_separator(header: str, known: Mapping[str, str], required: Sequence[Sequence[str]]) -> str:
    """A hint when another character than the accepted separators splits the header into the required names."""
    for char in dict.fromkeys(header):
        if char.isalnum() or char.isspace() or char in SEPARATORS or char in "\"_":
            continue
        found = {known.get(column_name(c)) for c in header.split(char)}
        if all(set(alternatives) & found for alternatives in required):
            kind = "a Markdown table" if char == "|" and header.strip().startswith("|") else f"a file separated by {char!r}"
            return f"; it looks like {kind}, which is not read: save it as CSV (commas, semicolons or tabs)"
    return ""


def _json(path: Path, text: str | None = None, line: int = 0):
    """The text (the file's unless given) and its JSON value; errors count lines from ``line`` + 1."""
    text = _file_text(path) if text is None else text
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, line + exc.lineno, f"is not valid JSON ({exc.msg}, column {exc.colno})") from None


def _members(path: Path, text: str, position: int = 0) -> list[tuple[int, object, object, int]]:
    """``(line, key or index, value, position)`` for each member of the JSON array or object at ``position``
    of valid JSON ``text``; a key given twice in an object is refused (JSON readers keep only the last)."""
    decode, members, seen = json.JSONDecoder().raw_decode, [], {}
    position = _SPACE.match(text, position).end()
    is_object = text[position] == "{"
    position = _SPACE.match(text, position + 1).end()
    line, counted = 1 + text.count("\n", 0, position), position
    while text[position] not in "]}":
        line, counted = line + text.count("\n", counted, position), position
        key = len(members)
        if is_object:
            key, end = decode(text, position)
            if key in seen:
                raise FormatError(path, line, f"the key {key!r} again (first on line {seen[key]}): keys must be unique")
            seen[key] = line
            position = _SPACE.match(text, _SPACE.match(text, end).end() + 1).end()  # past the ":"
        value, end = decode(text, position)
        members.append((line, key, value, position))
        position = _SPACE.match(text, end).end()
        if text[position] == ",":
            position = _SPACE.match(text, position + 1).end()
    return members


def read_records(path: str | Path, fields: Mapping[str, Sequence[str]], required: Sequence[Sequence[str]],
                 what: str) -> list[tuple[int, dict]]:
    """``(line, {field: value})`` for each record of a ``.jsonl``, ``.json`` (a list of objects) or ``.csv``
    (also ``.tsv``, ``.txt``) file, each also gzipped (``.jsonl.gz``); other keys are ignored."""
    path = Path(path)
    suffix = Path(path.name.removesuffix(".gz").removesuffix(".GZ")).suffix.lower()  # a.jsonl.gz is JSONL, gzipped
    if suffix in (".csv", ".tsv", ".txt"):
        return read_table(path, fields, required, what)[1]
    if suffix in (".jsonl", ".ndjson"):
        raw = [(number, _json(path, line, number - 1)[1])
               for number, line in enumerate(_file_text(path).split("\n"), start=1) if line.strip()]
    elif suffix == ".json":
        text, value = _json(path)
        if not isinstance(value, list):
            raise FormatError(path, 1, f"a .json file of {what}s holds a list of objects [{{...}}, ...], not a {_kind(value)}")
        raw = [(line, item) for line, _, item, _ in _members(path, text)]
    else:
        raise FormatError(path, None, f"is {'a ' + suffix if suffix else 'a file without an extension'}: give a .jsonl, "
                                      ".json or .csv (.tsv, .txt) file")
    known = {alias: name for name, aliases in fields.items() for alias in aliases}
    records = []
    for line, item in raw:
        if not isinstance(item, dict):
            raise FormatError(path, line, f"a {what} must be a JSON object {{...}}, not a {_kind(item)}")
        record, keys = {}, {}
        for key, value in item.items():
            name = known.get(column_name(key))
            if name in record:
                raise FormatError(path, line, f"the keys {keys[name]!r} and {key!r} both give the {name}; keep one")
            if name:
                record[name], keys[name] = value, key
        missing = [" or ".join(alternatives) for alternatives in required if not set(alternatives) & set(record)]
        if missing:
            raise FormatError(path, line, f"the {what} misses the field(s) {missing}")
        records.append((line, record))
    if not records:
        raise FormatError(path, None, f"holds no {what}")
    return records


def _kind(value) -> str:
    return {dict: "object", list: "list", str: "string", bool: "true/false", type(None): "null"}.get(type(value), "number")


def _identifier(value, path: Path, line: int, field: str) -> str:
    """An id as text: one line, no space at either end (a JSON integer is read as its digits)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value or value != value.strip() or re.search(r"[\r\n\t\v\f\x85\u2028\u2029]", value):
        shown = f"a {_kind(value)}" if not isinstance(value, str) else "empty" if not value else repr(value)
        raise FormatError(path, line, f"the field {field} must be an id (one line, no space at either end), found {shown}")
    return value


def _text(value, path: Path, line: int, field: str, blank: bool = False) -> str:
    if value is None and blank:
        return ""
    if not isinstance(value, str) or not (blank or value.strip()):
        raise FormatError(path, line, f"the field {field} must be non-empty text, found "
                                      f"{'a ' + _kind(value) if not isinstance(value, str) else repr(value)}")
    return value


def _whole(value, path: Path, line: int, field: str) -> int:
    number = value if isinstance(value, int) and not isinstance(value, bool) else plain_integer(value.strip()) if isinstance(
        value, str) else None
    if number is None:
        raise FormatError(path, line, f"the field {field} must be a whole number, found {value!r:.40}")
    return number


# --- chunks -----------------------------------------------------------------------------------------


def load_chunks(path: str | Path = CHUNKS_PATH) -> list[dict]:
    """A chunks file of any chunker, used as it is (``.jsonl``, ``.json``, ``.csv``): an id and a text, optionally a
    doc id, a title (put before the text, as BEIR's models read it) and ``n_tokens``; or a LlamaIndex corpus."""
    path = Path(path)
    llama = _llamaindex(path)
    records = ([(line, {"id": key, "text": value}) for line, key, value, _ in llama[1]["corpus"]] if llama
               else read_records(path, CHUNK_FIELDS, [("id",), ("text",)], "chunk"))
    chunks, first = [], {}
    for line, record in records:
        chunk_id = _identifier(record["id"], path, line, "id")
        if chunk_id in first:
            raise FormatError(path, line, f"the chunk id {chunk_id!r} again (first on line {first[chunk_id]}): chunk ids "
                                          "must be unique")
        first[chunk_id] = line
        parts = [_text(record.get(f), path, line, f, blank=True) for f in ("title", "text")]
        text = "\n\n".join(p for p in parts if p.strip())
        if not text:
            raise FormatError(path, line, f"chunk {chunk_id!r}: the field text is empty")
        chunk = {"id": chunk_id}
        if record.get("doc") not in (None, ""):
            chunk["doc"] = _identifier(record["doc"], path, line, "doc")
        chunk["text"] = text
        if record.get("n_tokens") not in (None, ""):
            chunk["n_tokens"] = _whole(record["n_tokens"], path, line, "n_tokens")
        chunks.append(chunk)
    return chunks


def beir_file(folder: str | Path, name: str) -> Path:
    """A BEIR folder's file ``name``, or ``name.gz`` when only that is there (as BEIR datasets are often shipped)."""
    return next((p for p in (Path(folder) / name, Path(folder) / f"{name}.gz") if p.is_file()), Path(folder) / name)


def own_corpus(golden: str | Path) -> Path | None:
    """The corpus a golden set carries: a BEIR folder's ``corpus.jsonl`` (or ``.jsonl.gz``), a LlamaIndex dataset
    itself; else None."""
    golden = Path(golden)
    if golden.is_dir():
        return beir_file(golden, "corpus.jsonl")
    return golden if _llamaindex(golden) else None


# --- golden sets by relevant ids ---------------------------------------------------------------------


def assemble(questions: Sequence[tuple], questions_file: Path, labels: Sequence[tuple], labels_file: Path,
             split: bool = False, unanswerable: Sequence[str] = ()) -> Labels:
    """A golden set from ``(line, id, question, slice)`` rows and ``(line, question id, labelled id, gain)`` rows,
    every problem listed at once. With ``split``, questions without a label are left out with a note
    (a BEIR split, a qrels file for some of the questions); else each needs one, but the ``unanswerable`` (kept with
    ``answerable`` False)."""
    problems, seen, where, qrels = [], {}, {}, {}
    for line, qid, question, _ in questions:
        if qid in seen:
            problems.append(f"{questions_file}:{line}: the question id {qid!r} again (first on line {seen[qid]})")
        seen.setdefault(qid, line)
        if not question.strip():
            problems.append(f"{questions_file}:{line}: question {qid!r}: the question is blank")
    for line, qid, doc, gain in labels:
        if qid not in seen:
            problems.append(f"{labels_file}:{line}: question {qid!r} is not in {questions_file.name}")
        elif (qid, doc) in where:
            problems.append(f"{labels_file}:{line}: question {qid!r} labels {doc!r} again (first on {where[qid, doc]})")
        else:
            qrels.setdefault(qid, {})[doc] = gain
            where[qid, doc] = f"{labels_file}:{line}"
    unlabelled = [q for q in seen if q not in qrels and q not in unanswerable]
    judged_only = [q for q in qrels if not any(g > 0 for g in qrels[q].values())]
    if not split:
        problems += [f"{questions_file}:{seen[q]}: question {q!r} has no relevant id" for q in unlabelled + judged_only]
    if problems:
        raise GoldenSetError(f"{len(problems)} problem(s); fix them all and run again:\n" + "\n".join(f"- {p}" for p in problems))
    notes = [(str(questions_file), f"{len(unlabelled)} question(s) have no label in {labels_file.name}, not scored: "
              f"{_some(unlabelled)}")] * bool(unlabelled)
    notes += [(str(labels_file), f"{len(judged_only)} question(s) have only labels of gain <= 0 (none relevant), not "
               f"scorable (trec_eval would score them 0): {_some(judged_only)}")] * bool(judged_only)
    kept = [(line, q, text, s) for line, q, text, s in questions if q in qrels and q not in set(judged_only) or q in unanswerable]
    if not qrels or not kept:
        raise GoldenSetError(f"{questions_file}: no question has a relevant label in {labels_file}")
    golden = pd.DataFrame([r[1:] for r in kept], columns=["id", "question", "slice"])
    if unanswerable:
        golden["answerable"] = ~golden["id"].isin(unanswerable)
    return Labels(golden, {q: qrels[q] for q in golden["id"] if q in qrels}, where, notes)


def _some(ids: Sequence[str]) -> str:
    return ", ".join(map(repr, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def id_labels(path: str | Path, records: Sequence[tuple[int, dict]] | None = None) -> Labels:
    """Questions with their relevant ids: CSV or JSONL (or JSON list) of ``id, question, relevant[, gain][, slice]``,
    or a LlamaIndex dataset. ``relevant``: ids separated by ``|``, a JSON list, or ``{id: gain}``; ``gain`` (1 by
    default): one for all or one per id. Without an id field the questions are numbered ``q1``, ``q2``, ..."""
    path = Path(path)
    llama = _llamaindex(path)
    if llama:
        return _llamaindex_labels(path, *llama)
    records = records if records is not None else read_records(path, GOLDEN_FIELDS, [("question",), ("relevant",)], "question")
    questions, labels, unanswerable = [], [], []
    for number, (line, record) in enumerate(records, start=1):
        qid = _identifier(record["id"], path, line, "id") if "id" in record else f"q{number}"
        questions.append((line, qid, _text(record["question"], path, line, "question", blank=True),
                          _text(record.get("slice"), path, line, "slice", blank=True)))
        answerable = ANSWERABLE.get(str(record.get("answerable", "")).strip().lower())
        if answerable is None:
            raise FormatError(path, line, f"the field answerable is {record['answerable']!r}: give yes or no (blank: yes)")
        unanswerable += [qid] * (not answerable)
        labels += [(line, qid, doc, gain) for doc, gain in _relevant(record["relevant"], record.get("gain"), path, line, answerable)]
    return assemble(questions, path, labels, path, unanswerable=unanswerable)


def _relevant(relevant, gain, path: Path, line: int, answerable: bool = True) -> list[tuple[str, int]]:
    """``[(id, gain)]`` from a ``relevant`` field and an optional ``gain`` field (see :func:`id_labels`); none, and
    must be none, for a question marked ``answerable`` no."""
    relevant, gain = _listed(relevant, path, line, "relevant"), _listed(gain, path, line, "gain")
    if isinstance(relevant, dict):
        if gain not in (None, "", []):
            raise FormatError(path, line, "the field relevant gives {id: gain} already: leave the field gain empty")
        pairs = list(relevant.items())
    else:
        gains = [1] * len(relevant) if gain in (None, "", []) else gain * len(relevant) if len(gain) == 1 else gain
        if len(gains) != len(relevant):
            raise FormatError(path, line, f"the field gain gives {len(gains)} gains for the {len(relevant)} ids of the "
                                          "field relevant: give one for all, or one per id")
        pairs = list(zip(relevant, gains))
    if not answerable and pairs:
        raise FormatError(path, line, "marked answerable=no but the field relevant names ids: leave one of them")
    if answerable and not pairs:
        raise FormatError(path, line, "the field relevant names no id (mark a question the corpus cannot answer answerable=no)")
    return [(_identifier(d, path, line, "relevant"), _whole(g, path, line, "gain")) for d, g in pairs]


def _listed(value, path: Path, line: int, field: str):
    """A cell as a list (``a|b`` or a JSON list) or a mapping (a JSON object); JSON values pass as they are."""
    if isinstance(value, str):
        value = value.strip()
        if value[:1] in "[{" and value:
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise FormatError(path, line, f"the field {field} is not valid JSON ({exc.msg})") from None
        else:
            return [part.strip() for part in value.split("|")] if value else []
    if value is None or isinstance(value, (list, dict)):
        return value
    return [value]


def _llamaindex(path: Path) -> tuple[str, dict] | None:
    """A LlamaIndex ``EmbeddingQAFinetuneDataset`` file's text and the members of its three parts, or None."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    text, value = _json(path)
    parts = ("queries", "corpus", "relevant_docs")
    if not isinstance(value, dict) or not set(parts) <= set(value):
        return None
    found = {}
    for line, key, part, position in _members(path, text):
        if key in parts:
            if not isinstance(part, dict):
                raise FormatError(path, line, f"{key} must be an object {{id: ...}}, not a {_kind(part)}")
            found[key] = _members(path, text, position)
    return text, found


def _llamaindex_labels(path: Path, text: str, parts: dict) -> Labels:
    questions = [(line, _identifier(key, path, line, "queries"), _text(value, path, line, "queries"), "")
                 for line, key, value, _ in parts["queries"]]
    labels = []
    for line, key, value, position in parts["relevant_docs"]:
        if not isinstance(value, list):
            raise FormatError(path, line, f"relevant_docs of {key!r} must be a list of ids, not a {_kind(value)}")
        labels += [(element_line, key, _identifier(doc, path, element_line, "relevant_docs"), 1)
                   for element_line, _, doc, _ in _members(path, text, position)]
    return assemble(questions, path, labels, path)


RAGAS_FIELDS = {"question": ("user_input",), "evidence": ("reference_contexts",), "answerable": ("answerable",)}


def ragas_rows(path: Path) -> list[tuple[int, dict]] | None:
    """A Ragas testset (``user_input``, ``reference``, ``reference_contexts``; CSV or JSONL) as evidence-string rows:
    the question is ``user_input``, each ``reference_contexts`` entry an evidence string, the id ``q<row>``; None
    for a file of another shape. In CSV the contexts are a list as Python or JSON writes it."""
    head = _file_text(path)[:4096]
    if "user_input" not in head or "reference_contexts" not in head:
        return None
    rows = []
    for number, (line, record) in enumerate(read_records(path, RAGAS_FIELDS, [("question",), ("evidence",)], "question"), 1):
        contexts = record["evidence"]
        if isinstance(contexts, str):
            try:
                contexts = ast.literal_eval(contexts) if contexts.strip() else []
            except (ValueError, SyntaxError):
                raise FormatError(path, line, "reference_contexts is not a list of texts (['...', '...'])") from None
        if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
            raise FormatError(path, line, f"reference_contexts must be a list of texts, got a {_kind(contexts)}")
        question = _text(record["question"], path, line, "user_input", blank=True)
        rows += [(line, {"id": f"q{number}", "question": question, "evidence": c,
                         "answerable": str(record.get("answerable", ""))}) for c in contexts or [""]]
    return rows


def read_questions(path: str | Path) -> list[tuple[int, str, str, str]]:
    """``(line, id, question, slice)`` from a questions file: BEIR's ``queries.jsonl`` (``_id``, ``text``) or a
    JSONL, JSON or CSV file with ``id`` and ``question``."""
    path = Path(path)
    return [(line, _identifier(r["id"], path, line, "id"), _text(r["question"], path, line, "question", blank=True),
             _text(r.get("slice"), path, line, "slice", blank=True))
            for line, r in read_records(path, QUESTION_FIELDS, [("id",), ("question",)], "question")]


def load_qrels_and_questions(qrels_path: str | Path, questions_path: str | Path) -> Labels:
    """A golden set from a TREC qrels file and a questions file; questions the qrels do not judge are left out."""
    qrels_path, questions_path = Path(qrels_path), Path(questions_path)
    return assemble(read_questions(questions_path), questions_path, judgements(qrels_path), qrels_path, split=True)


# --- BEIR ---------------------------------------------------------------------------------------------


def beir_labels(folder: str | Path, split: str = "test") -> Labels:
    """The questions of ``queries.jsonl`` judged in ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``,
    tab-separated, a header line), with their graded labels; the other questions are left out with a note."""
    folder = Path(folder)
    queries, qrels_file = beir_file(folder, "queries.jsonl"), beir_file(folder / "qrels", f"{split}.tsv")
    if not queries.is_file():
        raise FormatError(folder, None, "is not a BEIR folder: it has no queries.jsonl (a BEIR folder holds corpus.jsonl, "
                                        "queries.jsonl and qrels/<split>.tsv)")
    if not qrels_file.is_file():
        splits = sorted(p.name.split(".")[0] for p in (folder / "qrels").glob("*.tsv*"))
        raise FormatError(folder, None, f"has no qrels/{split}.tsv" + (f"; its splits: {', '.join(splits)}" if splits else ""))
    labels, lines = [], [(n, line) for n, line in enumerate(_file_text(qrels_file).split("\n"), start=1) if line.strip()]
    for number, line in lines:
        fields = [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]
        if number == lines[0][0] and len(fields) == 3 and plain_integer(fields[2]) is None:
            continue  # the header line (query-id, corpus-id, score)
        if len(fields) != 3:
            hint = " (it looks like a TREC qrels line: give it as QRELS= with QUESTIONS=)" if len(fields) == 4 else ""
            raise FormatError(qrels_file, number, f"a line needs 3 fields (query-id, corpus-id, score), found {len(fields)}{hint}")
        labels.append((number, _identifier(fields[0], qrels_file, number, "query-id"),
                       _identifier(fields[1], qrels_file, number, "corpus-id"), _whole(fields[2], qrels_file, number, "score")))
    if not labels:
        raise FormatError(qrels_file, None, "holds no judgement")
    return assemble(read_questions(queries), queries, labels, qrels_file, split=True)
