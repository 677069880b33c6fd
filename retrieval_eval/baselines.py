"""Baselines: what chance scores, and what BM25's score is made of.

:func:`random_baseline` gives the *exact* expected value of each metric for a ranking that puts the
chunks in a uniformly random order: the floor every retriever has to clear. :func:`bm25_steps` builds
BM25 one choice at a time, from rank-bm25 as shipped on raw words to this project's default, and
scores each step, so a reader sees which choice moves which number and how many questions.
:func:`bm25_variants` scores the finished analyzer under the parameters and idf a practitioner's engine
would use (Lucene's, Anserini's), so a reader sees how much rests on ours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from .checks import check_gains, check_ids, check_positive_int
from .corpus import check_chunks
from .evaluation import evaluate, first_relevant_ranks
from .retrievers import STEMMER, STOP_WORDS, BM25Retriever, run_retrievers

# The steps of bm25_steps: (label, BM25Retriever arguments). Each adds one choice to the one before;
# the last is BM25Retriever's default (a test checks it).
BM25_STEPS = (
    ("raw words, rank-bm25 as shipped (epsilon 0.25)", {"stop_words": None, "stemmer": None, "epsilon": 0.25}),
    ("+ Lucene's 33 stop words", {"stop_words": "lucene", "stemmer": None, "epsilon": 0.25}),
    ("+ NLTK's 179 stop words (instead of Lucene's)", {"stop_words": "nltk", "stemmer": None, "epsilon": 0.25}),
    ("+ Snowball stemming", {"stop_words": "nltk", "stemmer": "english", "epsilon": 0.25}),
    ("+ idf floor 0 (epsilon 0): the default", {"stop_words": "nltk", "stemmer": "english", "epsilon": 0.0}),
)
RANDOM_BASELINE = "random order (expected value)"  # the label of the random baseline's row in bm25_steps


def random_baseline(qrels: Mapping[str, Mapping[str, float]], n_chunks: int, k: int) -> pd.Series:
    """The exact expected value of each metric at cut-off k for a uniformly random ranking of all chunks.

    For a question with R relevant chunks (gain > 0) among N chunks, every chunk is equally likely
    at every rank, so (with m = min(k, N) ranks filled):

    - recall@k: E = m / N (each relevant chunk is in the top k with probability m / N);
    - precision@k: E = R · m / N / k (trec_eval divides by k even when k > N);
    - RR@k: E = Σ_{r=1}^{min(k, N−R+1)} (1/r) · C(N−r, R−1) / C(N, R), the probability that the
      first relevant chunk is at rank r times its reciprocal rank;
    - nDCG@k: E = (Σ_{r=1}^{m} 1/log2(r + 1)) · (Σ gains / N) / IDCG@k, because the expected gain
      at every rank is the mean gain over the N chunks (linear gain, as :func:`ndcg_at_k`).

    Recall, precision and RR are computed in exact fractions; nDCG in floating point (its
    discounts are irrational). The values are means over the questions, as :func:`evaluate`
    reports them; no simulation is involved.

    Args:
        qrels: ``{question_id: {chunk_id: gain}}`` (gains <= 0 are not relevant).
        n_chunks: N, the number of chunks a random ranking orders (an integer >= 1).
        k: the cut-off, an integer >= 1.

    Returns:
        A Series indexed by metric (recall, precision, MRR, nDCG), each the mean over the questions.

    Raises:
        ValueError: ``qrels`` is empty, a question has no relevant chunk or more relevant chunks
            than ``n_chunks`` (names it), a question id is not a str, or ``k`` or ``n_chunks``
            is not an integer >= 1.

    Taught in: notebook 05_three_retrievers.
    """
    n, k = check_positive_int(n_chunks, "n_chunks"), check_positive_int(k)
    if not qrels:
        raise ValueError("qrels is empty: nothing to average over")
    check_ids(qrels, "the qrels hold question id")
    m = min(k, n)
    discounts = sum(1 / math.log2(r + 1) for r in range(1, m + 1))
    totals = {"recall": Fraction(0), "precision": Fraction(0), "MRR": Fraction(0), "nDCG": 0.0}  # the keys of METRICS
    for qid, gains in qrels.items():
        positive = sorted((g for g in check_gains(gains).values() if g > 0), reverse=True)
        relevant = len(positive)
        if not 1 <= relevant <= n:
            raise ValueError(f"question {qid!r} has {relevant} relevant chunks; a random ranking of {n} chunks needs 1 to {n}")
        reciprocal = sum(Fraction(math.comb(n - r, relevant - 1), r * math.comb(n, relevant)) for r in range(1, min(k, n - relevant + 1) + 1))
        ideal = sum(g / math.log2(r + 1) for r, g in enumerate(positive[:k], start=1))
        totals["recall"] += Fraction(m, n)
        totals["precision"] += Fraction(relevant * m, n * k)
        totals["MRR"] += reciprocal
        totals["nDCG"] += discounts * (sum(positive) / n) / ideal
    return pd.Series({metric: float(total / len(qrels)) for metric, total in totals.items()}, name=RANDOM_BASELINE).rename_axis("metric")


def bm25_steps(chunks: Sequence[Mapping], golden: pd.DataFrame, qrels: Mapping, k: int = 3) -> pd.DataFrame:
    """BM25 built one choice at a time (:data:`BM25_STEPS`), each step scored at cut-off k, and the random baseline.

    The steps: raw words with rank-bm25 as shipped (idf floor epsilon 0.25); + Lucene's 33 English
    stop words; + NLTK's 179 instead (a superset of Lucene's, adding "i", "my", "how", "can", ...);
    + Snowball stemming; + the idf floor at 0: this project's default BM25. ``k1 = 1.5`` and
    ``b = 0.75`` throughout. For each step the table says how many questions the step moves: the
    first relevant chunk at another rank than in the step before, into the top k, out of it.
    The last row is :func:`random_baseline` over all chunks.

    Args:
        chunks: the chunks (``id`` and ``text``).
        golden: the golden set (``id``, ``question``, ``slice``).
        qrels: ``{question_id: {chunk_id: gain}}``.
        k: the cut-off, an integer >= 1.

    Returns:
        A DataFrame indexed by step with columns ``recall``, ``precision``, ``MRR``, ``nDCG`` (at k),
        ``first rank moved``, ``into top k`` and ``out of top k`` (against the row before; ``<NA>``
        for the first step and the random row). ``attrs["runs"]`` holds each step's run.

    Raises:
        ValueError: as :class:`BM25Retriever`, :func:`evaluate` and :func:`random_baseline`.

    Taught in: notebook 05_three_retrievers.
    """
    k = check_positive_int(k)
    runs = {
        label: run_retrievers([BM25Retriever(chunks, show_progress=False, **settings)], golden, progress=False)["BM25"]
        for label, settings in BM25_STEPS
    }
    table = evaluate(runs, qrels, ks=[k]).xs(k, axis=1, level="k")
    ranks = first_relevant_ranks(runs, qrels, golden)[list(runs)].astype(float).fillna(math.inf)  # not ranked: below all
    before, after = ranks.shift(axis=1).iloc[:, 1:], ranks.iloc[:, 1:]
    moves = pd.DataFrame({
        "first rank moved": (after != before).sum(),
        "into top k": ((after <= k) & (before > k)).sum(),
        "out of top k": ((after > k) & (before <= k)).sum(),
    }).reindex(list(runs)).astype("Int64")
    table = pd.concat([table, moves], axis=1)
    table.loc[RANDOM_BASELINE] = {**random_baseline(qrels, len(chunks), k).to_dict(), **dict.fromkeys(moves.columns, pd.NA)}
    table = table.astype({column: "Int64" for column in moves.columns}).rename_axis(f"BM25 at k = {k}")
    table.attrs["runs"] = runs
    return table


# The rows of bm25_variants: (label, idf, k1, b). The first is BM25Retriever's default (a test checks it).
BM25_VARIANTS = (
    ("Robertson's idf, floor 0; k1 1.5, b 0.75: the default", "robertson", 1.5, 0.75),
    ("Robertson's idf, floor 0; k1 0.9, b 0.4 (Anserini's k1 and b)", "robertson", 0.9, 0.4),
    ("Lucene's idf; k1 1.5, b 0.75", "lucene", 1.5, 0.75),
    ("Lucene's idf; k1 1.2, b 0.75 (Lucene's and Elasticsearch's defaults)", "lucene", 1.2, 0.75),
    ("Lucene's idf; k1 0.9, b 0.4 (Anserini's defaults)", "lucene", 0.9, 0.4),
)


class _LuceneBM25(BM25Retriever):
    """BM25 with Lucene's idf through bm25s (method ``"lucene"``), over :class:`BM25Retriever`'s analyzer and ranking rule.

    Lucene's idf is ln(1 + (N − n + 0.5) / (n + 0.5)): above 0 for every term, however common.
    Lucene's term-frequency part drops BM25's constant factor (k1 + 1), which changes no ranking.
    Only :func:`bm25_variants` uses it; :meth:`BM25Retriever.idf_table` does not apply.
    """

    def __init__(self, chunks: Sequence[Mapping], k1: float, b: float):
        import bm25s

        self.stop_words, self.stemmer = STOP_WORDS, STEMMER
        chunks = check_chunks(chunks)
        self.ids = [c["id"] for c in chunks]
        self.index = bm25s.BM25(method="lucene", k1=k1, b=b)
        self.index.index([self.analyze(c["text"]) for c in chunks], show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        words = [w for w in self.analyze(query) if w in self.index.vocab_dict]  # bm25s has no id for an unknown term
        return self.index.get_scores(words) if words else np.zeros(len(self.ids))


def bm25_variants(chunks: Sequence[Mapping], golden: pd.DataFrame, qrels: Mapping, k: int = 3) -> pd.DataFrame:
    """The default BM25 analyzer under the idf, k1 and b of other engines (:data:`BM25_VARIANTS`), scored at cut-off k.

    A sensitivity check, not a tuning run: every row keeps the analyzer (NLTK's stop words, Snowball
    stems) and changes only what a practitioner's engine would: ``k1 = 0.9, b = 0.4`` (Anserini's
    defaults, Lin et al., SIGIR 2021 Pyserini), ``k1 = 1.2, b = 0.75`` (Lucene's ``BM25Similarity``
    and Elasticsearch), and Lucene's idf ln(1 + (N − n + 0.5) / (n + 0.5)) instead of rank-bm25's
    Robertson idf ln((N − n + 0.5) / (n + 0.5)) with the floor at 0 (``epsilon = 0``: 0 for a term
    in half the chunks or more, where Lucene's idf stays above 0). Lucene's rows run bm25s
    (method ``"lucene"``); the others :class:`BM25Retriever`. Every row ranks only the chunks that
    score above 0, ties by id.

    Args:
        chunks: the chunks (``id`` and ``text``).
        golden: the golden set (``id``, ``question``).
        qrels: ``{question_id: {chunk_id: gain}}``.
        k: the cut-off, an integer >= 1.

    Returns:
        A DataFrame indexed by variant with columns ``recall``, ``precision``, ``MRR``, ``nDCG`` (at k);
        ``attrs["runs"]`` holds each variant's run.

    Raises:
        ValueError: as :class:`BM25Retriever` and :func:`evaluate`.

    Taught in: notebook 05_three_retrievers.
    """
    k = check_positive_int(k)
    runs = {}
    for label, idf, k1, b in BM25_VARIANTS:
        retriever = (BM25Retriever(chunks, k1=k1, b=b, show_progress=False) if idf == "robertson"
                     else _LuceneBM25(chunks, k1=k1, b=b))
        runs[label] = run_retrievers([retriever], golden, progress=False)["BM25"]
    table = evaluate(runs, qrels, ks=[k]).xs(k, axis=1, level="k").rename_axis(f"BM25 at k = {k}")
    table.attrs["runs"] = runs
    return table
