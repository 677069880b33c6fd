"""The golden-set audit (:func:`golden_set_audit`). Words are compared as *content words*, the terms of BM25's analyzer
(stop words out, Snowball stems: "renews" and "renewal" meet); near duplicates on the words as written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..core.checks import check_k, check_probability
from ..core.evaluation import first_relevant_ranks
from ..core.metrics import relevant_ids
from ..inputs.chunks import check_chunks
from ..inputs.text import escape
from ..retrieval.retrievers import tokenize
from .statistics import ALPHA, best_case_detectable_difference

NEAR_DUPLICATE = 0.8  # word-shingle Jaccard at or above which two chunks count as near duplicates
SHINGLE = 3  # words per shingle
MIN_SHARED = 0.8  # share of the evidence's content words an unlabelled chunk must hold to be listed for review


class Audit(NamedTuple):
    """The tables of :func:`golden_set_audit` (empty when nothing was found) and its settings."""

    all_first: pd.DataFrame  #: questions every retriever ranks a relevant chunk first
    all_missed: pd.DataFrame  #: questions no retriever has a relevant chunk for in its top k
    repeated_evidence: pd.DataFrame  #: questions whose evidence string is in several chunks
    near_duplicates: pd.DataFrame  #: chunk pairs with word-shingle Jaccard >= the threshold
    review: pd.DataFrame  #: unlabelled chunks in some top k sharing most content words with the evidence
    overlap_by_slice: pd.DataFrame  #: share of each question's content words found in its evidence, per slice
    slice_sizes: pd.DataFrame  #: per slice: questions, smallest difference it could show, largest observed at k
    k: int  #: the cut-off the audit was run with
    threshold: float  #: the word-shingle Jaccard of a near duplicate
    min_shared: float  #: the share of the evidence's content words that puts an unlabelled chunk on the review list
    alpha: float  #: the significance level of the smallest possible differences

    def summary(self) -> str:
        """The audit in a few Markdown sentences, every number computed from the tables."""
        k = self.k
        sizes = self.slice_sizes
        whole = sizes.loc["all"]

        def bound(row):
            return "nothing (too few questions)" if np.isnan(row["smallest possible"]) else f"{row['smallest possible']:.2f}"

        lines = [
            f"- **{len(self.all_first)}** questions are answered at rank 1 by every retriever and **{len(self.all_missed)}** "
            f"are missed in the top {k} by every retriever: neither kind separates the retrievers.",
            f"- **{len(self.repeated_evidence)}** evidence strings are found in more than one chunk; "
            f"**{len(self.near_duplicates)}** pairs of chunks are near duplicates (word {SHINGLE}-shingle Jaccard "
            f">= {self.threshold}).",
            f"- **{len(self.review)}** unlabelled chunks in some retriever's top {k} hold at least {self.min_shared:.0%} "
            "of the evidence's content words: review them for missed labels.",
            "- Share of a question's content words found in its evidence, mean per slice: "
            + ", ".join(f"{escape(s, markdown=True)} {row['mean']:.2f}" for s, row in self.overlap_by_slice.iterrows()) + ".",
            f"- Hit rate@{k} (a relevant chunk in the top {k}), with {int(whole['questions'])} questions: no difference "
            f"smaller than {bound(whole)} can be significant (exact McNemar test, α = {self.alpha:.2g}); the largest observed "
            f"between two retrievers is {whole['largest observed']:.2f}. Per slice, the smallest difference it could "
            "show against the largest observed: "
            + "; ".join(f"{escape(name, markdown=True)} ({int(row['questions'])} questions) {bound(row)} against {row['largest observed']:.2f}"
                        for name, row in sizes.iloc[:-1].iterrows()) + ".",
        ]
        return "\n".join(lines)


def content_words(text: str) -> set[str]:
    """The terms of BM25's analyzer as a set: ``content_words("Renewing the loans")`` → ``{"renew", "loan"}``."""
    return set(tokenize(text))


def golden_set_audit(golden: pd.DataFrame, chunks: Sequence[Mapping], qrels: Mapping[str, Mapping[str, float]],
                     runs: Mapping[str, Mapping[str, Sequence[str]]], k: int = 10, threshold: float = NEAR_DUPLICATE,
                     min_shared: float = MIN_SHARED, alpha: float = ALPHA) -> Audit:
    """Audit a golden set: which questions cannot separate retrievers (all answered first, all missed), which labels to
    review (evidence in several chunks, near-duplicate chunks, unlabelled chunks sharing the evidence's words), what
    each slice can show. ``k``: the cut-off of "missed" and of the review list. ``alpha``: the level of the smallest
    possible differences; for a Holm family of m tests pass α / m, the level its smallest p-value must pass before any
    difference is real. The golden set, qrels and runs must hold the same questions."""
    k = check_k(k)
    alpha = check_probability(alpha, "alpha")
    chunks = check_chunks(chunks)
    if not runs:
        raise ValueError("runs is empty: the audit needs at least one retriever's rankings")
    for name, value in (("threshold", threshold), ("min_shared", min_shared)):
        if not 0 < value <= 1:
            raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    ranks = first_relevant_ranks(runs, qrels, golden)
    retrievers = list(runs)
    found = ranks[retrievers].fillna(k + 1)
    by_id = golden.set_index("id")
    return Audit(all_first=ranks[(found == 1).all(axis=1)].drop(columns="n_relevant"),
                 all_missed=ranks[(found > k).all(axis=1)].drop(columns="n_relevant"),
                 repeated_evidence=_repeated_evidence(by_id, qrels),
                 near_duplicates=near_duplicate_chunks(chunks, threshold),
                 review=_review_list(by_id, chunks, qrels, runs, k, min_shared),
                 overlap_by_slice=_overlap_by_slice(golden), slice_sizes=_slice_sizes(ranks, retrievers, k, alpha),
                 k=k, threshold=threshold, min_shared=min_shared, alpha=alpha)


def _repeated_evidence(by_id: pd.DataFrame, qrels: Mapping) -> pd.DataFrame:
    rows = [(qid, by_id.loc[qid, "evidence"], len(ids), ", ".join(sorted(ids)))
            for qid, gains in qrels.items() if len(ids := relevant_ids(gains)) > 1]
    return pd.DataFrame(rows, columns=["question_id", "evidence", "chunks", "chunk ids"]).set_index("question_id")


def near_duplicate_chunks(chunks: Sequence[Mapping], threshold: float = NEAR_DUPLICATE, shingle: int = SHINGLE) -> pd.DataFrame:
    """Pairs of chunks whose sets of ``shingle``-word shingles (words as written) have a Jaccard similarity at or
    above ``threshold`` (Broder 1997), all pairs at once as a sparse matrix product; highest first, a before b in
    chunk order. A chunk shorter than a shingle is one shingle."""
    from sklearn.feature_extraction.text import CountVectorizer
    shingle = check_k(shingle, "shingle")
    chunks = check_chunks(chunks)

    def shingles(text):
        words = tokenize(text, stop_words=None, stemmer=None)
        return {" ".join(words[i : i + shingle]) for i in range(max(len(words) - shingle + 1, 1 if words else 0))}

    columns = ["chunk a", "chunk b", "jaccard", "shared shingles"]
    sets = [shingles(c["text"]) for c in chunks]
    if not any(sets):
        return pd.DataFrame(columns=columns)
    matrix = CountVectorizer(analyzer=lambda s: s, binary=True).fit_transform(sets)
    shared = (matrix @ matrix.T).tocoo()
    sizes = np.asarray(matrix.sum(axis=1)).ravel()
    pairs = shared.row < shared.col
    a, b, both = shared.row[pairs], shared.col[pairs], shared.data[pairs]
    jaccard = both / (sizes[a] + sizes[b] - both)
    keep = jaccard >= threshold
    ids = [c["id"] for c in chunks]
    table = pd.DataFrame({"chunk a": [ids[i] for i in a[keep]], "chunk b": [ids[i] for i in b[keep]],
                          "jaccard": jaccard[keep], "shared shingles": both[keep]}, columns=columns)
    return table.sort_values(["jaccard", "chunk a", "chunk b"], ascending=[False, True, True], ignore_index=True)


def _review_list(by_id, chunks, qrels, runs, k, min_shared) -> pd.DataFrame:
    """Unlabelled chunks in any top k that hold at least ``min_shared`` of the evidence's content words."""
    words = {c["id"]: content_words(c["text"]) for c in chunks}
    rows = []
    for qid, gains in qrels.items():
        evidence = content_words(by_id.loc[qid, "evidence"])
        if not evidence:
            continue
        best: dict[str, int] = {}
        for run in runs.values():
            for rank, cid in enumerate(run[qid][:k], start=1):
                if cid not in gains:
                    best[cid] = min(rank, best.get(cid, rank))
        for cid, rank in best.items():
            shared = len(evidence & words[cid]) / len(evidence)
            if shared >= min_shared:
                rows.append((qid, by_id.loc[qid, "question"], cid, rank, shared, by_id.loc[qid, "evidence"]))
    table = pd.DataFrame(rows, columns=["question_id", "question", "chunk", "best rank", "evidence words shared", "evidence"])
    return table.sort_values(["evidence words shared", "best rank", "question_id"], ascending=[False, True, True],
                             ignore_index=True)


def _overlap_by_slice(golden: pd.DataFrame) -> pd.DataFrame:
    """Per slice: the share of each question's content words that its evidence string holds."""
    shares = []
    for question, evidence in zip(golden["question"], golden["evidence"]):
        asked = content_words(question)
        shares.append(len(asked & content_words(evidence)) / len(asked) if asked else np.nan)
    overlap = pd.Series(shares, index=golden.index).groupby(golden["slice"])
    table = overlap.agg(["count", "mean", "min", "median", "max"]).rename(columns={"count": "questions"})
    table["no shared word"] = overlap.apply(lambda s: int((s == 0).sum()))
    return table.rename_axis("slice")


def _slice_sizes(ranks: pd.DataFrame, retrievers: list[str], k: int, alpha: float) -> pd.DataFrame:
    """Per slice and overall: questions, the best-case detectable difference, and the largest observed one."""
    hits = ranks[retrievers].fillna(k + 1).le(k).astype(float)
    rows = {}
    for name, part in [*hits.groupby(ranks["slice"]), ("all", hits)]:
        gaps = {f"{a} − {b}": part[a].mean() - part[b].mean() for a, b in combinations(retrievers, 2)}
        pair = max(gaps, key=lambda p: abs(gaps[p]), default=None)
        rows[name] = {"questions": len(part), "smallest possible": best_case_detectable_difference(len(part), alpha),
                      "largest observed": abs(gaps[pair]) if pair else np.nan,
                      "between": pair if pair and gaps[pair] else ""}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("slice")
