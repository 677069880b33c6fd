"""The golden set, its relevance labels (qrels) and the level they are scored at. With evidence strings, a
chunk is relevant when it contains one of the question's strings, both normalised: labels are computed every
time, never stored. Labels naming documents while retrieval returns chunks are scored at the document level."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd
from ahocorasick_rs import AhoCorasick, MatchKind
from tqdm import tqdm

from ..core.checks import check_ids, check_qrels, check_ranking, naming_question
from ..core.errors import GoldenSetError
from ..core.paths import GOLDEN_PATH, KNOWN_FALSE_NEGATIVES_PATH
from .chunks import check_chunks, chunk_spans
from .formats import (
    ANSWERABLE,
    GOLDEN_FIELDS,
    Labels,
    beir_labels,
    id_labels,
    load_qrels_and_questions,
    ragas_rows,
    read_table,
)
from .text import normalise

MIN_EVIDENCE_CHARS = 20
GOLDEN_COLUMNS = ("id", "question", "evidence", "slice")
# partial_evidence: hand-judged partial answers, for graded relevance; answerable: "no" marks a question the corpus
# cannot answer (its evidence left empty): not scored by recall, but by abstention (analysis.abstention)
OPTIONAL_COLUMNS = ("partial_evidence", "answerable")
LEVELS = ("chunk", "document")
EVIDENCE_FIELDS = {name: GOLDEN_FIELDS.get(name, (name,)) for name in (*GOLDEN_COLUMNS, *OPTIONAL_COLUMNS)}


def read_golden_csv(path: str | Path = GOLDEN_PATH, problems: list[str] | None = None) -> pd.DataFrame:
    """A golden set of evidence strings: a CSV of ``id, question, evidence`` [, ``slice``, ``partial_evidence``]
    (:func:`.formats.read_table`); a question's strings take a row each (each relevant alone; ``evidence_strings`` holds
    them all). Row problems (blank cells, an id repeated with another question, evidence under ``MIN_EVIDENCE_CHARS``)
    name the line, raised together as a :class:`GoldenSetError` or appended to ``problems``."""
    path = Path(path)
    columns, rows = read_table(path, EVIDENCE_FIELDS, [("id",), ("question",), ("evidence",)], "question")
    return _evidence_golden(path, columns, rows, problems)


def _evidence_golden(path: Path, columns: list[str], rows: list[tuple[int, dict]], problems: list[str] | None) -> pd.DataFrame:
    collect = problems is not None
    problems = problems if collect else []
    optional = [c for c in OPTIONAL_COLUMNS if c in columns]
    questions: dict[str, dict] = {}
    for line, row in rows:
        row = {"slice": "", **row}
        qid = row["id"]
        name = f"line {line}, question {qid!r}" if qid.strip() else f"line {line}"
        answerable = ANSWERABLE.get(row.get("answerable", "").strip().lower())
        problems += [f"{name}: blank {column}" for column in ("id", "question") if not row[column].strip()]
        if answerable is None:
            problems.append(f"{name}: answerable is {row['answerable']!r}: give yes or no (blank: yes)")
        elif answerable and not row["evidence"].strip():
            problems.append(f"{name}: blank evidence (mark a question the corpus cannot answer answerable=no)")
        elif not answerable and row["evidence"].strip():
            problems.append(f"{name}: marked answerable=no but gives evidence: leave one of them")
        if qid != qid.strip():
            problems.append(f"{name}: the id has leading or trailing spaces")
        for column in [c for c in ("evidence", *optional) if c != "answerable"]:
            if row[column].strip() and len(normalise(row[column])) < MIN_EVIDENCE_CHARS:
                problems.append(f"{name}: {column} {row[column]!r} is shorter than {MIN_EVIDENCE_CHARS} characters "
                                "and may match by accident")
        first = questions.get(qid) if qid.strip() else None
        if first is None:
            questions[qid if qid.strip() else f"line {line}"] = {**row, "line": line, "evidence_strings": [row["evidence"]]}
            continue
        if (row["question"], row["slice"]) != (first["question"], first["slice"]):
            problems.append(f"{name}: duplicate id: line {first['line']} has it with another question or slice (a "
                            "repeated row adds an evidence string to the same question)")
        elif row["evidence"] in first["evidence_strings"]:
            problems.append(f"{name}: duplicate row: line {first['line']} has the same evidence string")
        else:
            first["evidence_strings"].append(row["evidence"])
        for column in optional:
            if row[column].strip() and first[column].strip() and row[column] != first[column]:
                problems.append(f"{name}: another {column} than line {first['line']}: give it once")
            first[column] = first[column] or row[column]
    if not questions:
        problems.append("the file holds no question")
    if problems and not collect:
        raise GoldenSetError(f"{path.name}: " + "; ".join(problems))
    golden = pd.DataFrame(list(questions.values()), columns=[*GOLDEN_COLUMNS, *optional, "evidence_strings"])
    golden["evidence_strings"] = golden["evidence_strings"].map(tuple)
    if "answerable" in golden:
        golden["answerable"] = golden["answerable"].str.strip().str.lower().map(ANSWERABLE)
    return golden if golden["evidence_strings"].map(len).gt(1).any() else golden.drop(columns="evidence_strings")


def label_chunks(golden: pd.DataFrame, chunks: Sequence[Mapping], docs: Mapping[str, str] | None = None,
                 problems: list[str] | None = None, progress: bool = False) -> dict:
    """``{question id: {chunk id: 1}}``: a chunk is relevant when it contains an evidence string of the question.
    Each string must be in some chunk; one that is not is named with why (cut by a chunk boundary, chunks of
    another version of the document, not in the corpus: ``docs`` tells). With ``problems``, those are appended
    instead of raised and their questions left out."""
    check_ids(golden["id"], "the golden set holds question id", "row")
    chunks = check_chunks(chunks)
    if docs is not None:
        check_ids(docs, "the documents hold id")
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    collect = problems is not None
    problems = problems if collect else []
    all_strings = list(_evidence_strings(golden))
    needles = {normalise(e) for ss in all_strings for e in ss}
    holding = containing({n for n in needles if len(n) >= MIN_EVIDENCE_CHARS}, texts, progress)
    qrels = {}
    for qid, strings in zip(golden["id"], all_strings):
        found, missing = set(), 0
        for evidence in strings:
            needle = normalise(evidence)
            hits = holding.get(needle, set())
            if len(needle) < MIN_EVIDENCE_CHARS:
                problems.append(f"question {qid!r}: evidence {evidence!r} is shorter than {MIN_EVIDENCE_CHARS} characters")
            elif not hits:
                problems.append(f"question {qid!r}: evidence {evidence!r} {_why_missing(needle, chunks, docs)}")
            found, missing = found | hits, missing + (not hits)
        if not missing:
            qrels[qid] = {cid: 1 for cid in texts if cid in found}
    if problems and not collect:
        raise GoldenSetError("; ".join(problems))
    return qrels


def containing(needles, texts: Mapping[str, str], progress: bool = False) -> dict[str, set]:
    """``{needle: {id of each text holding it}}`` for the non-empty needles, in one pass over the texts (an Aho–Corasick
    automaton of the needles: time linear in the texts' length and the matches, not in texts × needles)."""
    needles = sorted(n for n in needles if n)
    holding: dict[str, set] = {}
    if not needles:
        return holding
    matcher = AhoCorasick(needles, matchkind=MatchKind.Standard)
    for tid, text in tqdm(texts.items(), desc="labelling", unit="chunk", disable=not progress, leave=False):
        for index in {i for i, _, _ in matcher.find_matches_as_indexes(text, overlapping=True)}:
            holding.setdefault(needles[index], set()).add(tid)
    return holding


def _evidence_strings(golden: pd.DataFrame) -> pd.Series:
    return golden["evidence_strings"] if "evidence_strings" in golden else golden["evidence"].map(lambda e: (e,))


def _why_missing(needle: str, chunks: Sequence[Mapping], docs: Mapping[str, str] | None) -> str:
    """Why a normalised evidence string is in no chunk: a chunk boundary, another version, or not in the corpus."""
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
    words = _words(needle)  # copied from a rendered page: the source has markup between the words ("**quiet room**")
    where = [f"the document {d!r}" for d, text in (docs or {}).items() if words in _words(normalise(text))] or [
        f"the chunk {c['id']!r}" for c in chunks if words in _words(normalise(c["text"]))]
    if words and where:
        return (f"is in {where[0]} only with other characters between or around its words (markup such as ** or _, "
                "or punctuation): the corpus holds the words but no chunk holds them as written. Copy the evidence "
                "from the source text, markup included")
    return "is in no chunk" + ("" if docs is None else " and not in the corpus")


def _words(text: str) -> str:
    """The words of a text alone, one space between them: what is left when markup and punctuation are ignored."""
    return " " + " ".join(re.findall(r"\w+", text)) + " "


class GoldenSet(NamedTuple):
    """A golden set with its labels at the level scored (:func:`load_golden`)."""

    golden: pd.DataFrame  #: one row per question: id, question, slice (and the evidence columns)
    qrels: dict  #: ``{question id: {chunk or document id: gain}}``
    level: str  #: "chunk" or "document": what the qrels judge and the runs rank
    notes: list  #: ``[(file, what was left out and why)]``


def load_golden(path: str | Path, chunks: Sequence[Mapping], docs: Mapping[str, str] | None = None, *,
                questions: str | Path | None = None, split: str = "test", level: str | None = None, n_tokens=None,
                window: int | None = None, query_prefix: str = "", progress: bool = False) -> GoldenSet:
    """A golden set in any of its shapes with its labels at the level scored, every problem of a file at once:
    evidence strings (CSV; a Ragas testset, CSV or JSONL), relevant ids (CSV, JSONL, JSON, LlamaIndex), a BEIR folder (``split``), or TREC qrels
    with ``questions``. Given ``n_tokens`` and ``window``, every question with its ``query_prefix`` must fit the
    window (a longer one would be cut silently). ``progress``: a bar while labelling."""
    chunks, path = check_chunks(chunks), Path(path)
    if level not in (None, *LEVELS):
        raise ValueError(f"level must be 'chunk', 'document' or None (detected), got {level!r}")
    problems: list[str] = []
    if questions is not None:
        labels = load_qrels_and_questions(path, questions)
    elif path.is_dir():
        labels = beir_labels(path, split)
    elif path.suffix.lower() in (".csv", ".tsv", ".txt") or path.suffix.lower() == ".jsonl" and ragas_rows(path):
        ragas = ragas_rows(path)
        columns, rows = (["id", "question", "evidence", "answerable"], ragas) if ragas is not None else read_table(
            path, GOLDEN_FIELDS | EVIDENCE_FIELDS, [("question",), ("evidence", "relevant")], "question")
        if {"evidence", "relevant"} <= set(columns):
            raise GoldenSetError(f"{path}: has both an evidence and a relevant column: give one kind of label")
        if "relevant" in columns:
            labels = id_labels(path, rows)
        else:
            labels = None
            if "id" not in columns:
                raise GoldenSetError(f"{path}: a golden set of evidence strings needs an id column")
            golden = _evidence_golden(path, columns, rows, problems)
            # A blank id or a short evidence string is reported already: not labelled again.
            long_enough = _evidence_strings(golden).map(lambda ss: all(len(normalise(e)) >= MIN_EVIDENCE_CHARS for e in ss))
            qrels = label_chunks(golden[golden["id"].str.strip().ne("") & long_enough], chunks, docs, problems=problems,
                                 progress=progress)
    else:
        labels = id_labels(path)
    golden = golden if labels is None else labels.golden
    first: dict = {}  # refused, not scored twice: which copy is meant only the user knows (README, "Your own data")
    for qid, question in zip(golden["id"], golden["question"]):
        if first.setdefault(normalise(question), qid) != qid:
            problems.append(f"question {qid!r} repeats question {first[normalise(question)]!r} (the same text): a repeat "
                            "counts twice in every mean and test; keep one id (one row per evidence string), or reword")
    if n_tokens is not None:
        for qid, question in zip(golden["id"], golden["question"]):
            n = n_tokens(query_prefix + question)
            if n > window:
                problems.append(f"question {qid!r}: the question is {n} word pieces long"
                                + (f" with the model's query prompt {query_prefix!r}" if query_prefix else "")
                                + f", more than the model's window of {window}; shorten it (the window is CHUNK_SIZE)")
    if problems:
        raise GoldenSetError(f"{path.name} has {len(problems)} problem(s); fix them all and run again:\n"
                             + "\n".join(f"- {p}" for p in problems))
    if labels is None:
        labels = Labels(golden, qrels, {}, [])
    qrels, level = at_level(labels, chunks, level)
    return GoldenSet(labels.golden, qrels, level, labels.notes)


def at_level(labels: Labels, chunks: Sequence[Mapping], level: str | None = None) -> tuple[dict, str]:
    """The labels' qrels at the level scored, and the level. Detected: "chunk" when every labelled id is a chunk
    id, else "document" when every one is a document id; at the document level, chunk labels are lifted to their
    documents. Ids the level does not have are listed in one error, with file and line."""
    chunk_ids = {c["id"] for c in chunks}
    doc_ids = {c["doc"] for c in chunks if c.get("doc") is not None}
    named = {d for gains in labels.qrels.values() for d in gains}
    if level is None:
        level = ("chunk" if named <= chunk_ids else "document" if named <= doc_ids
                 else "document" if len(named & doc_ids) > len(named & chunk_ids) else "chunk")
    if level == "document" and not doc_ids:
        raise ValueError("scoring at the document level needs each chunk's document (a doc field); the chunks give none")
    lift = level == "document" and named <= chunk_ids and not named <= doc_ids
    known = chunk_ids if level == "chunk" or lift else doc_ids
    unknown = [(labels.where.get((q, d), f"question {q!r}"), q, d) for q, gains in labels.qrels.items() for d in gains
               if d not in known]
    if unknown:
        hint = (" (they are document ids: score at the document level, level='document')"
                if level == "chunk" and all(d in doc_ids for _, _, d in unknown) else "")
        raise GoldenSetError(f"{len(unknown)} label(s) name ids that no {level} has{hint}:\n" + "\n".join(
            f"- {where}: question {q!r}, id {d!r}" for where, q, d in unknown[:20])
            + (f"\n- and {len(unknown) - 20} more" if len(unknown) > 20 else ""))
    return (document_qrels(labels.qrels, chunks) if lift else labels.qrels), level


def _documents_of(chunks: Sequence[Mapping]) -> dict:
    chunks = check_chunks(chunks)
    missing = [c["id"] for c in chunks if not isinstance(c.get("doc"), str)]
    if missing:
        raise ValueError(f"chunk(s) {missing[:5]} name no document (a doc field): there is no document level")
    return {c["id"]: c["doc"] for c in chunks}


def document_run(run: Mapping[str, Sequence[str]], chunks: Sequence[Mapping]) -> dict:
    """A run of chunks as a run of documents: each document at its best chunk's rank, its later chunks removed."""
    doc_of, out = _documents_of(chunks), {}
    for qid, ranked in run.items():
        with naming_question(qid):
            ranked = check_ranking(ranked)
            unknown = [c for c in ranked if c not in doc_of]
            if unknown:
                raise ValueError(f"chunk ids no chunk has: {unknown[:5]}")
        out[qid] = list(dict.fromkeys(doc_of[c] for c in ranked))
    return out


def document_qrels(qrels: Mapping[str, Mapping[str, float]], chunks: Sequence[Mapping]) -> dict:
    """Chunk labels as document labels: a document's gain is the best gain of its labelled chunks."""
    doc_of, out = _documents_of(chunks), {}
    for qid, gains in check_qrels(qrels, scorable=False).items():
        unknown = [c for c in gains if c not in doc_of]
        if unknown:
            raise ValueError(f"question {qid!r}: labels name chunk ids no chunk has: {unknown[:5]}")
        out[qid] = {}
        for chunk_id, gain in gains.items():
            doc = doc_of[chunk_id]
            out[qid][doc] = max(gain, out[qid].get(doc, gain))
    return out


def document_level(runs: Mapping, qrels: Mapping, chunks: Sequence[Mapping]) -> tuple[dict, dict]:
    """Chunk runs ``{name: run}`` and chunk qrels moved to the document level: ``(document runs, document qrels)``."""
    return {name: document_run(run, chunks) for name, run in runs.items()}, document_qrels(qrels, chunks)


def graded_labels(golden: pd.DataFrame, chunks: Sequence[Mapping]) -> dict:
    """Graded qrels: gain 2 for a chunk with an evidence string, 1 for one with the hand-judged
    ``partial_evidence`` (a chunk with both keeps 2). Partial evidence in no chunk, or inside an evidence string,
    is refused naming the question."""
    full = label_chunks(golden, chunks)
    texts = {c["id"]: normalise(c["text"]) for c in chunks}
    qrels, problems = {}, []
    holding = containing(set(map(normalise, golden.get("partial_evidence", []))), texts)
    partial = golden["partial_evidence"] if "partial_evidence" in golden else pd.Series("", index=golden.index)
    for qid, span, strings in zip(golden["id"], partial, _evidence_strings(golden)):
        gains = {cid: 2 for cid in full[qid]}
        needle = normalise(span)
        if needle and any(needle in normalise(evidence) for evidence in strings):
            problems.append(f"question {qid!r}: partial evidence {span!r} is part of the evidence string")
        elif needle:
            hits = [cid for cid in texts if cid in holding.get(needle, ())]
            if not hits:
                problems.append(f"question {qid!r}: partial evidence {span!r} is in no chunk")
            gains.update({cid: 1 for cid in hits if cid not in gains})
        qrels[qid] = gains
    if problems:
        raise GoldenSetError("; ".join(problems))
    return qrels


FALSE_NEGATIVE_COLUMNS = ("id", "sentence", "note")


def read_known_false_negatives(chunks: Sequence[Mapping], qrels: Mapping[str, Mapping[str, float]],
                               path: str | Path = KNOWN_FALSE_NEGATIVES_PATH) -> pd.DataFrame:
    """The known false negatives (chunks that answer fully but hold no evidence string), from a CSV of ``id``,
    ``sentence`` (verbatim) and ``note``; each sentence must be in exactly one chunk, not relevant already. The rows
    with their ``chunk``; every bad row named with its line in one error."""
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


class KnownFalseNegatives(NamedTuple):
    """The qrels with the known false negatives relevant, and the table they came from (:func:`with_known_false_negatives`)."""

    qrels: dict
    known: pd.DataFrame  #: :func:`read_known_false_negatives`'s rows: id, sentence, note, chunk


def with_known_false_negatives(qrels: Mapping[str, Mapping[str, float]], chunks: Sequence[Mapping],
                               path: str | Path = KNOWN_FALSE_NEGATIVES_PATH) -> KnownFalseNegatives:
    """A copy of the qrels with each known false negative (:func:`read_known_false_negatives`) relevant, at its
    question's highest gain, and their table."""
    known = read_known_false_negatives(chunks, qrels, path)
    fixed = check_qrels(qrels)  # new dicts: the caller's qrels are not changed
    for qid, chunk in zip(known["id"], known["chunk"]):
        fixed[qid][chunk] = max(fixed[qid].values())
    return KnownFalseNegatives(fixed, known)
