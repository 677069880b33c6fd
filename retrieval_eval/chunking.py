"""How the chunking moves the numbers: one corpus split at several sizes, with and without overlap.

Each setting gets its own chunks, its own labels (computed from those chunks, never carried over)
and its own rankings (cached by :func:`~retrieval_eval.pipeline.cached_rankings`, keyed by the chunk
texts). The settings are then read two ways: at one cut-off k for all, and at one *token budget*
for the generator (k = budget / chunk size), which is the comparison that matters for RAG. Every
claim that one setting beats another comes from :func:`compare_settings`, which tests it with the
series' paired tests and Holm's correction (:func:`~retrieval_eval.comparisons.column_comparisons`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .checks import check_ids, check_ks, check_list, check_positive_int, check_probability
from .corpus import chunk_spans, load_corpus, stored_or_split_chunks
from .evaluation import METRICS, per_question_scores, precision_ceiling
from .golden import GoldenSetError, label_chunks, read_golden_csv
from .models import token_counter
from .more_metrics import success_at_k
from .metrics import relevant_ids
from .parameters import check_parameters
from .paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH
from .pipeline import RETRIEVERS, cached_rankings
from .comparisons import column_comparisons
from .statistics import ALPHA, N_RESAMPLES, SEED
from .text import normalise

CHUNK_SIZES = (128, 256, 512)  # word pieces of the embedding model's tokenizer, special tokens included
OVERLAP_SHARE = 0.15  # "about 15% overlap": chunk_overlap = round(0.15 × chunk size) word pieces
BUDGET = 1536  # word pieces the generator reads: 3 × 512 = 6 × 256 = 12 × 128


class Chunking(NamedTuple):
    """One chunking of a corpus with its labels and rankings (returned by :func:`chunk_and_rank`).

    Taught in: notebook 09_chunking.
    """

    chunk_size: int  #: the largest chunk in word pieces; also the vector retriever's window
    chunk_overlap: int  #: the most word pieces two neighbouring chunks may share
    chunks: list  #: ``[{"id", "doc", "text", "n_tokens"}]`` in corpus order
    qrels: dict  #: ``{question_id: {chunk_id: 1}}`` for the questions that have a relevant chunk
    cut: dict  #: ``{question_id: why}``: evidence cut by a chunk boundary, so no relevant chunk
    runs: dict  #: ``{"BM25" | "vector" | "hybrid": {question_id: ranking}}``, every question

    @property
    def label(self) -> str:
        """``"128, no overlap"`` or ``"128, overlap 19"``: how tables and plots name the setting.

        Taught in: notebook 09_chunking.
        """
        return f"{self.chunk_size}, " + (f"overlap {self.chunk_overlap}" if self.chunk_overlap else "no overlap")


def chunk_and_rank(
    docs: Mapping[str, str],
    golden: pd.DataFrame,
    chunk_size: int,
    chunk_overlap: int = 0,
    corpus: str | Path = CORPUS_DIR,
    model_name: str | None = None,
    progress: bool = False,
    cache_dir: str | Path = CACHE_DIR,
    rank: bool = True,
) -> Chunking:
    """Split the corpus at one size and overlap, label the chunks, and rank every question.

    The chunks come from :func:`~retrieval_eval.corpus.stored_or_split_chunks` (the stored Polder
    chunks at 512 word pieces without overlap, else split now); the labels from
    :func:`~retrieval_eval.golden.label_chunks` on those chunks. A question whose evidence string is
    cut by a chunk boundary has no relevant chunk in this setting: it is kept apart in ``cut``, with
    the chunks it straddles, and :func:`setting_scores` counts it 0. The vector retriever's window is
    ``chunk_size``, so no chunk is truncated. Rankings come from the cache when these chunks and
    questions were ranked before (:func:`~retrieval_eval.pipeline.cached_rankings`).

    Args:
        docs: the corpus, ``{document id: text}`` (:func:`~retrieval_eval.corpus.load_corpus` of ``corpus``).
        golden: the golden set (:func:`~retrieval_eval.golden.read_golden_csv`).
        chunk_size: the largest chunk in word pieces, special tokens included (at most the model's window).
        chunk_overlap: the most word pieces neighbouring chunks may share (see
            :func:`~retrieval_eval.corpus.split_into_chunks`).
        corpus: the folder ``docs`` was read from.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local sentence-transformers model.
        progress: show progress bars while embedding and ranking.
        cache_dir: the cache folder (rankings and embeddings).
        rank: ``False`` to chunk and label only (``runs`` is then ``{}``): a check of a setting in
            about a second, before the slow part.

    Returns:
        A :class:`Chunking`.

    Raises:
        ValueError: ``chunk_size`` is larger than the model's window, or ``chunk_size`` or
            ``chunk_overlap`` is invalid (as :func:`~retrieval_eval.corpus.stored_or_split_chunks`).
        GoldenSetError: an evidence string is not in the corpus at all (a fault of the golden set,
            not of the chunking; names the question).

    Taught in: notebook 09_chunking.
    """
    chunks = stored_or_split_chunks(docs, corpus, model_name, chunk_size, progress=False, chunk_overlap=chunk_overlap)
    problems: list[str] = []  # one per question left out of the qrels, in golden-set order
    qrels = label_chunks(golden, chunks, docs, problems=problems)
    missing = [qid for qid in golden["id"] if qid not in qrels]
    evidence = dict(zip(golden["id"], golden["evidence"]))
    texts = [normalise(text) for text in docs.values()]
    in_corpus = {qid: any(normalise(evidence[qid]) in text for text in texts) for qid in missing}
    absent = [problem for qid, problem in zip(missing, problems) if not in_corpus[qid]]
    if absent:
        raise GoldenSetError("; ".join(absent))
    cut = dict(zip(missing, problems))
    runs = cached_rankings(chunks, golden, model_name, chunk_size, progress, cache_dir) if rank else {}
    return Chunking(chunk_size, chunk_overlap, chunks, qrels, cut, runs)


def setting_scores(setting: Chunking, ks: Sequence[int]) -> pd.DataFrame:
    """Every metric for every question of one setting, retriever and cut-off k, cut evidence counted 0.

    The four metrics of :data:`~retrieval_eval.evaluation.METRICS` (recall, precision, RR@k as
    "MRR", nDCG), plus ``success`` (1 when a relevant chunk is in the top k: the evidence reached the
    model) and ``word pieces`` (what the top k chunks hold, summed: what the generator reads). A
    question in ``setting.cut`` has no relevant chunk, so recall has no denominator: trec_eval cannot
    score it and leaves it out of its means. Here it scores 0 on every metric, because the chunking
    lost its evidence; leaving it out would reward a chunking for cutting evidence.

    Args:
        setting: a :class:`Chunking`.
        ks: the cut-offs (integers >= 1).

    Returns:
        A DataFrame with columns ``retriever, question, metric, k, value``: one row for every
        retriever, question of the runs, metric and k.

    Raises:
        ValueError: ``ks`` is not a list of distinct integers >= 1
            (:func:`~retrieval_eval.checks.check_ks`), or a run is invalid (as
            :func:`~retrieval_eval.evaluation.per_question_scores`).

    Taught in: notebook 09_chunking.
    """
    ks = check_ks(ks)
    scorable = {name: {qid: run[qid] for qid in setting.qrels} for name, run in setting.runs.items()}
    columns = ["retriever", "question", "metric", "k", "value"]
    long = per_question_scores(scorable, setting.qrels, ks, [c["id"] for c in setting.chunks]) if setting.qrels else (
        pd.DataFrame(columns=columns))  # every evidence string cut: nothing to score but zeros
    size = {c["id"]: c["n_tokens"] for c in setting.chunks}
    rows = []
    for name, run in setting.runs.items():
        for qid, ranked in run.items():
            for k in ks:
                found = success_at_k(ranked, relevant_ids(setting.qrels[qid]), k) if qid in setting.qrels else 0.0
                rows.append((name, qid, "success", k, found))
                rows.append((name, qid, "word pieces", k, float(sum(size[cid] for cid in ranked[:k]))))
                if qid in setting.cut:
                    rows.extend((name, qid, metric, k, 0.0) for metric in METRICS)
    return pd.concat([long, pd.DataFrame(rows, columns=columns)], ignore_index=True).astype({"k": int, "value": float})


def shared_word_pieces(setting: Chunking, docs: Mapping[str, str], model_name: str | None = None) -> list[int]:
    """How many word pieces each pair of neighbouring chunks of a document shares (the overlap as made).

    ``chunk_overlap`` is a maximum: the splitter carries whole pieces (paragraphs, lines, words) of
    at most that many word pieces over to the next chunk, so a boundary between two long paragraphs
    shares nothing. Chunks are placed in their document with
    :func:`~retrieval_eval.corpus.chunk_spans`; the shared text is counted with the model's tokenizer.

    Args:
        setting: a :class:`Chunking` (its ``chunks``, each with ``id``, ``doc`` and ``text``).
        docs: ``{document id: text}``, the documents the chunks were made from.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or the model whose tokenizer counts.

    Returns:
        One count per boundary inside a document, in corpus order (0 where nothing is shared).

    Raises:
        ValueError: a document id is not a str, or the chunks are not the documents' (as
            :func:`~retrieval_eval.corpus.chunk_spans`).

    Taught in: notebook 09_chunking.
    """
    check_ids(docs, "the documents hold id")
    n_tokens = token_counter(model_name)
    n_special = n_tokens("")
    shared = []
    for doc, text in docs.items():
        spans = list(chunk_spans(text, [c for c in setting.chunks if c["doc"] == doc]).values())
        full = normalise(text)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            shared.append(n_tokens(full[start:end]) - n_special if start < end else 0)
    return shared


def compare_settings(
    values: pd.DataFrame, baseline: str, metric: str = "recall", alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES, seed: int = SEED,
) -> pd.DataFrame:
    """Each setting against the baseline, per retriever, on paired per-question values: one family, Holm-adjusted.

    For every retriever and every setting other than ``baseline``, the pair "vector (256, no
    overlap) − vector (512, no overlap)" goes to
    :func:`~retrieval_eval.comparisons.column_comparisons`, the series' one place for paired tests:
    the mean difference (setting − baseline) with its paired-bootstrap 95% interval, the questions
    won, tied and lost, McNemar's exact test when every value is 0 or 1 (else the paired
    permutation test), Holm's adjustment over every row, and the verdict from the adjusted p only
    ("... higher", or "not distinguishable": the golden set shows no difference, which does not
    show that there is none).

    Args:
        values: one row per question, columns ``(retriever, setting)`` (a two-level column index),
            e.g. recall at the budget's k; every cell a finite number.
        baseline: the setting every other one is compared with (a name in the second column level).
        metric: what the values are, named in the table and its sentences (e.g. ``"recall at 1536
            word pieces"``).
        alpha: the family-wise level of the verdicts (between 0 and 1).
        n_resamples, seed: for the bootstrap and, when it cannot enumerate, the permutation test.

    Returns:
        The table of :func:`~retrieval_eval.comparisons.paired_comparisons` (indexed by ``(pair,
        metric)``, read by :func:`~retrieval_eval.comparisons.comparison_sentences`), with two more
        columns, ``retriever`` and ``setting``, in the order of ``values``' columns.

    Raises:
        ValueError: ``baseline`` is not a setting of ``values``, there is no other setting,
            ``alpha`` is not between 0 and 1, or a value is missing or not finite (names the column).

    Taught in: notebook 09_chunking.
    """
    alpha = check_probability(alpha, "alpha")
    settings = list(dict.fromkeys(values.columns.get_level_values(1)))
    if baseline not in settings:
        raise ValueError(f"the baseline {baseline!r} is not one of the settings {settings}")
    if len(settings) < 2:
        raise ValueError(f"compare at least two settings, got only {settings}")
    retrievers = list(dict.fromkeys(values.columns.get_level_values(0)))
    for retriever, setting in values.columns:
        bad = values[(retriever, setting)].isna() | values[(retriever, baseline)].isna()
        if bad.any():
            raise ValueError(f"({retriever!r}, {setting!r}) against the baseline: no value for question(s) {list(values.index[bad])[:5]}")
    wide = pd.DataFrame({(f"{r} ({s})", metric): values[(r, s)] for r, s in values.columns})
    wide.columns.names = ["name", "metric"]
    compared = [(r, s) for r in retrievers for s in settings if s != baseline and (r, s) in values.columns]
    pairs = [(f"{r} ({s})", f"{r} ({baseline})") for r, s in compared]
    family = (f"{len(pairs)} tests: {len(retrievers)} retriever{'s' if len(retrievers) > 1 else ''} × "
              f"{len(settings) - 1} setting{'s' if len(settings) > 2 else ''} against {baseline}, on {metric}")
    table = column_comparisons(wide, pairs, family, None, alpha, n_resamples, seed)
    table.insert(0, "retriever", [r for r, _ in compared])
    table.insert(1, "setting", [s for _, s in compared])
    return table


class ChunkingExperiment(NamedTuple):
    """The tables of :func:`chunking_experiment`.

    Taught in: notebook 09_chunking (through chunking_experiment).
    """

    settings: list  #: one :class:`Chunking` per setting, sizes in order, each without then with overlap
    sizes: pd.DataFrame  #: per setting: chunks, word pieces, overlap as made, cut evidence, several relevant chunks, ceiling
    at_k: pd.DataFrame  #: per (setting, retriever): recall, precision, MRR, nDCG at the one cut-off k
    budget: pd.DataFrame  #: per (setting, retriever): k = budget / chunk size, recall, success, word pieces read
    curves: pd.DataFrame  #: long: setting, chunk size, overlap, retriever, k, budget (k × size), recall
    comparisons: pd.DataFrame  #: :func:`compare_settings` on recall at the budget's k, against ``baseline``
    scores: pd.DataFrame  #: long: setting, retriever, question, metric, k, value (every question)
    k: int  #: the one cut-off of ``at_k``
    budget_tokens: int  #: the generator's budget in word pieces
    baseline: str  #: the setting the others are compared with (the stored chunks: largest size, no overlap)


def chunking_experiment(
    corpus: str | Path = CORPUS_DIR,
    golden: str | Path = GOLDEN_PATH,
    chunk_sizes: Sequence[int] = CHUNK_SIZES,
    overlap_share: float = OVERLAP_SHARE,
    k: int = 3,
    budget: int = BUDGET,
    max_budget: int | None = None,
    model_name: str | None = None,
    progress: bool = False,
    cache_dir: str | Path = CACHE_DIR,
) -> ChunkingExperiment:
    """The corpus chunked at each size, without and with overlap, scored at one k and at one token budget.

    For each size s in ``chunk_sizes`` two settings: no overlap, and ``round(overlap_share × s)``
    word pieces of overlap (:func:`chunk_and_rank`). Each is scored with :func:`setting_scores`
    (cut evidence counted 0) at the cut-off ``k``, at ``budget / s`` (the same number of word pieces
    for the generator in every setting) and at every k up to ``max_budget / s`` (the curves). The
    comparisons (:func:`compare_settings`) test recall at the budget's k of every setting against
    the largest size without overlap.

    Args:
        corpus: a folder of documents; golden: the golden-set CSV file (as :func:`~retrieval_eval.pipeline.evaluation_setup`).
        chunk_sizes: two or more chunk sizes in word pieces (integers, each at most the model's window).
        overlap_share: the overlap as a share of the chunk size, from 0 up to but not including 1
            (0 compares each size with itself: refused).
        k: the one cut-off of ``at_k`` (an integer >= 1).
        budget: the generator's budget in word pieces, a multiple of every chunk size.
        max_budget: the longest budget the curves reach (default: ``budget`` × 4/3, rounded down to a
            multiple of the largest size); a multiple of every chunk size, at least ``budget``.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local sentence-transformers model.
        progress: show progress bars while embedding and ranking.
        cache_dir: the cache folder.

    Returns:
        A :class:`ChunkingExperiment`.

    Raises:
        ValueError: fewer than two chunk sizes, a size repeated or not an integer >= 1,
            ``overlap_share`` outside (0, 1), a budget that is not a multiple of every size (it would
            compare unequal budgets), ``max_budget`` below ``budget``.
        ParameterError: ``corpus``, ``golden`` or ``model_name`` is wrong, or a chunk size is larger
            than the model's window (:func:`~retrieval_eval.parameters.check_parameters`). All
            arguments are checked before anything is chunked or ranked.
        GoldenSetError: as :func:`chunk_and_rank`.

    Taught in: notebook 09_chunking.
    """
    sizes = [check_positive_int(size, "every chunk size") for size in check_list(chunk_sizes, "chunk_sizes", "chunk sizes")]
    if len(sizes) < 2 or len(set(sizes)) != len(sizes):
        raise ValueError(f"chunk_sizes must hold two or more different sizes, got {list(chunk_sizes)}")
    sizes = sorted(sizes)
    if isinstance(overlap_share, bool) or not isinstance(overlap_share, (int, float)) or not 0 < overlap_share < 1:
        raise ValueError(f"overlap_share must be a number between 0 and 1 (e.g. 0.15), got {overlap_share!r}")
    k, budget = check_positive_int(k), check_positive_int(budget, "budget")
    max_budget = (budget * 4 // 3) // sizes[-1] * sizes[-1] if max_budget is None else check_positive_int(max_budget, "max_budget")
    for name, value in (("budget", budget), ("max_budget", max_budget)):
        if any(value % size for size in sizes):
            raise ValueError(f"{name} {value} is not a multiple of every chunk size {sizes}: the settings would get unequal budgets")
    if max_budget < budget:
        raise ValueError(f"max_budget {max_budget} is smaller than budget {budget}")
    for size in sizes:  # the corpus, the golden file, the model, and each size against the model's window
        check_parameters(corpus, golden, model_name, size, k)
    docs, golden_set = load_corpus(corpus), read_golden_csv(golden)
    grid = [(size, overlap) for size in sizes for overlap in (0, round(overlap_share * size))]
    # Every setting chunked and labelled (seconds, and any error) before any is ranked (minutes on a cold cache).
    labelled = [chunk_and_rank(docs, golden_set, size, overlap, corpus, model_name, rank=False) for size, overlap in grid]

    settings, frames, sizes_rows, budget_k = [], [], {}, {}
    for setting in labelled:
        size, overlap = setting.chunk_size, setting.chunk_overlap
        budget_k[size] = budget // size
        ks = sorted({k, *range(1, max_budget // size + 1)})
        setting = setting._replace(runs=cached_rankings(setting.chunks, golden_set, model_name, size, progress, cache_dir))
        settings.append(setting)
        frames.append(setting_scores(setting, ks).assign(setting=setting.label))
        shared = shared_word_pieces(setting, docs, model_name)
        several = [qid for qid, gains in setting.qrels.items() if len(gains) > 1]
        sizes_rows[setting.label] = {
            "chunk size": size, "overlap": overlap, "chunks": len(setting.chunks),
            "mean word pieces": sum(c["n_tokens"] for c in setting.chunks) / len(setting.chunks),
            "boundaries sharing text": f"{sum(n > 0 for n in shared)} of {len(shared)}",
            "mean shared word pieces": sum(shared) / len(shared) if shared else 0.0,
            "evidence cut": len(setting.cut), "questions cut": ", ".join(setting.cut),
            "several relevant chunks": len(several), "questions with several": ", ".join(several),
            f"precision@{k} ceiling": (precision_ceiling(setting.qrels, k) * len(setting.qrels) / len(golden_set)
                                        if setting.qrels else 0.0),  # a question with cut evidence adds 0
        }
    scores = pd.concat(frames, ignore_index=True)
    labels = [s.label for s in settings]
    size_of = {s.label: s.chunk_size for s in settings}

    def table(metrics: Sequence[str], at: Mapping[str, int]) -> pd.DataFrame:
        picked = scores[scores["metric"].isin(metrics) & (scores["k"] == scores["setting"].map(at))]
        means = picked.pivot_table(index=["setting", "retriever"], columns="metric", values="value", aggfunc="mean")
        order = pd.MultiIndex.from_product([labels, list(RETRIEVERS)], names=["setting", "retriever"])
        return means.reindex(index=order, columns=list(metrics)).rename_axis(columns=None)

    at_k = table(list(METRICS), {label: k for label in labels})
    by_budget = {label: budget_k[size_of[label]] for label in labels}
    budget_table = table(["recall", "success", "word pieces"], by_budget)
    budget_table.insert(0, "k", [by_budget[label] for label in budget_table.index.get_level_values("setting")])
    recall = scores[scores["metric"] == "recall"]
    curves = recall.groupby(["setting", "retriever", "k"], sort=False)["value"].mean().reset_index(name="recall")
    curves = curves[curves["k"] * curves["setting"].map(size_of) <= max_budget]
    curves.insert(1, "chunk size", curves["setting"].map(size_of))
    curves.insert(2, "overlap", curves["setting"].map({s.label: s.chunk_overlap for s in settings}))
    curves.insert(5, "budget", curves["k"] * curves["chunk size"])
    at_budget = recall[recall["k"] == recall["setting"].map(by_budget)]
    values = at_budget.pivot_table(index="question", columns=["retriever", "setting"], values="value").reindex(
        columns=pd.MultiIndex.from_product([list(RETRIEVERS), labels]))
    baseline = next(s.label for s in settings if s.chunk_size == sizes[-1] and not s.chunk_overlap)
    comparisons = compare_settings(values, baseline, metric=f"recall at {budget} word pieces")
    return ChunkingExperiment(settings, pd.DataFrame.from_dict(sizes_rows, orient="index").rename_axis("setting"),
                              at_k, budget_table, curves.reset_index(drop=True), comparisons, scores, k, budget, baseline)
