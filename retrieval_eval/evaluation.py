"""Evaluation tables: every metric for every question, retriever and cut-off k, and their means.

Built on the per-question definitions of :mod:`retrieval_eval.metrics`; also the precision@k
ceiling, the rank of the first relevant chunk per question, per-slice means, who leads, and what
the tie rule of reciprocal rank fusion decides.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

import pandas as pd

from .checks import (
    check_ids, check_ks, check_list, check_positive_int, check_qrels, check_question_ids, check_ranking, naming_question,
)
from .fusion import TIE_RULES, fuse_runs
from .metrics import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids

KS = (1, 3, 5, 10)  # the cut-offs of the tables
RANK_TABLE_COLUMNS = ("question", "slice", "n_relevant")  # first_relevant_ranks' own columns, before the retrievers'

METRICS = {
    "recall": lambda ranked, gains, k: recall_at_k(ranked, relevant_ids(gains), k),
    "precision": lambda ranked, gains, k: precision_at_k(ranked, relevant_ids(gains), k),
    "MRR": lambda ranked, gains, k: reciprocal_rank(ranked, relevant_ids(gains), k),
    "nDCG": ndcg_at_k,
}


def check_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], chunk_ids: Collection[str], name: str = "run") -> None:
    """Check a run against the qrels and the chunk ids before scoring it.

    Args:
        run: ``{question_id: ranking}``, each ranking a list of chunk ids, best first.
        qrels: ``{question_id: {chunk_id: gain}}``.
        chunk_ids: every chunk id that exists (a list of str).
        name: how the messages name the run (e.g. the retriever's name).

    Raises:
        ValueError: an id is not a str (:func:`~retrieval_eval.checks.check_ids`), a question of the
            qrels has no ranking, the run ranks a question not in the qrels, or a ranking or the
            qrels name a chunk id that does not exist (names it).

    Not taught; used by :func:`per_question_scores` and :func:`~retrieval_eval.batch.batch_scores` when
    ``chunk_ids`` is given.
    """
    chunk_ids = check_list(chunk_ids, "chunk_ids", "chunk ids")
    check_ids(chunk_ids, "chunk_ids holds")
    check_qrels(qrels)
    check_question_ids(run, None, name)
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
        with naming_question(qid, f"{name}, "):
            ranked = check_ranking(ranked)
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

    Raises:
        ValueError: runs or qrels is empty, ``ks`` is not a list of distinct integers >= 1
            (:func:`~retrieval_eval.checks.check_ks`), an id is not a str, a question of the qrels has no
            ranking, or a ranking or its gains are invalid (names the retriever and the question).

    Taught in: notebook 01_recall_at_k.
    """
    ks = check_ks(ks)
    _check_runs(runs)
    check_question_ids(None, qrels)
    if not runs or not qrels:
        raise ValueError("runs and qrels must each hold at least one entry")
    rows = []
    for name, run in runs.items():
        check_question_ids(run, qrels, name)
        if chunk_ids is not None:
            check_run(run, qrels, chunk_ids, name)
        for qid, gains in qrels.items():
            if qid not in run:
                raise ValueError(f"{name} has no ranking for question {qid!r}")
            with naming_question(qid, f"{name}, "):
                ranked = check_ranking(run[qid])
                for metric, fn in METRICS.items():
                    for k in ks:
                        rows.append((name, qid, metric, k, fn(ranked, gains, k)))
    return pd.DataFrame(rows, columns=["retriever", "question", "metric", "k", "value"])


def evaluate(runs: Mapping, qrels: Mapping, ks: Sequence[int] = KS, chunk_ids: Collection[str] | None = None) -> pd.DataFrame:
    """The summary table: mean of each metric over questions, per retriever and cut-off k.

    Args:
        runs: ``{retriever name: {question_id: ranking}}``, each ranking a list of chunk ids, best first.
        qrels: ``{question_id: {chunk_id: gain}}``; every question needs a gain > 0.
        ks: the cut-offs, distinct integers >= 1.
        chunk_ids: when given, every id must be one of these (:func:`check_run`).

    Returns:
        A DataFrame indexed by retriever (in the order of ``runs``) with columns
        ``(metric, k)`` for metric in recall, precision, MRR, nDCG and k in ``ks``.

    Raises:
        ValueError: ``runs`` is empty or not a mapping of runs, or as :func:`per_question_scores`.

    Taught in: notebooks 01_recall_at_k to 09_chunking.
    """
    ks = check_ks(ks)
    _check_runs(runs)
    if not runs:
        raise ValueError("runs is empty: pass {retriever name: {question_id: ranking}}")
    long = per_question_scores(runs, qrels, ks, chunk_ids)
    table = long.pivot_table(index="retriever", columns=["metric", "k"], values="value", aggfunc="mean")
    return table.reindex(index=list(runs), columns=pd.MultiIndex.from_product([list(METRICS), list(ks)], names=["metric", "k"]))


def first_relevant_ranks(runs: Mapping, qrels: Mapping, golden: pd.DataFrame) -> pd.DataFrame:
    """Per question: the rank of the first relevant chunk in each retriever's ranking.

    Args:
        runs: ``{retriever name: {question_id: ranking}}``, each ranking a list of chunk ids, best first.
        qrels: ``{question_id: {chunk_id: gain}}``; every question needs a gain > 0.
        golden: the golden set (a DataFrame with columns ``id``, ``question``, ``slice``), the
            same question ids as ``qrels``.

    Returns:
        A DataFrame indexed by question id with the columns :data:`RANK_TABLE_COLUMNS` (``question``,
        ``slice``, ``n_relevant``) and then one integer column per retriever (``<NA>`` when no relevant
        chunk is in the ranking); :func:`retriever_columns` names those.

    Raises:
        ValueError: a retriever is named like one of the first three columns, an id is not a str
            (:func:`~retrieval_eval.checks.check_ids`), the golden set and the qrels hold different
            questions, or a ranking is missing or invalid (names it).

    Taught in: notebooks 01_recall_at_k, 03_mrr and 05_three_retrievers to 08_beyond_the_averages.
    """
    _check_runs(runs)
    clash = set(RANK_TABLE_COLUMNS) & set(runs)
    if clash:
        raise ValueError(f"retriever name(s) {sorted(clash)} clash with the table's own columns")
    _check_same_questions(golden, qrels)
    for name, run in runs.items():
        check_question_ids(run, None, name)
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


def retriever_columns(ranks: pd.DataFrame) -> list[str]:
    """The retriever columns of a table of first relevant ranks: every column after :data:`RANK_TABLE_COLUMNS`.

    Args:
        ranks: the output of :func:`first_relevant_ranks` (a DataFrame).

    Returns:
        The retriever names, in the table's order.

    Raises:
        ValueError: ``ranks`` is not a DataFrame that starts with :data:`RANK_TABLE_COLUMNS`, or has
            no retriever column.

    Not taught; used by :func:`~retrieval_eval.comparisons.rank_differences`.
    """
    n = len(RANK_TABLE_COLUMNS)
    if not isinstance(ranks, pd.DataFrame) or tuple(ranks.columns[:n]) != RANK_TABLE_COLUMNS or len(ranks.columns) == n:
        raise ValueError(f"ranks must be the output of first_relevant_ranks (columns {list(RANK_TABLE_COLUMNS)}, "
                         f"then one per retriever), got {type(ranks).__name__} {list(getattr(ranks, 'columns', []))[:8]}")
    return list(ranks.columns[n:])


def _check_runs(runs: Mapping) -> None:
    """Raise ValueError when ``runs`` is not ``{retriever name: {question_id: ranking}}`` (a single
    run, or a list of rankings, passed where several runs are expected)."""
    if not isinstance(runs, Mapping) or not all(isinstance(run, Mapping) for run in runs.values()):
        raise ValueError(f"runs must be a mapping {{retriever name: {{question_id: ranking}}}}, got {runs!r:.80}")


def _check_same_questions(golden: pd.DataFrame, qrels: Mapping) -> None:
    """Raise ValueError when a question id is not a str (in the golden set or the qrels), or the
    golden set and the qrels do not hold the same question ids."""
    check_ids(golden["id"], "the golden set holds question id", "row")
    check_question_ids(None, qrels)
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

    Args:
        qrels: ``{question_id: {chunk_id: gain}}``.
        k: the cut-off, an integer >= 1.

    Returns:
        A float in (0, 1] (unitless, like precision@k).

    Raises:
        ValueError: k is not an integer >= 1, the qrels are empty or fail
            :func:`~retrieval_eval.checks.check_qrels`, or a question has no relevant chunk.

    Taught in: notebooks 02_precision_at_k and 05_three_retrievers to 10_convention_switchboard.
    """
    k = check_positive_int(k)
    check_qrels(qrels)
    if not qrels:
        raise ValueError("qrels is empty: no question to compute a ceiling over")
    sizes = {qid: len(relevant_ids(g)) for qid, g in qrels.items()}
    empty = [qid for qid, n in sizes.items() if n == 0]
    if empty:
        raise ValueError(f"question(s) {empty[:5]} have no relevant chunk and cannot be scored")
    return sum(min(n, k) / k for n in sizes.values()) / len(qrels)


def disagree_at_k(ranks: pd.DataFrame, retrievers: Sequence[str], k: int) -> pd.Series:
    """Per question: do the retrievers disagree on whether a relevant chunk is in the top k?

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        retrievers: its retriever columns.
        k: the cut-off, an integer >= 1.

    Returns:
        A boolean Series indexed by question id (a missing rank counts as not in the top k).

    Raises:
        ValueError: k is not an integer >= 1, ``retrievers`` is not a list, or names a column
            ``ranks`` does not have.

    Taught in: notebook 05_three_retrievers.
    """
    k = check_positive_int(k)
    retrievers = check_list(retrievers, "retrievers", "retriever names (columns of ranks)")
    unknown = [name for name in retrievers if name not in ranks.columns]
    if unknown:
        raise ValueError(f"retrievers {unknown} are not columns of ranks (it has {list(ranks.columns)})")
    in_top_k = ranks[retrievers].fillna(k + 1) <= k
    return in_top_k.nunique(axis=1) > 1


def slice_report(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """The four metrics at cut-off k per slice of the golden set and retriever.

    Args:
        runs: ``{retriever name: {question_id: ranking}}``, each ranking a list of chunk ids, best first.
        qrels: ``{question_id: {chunk_id: gain}}``; every question needs a gain > 0.
        golden: the golden set (a DataFrame with columns ``id`` and ``slice``), the same question
            ids as ``qrels``.
        k: the cut-off, an integer >= 1.

    Returns:
        A DataFrame indexed by ``(slice, retriever)`` with columns ``questions`` (how many
        questions the slice has) and ``recall``, ``precision``, ``MRR`` (mean RR@k), ``nDCG``.

    Raises:
        ValueError: k is not an integer >= 1, the golden set and the qrels hold different
            questions, or as :func:`per_question_scores`.

    Taught in: notebook 08_beyond_the_averages.
    """
    _check_same_questions(golden, qrels)
    long = per_question_scores(runs, qrels, ks=[check_positive_int(k)])
    long["slice"] = long["question"].map(golden.set_index("id")["slice"])
    table = long.pivot_table(index=["slice", "retriever"], columns="metric", values="value", aggfunc="mean")
    table.insert(0, "questions", golden["slice"].value_counts().reindex(table.index.get_level_values("slice")).values)
    order = pd.MultiIndex.from_product([sorted(golden["slice"].unique()), list(runs)], names=["slice", "retriever"])
    return table.reindex(index=order, columns=["questions", *METRICS]).rename_axis(columns=None)


def rank_groups(values: Mapping[str, float] | pd.Series, decimals: int = 3, lowest: bool = False) -> list[list[str]]:
    """Names ordered by their values, best first, with names that tie sharing a group.

    Two values tie when they are equal as printed with ``decimals`` places (so exactly equal
    values tie too): a summary never names one winner where the table shows equal numbers. Within a
    group, names keep the order of ``values``. The one place that decides who leads; every verdict
    in the notebooks goes through it (:func:`verdict`).

    Args:
        values: ``{name: value}`` or a Series indexed by name (e.g. one column of :func:`evaluate`).
        decimals: the places the values are printed with.
        lowest: order lowest first (who does worst).

    Returns:
        A list of groups, each a list of names, e.g. ``[["vector", "hybrid"], ["BM25"]]``.

    Raises:
        ValueError: ``values`` is empty or a value is missing or not finite (names it).

    Taught in: notebooks 01_recall_at_k to 03_mrr and 06_mistakes_and_interview.
    """
    series = pd.Series(values, dtype=float)
    if series.empty:
        raise ValueError("no value to compare")
    bad = [name for name, value in series.items() if not math.isfinite(value)]
    if bad:
        raise ValueError(f"no finite value for {bad}")
    printed = {name: f"{value:.{decimals}f}" for name, value in series.items()}
    levels = sorted({float(text) for text in printed.values()}, reverse=not lowest)
    return [[name for name in series.index if float(printed[name]) == level] for level in levels]


def verdict(values: Mapping[str, float] | pd.Series, what: str, decimals: int = 3, lowest: bool = False) -> str:
    """A Markdown phrase naming who leads on ``what``, and saying "tie" when several do.

    E.g. "**vector** has the highest recall@3 (0.617)", "**BM25** and **hybrid** tie for the
    highest recall@3 (0.574)", or, when every name ties, "**BM25**, **vector** and **hybrid** tie
    on recall@3 (0.574)"; the leaders come from :func:`rank_groups`.

    Args:
        values, decimals, lowest: as for :func:`rank_groups`.
        what: the quantity, e.g. ``"recall@3"``.

    Taught in: notebooks 01_recall_at_k, 04_ndcg and 09_chunking.
    """
    leaders = rank_groups(values, decimals, lowest)[0]
    value = f"{pd.Series(values, dtype=float)[leaders[0]]:.{decimals}f}"
    names = [f"**{name}**" for name in leaders]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    extreme = "lowest" if lowest else "highest"
    if len(leaders) == 1:
        return f"{listed} has the {extreme} {what} ({value})"
    if len(leaders) == len(pd.Series(values)):
        return f"{listed} tie on {what} ({value})"
    return f"{listed} tie for the {extreme} {what} ({value})"


class TieEffect(NamedTuple):
    """What the tie rule of RRF decides (:func:`rrf_tie_effect`).

    Taught in: notebook 05_three_retrievers (through rrf_tie_effect).
    """

    means: pd.DataFrame  #: each metric at k, one row per tie rule (ours first), and their spread
    questions: pd.DataFrame  #: the questions whose first relevant rank the rule decides, with both ranks
    k: int  #: the cut-off


def rrf_tie_effect(runs: Sequence[Mapping[str, Sequence[str]]], qrels: Mapping, k: int = 3, rrf_k: float = 60, depth: int = 10) -> TieEffect:
    """Fuse the runs under either tie rule of :func:`~retrieval_eval.fusion.reciprocal_rank_fusion` and compare.

    RRF sums fractions such as 1/61 + 1/64, and two chunks can get exactly the same fused score (a
    chunk at ranks 1 and 4 ties one at ranks 4 and 1, or 2 and 3). Then the tie rule alone decides
    their order. We order ties by id ascending; trec_eval orders equal scores by id descending. A
    question is *decided by a tie* when its first relevant chunk has another rank under the other
    rule; the spread is how much each mean moves.

    Args:
        runs: the runs to fuse, ``[{question_id: ranking}, ...]`` (e.g. BM25's and vector's).
        qrels: ``{question_id: {chunk_id: gain}}``.
        k: the cut-off of the metrics, an integer >= 1.
        rrf_k, depth: the RRF constant and depth (as :class:`~retrieval_eval.retrievers.HybridRetriever`).

    Returns:
        A :class:`TieEffect`: ``means`` indexed by tie rule ("id ascending", "id descending") and
        "spread" (the second minus the first) with columns recall, precision, MRR, nDCG at k;
        ``questions`` indexed by question id with the first relevant rank under each rule
        (``<NA>``: no relevant chunk in the fused ranking), only the questions where they differ.

    Raises:
        ValueError: as :func:`~retrieval_eval.fusion.fuse_runs` and :func:`evaluate`.

    Taught in: notebook 05_three_retrievers.
    """
    k = check_positive_int(k)
    fused = {rule: fuse_runs(runs, k=rrf_k, depth=depth, ties=rule) for rule in TIE_RULES}
    means = evaluate(fused, qrels, ks=[k]).xs(k, axis=1, level="k")
    means.loc["spread"] = means.loc[TIE_RULES[1]] - means.loc[TIE_RULES[0]]
    ranks = pd.DataFrame({
        rule: {qid: next((rank for rank, cid in enumerate(run[qid], start=1) if cid in relevant_ids(qrels[qid])), pd.NA)
               for qid in qrels}
        for rule, run in fused.items()
    }, dtype="Int64")
    differ = ranks[TIE_RULES[0]].fillna(0) != ranks[TIE_RULES[1]].fillna(0)
    return TieEffect(means.rename_axis(f"hybrid at k = {k}"), ranks[differ].rename_axis("question_id"), k)
