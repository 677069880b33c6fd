"""The one import of the notebook series: ``import helpers as h``.

This file holds no code of its own. It hands on the names of the package ``retrieval_eval/``,
one module per concern; open the module to read how something is computed. Where each name
lives, in teaching order:

  retrieval_eval/     names                                                          taught in
  ------------------  -------------------------------------------------------------  ---------
  metrics.py          recall_at_k, precision_at_k, reciprocal_rank, mrr, dcg_at_k,   01-04
                      ndcg_at_k, relevant_ids
  checks.py           the input checks behind every metric (str ids, ...)            01
  more_metrics.py     success_at_k, r_precision, average_precision                   01-03, 10
  conventions.py      hit_rate, capped_recall, precision_of_returned, f1_at_k,       01-04, 10
                      ap_at_k, context_precision, exponential_gains,
                      ndcg_retrieved_ideal, macro_mean, micro_recall,
                      share_of_ceiling, switchboard, trec_eval_means, VARIANTS,
                      Variant
  text.py             normalise, locate_evidence, read_text                          00, 05
  corpus.py           load_corpus, load_chunks, split_into_chunks, write_chunks,     00, 05, 09
                      stored_or_split_chunks, stored_chunks_differ, check_chunks,
                      chunk_spans, CHUNK_SIZE, DOCUMENT_SUFFIXES
  golden.py           read_golden_csv, label_chunks, load_golden_with_qrels,         00, 05, 08
                      graded_labels, GoldenSetError, MIN_EVIDENCE_CHARS, GOLDEN_COLUMNS,
                      read_known_false_negatives, with_known_false_negatives
  models.py           load_tokenizer, token_counter, model_window, query_prefix,     05
                      document_prefix, model_fingerprint, unknown_only, load_model,
                      check_weights, ModelFileError
  fusion.py           reciprocal_rank_fusion, fuse_runs, TIE_RULES                   05
  retrievers.py       BM25Retriever, VectorRetriever, HybridRetriever,               05
                      run_retrievers, tokenize, stop_word_list, rank_by_score,
                      unindexable_chunks, STOP_WORDS, STEMMER
  parameters.py       check_parameters, ParameterError                               05
  baselines.py        random_baseline, bm25_steps, BM25_STEPS, RANDOM_BASELINE,      05
                      bm25_variants, BM25_VARIANTS (other engines' idf, k1, b)
                      (what chance scores; BM25 one choice at a time)
  pipeline.py         evaluation_setup (the set-up call of 01-10), Setup             01-10
  chunking.py         chunking_experiment, ChunkingExperiment, chunk_and_rank,       09
                      Chunking, setting_scores, shared_word_pieces,
                      compare_settings, CHUNK_SIZES, OVERLAP_SHARE, BUDGET
  evaluation.py       evaluate, per_question_scores, first_relevant_ranks,           01-05, 08
                      precision_ceiling, disagree_at_k, slice_report, check_run,
                      METRICS, KS, rank_groups, verdict (who leads, or a tie),
                      rrf_tie_effect, TieEffect
  plots.py            plot_metrics, plot_first_relevant_ranks, plot_slices,          01-05, 08, 09
                      plot_precision_ceiling, plot_intervals, plot_chunking_budget
  teaching.py         plot_rankings, plot_discount, evidence_html, random_cases,     00-10
                      check_answers, Answer, print_versions
  statistics.py       bootstrap_ci, wilson_ci, mean_interval, sign_test,             08
                      mcnemar_test, permutation_test, paired_test,
                      monte_carlo_error, holm, N_RESAMPLES, SEED, EXACT_LIMIT,
                      ALPHA, MCNEMAR, PERMUTATION, WILSON, BOOTSTRAP
  power.py            questions_needed, smallest_detectable_difference,              08
                      best_case_detectable_difference, fewest_discordant, POWER
                      (planning the size of a golden set)
  comparisons.py      per_question_table, interval_table, slice_intervals,           05-09
                      paired_comparisons, slice_comparisons,
                      column_comparisons (the one place for paired tests),
                      comparison_sentences, pair_sentence, tested_pair,
                      tested_verdict (who leads, and whether the golden set can
                      tell), narrow_interval_reason, power_table,
                      rank_differences, SUCCESS
  widgets/            playground_widget, playground_scores (playground.py);          01-04, 07
                      rank_slider_widget, rank_slider_scores (rank_slider.py);
                      ceiling_widget, ceiling_report, ceiling_by_k,
                      hypothetical_qrels (ceiling.py); ranks_widget,
                      question_view, filter_questions (ranks.py); rrf_widget,
                      rrf_explanation, fusion_cases (rrf.py)
  batch.py            batch_scores (many questions at once, with NumPy)              README
  trec.py             write_trec_qrels, write_trec_run, export_trec, read_qrels,     README
                      read_run, Run, trec_order, align_run, Coverage, find_line,
                      TrecFormatError
  evaluate_runs.py    load_runs, RunsEvaluation, scores_table (make evaluate-runs)   README
  audit.py            golden_set_audit, Audit, near_duplicate_chunks,                README
                      content_words
  reports.py          report_folder, check_report_folder, finish_report,            README
                      default_report_name, ReportNameError (reports only in output/)
  evaluate_report.py  the runner of `make evaluate` (python -m ...)                  README
  paths.py            ROOT, DATA_DIR, CORPUS_DIR, CHUNKS_PATH, GOLDEN_PATH,          -
                      KNOWN_FALSE_NEGATIVES_PATH, CACHE_DIR, OUTPUT_DIR

Terms used throughout (the field's standard ones): a *chunk* is the unit that is retrieved, with an
id such as ``"03_battery_care#01"``; a *ranking* (or *run*) is a sequence of chunk ids, best first;
*qrels* are the relevance judgements ``{question_id: {chunk_id: gain}}``; a chunk is *relevant* when
its gain is above 0; the *cut-off k* is how many chunks from the top are read; the *golden set* is
the questions, each with an *evidence string*: a chunk is relevant to a question when it contains
the question's evidence string (see ``normalise``). Conventions follow trec_eval (NIST) unless a
docstring says otherwise.
"""

from retrieval_eval.audit import Audit, content_words, golden_set_audit, near_duplicate_chunks
from retrieval_eval.baselines import BM25_STEPS, BM25_VARIANTS, RANDOM_BASELINE, bm25_steps, bm25_variants, random_baseline
from retrieval_eval.batch import batch_scores
from retrieval_eval.chunking import (
    BUDGET, CHUNK_SIZES, OVERLAP_SHARE, Chunking, ChunkingExperiment, chunk_and_rank, chunking_experiment,
    compare_settings, setting_scores, shared_word_pieces,
)
from retrieval_eval.comparisons import (
    SUCCESS, comparison_sentences, interval_table, pair_sentence, paired_comparisons, per_question_table,
    column_comparisons, narrow_interval_reason, power_table, rank_differences, slice_comparisons, slice_intervals, tested_pair,
    tested_verdict,
)
from retrieval_eval.conventions import (
    VARIANTS, Variant, ap_at_k, capped_recall, context_precision, exponential_gains, f1_at_k, hit_rate, macro_mean,
    micro_recall, ndcg_retrieved_ideal, precision_of_returned, share_of_ceiling, switchboard, trec_eval_means,
)
from retrieval_eval.corpus import (
    CHUNK_SIZE, DOCUMENT_SUFFIXES, check_chunks, chunk_spans, load_chunks, load_corpus, split_into_chunks,
    stored_chunks_differ,
    stored_or_split_chunks, write_chunks,
)
from retrieval_eval.evaluation import (
    KS, METRICS, TieEffect, check_run, disagree_at_k, evaluate, first_relevant_ranks, per_question_scores,
    precision_ceiling, rank_groups, rrf_tie_effect, slice_report, verdict,
)
from retrieval_eval.fusion import TIE_RULES, fuse_runs, reciprocal_rank_fusion
from retrieval_eval.golden import (
    GOLDEN_COLUMNS, MIN_EVIDENCE_CHARS, GoldenSetError, graded_labels, label_chunks, load_golden_with_qrels,
    read_golden_csv, read_known_false_negatives, with_known_false_negatives,
)
from retrieval_eval.evaluate_runs import RunsEvaluation, load_runs, scores_table
from retrieval_eval.metrics import (
    dcg_at_k, mrr, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids,
)
from retrieval_eval.more_metrics import average_precision, r_precision, success_at_k
from retrieval_eval.models import (
    ModelFileError, check_weights, document_prefix, load_model, load_tokenizer, model_fingerprint, model_window,
    query_prefix, token_counter, unknown_only,
)
from retrieval_eval.parameters import ParameterError, check_parameters
from retrieval_eval.paths import (
    CACHE_DIR, CHUNKS_PATH, CORPUS_DIR, DATA_DIR, GOLDEN_PATH, KNOWN_FALSE_NEGATIVES_PATH, OUTPUT_DIR, ROOT,
)
from retrieval_eval.pipeline import Setup, evaluation_setup
from retrieval_eval.power import POWER, best_case_detectable_difference, fewest_discordant, questions_needed, smallest_detectable_difference
from retrieval_eval.plots import (
    plot_chunking_budget, plot_first_relevant_ranks, plot_intervals, plot_metrics, plot_precision_ceiling, plot_slices,
)
from retrieval_eval.reports import (
    ReportNameError, check_report_folder, default_report_name, finish_report, report_folder,
)
from retrieval_eval.retrievers import (
    STEMMER, STOP_WORDS, BM25Retriever, HybridRetriever, VectorRetriever, rank_by_score, run_retrievers, stop_word_list,
    tokenize, unindexable_chunks,
)
from retrieval_eval.statistics import (
    ALPHA, BOOTSTRAP, EXACT_LIMIT, MCNEMAR, N_RESAMPLES, PERMUTATION, SEED, WILSON, bootstrap_ci, holm, mcnemar_test,
    mean_interval, monte_carlo_error, paired_test, permutation_test, sign_test, wilson_ci,
)
from retrieval_eval.teaching import (
    Answer, check_answers, evidence_html, plot_discount, plot_rankings, print_versions, random_cases,
)
from retrieval_eval.text import locate_evidence, normalise, read_text
from retrieval_eval.trec import (
    Coverage, Run, TrecFormatError, align_run, export_trec, find_line, read_qrels, read_run, trec_order,
    write_trec_qrels, write_trec_run,
)
from retrieval_eval.widgets.ceiling import ceiling_by_k, ceiling_report, ceiling_widget, hypothetical_qrels
from retrieval_eval.widgets.playground import playground_scores, playground_widget
from retrieval_eval.widgets.rank_slider import rank_slider_scores, rank_slider_widget
from retrieval_eval.widgets.ranks import filter_questions, question_view, ranks_widget
from retrieval_eval.widgets.rrf import fusion_cases, rrf_explanation, rrf_widget

__all__ = [
    # metrics (01-04), and three more trec_eval reports (01-03, 10)
    "recall_at_k", "precision_at_k", "reciprocal_rank", "mrr", "dcg_at_k", "ndcg_at_k", "relevant_ids",
    "success_at_k", "r_precision", "average_precision",
    # conventions: the variants other tools choose (01-04, 10)
    "hit_rate", "capped_recall", "precision_of_returned", "f1_at_k", "ap_at_k", "context_precision", "exponential_gains",
    "ndcg_retrieved_ideal", "macro_mean", "micro_recall",
    "share_of_ceiling", "switchboard", "trec_eval_means", "VARIANTS", "Variant",
    # text, corpus, golden set and labels (00, 05)
    "normalise", "locate_evidence", "read_text",
    "load_corpus", "split_into_chunks", "stored_or_split_chunks", "stored_chunks_differ", "load_chunks", "write_chunks",
    "check_chunks", "chunk_spans", "CHUNK_SIZE", "DOCUMENT_SUFFIXES",
    "read_golden_csv", "label_chunks", "load_golden_with_qrels", "graded_labels", "GoldenSetError",
    "MIN_EVIDENCE_CHARS", "GOLDEN_COLUMNS", "read_known_false_negatives", "with_known_false_negatives",
    # models, parameters, fusion, retrievers and the set-up call (05)
    "load_tokenizer", "token_counter", "model_window", "query_prefix", "document_prefix", "model_fingerprint",
    "unknown_only", "load_model", "check_weights", "ModelFileError",
    "check_parameters", "ParameterError",
    "reciprocal_rank_fusion", "fuse_runs", "TIE_RULES",
    "BM25Retriever", "VectorRetriever", "HybridRetriever", "run_retrievers", "tokenize", "stop_word_list", "STOP_WORDS",
    "STEMMER", "rank_by_score",
    "unindexable_chunks",
    "evaluation_setup", "Setup",
    # evaluation tables and plots (01-05, 08)
    "evaluate", "per_question_scores", "first_relevant_ranks", "precision_ceiling", "disagree_at_k",
    "slice_report", "check_run", "METRICS", "KS", "rank_groups", "verdict", "rrf_tie_effect", "TieEffect",
    # baselines (05)
    "random_baseline", "bm25_steps", "BM25_STEPS", "RANDOM_BASELINE", "bm25_variants", "BM25_VARIANTS",
    "plot_metrics", "plot_first_relevant_ranks", "plot_precision_ceiling", "plot_slices", "plot_intervals",
    # how the chunking moves the numbers (09)
    "chunking_experiment", "ChunkingExperiment", "chunk_and_rank", "Chunking", "setting_scores", "shared_word_pieces",
    "compare_settings", "CHUNK_SIZES", "OVERLAP_SHARE", "BUDGET", "plot_chunking_budget",
    # teaching aids (00-10)
    "plot_rankings", "plot_discount", "evidence_html", "random_cases", "check_answers", "Answer", "print_versions",
    # statistics, comparisons and planning (08)
    "bootstrap_ci", "wilson_ci", "mean_interval", "sign_test", "mcnemar_test", "permutation_test",
    "monte_carlo_error", "paired_test", "holm", "N_RESAMPLES", "SEED", "EXACT_LIMIT", "ALPHA", "MCNEMAR", "PERMUTATION", "WILSON", "BOOTSTRAP",
    "questions_needed", "smallest_detectable_difference", "best_case_detectable_difference", "fewest_discordant", "POWER",
    "per_question_table", "interval_table", "slice_intervals", "paired_comparisons", "slice_comparisons",
    "column_comparisons", "comparison_sentences", "pair_sentence", "tested_pair", "tested_verdict", "narrow_interval_reason", "power_table",
    "rank_differences", "SUCCESS",
    # widgets (01-04, 07)
    "playground_widget", "playground_scores", "rank_slider_widget", "rank_slider_scores",
    "ceiling_widget", "ceiling_report", "ceiling_by_k", "hypothetical_qrels",
    "ranks_widget", "question_view", "filter_questions", "rrf_widget", "rrf_explanation", "fusion_cases",
    # many questions, TREC files, your engine's runs (README)
    "batch_scores", "write_trec_qrels", "write_trec_run", "export_trec",
    "read_qrels", "read_run", "Run", "trec_order", "align_run", "Coverage", "find_line", "TrecFormatError",
    "load_runs", "RunsEvaluation", "scores_table",
    # the golden-set audit (README)
    "golden_set_audit", "Audit", "near_duplicate_chunks", "content_words",
    # reports of `make evaluate` (README)
    "report_folder", "check_report_folder", "finish_report", "default_report_name", "ReportNameError",
    # paths
    "ROOT", "DATA_DIR", "CORPUS_DIR", "CHUNKS_PATH", "GOLDEN_PATH", "KNOWN_FALSE_NEGATIVES_PATH", "CACHE_DIR", "OUTPUT_DIR",
]
