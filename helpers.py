"""The one import of the notebook series: ``import helpers as h``.

It holds no code: it hands on the names the notebooks and the README's examples call, from the
package ``retrieval_eval/`` (one module per concern; the README's module table says which).
The terms (chunk, ranking, run, qrels, gain, cut-off k) are defined in ``retrieval_eval/checks.py``.
"""

from retrieval_eval.audit import golden_set_audit
from retrieval_eval.baselines import BM25_STEPS, BM25_VARIANTS, bm25_table
from retrieval_eval.chunking import chunking_experiment
from retrieval_eval.comparisons import (
    against_chance, interval_table, paired_comparisons, plain_chance, plain_summary, plain_table, plain_verdict, slice_gap,
)
from retrieval_eval.conventions import (
    average_precision, capped_recall, hit_rate, macro_mean, micro_recall,
    ndcg_retrieved_ideal, precision_of_returned, published_metrics, published_summary, share_of_ceiling, switchboard,
    trec_eval_means,
)
from retrieval_eval.corpus import load_corpus, split_into_chunks
from retrieval_eval.evaluation import (
    KS, batch_scores, evaluate, first_relevant_ranks, per_question_scores, precision_ceiling,
    random_baseline, )
from retrieval_eval.fusion import reciprocal_rank_fusion, tie_effect
from retrieval_eval.formats import load_chunks
from retrieval_eval.golden import (
    document_level, graded_labels, label_chunks, read_golden_csv, read_known_false_negatives, with_known_false_negatives,
)
from retrieval_eval.metrics import (
    METRICS, Metric, dcg_at_k, first_relevant_rank, mrr, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank,
    register_metric, relevant_ids, success_at_k,
)
from retrieval_eval.models import load_tokenizer, needs_the_embedding_model
from retrieval_eval.pipeline import BM25, Fusion, Setup, Vector, default_retrievers, evaluation_setup
from retrieval_eval.plots import plot_first_relevant_ranks, plot_intervals, plot_metrics, plot_two_stage
from retrieval_eval.rerank import DEPTHS, Rerank, SentenceReranker, load_reranker, oracle_rerank, rerank, seconds_per_call, seconds_per_question, two_stage_table
from retrieval_eval.retrievers import LUCENE_ENGLISH, BM25Retriever, tokenize
from retrieval_eval.statistics import (
    any_false_alarm, best_case_detectable_difference, fewest_discordant, holm,
    mcnemar_power, mcnemar_size, mcnemar_test, permutation_test, questions_needed, two_slices,
    )
from retrieval_eval.teaching import Answer, check_answers, course_map, interview_lines, evidence_html, plot_discount, plot_rankings, print_versions, random_cases
from retrieval_eval.text import locate_evidence, normalise
from retrieval_eval.trec import export_trec
from retrieval_eval.widgets.ceiling import ceiling_widget
from retrieval_eval.widgets.depth import depth_widget
from retrieval_eval.widgets.playground import playground_widget
from retrieval_eval.widgets.rank_slider import rank_slider_widget
from retrieval_eval.widgets.ranks import ranks_widget
from retrieval_eval.widgets.rrf import rrf_widget

__all__ = [
    # the metrics and their registry (01-04)
    "recall_at_k", "precision_at_k", "reciprocal_rank", "mrr", "dcg_at_k", "ndcg_at_k", "success_at_k",
    "first_relevant_rank", "relevant_ids", "METRICS", "Metric", "register_metric",
    # corpus, chunks, golden set, labels (00)
    "load_corpus", "load_chunks", "split_into_chunks", "load_tokenizer", "needs_the_embedding_model", "read_golden_csv", "label_chunks",
    "normalise", "locate_evidence", "graded_labels", "read_known_false_negatives", "with_known_false_negatives",
    # a golden set of documents while retrieval returns chunks (deep dive: a real golden set)
    "document_level",
    # the set-up call and the registry of retrievers (01-06)
    "evaluation_setup", "Setup", "default_retrievers", "BM25", "Vector", "Fusion", "Rerank",
    "BM25Retriever", "tokenize", "LUCENE_ENGLISH", "reciprocal_rank_fusion",
    # tables (01-05)
    "evaluate", "batch_scores", "per_question_scores", "first_relevant_ranks", "precision_ceiling", "random_baseline", "KS",
    # is a difference real? plain words (core) and the tests (deep dive)
    "paired_comparisons", "plain_verdict", "plain_summary", "plain_table", "against_chance", "plain_chance", "interval_table", "slice_gap", "mcnemar_test", "permutation_test", "holm",
    "any_false_alarm", "fewest_discordant", "best_case_detectable_difference", "mcnemar_power", "mcnemar_size",
    "questions_needed", "two_slices",
    # two-stage retrieval (06)
    "rerank", "oracle_rerank", "SentenceReranker", "load_reranker", "two_stage_table", "seconds_per_question", "seconds_per_call", "DEPTHS",
    # conventions of other tools (deep dive)
    "switchboard", "trec_eval_means", "hit_rate", "capped_recall", "precision_of_returned",
    "average_precision", "ndcg_retrieved_ideal", "macro_mean",
    "micro_recall", "share_of_ceiling", "published_metrics", "published_summary",
    # what the baseline is made of, chunking, the audit (deep dives)
    "bm25_table", "BM25_STEPS", "BM25_VARIANTS", "tie_effect", "chunking_experiment",
    "golden_set_audit",
    # pictures and teaching aids
    "plot_metrics", "plot_first_relevant_ranks", "plot_intervals", "plot_two_stage",
    "plot_rankings", "plot_discount", "evidence_html", "random_cases", "check_answers", "Answer", "print_versions", "course_map",
    "interview_lines",
    # widgets
    "playground_widget", "rank_slider_widget", "ceiling_widget", "ranks_widget", "rrf_widget", "depth_widget",
    # TREC files
    "export_trec",
]
