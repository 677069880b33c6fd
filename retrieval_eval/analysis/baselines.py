"""What the BM25 baseline is made of: BM25 built one choice at a time (:data:`BM25_STEPS`), our analyzer under
other engines' idf, k1 and b (:data:`BM25_VARIANTS`), and an engine untouched; :func:`bm25_table` scores them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from ..core.checks import check_k
from ..core.evaluation import evaluate, first_relevant_ranks, random_baseline
from ..retrieval.retrievers import LUCENE_ENGLISH, BM25Retriever

# Each adds one choice to the one before; the last is BM25Retriever's default (a test checks it).
BM25_STEPS = {
    "raw words, rank-bm25 as shipped (epsilon 0.25)": {"stop_words": None, "stemmer": None, "epsilon": 0.25},
    "+ Lucene's 33 stop words": {"stop_words": "lucene", "stemmer": None, "epsilon": 0.25},
    "+ NLTK's 179 stop words (instead of Lucene's)": {"stop_words": "nltk", "stemmer": None, "epsilon": 0.25},
    "+ Snowball stemming": {"stop_words": "nltk", "stemmer": "english", "epsilon": 0.25},
    "+ idf floor 0 (epsilon 0): ours, tuned": {"stop_words": "nltk", "stemmer": "english", "epsilon": 0.0},
}
# Our analyzer under other engines' idf, k1 and b; then an engine untouched. The first row is our default.
BM25_VARIANTS = {
    "ours: Robertson's idf floored at 0; k1 1.5, b 0.75": {},
    "ours, k1 0.9, b 0.4 (Anserini's)": {"k1": 0.9, "b": 0.4},
    "ours, Lucene's idf": {"idf": "lucene"},
    "ours, Lucene's idf, k1 1.2, b 0.75 (Lucene's)": {"idf": "lucene", "k1": 1.2},
    "ours, Lucene's idf, k1 0.9, b 0.4 (Anserini's)": {"idf": "lucene", "k1": 0.9, "b": 0.4},
    "Lucene's English analyzer, Lucene's idf, k1 0.9, b 0.4 (Anserini's)": {**LUCENE_ENGLISH, "k1": 0.9, "b": 0.4},
    "Lucene's English analyzer untouched: its 33 stop words, Porter, Lucene's idf, k1 1.2, b 0.75 (Elasticsearch's)":
        LUCENE_ENGLISH,
}


def bm25_table(settings: Mapping[str, dict], chunks: Sequence[Mapping], questions: Mapping[str, str], qrels: Mapping,
               k: int = 3) -> pd.DataFrame:
    """Each BM25 setting's metrics at k, how many questions' first relevant rank it moves against the row
    before (into and out of the top k), and a last row for a random order of the chunks (expected values).
    ``attrs["runs"]`` holds each row's run."""
    k = check_k(k)
    runs = {}
    for label, options in settings.items():
        bm25 = BM25Retriever(chunks, **options)
        runs[label] = {q: bm25.rank(text) for q, text in questions.items()}
    table = evaluate(runs, qrels, ks=[k]).xs(k, axis=1, level="k")
    ranks = first_relevant_ranks(runs, qrels)[list(runs)].astype(float).fillna(math.inf)
    before, after = ranks.shift(axis=1).iloc[:, 1:], ranks.iloc[:, 1:]
    moves = pd.DataFrame({"first rank moved": (after != before).sum(), "into top k": ((after <= k) & (before > k)).sum(),
                          "out of top k": ((after > k) & (before <= k)).sum()}).reindex(list(runs)).astype("Int64")
    table = pd.concat([table, moves], axis=1)
    table.loc["random order (expected)"] = {**random_baseline(qrels, len(chunks), k).to_dict(), **dict.fromkeys(moves, pd.NA)}
    table = table.astype({c: "Int64" for c in moves}).rename_axis(f"BM25 at k = {k}")
    table.attrs["runs"] = runs
    return table
