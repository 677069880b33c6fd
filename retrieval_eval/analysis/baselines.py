"""What the BM25 baseline is made of: BM25 built one choice at a time (:data:`BM25_STEPS`), our analyzer under
other engines' idf, k1 and b (:data:`BM25_VARIANTS`), and an engine untouched; :func:`bm25_table` scores them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.checks import check_k
from ..core.evaluation import evaluate, first_relevant_ranks, per_question_scores, random_baseline
from ..retrieval.retrievers import LUCENE_ENGLISH, BM25Retriever
from .statistics import SEED

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


RRF_GRID = [(c, d) for c in (1, 10, 30, 60, 100) for d in (5, 10, 20, 50)]  # RRF constant × depth fused


def _series_choices(setup) -> dict:
    """The series' tuned choices as ``{choice: (default, {setting: run})}``: BM25's analyzer (:data:`BM25_STEPS`, against
    rank-bm25 as shipped), RRF's constant and depth over BM25 and vector (against 60 and 10), the reranker's depth."""
    from ..retrieval.fusion import fuse_runs
    from ..retrieval.setup import reranked_runs
    questions = dict(zip(setup.golden["id"], setup.golden["question"]))
    steps = bm25_table(BM25_STEPS, setup.chunks, questions, setup.qrels).attrs["runs"]
    fused = {f"constant {c}, depth {d}": fuse_runs([setup.runs["BM25"], setup.runs["vector"]], c, d) for c, d in RRF_GRID}
    reranked = {f"hybrid's top {n} reranked": run for (stage, n), run in reranked_runs(setup).items() if stage == "hybrid"}
    return {"BM25 analyzer": (next(iter(steps)), steps), "RRF constant and depth": ("constant 60, depth 10", fused),
            "reranker depth": ("hybrid's top 10 reranked", reranked)}


def held_out_gains(setup, k: int = 3, metric: str = "recall", n_splits: int = 1000, seed: int = SEED,
                   choices: Mapping | None = None) -> pd.DataFrame:
    """How much of a tuned choice's gain is real: in each of ``n_splits`` random halvings of the questions the setting
    with the best mean on one half is picked (the first listed on a tie), and its gain over the default is measured on
    that half (in-sample) and on the other (held out). ``choices``: ``{choice: (default, {setting: run})}``, by default
    the series' (:func:`_series_choices` of ``setup``). One row per choice: the setting best on all questions, its gain
    there and the questions it gained and lost against the default, the mean in-sample and held-out gains of the
    halves, the share kept (held-out / in-sample), the held-out gain of leave one out (picked on n − 1 questions, scored
    on the one left out), the middle 95% of held-out gains across splits, and the share of splits whose pick lost to
    the default held out. No split undoes a choice made by reading these questions (a design leak): only new ones do."""
    k, n_splits = check_k(k), check_k(n_splits, "n_splits")
    rows = {}
    for name, (default, runs) in (choices if choices is not None else _series_choices(setup)).items():
        scores = per_question_scores(runs, setup.qrels, [k], [metric])
        values = scores.pivot(index="question", columns="run", values="value")[list(runs)].to_numpy()
        n, base = len(values), list(runs).index(default)
        rng = np.random.default_rng(seed)
        first = np.argsort(rng.random((n_splits, n)), axis=1) < n // 2  # each row: one random half of the questions
        a, b = first @ values / first.sum(1, keepdims=True), ~first @ values / (~first).sum(1, keepdims=True)
        pick = a.argmax(axis=1)  # the first setting on a tie: the order given
        inside, held = a[np.arange(n_splits), pick] - a[:, base], b[np.arange(n_splits), pick] - b[:, base]
        means = values.mean(axis=0)
        others = (values.sum(axis=0) - values).argmax(axis=1)  # leave one out: the pick on the other n − 1 questions
        best = means.argmax()
        rows[name] = {"settings": len(runs), "default": default, "best on all": list(runs)[best],
                      "gain on all": means.max() - means[base], "questions gained": int((values[:, best] > values[:, base]).sum()),
                      "questions lost": int((values[:, best] < values[:, base]).sum()), "in-sample gain": inside.mean(),
                      "held out, leave one out": (values[np.arange(n), others] - values[:, base]).mean(),
                      "held-out gain": held.mean(), "share kept": held.mean() / inside.mean() if inside.mean() else np.nan,
                      "held-out low": np.percentile(held, 2.5), "held-out high": np.percentile(held, 97.5),
                      "picks that lost held out": (held < 0).mean()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(f"{metric}@{k}, {n_splits:,} random halves")
