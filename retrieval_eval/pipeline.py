"""The one set-up call of the notebooks: chunks, golden set, qrels and the three retrievers' rankings.

Rankings are cached under ``.cache/rankings/`` as JSON (never pickle), keyed by a fingerprint of
everything that can change them: the chunk ids and texts, the questions, the embedding model's
content, the retriever settings, the retrieval code and the versions of the libraries that score.
A notebook that needs only rankings therefore never loads the embedding model on a warm cache;
any change to an input makes a new fingerprint, and the rankings are computed again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from . import fusion, retrievers, text
from .corpus import CHUNK_SIZE, load_corpus, stored_or_split_chunks
from .golden import load_golden_with_qrels
from .models import (
    document_prefix, fingerprint, model_fingerprint, query_prefix, scoring_versions, token_counter, unknown_only,
)
from .parameters import check_parameters
from .paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH, write_atomically
from .fusion import fuse_runs
from .retrievers import BM25Retriever, VectorRetriever, run_retrievers, unindexable_chunks, unindexable_message


RETRIEVERS = ("BM25", "vector", "hybrid")  # the runs of a Setup, in this order


class Setup(NamedTuple):
    """What every notebook after 00 starts from (returned by :func:`evaluation_setup`).

    Not taught by name; every notebook starts from the Setup that evaluation_setup
    returns.
    """

    docs: dict  #: ``{document id: text}``
    chunks: list  #: ``[{"id", "doc", "text", "n_tokens"}]`` in corpus order
    golden: pd.DataFrame  #: the golden set, one row per question
    qrels: dict  #: ``{question_id: {chunk_id: gain}}``, computed from the chunks
    runs: dict  #: ``{"BM25" | "vector" | "hybrid": {question_id: ranking}}``
    skipped: list  #: ``[(path relative to the corpus folder, reason)]``: what the corpus loader did not read
    #: ``{"chunks": [chunk ids], "questions": [question ids]}`` the embedding model reads as unknown tokens only
    unreadable: dict

    @property
    def chunk_ids(self) -> list[str]:
        """The chunk ids, in corpus order.

        Taught in: notebooks 01_recall_at_k to 06_mistakes_and_interview.
        """
        return [c["id"] for c in self.chunks]

    @property
    def unindexable(self) -> list[str]:
        """The chunks without a word BM25 can index (:func:`~retrieval_eval.retrievers.unindexable_chunks`).

        Taught in: notebook 05_three_retrievers.
        """
        return unindexable_chunks(self.chunks)

    @property
    def unranked(self) -> dict[str, list[str]]:
        """Per retriever, the questions it ranked no chunk for (they score 0 on every metric).

        Taught in: notebook 05_three_retrievers.
        """
        return {name: [qid for qid, ranked in run.items() if not ranked] for name, run in self.runs.items()}

    @property
    def unreadable_notes(self) -> list[str]:
        """One sentence per kind of text the embedding model reads as unknown tokens only
        (:func:`~retrieval_eval.models.unknown_only`), naming the chunks and questions.

        Taught in: notebook 05_three_retrievers.
        """
        what = {"chunks": ("chunk", "their vectors say nothing about their text: vector search places them by "
                                    "accident (and orders equal scores by chunk id)"),
                "questions": ("question", "vector search ranks chunks for them by accident, not by meaning")}
        return [f"the embedding model reads {len(ids)} {what[kind][0]}{'s' * (len(ids) != 1)} as unknown tokens only "
                f"([UNK]) ({', '.join(ids)}): {what[kind][1]}" for kind, ids in self.unreadable.items() if ids]

    @property
    def notes(self) -> list[str]:
        """Everything the evaluation cannot see, one line each: files not read, chunks BM25 cannot
        index, questions a retriever ranked nothing for, text the embedding model cannot read.

        Taught in: notebook 05_three_retrievers.
        """
        return ([f"not read: {path}: {reason}" for path, reason in self.skipped]
                + ([unindexable_message(self.unindexable)] if self.unindexable else [])
                + [f"{name} ranked no chunk for {len(questions)} question(s): {', '.join(questions)}"
                   for name, questions in self.unranked.items() if questions]
                + self.unreadable_notes)


def evaluation_setup(
    corpus: str | Path = CORPUS_DIR,
    golden: str | Path = GOLDEN_PATH,
    model_name: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: bool = False,
    cache_dir: str | Path = CACHE_DIR,
) -> Setup:
    """Load the corpus and golden set, compute the labels, and rank every question with each retriever.

    The golden file is checked against the chunks and the model's window (every problem at once,
    see :func:`~retrieval_eval.golden.load_golden_with_qrels`) before any model loads; files of the
    corpus folder that are not read are listed in ``skipped`` (see
    :func:`~retrieval_eval.corpus.load_corpus`), and chunks and questions the embedding model reads
    as unknown tokens only in ``unreadable`` (:func:`~retrieval_eval.models.unknown_only`; all of it
    in :attr:`Setup.notes`). The rankings of
    BM25, vector search and hybrid search (RRF of the top 10 of each) come from the cache when
    their fingerprint (see :func:`rankings_fingerprint`) is there, else they are computed and stored.

    Args:
        corpus: a folder of documents (default: the Polder corpus, whose stored chunks are used).
        golden: the golden-set CSV file.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local sentence-transformers model.
        chunk_size: the largest chunk in word pieces; also the vector retriever's window.
        progress: show progress bars for chunking, indexing, embedding and ranking.
        cache_dir: the cache folder (rankings in ``rankings/``, embeddings in ``embeddings/``).

    Returns:
        A :class:`Setup` ``(docs, chunks, golden, qrels, runs, skipped, unreadable)``.

    Raises:
        ParameterError: an argument is wrong (:func:`~retrieval_eval.parameters.check_parameters`:
            every problem at once, before anything is read).
        FileNotFoundError, ValueError, GoldenSetError: as the loaders, naming the file, chunk or question.

    Taught in: every notebook from 01 on starts with it; notebook 05 runs it on your own data.
    """
    check_parameters(corpus, golden, model_name, chunk_size)
    skipped: list = []
    docs = load_corpus(corpus, skipped=skipped)
    chunks = stored_or_split_chunks(docs, corpus, model_name, chunk_size, progress)
    golden_set, qrels = load_golden_with_qrels(golden, chunks, docs, token_counter(model_name), chunk_size,
                                               query_prefix(model_name))
    runs = cached_rankings(chunks, golden_set, model_name, chunk_size, progress, cache_dir)
    unreadable = {"chunks": unknown_only({c["id"]: c["text"] for c in chunks}, model_name),
                  "questions": unknown_only(dict(zip(golden_set["id"], golden_set["question"])), model_name)}
    return Setup(docs, chunks, golden_set, qrels, runs, skipped, unreadable)


def rankings_fingerprint(chunks: Sequence[Mapping], golden: pd.DataFrame, model_name: str | None, max_seq_length: int) -> str:
    """The cache key of the three retrievers' rankings: a digest of every input that can change them.

    Chunk ids and texts, question ids and texts, the embedding model's content
    (:func:`~retrieval_eval.models.model_fingerprint`), query and document prompts and window, the retrieval code (the
    source of the modules that tokenize, score, break ties and fuse, and of this one, which sets them up) and the versions of the libraries that
    score (:func:`~retrieval_eval.models.scoring_versions`).

    Args:
        chunks, golden, model_name, max_seq_length: as for :func:`cached_rankings`.

    Not taught; the cache key of cached_rankings (through evaluation_setup, every notebook).
    """
    sources = [Path(m.__file__) for m in (retrievers, fusion, text)] + [Path(__file__)]  # this module builds them
    code = hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()
    return fingerprint(
        chunks=[[c["id"], c["text"]] for c in chunks],
        questions=[[qid, q] for qid, q in zip(golden["id"], golden["question"])],
        model=model_fingerprint(model_name),
        query_prefix=query_prefix(model_name),
        document_prefix=document_prefix(model_name),
        max_seq_length=max_seq_length,
        code=code,
        versions=scoring_versions(),
    )


def cached_rankings(
    chunks: Sequence[Mapping],
    golden: pd.DataFrame,
    model_name: str | None = None,
    max_seq_length: int = CHUNK_SIZE,
    progress: bool = False,
    cache_dir: str | Path = CACHE_DIR,
) -> dict:
    """The BM25, vector and hybrid rankings of every question: read from the cache, or computed and stored.

    Args:
        chunks: ``[{"id": str, "doc": str, "text": str, "n_tokens": int}, ...]`` in corpus order.
        golden: the golden set (a DataFrame with ``id`` and ``question``).
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or folder.
        max_seq_length: the vector retriever's window, in word pieces (an integer >= 1).
        progress: show progress bars while indexing, embedding and ranking.
        cache_dir: the cache folder (str or Path; .cache/, or $RETRIEVAL_EVAL_CACHE, by default).

    Returns:
        runs ``{retriever name: {question_id: ranking}}``.

    Not taught; used by evaluation_setup (every notebook) and chunk_and_rank (notebook 09_chunking).
    """
    path = Path(cache_dir) / "rankings" / f"{rankings_fingerprint(chunks, golden, model_name, max_seq_length)}.json"
    runs = _read_runs(path, list(golden["id"]))
    if runs is None:
        bm25 = BM25Retriever(chunks, show_progress=progress)
        vector = VectorRetriever(chunks, model_name=model_name, max_seq_length=max_seq_length,
                                 cache_dir=Path(cache_dir) / "embeddings", show_progress=progress)
        runs = run_retrievers([bm25, vector], golden, progress)
        runs["hybrid"] = fuse_runs([runs["BM25"], runs["vector"]])  # = HybridRetriever(bm25, vector), without re-querying
        write_atomically(path, json.dumps(runs, ensure_ascii=False).encode("utf-8"))
    return runs


def _read_runs(path: Path, question_ids: list[str]) -> dict | None:
    """The runs stored at ``path``, or ``None`` when the file is missing or does not hold a ranking
    (a list of str) for every question from each of the three retrievers."""
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    valid = isinstance(runs, dict) and list(runs) == list(RETRIEVERS) and all(
        isinstance(run, dict) and list(run) == question_ids
        and all(isinstance(r, list) and all(isinstance(d, str) for d in r) for r in run.values())
        for run in runs.values()
    )
    return runs if valid else None
