"""The first stages: BM25 and vector search over the chunks, each a retriever (its index and ``rank(query)``) and a
stage of the registry (:class:`BM25`, :class:`Vector`: every question at once); the analyzer BM25 reads words with; the
one tie rule. torch and sentence-transformers are imported only when a :class:`VectorRetriever` is built."""

from __future__ import annotations

import hashlib
import io
import math
import pickle
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..core.checks import Chunk, Ranking, Run, check_ids, check_list, finite_number
from ..core.paths import CACHE_DIR, write_atomically
from ..inputs.chunks import CHUNK_SIZE, check_chunks
from ..inputs.models import (
    document_prefix,
    fingerprint,
    load_model,
    model_fingerprint,
    model_window,
    query_prefix,
    scoring_versions,
)
from ..inputs.text import normalise
from .stages import DEPTH, SCORE_DECIMALS, Context, Stage, progress_bar


class IdOrder:
    """The tie rule, explicit: equal scores (to :data:`SCORE_DECIMALS` places) go by chunk id, ascending, so that a scorer giving every chunk one score
    returns id order, never a perfect-looking accident of input order. (trec_eval breaks ties by id descending; our
    TREC files give every rank its own score.)"""

    def __init__(self, ids: Sequence[str]):
        self.ids = np.asarray(ids, dtype=object)
        self.place = np.argsort(np.argsort(self.ids, kind="stable"))  # each chunk's place in id order

    def top(self, scores: np.ndarray, depth: int | None = None, matched: bool = False) -> Ranking:
        """The ids by score, highest first, the top ``depth``; with ``matched``, only those scoring above 0."""
        scores = np.asarray(scores, dtype=float)
        order = np.lexsort((self.place, -np.round(scores, SCORE_DECIMALS)))[:depth]
        return list(self.ids[order[scores[order] > 0] if matched else order])


def rank_by_score(ids: Sequence[str], scores: Sequence[float]) -> Ranking:
    """Ids by score, highest first; equal scores by id ascending (:class:`IdOrder`)."""
    ids = check_list(ids, "ids", "chunk ids")
    check_ids(ids, "ids holds", "position")
    if len(set(ids)) < len(ids):
        raise ValueError(f"ids holds {next(i for i in ids if ids.count(i) > 1)!r} twice: each id may appear once")
    scores = np.asarray(check_list(scores, "scores", "scores (one per id)"), dtype=float)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    nan = next((d for d, s in zip(ids, scores) if math.isnan(s)), None)
    if nan is not None:
        raise ValueError(f"score of {nan!r} is NaN")
    return IdOrder(ids).top(scores)


def check_query(query) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"the query must be non-empty text, got {query!r:.60}")
    return query


# Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar; Hangul uses spaces).
NO_SPACE_SCRIPTS = (
    "\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
)
# A word: letters and digits with inner hyphens or apostrophes (the underscore is punctuation); a run of a
# script without spaces counts when it holds a letter or digit.
_TOKENS = re.compile(rf"(?P<run>[{NO_SPACE_SCRIPTS}]*(?=[{NO_SPACE_SCRIPTS}])[^\W_][{NO_SPACE_SCRIPTS}]*)"
                     rf"|[^\W_{NO_SPACE_SCRIPTS}]+(?:[-'][^\W_{NO_SPACE_SCRIPTS}]+)*")

STOP_WORDS = "nltk"  # the default stop-word list of the BM25 analyzer
STEMMER = "english"  # the default stemmer: Snowball English (Porter2), from PyStemmer
STOP_WORD_LISTS = {  # name: where bm25s keeps it (so no NLTK download is needed)
    "nltk": "STOPWORDS_EN_PLUS",  # NLTK's English list, 179 words, pronouns and question words included
    "lucene": "STOPWORDS_EN",  # Lucene's EnglishAnalyzer list, 33 words: the search-engine default
}


@cache
def stop_word_list(name: str = STOP_WORDS) -> frozenset[str]:
    """A published English stop-word list by name: ``"nltk"`` (179 words) or ``"lucene"`` (33)."""
    if name not in STOP_WORD_LISTS:
        raise ValueError(f"unknown stop-word list {name!r}; choose from {list(STOP_WORD_LISTS)} or None")
    from bm25s import stopwords
    return frozenset(getattr(stopwords, STOP_WORD_LISTS[name]))


@cache
def _stemmer(name: str):
    import Stemmer
    if name not in Stemmer.algorithms():
        raise ValueError(f"unknown stemmer {name!r}; PyStemmer knows {Stemmer.algorithms()}, or pass None")
    stemmer = Stemmer.Stemmer(name)
    stemmer.maxCacheSize = 0  # its default cache thrashes on a large vocabulary (make bench)
    return stemmer


def tokenize(text: str, stop_words: str | None = STOP_WORDS, stemmer: str | None = STEMMER) -> list[str]:
    """The BM25 analyzer, for chunks and questions alike: :func:`~retrieval_eval.text.normalise`, lower case, runs of
    letters and digits ("E-07" stays one word, "policy?" → "policy"; a script without spaces gives overlapping pairs,
    as Lucene's ``CJKAnalyzer``: "图书馆" → "图书", "书馆"); then stop words out (:func:`stop_word_list`), then stems
    (default Snowball English: "renewals" → "renew")."""
    words = []
    for match in _TOKENS.finditer(normalise(text).lower()):
        run = match["run"]
        words.extend([match[0]] if run is None else (run[i : i + 2] for i in range(max(len(run) - 1, 1))))
    if stop_words is not None:
        listed = stop_word_list(stop_words)
        words = [w for w in words if w not in listed]
    return _stemmer(stemmer).stemWords(words) if stemmer is not None else words


def unindexable_chunks(chunks: Sequence[Chunk]) -> list[str]:
    """The chunks without a term :func:`tokenize` keeps (a rule ``---``, emoji, only stop words): BM25 never finds them."""
    return [c["id"] for c in chunks if not tokenize(c["text"])]


# Lucene's English analyzer and BM25 untouched (EnglishAnalyzer: its 33 stop words, Porter stemming; Lucene's idf,
# BM25Similarity's k1 and b): Elasticsearch's and OpenSearch's `english` analyzer, Anserini's default. (Their
# *standard* analyzer drops no stop word and stems nothing.) Our tokenizer only approximates Lucene's.
LUCENE_ENGLISH = {"stop_words": "lucene", "stemmer": "porter", "idf": "lucene", "k1": 1.2, "b": 0.75}


class BM25Retriever:
    """BM25 (Robertson & Zaragoza 2009) over :func:`tokenize`: rank-bm25's ``BM25Okapi`` (``idf="robertson"``) or bm25s
    with Lucene's idf ln(1 + (N − n + 0.5)/(n + 0.5)), never 0 (``idf="lucene"``). Defaults tuned on the golden set:
    NLTK's stop words, ``epsilon=0`` (rank-bm25 floors a negative idf at 0.25 × the mean idf: on a few dozen chunks it
    outweighs a rare term); ``k1``, ``b`` rank-bm25's. Only chunks scoring above 0 are ranked (no padding)."""

    def __init__(self, chunks: Sequence[Chunk], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.0,
                 stop_words: str | None = STOP_WORDS, stemmer: str | None = STEMMER, idf: str = "robertson",
                 progress: bool = False):
        if not (all(map(finite_number, (k1, b, epsilon))) and k1 >= 0 and 0 <= b <= 1 and epsilon >= 0):
            raise ValueError(f"BM25 needs k1 >= 0, 0 <= b <= 1 and epsilon >= 0, got k1={k1!r}, b={b!r}, epsilon={epsilon!r}")
        if idf not in ("robertson", "lucene"):
            raise ValueError(f"idf must be 'robertson' (rank-bm25) or 'lucene' (bm25s), got {idf!r}")
        tokenize("", stop_words, stemmer)  # an unknown list or stemmer is refused before any chunk
        self.stop_words, self.stemmer, self.idf = stop_words, stemmer, idf
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        self.order = IdOrder(self.ids)
        tokens = [self.analyze(c["text"]) for c in tqdm(chunks, desc="BM25 indexing", unit="chunk", disable=not progress)]
        self.unindexable = [d for d, words in zip(self.ids, tokens) if not words]
        self.index = None
        if len(self.unindexable) < len(tokens):  # with no word at all there is nothing to index
            if idf == "lucene":
                import bm25s
                self.index = bm25s.BM25(method="lucene", k1=k1, b=b)
                self.index.index(tokens, show_progress=False)
            else:
                from rank_bm25 import BM25Okapi
                self.index = BM25Okapi(tokens, k1=k1, b=b, epsilon=epsilon)

    def analyze(self, text: str) -> list[str]:
        return tokenize(text, self.stop_words, self.stemmer)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every chunk for the query, in chunk order."""
        words = self.analyze(check_query(query))
        if self.index is None:
            return np.zeros(len(self.ids))
        if self.idf == "lucene":
            words = [w for w in words if w in self.index.vocab_dict]  # bm25s has no id for an unknown term
            return self.index.get_scores(words) if words else np.zeros(len(self.ids))
        return self.index.get_scores(words)

    def rank(self, query: str, depth: int | None = None) -> Ranking:
        """The chunks that match the query (score > 0), best first, ties by id; the top ``depth``."""
        return self.order.top(self.scores(query), depth, matched=True)

    def idf_table(self, query: str) -> pd.DataFrame:
        """Per query term (rank-bm25 only): the chunks holding it, the raw idf ln((N − n + 0.5)/(n + 0.5)),
        rank-bm25's default floor and the idf used."""
        if self.idf != "robertson":
            raise ValueError(f"idf_table reads rank-bm25's idf: build the retriever with idf='robertson', not {self.idf!r}")
        index = self.index
        words = [w for w in dict.fromkeys(self.analyze(query)) if index is not None and w in index.idf]
        n = {w: sum(w in freqs for freqs in index.doc_freqs) for w in words}
        raw = {w: math.log((index.corpus_size - n[w] + 0.5) / (n[w] + 0.5)) for w in words}
        return pd.DataFrame({
            "chunks": n, "raw idf": raw,
            "idf, epsilon 0.25": {w: raw[w] if raw[w] >= 0 else 0.25 * index.average_idf for w in words},
            "idf used": {w: index.idf[w] for w in words},
        }, columns=["chunks", "raw idf", "idf, epsilon 0.25", "idf used"]).rename_axis("term")


@dataclass(frozen=True)
class BM25(Stage):
    """BM25 in the registry: :class:`BM25Retriever` with these settings, each question ranked to :data:`DEPTH`."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.0
    stop_words: str | None = STOP_WORDS
    stemmer: str | None = STEMMER
    idf: str = "robertson"

    def run(self, context: Context) -> Run:
        bm25 = BM25Retriever(context.chunks, **asdict(self), progress=context.progress)
        return {q: bm25.rank(text, DEPTH) for q, text in progress_bar(context.questions, "ranking with BM25", context.progress)}

    def served(self, context: Context):
        """The index built once; its size: the index object pickled."""
        bm25 = BM25Retriever(context.chunks, **asdict(self))
        return (lambda qid, text: bm25.rank(text, DEPTH)), len(pickle.dumps(bm25.index))


ENCODE = {"normalize_embeddings": True, "show_progress_bar": False}  # part of the embedding cache's key
BATCH = 32  # texts encoded at once


class VectorRetriever:
    """Dense retrieval with sentence-transformers: cosine similarity of normalised embeddings, with the model's
    declared query and document prompts. ``window``: all-MiniLM-L6-v2 was trained on 128 word pieces and reads
    256 by default; raised to the chunk size so none of our chunks is cut (a longer chunk of yours is read up to
    the window, as every engine does). Chunk vectors are cached per model content, window and library versions."""

    def __init__(self, chunks: Sequence[Chunk], model_name: str | None = None, window: int = CHUNK_SIZE,
                 cache_dir: str | Path = CACHE_DIR / "embeddings", progress: bool = False):
        chunks = check_chunks(chunks)
        limit = model_window(model_name)
        if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= limit:
            raise ValueError(f"the window must be an integer from 1 to the model's window of {limit}, got {window!r}")
        self.model, self.window = load_model(model_name), window
        self.query_prefix, self.document_prefix = query_prefix(model_name), document_prefix(model_name)
        self.ids = [c["id"] for c in chunks]
        self.order = IdOrder(self.ids)
        self.cache_folder = Path(cache_dir) / fingerprint(
            model=model_fingerprint(model_name), document_prefix=self.document_prefix, max_seq_length=window,
            encode=ENCODE, dtype="float32", versions=scoring_versions())
        self.embeddings = self._embed_chunks([c["text"] for c in chunks], progress)

    def _embed_chunks(self, texts: list[str], progress: bool) -> np.ndarray:
        self.model.max_seq_length = self.window  # the model is shared: this retriever's window
        paths = [self.cache_folder / (hashlib.sha256(t.encode("utf-8")).hexdigest() + ".npy") for t in texts]
        todo = [i for i, p in enumerate(paths) if not p.exists()]
        for start in tqdm(range(0, len(todo), BATCH), desc=f"embedding chunks ({len(todo)} not cached, {BATCH} a batch)", unit="batch", disable=not progress or not todo):
            part = todo[start : start + BATCH]
            for i, vector in zip(part, self.model.encode([texts[i] for i in part], prompt=self.document_prefix, **ENCODE)):
                buffer = io.BytesIO()
                np.save(buffer, vector.astype(np.float32), allow_pickle=False)
                write_atomically(paths[i], buffer.getvalue())
        return np.stack([np.load(p, allow_pickle=False) for p in paths])

    def encode_queries(self, queries: Sequence[str], progress: bool = False) -> np.ndarray:
        """Normalised query vectors, encoded in batches; a query longer than the window is refused."""
        self.model.max_seq_length = self.window
        for query in queries:
            n = len(self.model.tokenizer.encode(self.query_prefix + check_query(query)))
            if n > self.window:
                raise ValueError(f"the query has {n} tokens, more than the model's window of {self.window}")
        parts = [self.model.encode(list(queries[i : i + BATCH]), prompt=self.query_prefix, **ENCODE)
                 for i in tqdm(range(0, len(queries), BATCH), desc="embedding questions", unit="batch", disable=not progress)]
        return np.concatenate(parts) if parts else np.zeros((0, self.embeddings.shape[1]))

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk, in chunk order."""
        return self.embeddings @ self.encode_queries([query])[0]

    def rank(self, query: str, depth: int | None = None) -> Ranking:
        """Every chunk id, best first, ties by id; the top ``depth``."""
        return self.order.top(self.scores(query), depth)


@dataclass(frozen=True)
class Vector(Stage):
    """Vector search in the registry (:class:`VectorRetriever`): the questions encoded in batches, ranked to
    :data:`DEPTH`; built in, it reads the setup's model and chunk size (:meth:`configured`)."""

    model_name: str | None = None
    window: int = CHUNK_SIZE

    def key(self) -> dict:
        return {**super().key(), "model": model_fingerprint(self.model_name)}

    def configured(self, model_name: str | None, chunk_size: int) -> Vector:
        return replace(self, model_name=model_name, window=chunk_size)

    def run(self, context: Context) -> Run:
        vector = VectorRetriever(context.chunks, self.model_name, self.window, context.cache_dir / "embeddings",
                                 context.progress)
        queries = vector.encode_queries(list(context.questions.values()), context.progress)
        return {q: vector.order.top(vector.embeddings @ v, DEPTH) for q, v in zip(context.questions, queries)}

    def served(self, context: Context):
        """The chunk vectors embedded once (or read from the cache); per question, its encoding and exact search."""
        vector = VectorRetriever(context.chunks, self.model_name, self.window, context.cache_dir / "embeddings")
        return (lambda qid, text: vector.rank(text, DEPTH)), vector.embeddings.nbytes


def hnsw_search(embeddings: np.ndarray, queries: np.ndarray, depth: int, m: int = 16, ef_search: int = 16,
                ef_construction: int = 40, place: np.ndarray | None = None, seconds: dict | None = None) -> list[list[int]]:
    """Approximate search: per query the rows of ``embeddings`` with the highest inner product that an HNSW graph
    (faiss-cpu's ``IndexHNSWFlat``: ``m`` links per vector, ``ef_construction`` and ``ef_search`` candidates kept while
    building and searching) finds, best first, equal scores by ``place`` (each row's place in the tie order; default: row
order); at most ``depth``. Built on one thread, so the same
    graph and the same rankings every time. ``seconds``: a dict that gets the seconds to ``"build"`` and ``"search"``."""
    import faiss
    for name, value in (("depth", depth), ("m", m), ("ef_search", ef_search), ("ef_construction", ef_construction)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    faiss.omp_set_num_threads(1)
    index = faiss.IndexHNSWFlat(embeddings.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    embeddings, queries = (np.ascontiguousarray(x, dtype=np.float32) for x in (embeddings, queries))
    start = time.perf_counter()
    index.add(embeddings)
    index.hnsw.efSearch = ef_search
    built = time.perf_counter()
    scores, rows = index.search(queries, min(depth, len(embeddings)))
    if seconds is not None:
        seconds.update(build=built - start, search=time.perf_counter() - built)
    place = np.arange(len(embeddings)) if place is None else place
    return [[int(r) for _, _, r in sorted((-s, place[r], r) for s, r in zip(score, row) if r >= 0)]
            for score, row in zip(scores, rows)]


@dataclass(frozen=True)
class ApproximateVector(Vector):
    """Vector search through an HNSW index (:func:`hnsw_search`), as most vector databases search: its settings are in
    its key, so each setting's runs are cached apart. Registered as "vector, HNSW M 16 ef 16", ranked where a setup
    names it (``evaluation_setup(retrievers=["vector, HNSW M 16 ef 16"])``), so the default comparison stays three."""

    shown = False
    m: int = 16
    ef_search: int = 16
    ef_construction: int = 40

    def served(self, context: Context):
        return None  # hnsw_search builds its graph with each search: its build and search are timed by ann_tradeoff

    def run(self, context: Context) -> Run:
        vector = VectorRetriever(context.chunks, self.model_name, self.window, context.cache_dir / "embeddings",
                                 context.progress)
        queries = vector.encode_queries(list(context.questions.values()), context.progress)
        found = hnsw_search(vector.embeddings, queries, DEPTH, self.m, self.ef_search, self.ef_construction,
                            vector.order.place)
        return {q: [vector.ids[i] for i in rows] for q, rows in zip(context.questions, found)}
