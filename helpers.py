"""The one import of the notebook series: ``import helpers as h``.

It holds no code: it hands on the names the notebooks and the README's examples call, from the package
``retrieval_eval/`` and its wings (``core``: the metrics and the tables; ``inputs``: corpus, chunks, golden sets, TREC
files, the model's files; ``retrieval``: the retrievers and the set-up call; ``analysis``: statistics, conventions,
audits and the deep dives' experiments; ``course``: pictures, widgets, the checker; ``tool``: ``make evaluate``).
Each name is imported when first used, so ``import helpers`` costs nothing and a notebook pays only for what it calls.
The terms (chunk, ranking, run, qrels, gain, cut-off k) are defined in ``retrieval_eval/core/checks.py``.
"""

import importlib

# Each name and the module of retrieval_eval/ that defines it, grouped by the notebook that teaches it first.
NAMES = {
    # 00 start here: the corpus, chunks, golden set and labels; what every notebook ends with
    "load_corpus": "inputs.corpus", "load_chunks": "inputs.formats", "read_golden_csv": "inputs.golden",
    "label_chunks": "inputs.golden", "normalise": "inputs.text", "locate_evidence": "inputs.text",
    "evidence_html": "course.teaching", "course_map": "course.teaching", "BM25Retriever": "retrieval.retrievers",
    "first_relevant_rank": "core.metrics", "check_answers": "course.checker", "Answer": "course.checker",
    "print_versions": "course.teaching", "plot_rankings": "course.plots", "fold": "course.teaching",
    # 01 recall@k, and the set-up call every later notebook starts from
    "recall_at_k": "core.metrics", "evaluation_setup": "retrieval.setup",
    "evaluate": "core.evaluation", "batch_scores": "core.evaluation", "per_question_scores": "core.evaluation",
    "first_relevant_ranks": "core.evaluation", "plot_first_relevant_ranks": "course.plots", "tokenize": "retrieval.retrievers",
    "random_cases": "course.teaching", "paired_comparisons": "analysis.comparisons", "plain_summary": "analysis.comparisons", "answer_by_retrieval": "analysis.answers",
    # 02 precision@k and its ceiling
    "precision_at_k": "core.metrics", "precision_ceiling": "core.evaluation", "KS": "core.evaluation",
    "share_of_ceiling": "analysis.conventions", "playground_widget": "course.widgets.playground",
    "ceiling_widget": "course.widgets.ceiling",
    # 03 reciprocal rank and MRR
    "reciprocal_rank": "core.metrics", "mrr": "core.metrics", "relevant_ids": "core.metrics",
    "rank_slider_widget": "course.widgets.rank_slider",
    # 04 nDCG
    "dcg_at_k": "core.metrics", "ndcg_at_k": "core.metrics", "graded_labels": "inputs.golden",
    "ndcg_retrieved_ideal": "analysis.conventions", "plot_discount": "course.plots",
    # 05 three retrievers: the registries, fusion, verdicts in plain words, chance
    "METRICS": "core.registry", "Metric": "core.registry", "register_metric": "core.registry",
    "register_retriever": "retrieval.setup", "default_retrievers": "retrieval.setup",
    "BM25": "retrieval.retrievers", "Vector": "retrieval.retrievers", "Fusion": "retrieval.fusion",
    "LUCENE_ENGLISH": "retrieval.retrievers", "reciprocal_rank_fusion": "retrieval.fusion",
    "random_baseline": "core.evaluation", "plain_table": "analysis.comparisons", "plain_verdict": "analysis.comparisons",
    "against_chance": "analysis.comparisons", "plain_chance": "analysis.comparisons", "slice_gap": "analysis.comparisons",
    "mcnemar_test": "analysis.statistics", "ranks_widget": "course.widgets.ranks", "rrf_widget": "course.widgets.rrf",
    # 06 two-stage retrieval
    "Rerank": "retrieval.rerank", "rerank": "retrieval.rerank", "oracle_rerank": "retrieval.rerank",
    "SentenceReranker": "retrieval.rerank", "load_reranker": "retrieval.rerank", "two_stage_table": "retrieval.rerank",
    "seconds_per_call": "retrieval.rerank", "DEPTHS": "retrieval.rerank",
    "machine": "course.teaching", "reranked_runs": "retrieval.setup",
    "needs_the_embedding_model": "inputs.models", "plot_two_stage": "course.plots", "depth_widget": "course.widgets.depth",
    # 07 mistakes and the interview
    "precision_of_returned": "analysis.conventions", "macro_mean": "analysis.conventions",
    "interview_lines": "course.teaching", "export_trec": "inputs.trec", "recap": "course.sheet",
    "mock_interview": "course.drill",
    # 08 is a difference real?
    "interval_table": "analysis.comparisons", "permutation_test": "analysis.statistics", "holm": "analysis.statistics",
    "any_false_alarm": "analysis.statistics", "fewest_discordant": "analysis.statistics",
    "best_case_detectable_difference": "analysis.statistics", "mcnemar_power": "analysis.statistics",
    "questions_needed": "analysis.statistics", "two_slices": "analysis.statistics",
    "plot_intervals": "course.plots",
    # 09 chunking
    "split_into_chunks": "inputs.chunks", "load_tokenizer": "inputs.models", "chunking_experiment": "analysis.chunking",
    # 10 conventions
    "switchboard": "analysis.conventions", "trec_eval_means": "analysis.conventions", "capped_recall": "analysis.conventions",
    "average_precision": "core.metrics", "iprec_at_recall": "core.metrics", "plot_precision_recall": "course.plots",
    # 11 what the baselines are made of
    "bm25_table": "analysis.baselines", "held_out_gains": "analysis.baselines", "ann_tradeoff": "analysis.regression", "gate": "analysis.regression", "gate_error_rates": "analysis.regression", "BM25_STEPS": "analysis.baselines", "BM25_VARIANTS": "analysis.baselines",
    "tie_effect": "retrieval.fusion",
    # 12 the golden-set audit
    "success_at_k": "core.metrics", "golden_set_audit": "analysis.audit", "with_known_false_negatives": "inputs.golden",
    # 17 labels you can trust
    "agreement": "analysis.agreement", "model_judge": "analysis.judges",
    "abstention": "analysis.abstention", "judging_widget": "course.widgets.judging",
    # 13 a real golden set
    "document_level": "inputs.golden", "hit_rate": "analysis.conventions", "micro_recall": "analysis.conventions",
    "published_metrics": "analysis.conventions", "published_summary": "analysis.conventions",
    # 18 retrieval and the answer
    "recall_at_budget": "course.plots",
}
__all__ = list(NAMES)


def __getattr__(name: str):
    if name not in NAMES:
        raise AttributeError(f"helpers has no name {name!r}; it hands on {len(NAMES)} names (helpers.NAMES)")
    value = getattr(importlib.import_module(f"retrieval_eval.{NAMES[name]}"), name)
    globals()[name] = value  # the next use finds it here
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "NAMES"])
