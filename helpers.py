"""The one import of the notebook series: ``import helpers as h``.

This file holds no code of its own. It hands on the names of the package ``retrieval_eval/``,
one module per concern; open the module to read how something is computed. Where each name
lives, in teaching order:

  module (retrieval_eval/)   names                                               taught in
  -------------------------  --------------------------------------------------  ----------
  metrics.py                 recall_at_k, precision_at_k, reciprocal_rank, mrr,  01-04
                             dcg_at_k, ndcg_at_k, relevant_ids
  checks.py                  the input checks behind every metric                01
  text.py                    normalise, locate_evidence                          00
  corpus.py                  load_corpus, split_into_chunks, stored_or_split_    00, 05
                             chunks, load_chunks, write_chunks, check_chunks,
                             CHUNK_SIZE
  golden.py                  read_golden_csv, label_chunks, load_golden_with_    00, 05, 08
                             qrels, graded_labels, GoldenSetError,
                             MIN_EVIDENCE_CHARS, GOLDEN_COLUMNS
  models.py                  load_tokenizer, model_fingerprint                   05
  fusion.py                  reciprocal_rank_fusion, fuse_runs                   05
  retrievers.py              BM25Retriever, VectorRetriever, HybridRetriever,    05
                             run_retrievers, tokenize, rank_by_score
  pipeline.py                evaluation_setup (the set-up call of 01-09), Setup  01-09
  evaluation.py              evaluate, per_question_scores, first_relevant_      01-05, 08
                             ranks, precision_ceiling, disagree_at_k,
                             slice_report, check_run, METRICS, KS
  plots.py                   plot_metrics, plot_first_relevant_ranks,            01-05, 08
                             plot_precision_ceiling, plot_slices, plot_intervals
  teaching.py                plot_rankings, plot_discount, evidence_html,        00-08
                             random_cases, check_answers, print_versions
  statistics.py              bootstrap_ci, wilson_ci, mean_interval, sign_test,  08
                             mcnemar_test, permutation_test, permutation_p,
                             paired_test, holm, N_RESAMPLES, SEED, EXACT_LIMIT,
                             ALPHA, MCNEMAR, PERMUTATION, WILSON, BOOTSTRAP
  power.py                   questions_needed, smallest_detectable_difference,   08
                             POWER (planning the size of a golden set)
  comparisons.py             per_question_table, interval_table, slice_          08
                             intervals, paired_comparisons, slice_comparisons,
                             comparison_sentences, power_table, rank_
                             differences, SUCCESS, MIN_DISCORDANT
  widgets/playground.py      playground_widget, playground_scores                07
  widgets/ceiling.py         ceiling_widget, ceiling_report, hypothetical_qrels  07
  widgets/ranks.py           ranks_widget, question_view, filter_questions       07
  batch.py                   batch_scores (many questions at once, NumPy)        README
  trec.py                    write_trec_qrels, write_trec_run, export_trec       README
  paths.py                   ROOT, DATA_DIR, CORPUS_DIR, CHUNKS_PATH, GOLDEN_PATH, CACHE_DIR, OUTPUT_DIR

Terms used throughout (the field's standard ones): a *chunk* is the unit that is retrieved, with an
id such as ``"03_battery_care#01"``; a *ranking* (or *run*) is a sequence of chunk ids, best first;
*qrels* are the relevance judgements ``{question_id: {chunk_id: gain}}``; a chunk is *relevant* when
its gain is above 0; the *cut-off k* is how many chunks from the top are read; the *golden set* is
the questions, each with an *evidence string*: a chunk is relevant to a question when it contains
the question's evidence string (see ``normalise``). Conventions follow trec_eval (NIST) unless a
docstring says otherwise.
"""

from retrieval_eval.batch import batch_scores
from retrieval_eval.comparisons import (
    MIN_DISCORDANT, SUCCESS, comparison_sentences, interval_table, paired_comparisons, per_question_table, power_table,
    rank_differences, slice_comparisons, slice_intervals,
)
from retrieval_eval.corpus import (
    CHUNK_SIZE, check_chunks, load_chunks, load_corpus, split_into_chunks, stored_or_split_chunks, write_chunks,
)
from retrieval_eval.evaluation import (
    KS, METRICS, check_run, disagree_at_k, evaluate, first_relevant_ranks, per_question_scores, precision_ceiling,
    slice_report,
)
from retrieval_eval.fusion import fuse_runs, reciprocal_rank_fusion
from retrieval_eval.golden import (
    GOLDEN_COLUMNS, MIN_EVIDENCE_CHARS, GoldenSetError, graded_labels, label_chunks, load_golden_with_qrels,
    read_golden_csv,
)
from retrieval_eval.metrics import (
    dcg_at_k, mrr, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids,
)
from retrieval_eval.models import load_tokenizer, model_fingerprint
from retrieval_eval.paths import CACHE_DIR, CHUNKS_PATH, CORPUS_DIR, DATA_DIR, GOLDEN_PATH, OUTPUT_DIR, ROOT
from retrieval_eval.pipeline import Setup, evaluation_setup
from retrieval_eval.power import POWER, questions_needed, smallest_detectable_difference
from retrieval_eval.plots import (
    plot_first_relevant_ranks, plot_intervals, plot_metrics, plot_precision_ceiling, plot_slices,
)
from retrieval_eval.retrievers import (
    BM25Retriever, HybridRetriever, VectorRetriever, rank_by_score, run_retrievers, tokenize,
)
from retrieval_eval.statistics import (
    ALPHA, BOOTSTRAP, EXACT_LIMIT, MCNEMAR, N_RESAMPLES, PERMUTATION, SEED, WILSON, bootstrap_ci, holm, mcnemar_test,
    mean_interval, paired_test, permutation_p, permutation_test, sign_test, wilson_ci,
)
from retrieval_eval.teaching import (
    check_answers, evidence_html, plot_discount, plot_rankings, print_versions, random_cases,
)
from retrieval_eval.text import locate_evidence, normalise
from retrieval_eval.trec import export_trec, write_trec_qrels, write_trec_run
from retrieval_eval.widgets.ceiling import ceiling_by_k, ceiling_report, ceiling_widget, hypothetical_qrels
from retrieval_eval.widgets.playground import playground_scores, playground_widget
from retrieval_eval.widgets.ranks import filter_questions, question_view, ranks_widget

__all__ = [
    # metrics (01-04)
    "recall_at_k", "precision_at_k", "reciprocal_rank", "mrr", "dcg_at_k", "ndcg_at_k", "relevant_ids",
    # text, corpus, golden set and labels (00, 05)
    "normalise", "locate_evidence",
    "load_corpus", "split_into_chunks", "stored_or_split_chunks", "load_chunks", "write_chunks", "check_chunks",
    "CHUNK_SIZE",
    "read_golden_csv", "label_chunks", "load_golden_with_qrels", "graded_labels", "GoldenSetError",
    "MIN_EVIDENCE_CHARS", "GOLDEN_COLUMNS",
    # models, fusion, retrievers and the set-up call (05)
    "load_tokenizer", "model_fingerprint",
    "reciprocal_rank_fusion", "fuse_runs",
    "BM25Retriever", "VectorRetriever", "HybridRetriever", "run_retrievers", "tokenize", "rank_by_score",
    "evaluation_setup", "Setup",
    # evaluation tables and plots (01-05, 08)
    "evaluate", "per_question_scores", "first_relevant_ranks", "precision_ceiling", "disagree_at_k",
    "slice_report", "check_run", "METRICS", "KS",
    "plot_metrics", "plot_first_relevant_ranks", "plot_precision_ceiling", "plot_slices", "plot_intervals",
    # teaching aids (00-08)
    "plot_rankings", "plot_discount", "evidence_html", "random_cases", "check_answers", "print_versions",
    # statistics, comparisons and planning (08)
    "bootstrap_ci", "wilson_ci", "mean_interval", "sign_test", "mcnemar_test", "permutation_test", "permutation_p",
    "paired_test", "holm", "N_RESAMPLES", "SEED", "EXACT_LIMIT", "ALPHA", "MCNEMAR", "PERMUTATION", "WILSON", "BOOTSTRAP",
    "questions_needed", "smallest_detectable_difference", "POWER",
    "per_question_table", "interval_table", "slice_intervals", "paired_comparisons", "slice_comparisons",
    "comparison_sentences", "power_table", "rank_differences", "SUCCESS", "MIN_DISCORDANT",
    # widgets (07)
    "playground_widget", "playground_scores", "ceiling_widget", "ceiling_report", "ceiling_by_k",
    "hypothetical_qrels", "ranks_widget", "question_view", "filter_questions",
    # many questions, TREC files (README)
    "batch_scores", "write_trec_qrels", "write_trec_run", "export_trec",
    # paths
    "ROOT", "DATA_DIR", "CORPUS_DIR", "CHUNKS_PATH", "GOLDEN_PATH", "CACHE_DIR", "OUTPUT_DIR",
]
