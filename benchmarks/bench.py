"""Benchmark: the batch evaluator against trec_eval, retrieval on a large synthetic corpus, and a real engine.

Run with ``make bench`` (a few minutes on 2 cores). Every figure is printed; the only check is that
the batch evaluator and pytrec_eval give the same values. Wall-clock times (``time.perf_counter``);
"best of N" is the fastest of N repeats, as ``timeit`` reports. Synthetic data from a fixed seed.

1. Evaluation: 10,000, 100,000 and 1,000,000 questions × 100 ranked chunk ids, precision@3, recall@3, MRR@10,
   nDCG@10, each evaluator in a forked process that builds its input format first (not timed; its peak memory above
   that input is its own), with at most PEER_MEMORY_GIB GiB more and PEER_TIMEOUT_S seconds (one past either is
   reported as not finished), with the same means checked: the floor (one dict.get per rank, then numpy), ranx (its
   Run and Qrels built inside the clock) and ir_measures (requirements-bench.txt) besides the two below:
   - batch evaluator: the run ``{question: [chunk ids, best first]}`` and the qrels
     ``{question: {chunk id: gain}}``. Timed: ``h.batch_scores(run, qrels, ks=(3, 10))`` (all four
     metrics at both cut-offs) and the mean of the four columns.
   - pytrec_eval: the same qrels, and the run as ``{question: {chunk id: score}}`` (score = 100 −
     rank, so no ties), plus that run cut at rank 10 for MRR@10 (trec_eval's ``recip_rank`` has no
     cut-off: ``trec_eval -M 10``). Timed: building the two ``RelevanceEvaluator`` objects (they
     read the qrels), ``evaluate`` on the run (P.3, recall.3, ndcg_cut.10) and on the cut run
     (recip_rank), and the four means.
2. BM25 (``h.BM25Retriever``, rank-bm25's BM25Okapi) on synthetic chunks of 60–140 words drawn from
   a Zipf-distributed vocabulary: index build time (tokenizing included) at 10,000 and 100,000
   chunks; per-query latency of scoring every chunk and of ranking them all (``rank``), median of
   20 queries of 4 words.
3. Embeddings with the bundled all-MiniLM-L6-v2 (``model_name=None``) on 1,000 chunks of 100 words
   of Polder text: a whole ``VectorRetriever`` (model loading, length checks, embedding, cache)
   with an empty embedding cache, and again with the cache filled; throughput = 1,000 chunks / the
   difference. Per-question latency: embedding one golden-set question and scoring the chunks.
4. Exact vector search over 100,000 normalised 384-dimensional float32 vectors: one query's cosine
   similarities (a matrix-vector product) and its top 10 (``argpartition``), median of 100 queries.
5. Notebooks: ``import helpers`` (median of 5 fresh processes, measured inside the process; torch
   must not be imported), then every notebook executed headless in a fresh kernel with nbclient, as
   the notebook test does, first with an empty cache (a temporary ``RETRIEVAL_EVAL_CACHE``: the first
   notebook that needs rankings embeds the chunks and ranks every question) and then with that cache
   warm. Per notebook: wall time of the whole execution (kernel start to shutdown: what "Restart
   Kernel and Run All" costs) and the kernel's CPU time (``resource.getrusage`` read by a cell
   appended to the in-memory copy; user + system, all threads).

6. Widgets (``python benchmarks/bench.py widgets``; not part of ``make bench``'s default run, it needs
   /usr/bin/chromium): the browser test's fixture notebook (tests/data/widgets.ipynb, every widget)
   opened in JupyterLab in headless Chromium at 1366×768 (the start-up of tests/test_browser.py, from
   tests/lab.py), all cells run, then each interaction repeated as a class would do it, with keys on
   the focused control or clicks; the ceiling and two-stage figures with the numbers shown, each
   setting met for the first time (a new figure) and again (reused). Latency = from the input event
   (``keydown`` or ``click``, seen by a capturing listener on the page) to the moment the watched part
   of the widget shows the new state and the widget is no longer busy (a MutationObserver), in the
   page's own clock (``performance.now``); median of the repeats after two warm-ups. The load average
   and the number of cores are printed beside the figures: CPU-bound latency moves with the load.

7. A real engine: bm25s (method "lucene", with the series' analyzer: NLTK's English stop words, the
   Snowball English stemmer without PyStemmer's word cache, as ``h.tokenize`` builds it)
   tokenizes and indexes 100,000 synthetic chunks (the generator of section 2) and ranks the top 100
   chunks for 5,000 questions (4 distinct words of one chunk, its only relevant chunk, and one random
   word), on one thread. Its TREC run (bm25s's own scores; results scoring 0 left out, since bm25s pads
   its top k with them) is scored by ``make evaluate-runs`` (the whole target: reading, scores.csv,
   the report notebook and its HTML; reading and scoring are also timed alone, in this process). The
   files go to ``output/bench-engine/``, the report to ``output/bench-engine-report/``.
   Then rank-bm25's BM25Okapi on the same tokens: its index build, and per question scoring every
   chunk and taking the top 100 (``argpartition``) on the first 50 questions, against bm25s on the
   same 50 questions. The load average is printed at the start and the end: the machine is shared.

8. A BEIR folder (issue 23): 1,000 chunks of 100 words of Polder text (overlapping windows, each with its
   document's name as title) and 300 questions (8 consecutive words of a chunk: gain 2 for that chunk,
   gain 1 for every other chunk that holds the same 8 words), written deterministically (seed 0) to a
   temporary folder. Timed with an empty cache: the whole ``make evaluate BEIR=folder`` (reading and checking
   the files, BM25, the bundled embedding model loaded and the 1,000 chunks embedded, vector search,
   hybrid, the report), split where the report folder is claimed; and the reading alone (``load_inputs``).
   Target: within 3 minutes on 2 cores.

9. ``make evaluate`` at scale (``report``): 2,000 synthetic documents of 50–100 English words (the Polder
   corpus's words, Zipf-distributed) and 5,000 questions, generated from the fixed seed into a temporary
   folder; the whole target with an empty cache (``RETRIEVAL_EVAL_CACHE`` and ``RETRIEVAL_EVAL_OUTPUT`` in
   that folder): wall time, split where the report folder is claimed (the terminal part, then the
   report), the peak memory of its largest process, and the cache's size.
   Targets: at most 5 minutes and a cache of at most 50 MB.

10. The second stage (``rerank``): the sentence reranker on hybrid's top 10 of each golden-set question, every
   sentence encoded anew and with its vectors stored; written with the date, the machine and the load to
   ``benchmarks/rerank.json``, which notebook 06 reads (it times nothing slow itself).
11. ``make gate`` (``gate``): section 1's run of 10,000 questions × 100 ranks against a candidate with every tenth
   ranking reversed, as TREC files with their qrels; the whole target timed, from reading the files to the verdict,
   the summary and the JSON (target under 5 s).

11. Labelling (``labels``, issue 37): 10,000 synthetic documents of 60–140 words (the generator of section 2, one
   chunk each) and 20,000 questions, each with one evidence string of 8 consecutive words cut from a random chunk;
   timed: ``label_chunks`` (one pass of the Aho–Corasick automaton over the chunks' normalised text), and the
   process's peak memory (``ru_maxrss``) before and after. Target: under 5 minutes.

12. Memory at scale (``scale``): ``retrieval-eval evaluate-runs`` on two runs of 30,000 and of 100,000 questions × 100
   ranks, and ``retrieval-eval gate`` on two of 1,000,000 (section 1's generator, every tenth ranking reversed), each in
   its own process: its peak resident memory (``ru_maxrss``) and wall time. Targets: under 3, 2 and 8 GiB.

``make bench ONLY="evaluation bm25"`` (or ``python benchmarks/bench.py evaluation bm25``) runs the sections named
(``SECTIONS`` at the end lists them: evaluation, bm25, embeddings, vector-search, notebooks,
engine, beir, report, rerank, widgets, gate, labels, scale). The run ends with one table, the README's Speed table: a row per figure,
with the machine and the 1-minute load average at the section's start and end.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytrec_eval

import helpers as h
from retrieval_eval.core.evaluation import per_question_scores
from retrieval_eval.core.paths import CORPUS_DIR, OUTPUT_DIR, ROOT
from retrieval_eval.inputs.trec import align_run, read_qrels, read_run, write_trec_qrels
from retrieval_eval.retrieval.retrievers import STEMMER, STOP_WORDS, VectorRetriever, stop_word_list

SEED = 0
EVAL_SIZES = ((10_000, 100), (100_000, 100), (1_000_000, 100))  # (questions, ranks)
PEER_MEMORY_GIB, PEER_TIMEOUT_S = 8, 900  # an evaluator past either (above its inputs) did not finish: the row says so
BM25_SIZES, EMBED_CHUNKS, VECTORS = (10_000, 100_000), 1_000, 100_000
REPEATS = 5
BUDGET_MS = 100  # a per-query latency budget for interactive search


def best_of(fn, repeat=None):
    """Fastest wall-clock time of ``repeat`` (default REPEATS) calls, and the last result."""
    times = []
    for _ in range(repeat or REPEATS):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def median_ms(fn, inputs):
    times = []
    for x in inputs:
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


# --- 1. Evaluation -------------------------------------------------------------------------------


def synthetic_evaluation(rng, n_questions, depth):
    """A run of ``depth`` distinct ids per question from a pool of 1,000,000, and qrels with 1–5 relevant ids
    (gain 1–3, about half of them never retrieved) and one judged non-relevant id."""
    run, qrels, names = {}, {}, [f"c{d}" for d in range(1_000_000)]  # one str per id, shared by the rankings
    for i in range(n_questions):
        ids = [names[d] for d in rng.choice(1_000_000, depth + 5, replace=False)]
        ranked, unretrieved = ids[:depth], ids[depth:]
        n_relevant = int(rng.integers(1, 6))
        pool = [ranked[j] for j in rng.choice(depth, n_relevant, replace=False)] + unretrieved
        chosen = rng.choice(len(pool), n_relevant, replace=False)
        gains = {pool[j]: int(rng.integers(1, 4)) for j in chosen}
        gains.setdefault(ranked[int(rng.integers(depth))], 0)
        run[f"q{i:07d}"], qrels[f"q{i:07d}"] = ranked, gains
    return run, qrels


def in_a_child(prepare, fn, repeat):
    """``fn(prepare())`` timed (best of ``repeat``) in a forked process, its input built there before the clock starts,
    with at most PEER_MEMORY_GIB of address space above it and PEER_TIMEOUT_S seconds: (seconds, means, MiB above the
    input) or, when it did not finish, (None, what stopped it, MiB)."""
    import multiprocessing
    import resource

    import psutil

    def child(conn):
        inputs = prepare()
        me = psutil.Process()
        base = me.memory_info().rss
        resource.setrlimit(resource.RLIMIT_AS, (me.memory_info().vms + PEER_MEMORY_GIB * 2**30, resource.RLIM_INFINITY))
        try:
            seconds, result = best_of(lambda: fn(inputs), repeat)
        except MemoryError:
            seconds, result = None, f"out of memory: more than {PEER_MEMORY_GIB} GiB above its input"
        conn.send((seconds, result, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base) / 2**20))

    ends = multiprocessing.get_context("fork").Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=child, args=(ends[1],))
    process.start()
    ends[1].close()
    try:
        answer = ends[0].recv() if ends[0].poll(PEER_TIMEOUT_S) else (None, f"not done in {PEER_TIMEOUT_S} s", 0)
    except EOFError:  # killed, or aborted in C++ when an allocation failed
        answer = None
    process.kill()
    process.join()
    return answer or (None, f"stopped (exit {process.exitcode}) with {PEER_MEMORY_GIB} GiB above its input", 0)


COLUMNS = [("precision", 3), ("recall", 3), ("MRR", 10), ("nDCG", 10)]


def evaluators(run, qrels, depth):
    """{name: (prepare, evaluate)}: ``prepare()`` builds the evaluator's own input format (not timed) and
    ``evaluate(input)`` returns the four means: ours, its floor, and the peers (ranx's Run and Qrels are built inside
    the clock: building them is part of using ranx). ranx and ir_measures come from requirements-bench.txt (`make
    bench` installs it); without them, the peer is pytrec_eval."""
    discount = 1 / np.log2(np.arange(2, 12))

    def scored():
        """The run as pytrec_eval reads it, ``{question: {chunk id: 100 - rank}}`` (no ties), and cut at 10."""
        points = [float(depth - r) for r in range(depth)]  # shared float objects: 1M questions x 100 fit
        return ({q: dict(zip(ranked, points)) for q, ranked in run.items()},
                {q: dict(zip(ranked[:10], points)) for q, ranked in run.items()})

    def floor(_):
        """The least work from string ids to the same means: one dict.get per rank, then numpy."""
        gains = np.array([[judged.get(d, 0) for d in run[q]] for q, judged in qrels.items()], dtype=float)[:, :10]
        ideal = np.zeros_like(gains)
        for row, judged in enumerate(qrels.values()):
            best = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
            ideal[row, : len(best)] = best
        hit, n_relevant = gains > 0, (ideal > 0).sum(axis=1)  # at most 5 relevant: ideal holds them all
        first = np.where(hit.any(axis=1), 1 / (hit.argmax(axis=1) + 1), 0.0)
        ndcg = np.maximum(gains, 0) @ discount / (ideal @ discount)
        return np.array([hit[:, :3].mean(axis=1).mean(), (hit[:, :3].sum(axis=1) / n_relevant).mean(), first.mean(),
                         ndcg.mean()])

    def trec(runs):
        per_q = pytrec_eval.RelevanceEvaluator(qrels, {"P.3", "recall.3", "ndcg_cut.10"}).evaluate(runs[0])
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(runs[1])
        return np.array([[per_q[q]["P_3"], per_q[q]["recall_3"], rr[q]["recip_rank"], per_q[q]["ndcg_cut_10"]]
                         for q in qrels]).mean(axis=0)

    def with_ranx(runs):
        import ranx

        means = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(runs[0]), ["precision@3", "recall@3", "mrr@10", "ndcg@10"])
        return np.array(list(means.values()))

    def with_ir_measures(runs):
        import ir_measures
        from ir_measures import RR, R, nDCG
        from ir_measures import P as Precision

        means = ir_measures.calc_aggregate([Precision @ 3, R @ 3, RR @ 10, nDCG @ 10], qrels, runs[0])
        return np.array([means[Precision @ 3], means[R @ 3], means[RR @ 10], means[nDCG @ 10]])

    found = {"batch evaluator": (lambda: None, lambda _: h.batch_scores(run, qrels, ks=(3, 10))[COLUMNS].mean().to_numpy()),
             "floor": (lambda: None, floor), "pytrec_eval": (scored, trec), "ranx": (scored, with_ranx),
             "ir_measures": (scored, with_ir_measures)}
    return {name: fns for name, fns in found.items() if name not in ("ranx", "ir_measures") or importlib.util.find_spec(name)}


def bench_evaluation():
    """Ours, its floor and the peers side by side at each size, the same four means from each (checked)."""
    rows = []
    for prepare, fn in evaluators(*synthetic_evaluation(np.random.default_rng(SEED), 20, 20), 20).values():
        fn(prepare())  # ranx compiles its kernels (numba) on first use: here, once, before the children inherit them
    for n_questions, depth in EVAL_SIZES:
        run, qrels = synthetic_evaluation(np.random.default_rng(SEED), n_questions, depth)
        repeat = REPEATS if n_questions <= 10_000 else 3 if n_questions <= 100_000 else 1
        results = {name: in_a_child(*fns, repeat) for name, fns in evaluators(run, qrels, depth).items()}
        del run, qrels
        ours = results.pop("batch evaluator")
        if ours[0] is None or results["floor"][0] is None:
            raise SystemExit(f"at {n_questions:,} questions the batch evaluator or its floor did not finish: {ours[1]}")
        print(f"1. Evaluation: {n_questions:,} questions x {depth} ranked ids (precision@3, recall@3, MRR@10, nDCG@10; "
              f"best of {repeat}; load {os.getloadavg()[0]:.1f}); means "
              + ", ".join(f"{m}@{k} {v:.4f}" for (m, k), v in zip(COLUMNS, ours[1])))
        done = {}
        for name, (seconds, means, mib) in {"batch evaluator": ours, **results}.items():
            if seconds is None:
                print(f"   {name:<16} did not finish: {means}")
                continue
            difference = np.abs(means - ours[1]).max()
            if difference > 1e-6:
                raise SystemExit(f"{name} and the batch evaluator disagree by {difference:.2e} at {n_questions:,}")
            done[name] = seconds
            print(f"   {name:<16} {seconds * 1000:9,.0f} ms  peak {mib:7,.0f} MiB above the inputs  (means differ by "
                  f"{difference:.0e})")
        peer = min((name for name in done if name not in ("floor", "batch evaluator")), key=done.get, default=None)
        ratio, to_floor = (ours[0] / done[peer] if peer else 0.0), ours[0] / done["floor"]
        print((f"   ratio to the fastest peer that finished ({peer}) {ratio:.2f} (target <= 0.5: "
               f"{'met' if ratio <= 0.5 else 'MISSED'}); " if peer else "   no peer finished; ")
              + f"to the floor {to_floor:.1f} (target <= 2: {'met' if to_floor <= 2 else 'MISSED'})")
        rows.append((f"{n_questions:,} questions × {depth} ranked ids, four metrics at two cut-offs",
                     f"batch evaluator {ours[0] * 1000:,.0f} ms ({ours[2]:,.0f} MiB), {to_floor:.1f}× its floor; "
                     + ", ".join(f"{name} {t * 1000:,.0f} ms ({m:,.0f} MiB)" if t is not None else f"{name} {why}"
                                 for name, (t, why, m) in results.items() if name != "floor")
                     + (f"; ratio to {peer} {ratio:.2f}; the same means" if peer else "")))
    return rows


# --- 2. BM25 ------------------------------------------------------------------------------------


def synthetic_chunks(rng, n, vocabulary):
    """n chunks of 60–140 words, word i drawn with probability proportional to 1 / (i + 10) (Zipf)."""
    p = 1.0 / (np.arange(len(vocabulary)) + 10)
    lengths = rng.integers(60, 141, size=n)
    words = rng.choice(len(vocabulary), size=lengths.sum(), p=p / p.sum())
    ends = np.cumsum(lengths)
    return [
        {"id": f"s{i:06d}", "text": " ".join(vocabulary[w] for w in words[end - length : end])}
        for i, (end, length) in enumerate(zip(ends, lengths))
    ]


def synthetic_vocabulary(rng):
    """50,000 distinct random letter strings of 3–9 letters, in random order (word 0 is the most frequent)."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocabulary = sorted({"".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(60_000)})[:50_000]
    return [vocabulary[i] for i in rng.permutation(len(vocabulary))]


def bench_bm25():
    rng = np.random.default_rng(SEED)
    vocabulary = synthetic_vocabulary(rng)
    chunks = synthetic_chunks(rng, BM25_SIZES[-1], vocabulary)
    queries = [" ".join(rng.choice(vocabulary[100:5_000], 4)) for _ in range(20)]
    print("2. BM25 (rank-bm25 BM25Okapi through h.BM25Retriever), synthetic chunks of 60-140 words")
    rows = []
    for n in BM25_SIZES:
        t_build, bm25 = best_of(lambda n=n: h.BM25Retriever(chunks[:n]), repeat=1)
        score_ms = median_ms(bm25.scores, queries)
        rank_ms = median_ms(bm25.rank, queries)
        MEASURED[f"bm25 {n}"] = rank_ms
        rows.append((f"BM25 (rank-bm25), {n:,} synthetic chunks", f"index build {t_build:.1f} s; ranking every chunk "
                     f"{rank_ms:.1f} ms per query (median of {len(queries)})"))
        print(f"   {n:>7,} chunks: index build {t_build:5.1f} s; per query: score all {score_ms:6.1f} ms, "
              f"rank all {rank_ms:6.1f} ms (median of {len(queries)})")
        del bm25
    return rows


# --- 3. Embeddings ------------------------------------------------------------------------------


def bench_embeddings():
    n = EMBED_CHUNKS
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar each time the model loads
    words = " ".join(h.load_corpus().values()).split()
    stride = max(1, (len(words) - 100) // n)
    texts = [" ".join(words[i : i + 100]) for i in range(0, stride * n, stride)][:n]
    assert len(set(texts)) == n
    chunks = [{"id": f"e{i:04d}", "text": t} for i, t in enumerate(texts)]
    questions = list(h.read_golden_csv()["question"][:20])
    print(f"3. Embeddings, bundled all-MiniLM-L6-v2, {n:,} chunks of 100 words of Polder text")
    with tempfile.TemporaryDirectory() as cache:
        t_empty, vector = best_of(lambda: VectorRetriever(chunks, cache_dir=cache), repeat=1)
        t_filled, _ = best_of(lambda: VectorRetriever(chunks, cache_dir=cache), repeat=1)
    query_ms = median_ms(vector.scores, questions)
    throughput = n / (t_empty - t_filled)
    print(f"   VectorRetriever with an empty cache {t_empty:5.1f} s, with the cache filled {t_filled:4.1f} s "
          "(model loading included in both)")
    print(f"   throughput {throughput:5.1f} chunks/s ({n:,} / the difference: embedding and writing the cache)")
    print(f"   one question embedded and scored against the {n:,} chunks: {query_ms:.1f} ms (median of 20)")
    MEASURED.update(throughput=throughput, query_ms=query_ms)
    return [(f"embedding {n:,} chunks of 100 words (bundled all-MiniLM-L6-v2)", f"{throughput:.0f} chunks/s; one "
             f"question embedded and scored {query_ms:.0f} ms")]


# --- 4. Exact vector search ---------------------------------------------------------------------


def bench_vector_search():
    rng, n, dim = np.random.default_rng(SEED), VECTORS, 384
    embeddings = rng.standard_normal((n, dim), dtype=np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    queries = rng.standard_normal((100, dim), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    def search(q):
        scores = embeddings @ q
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top], kind="stable")]

    search_ms = median_ms(search, queries)
    print(f"4. Exact vector search, {n:,} normalised {dim}-d float32 vectors ({embeddings.nbytes / 2**20:.0f} MiB)")
    print(f"   one query, cosine with every vector and its top 10: {search_ms:.1f} ms (median of {len(queries)})")
    MEASURED["search_ms"] = search_ms
    return [(f"exact vector search, {n:,} vectors of 384 dimensions", f"{search_ms:.1f} ms per query with its top 10")]


# --- 7. A real engine: bm25s at 100,000 chunks, scored with `make evaluate-runs` -----------------

ENGINE_CHUNKS, ENGINE_QUESTIONS, ENGINE_DEPTH, ENGINE_K1, ENGINE_B = 100_000, 5_000, 100, 1.5, 0.75
RANK_BM25_QUESTIONS = 50  # rank-bm25 scores every chunk in Python: a sample of the questions is enough
ENGINE_DIR = OUTPUT_DIR / "bench-engine"  # the run and qrels files (the report goes to a temporary folder)


def synthetic_questions(rng, chunks, vocabulary, n):
    """``{qid: text}`` and qrels ``{qid: {chunk id: 1}}``: 4 distinct words of a random chunk (its only relevant
    chunk) and one random word of the vocabulary."""
    questions, qrels = {}, {}
    for i, c in enumerate(rng.choice(len(chunks), size=n, replace=False)):
        words = sorted(set(chunks[c]["text"].split()))
        chosen = [*rng.choice(words, size=4, replace=False), vocabulary[rng.integers(len(vocabulary))]]
        questions[f"q{i:05d}"], qrels[f"q{i:05d}"] = " ".join(chosen), {chunks[c]["id"]: 1}
    return questions, qrels


def write_engine_run(path, qids, chunk_ids, docs, scores, tag):
    """A TREC run with the engine's own scores; results scoring 0 are left out (bm25s pads its top k with them
    when fewer chunks match). Returns how many were left out."""
    left_out = 0
    with open(path, "w", encoding="utf-8") as f:
        for qid, row, row_scores in zip(qids, docs, scores):
            rank = 0
            for d, score in zip(row, row_scores):
                if score <= 0:
                    left_out += 1
                    continue
                rank += 1
                f.write(f"{qid} Q0 {chunk_ids[d]} {rank} {float(score)!r} {tag}\n")
    return left_out


def bench_engine():
    """bm25s indexes 100,000 synthetic chunks and ranks 5,000 questions; `make evaluate-runs` scores its TREC run;
    rank-bm25's BM25Okapi on the same tokens for comparison. Times are single wall-clock runs."""
    import bm25s
    import Stemmer
    from rank_bm25 import BM25Okapi

    rng = np.random.default_rng(SEED)  # its own generator: the same data whichever sections run
    load = os.getloadavg()
    vocabulary = synthetic_vocabulary(rng)
    chunks = synthetic_chunks(rng, ENGINE_CHUNKS, vocabulary)
    questions, qrels = synthetic_questions(rng, chunks, vocabulary, ENGINE_QUESTIONS)
    qids, ids = list(questions), [c["id"] for c in chunks]
    print(f"6. A real engine: bm25s {bm25s.__version__} (method \"lucene\", k1 {ENGINE_K1}, b {ENGINE_B}; the series' "
          f"analyzer: NLTK's English stop words, Snowball stemmer without its word cache), {ENGINE_CHUNKS:,} synthetic "
          f"chunks, {ENGINE_QUESTIONS:,} questions "
          f"of 5 words (4 from the one relevant chunk); {os.cpu_count()} cores, no GPU; load average "
          f"{load[0]:.1f} at the start")
    # The series' analyzer (h.tokenize): NLTK's stop words, and the Snowball stemmer without PyStemmer's word cache,
    # which thrashes on this vocabulary (retrievers._stemmer says by how much).
    stemmer, stop_words = Stemmer.Stemmer(STEMMER), sorted(stop_word_list(STOP_WORDS))
    stemmer.maxCacheSize = 0
    t_tokens, tokens = best_of(lambda: bm25s.tokenize([c["text"] for c in chunks], stopwords=stop_words, stemmer=stemmer,
                                                       show_progress=False), repeat=1)
    engine = bm25s.BM25(k1=ENGINE_K1, b=ENGINE_B)
    t_index, _ = best_of(lambda: engine.index(tokens, show_progress=False), repeat=1)
    query_tokens = bm25s.tokenize([questions[q] for q in qids], stopwords=stop_words, stemmer=stemmer, return_ids=False,
                                  show_progress=False)
    t_retrieve, (docs, scores) = best_of(lambda: engine.retrieve(query_tokens, k=ENGINE_DEPTH, n_threads=1,
                                                                 show_progress=False), repeat=1)
    ENGINE_DIR.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = ENGINE_DIR / "run.bm25s.trec", ENGINE_DIR / "qrels.txt"
    left_out = write_engine_run(run_path, qids, ids, docs, scores, "bm25s")
    write_trec_qrels(qrels, qrels_path)
    print(f"   bm25s: tokenize {t_tokens:.1f} s, index {t_index:.1f} s; top {ENGINE_DEPTH} of {len(qids):,} questions "
          f"(1 thread) {t_retrieve:.1f} s = {len(qids) / t_retrieve:,.0f} questions/s; run file "
          f"{run_path.stat().st_size / 2**20:.1f} MiB, {left_out:,} zero-score results left out")

    t_read, loaded = best_of(lambda: _loaded(run_path, qrels_path), repeat=1)
    t_score, table = best_of(lambda: per_question_scores(*loaded, ks=[10]), repeat=1)
    with tempfile.TemporaryDirectory() as output:
        start = time.perf_counter()
        make("evaluate-runs", f"QRELS={qrels_path}", f"RUNS={shlex.quote(str(run_path))}", output=output)
        t_make = time.perf_counter() - start
    means = table.groupby(["metric", "k"])["value"].mean()
    print(f"   make evaluate-runs: {t_make:.1f} s in all (read and match {t_read:.1f} s, score {t_score:.1f} s, the rest "
          f"the report notebook and its HTML); recall@10 {means['recall', 10]:.4f}, MRR@10 "
          f"{means['MRR', 10]:.4f}, nDCG@10 {means['nDCG', 10]:.4f}")

    sample = query_tokens[:RANK_BM25_QUESTIONS]
    token_strings = {i: t for t, i in tokens.vocab.items()}
    t_okapi_index, okapi = best_of(lambda: BM25Okapi([[token_strings[i] for i in doc] for doc in tokens.ids],
                                                     k1=ENGINE_K1, b=ENGINE_B), repeat=1)

    def okapi_top(query):
        values = okapi.get_scores(query)
        top = np.argpartition(-values, ENGINE_DEPTH)[:ENGINE_DEPTH]
        return top[np.argsort(-values[top], kind="stable")]

    t_okapi, _ = best_of(lambda: [okapi_top(q) for q in sample], repeat=1)
    t_sample, _ = best_of(lambda: engine.retrieve(sample, k=ENGINE_DEPTH, n_threads=1, show_progress=False), repeat=1)
    per_okapi, per_engine = 1000 * t_okapi / len(sample), 1000 * t_sample / len(sample)
    print(f"   rank-bm25 BM25Okapi on the same tokens: index {t_okapi_index:.1f} s; per question (score every chunk, "
          f"top {ENGINE_DEPTH}, {len(sample)} questions) {per_okapi:.0f} ms against bm25s {per_engine:.1f} ms: "
          f"bm25s is {per_okapi / per_engine:.0f}x faster; load average {os.getloadavg()[0]:.1f} at the end")
    return [(f"bm25s, {ENGINE_CHUNKS:,} chunks, top {ENGINE_DEPTH} of {len(qids):,} questions, then `make evaluate-runs`",
             f"index {t_tokens + t_index:.1f} s, {len(qids) / t_retrieve:,.0f} questions/s (1 thread); make evaluate-runs "
             f"{t_make:.1f} s; bm25s {per_okapi / per_engine:.0f}× rank-bm25 per question")]


def _loaded(run_path, qrels_path):
    """The run read and matched to the qrels, as ``make evaluate-runs`` does: ({name: rankings}, qrels)."""
    qrels = read_qrels(qrels_path)
    rankings, coverage = align_run(read_run(run_path), qrels)
    return {"bm25s": rankings}, {q: qrels[q] for q in coverage.scored}


def make(target, *assignments, output, cache=None, env=None):
    """`make TARGET ...` with the reports in ``output`` (and the cache in ``cache``), this environment's venv
    taken as installed (never time a re-install); returns the finished process (check=True)."""
    venv = Path(sys.prefix)
    env = {**os.environ, "RETRIEVAL_EVAL_OUTPUT": str(output), "PWD": str(ROOT), **(env or {}),
           **({"RETRIEVAL_EVAL_CACHE": str(cache)} if cache else {})}
    return subprocess.run(["make", "--no-print-directory", f"VENV={venv}", "-o", f"{venv}/.installed", target, *assignments],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True)


# --- 9. make evaluate at scale -------------------------------------------------------------------------

SCALE_DOCS, SCALE_QUESTIONS = 2_000, 5_000
SCALE_TARGET_S, SCALE_TARGET_MB = 300, 50  # cold, on our 2-core machine; the rankings and embeddings cache


def synthetic_golden_set(rng, folder: Path) -> tuple[Path, Path]:
    """``SCALE_DOCS`` documents of 50–100 English words (Zipf-distributed) in ``folder/corpus`` and
    ``SCALE_QUESTIONS`` questions in ``folder/golden.csv``: each with an evidence string of 8 consecutive words
    among the first 30 of a random document (no chunk boundary cuts it) and a question of 4 of those words
    and one random word; the slices "exact" and "mixed" alternate."""
    import re

    # English words (those of the Polder corpus), so that a word is one or two word pieces as in real text.
    words = sorted({w.lower() for path in sorted(CORPUS_DIR.rglob("*.md")) for w in re.findall(r"[A-Za-z]{2,}", path.read_text())})
    vocabulary = [words[i] for i in rng.permutation(len(words))]
    p = 1.0 / (np.arange(len(vocabulary)) + 10)
    docs = [[vocabulary[w] for w in rng.choice(len(vocabulary), size=n, p=p / p.sum())]
            for n in rng.integers(50, 101, size=SCALE_DOCS)]
    (folder / "corpus").mkdir(parents=True)
    for i, words in enumerate(docs):
        (folder / "corpus" / f"doc{i:05d}.md").write_text(" ".join(words) + "\n", encoding="utf-8")
    rows = []
    for q, d in enumerate(rng.integers(0, SCALE_DOCS, size=SCALE_QUESTIONS)):
        start = int(rng.integers(0, 22))
        evidence = docs[d][start:start + 8]
        asked = [*rng.choice(evidence, size=4, replace=False), vocabulary[rng.integers(len(vocabulary))]]
        rows.append((f"q{q:05d}", "what about " + " ".join(asked) + "?", " ".join(evidence), ("exact", "mixed")[q % 2]))
    import pandas as pd

    pd.DataFrame(rows, columns=["id", "question", "evidence", "slice"]).to_csv(folder / "golden.csv", index=False)
    return folder / "corpus", folder / "golden.csv"


def time_make_evaluate(tmp: Path, *parameters: str) -> tuple[float, float, int]:
    """``make evaluate`` with ``parameters``, output and cache under ``tmp``: wall seconds in all, seconds until the
    report folder is claimed (the terminal part), and the peak memory (KiB) of its largest process."""
    # A fresh process runs make: its children's peak memory is this target's alone.
    watcher = ("import resource, subprocess, sys, time\nstart = time.perf_counter()\n"
               "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)\n"
               "split = [time.perf_counter() - start for line in p.stdout if line.startswith('Report folder')]\n"
               "assert p.wait() == 0\nprint(split[0], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    venv = Path(sys.prefix)
    command = ["make", "--no-print-directory", f"VENV={venv}", "-o", f"{venv}/.installed", "evaluate", *parameters]
    env = {**os.environ, "RETRIEVAL_EVAL_OUTPUT": str(tmp / "output"), "RETRIEVAL_EVAL_CACHE": str(tmp / "cache"),
           "PWD": str(ROOT)}
    start = time.perf_counter()
    terminal, peak_kib = subprocess.run([sys.executable, "-c", watcher, *command], cwd=ROOT, env=env, check=True,
                                        capture_output=True, text=True).stdout.split()
    return time.perf_counter() - start, float(terminal), int(peak_kib)


def bench_report():
    """`make evaluate` on the synthetic set, cold (empty cache): the whole target's time, the peak memory of
    its largest process and the cache's size."""
    rng = np.random.default_rng(SEED)  # its own generator: the same data whichever sections run
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus, golden = synthetic_golden_set(rng, tmp / "set")
        seconds, terminal, peak_kib = time_make_evaluate(tmp, f"CORPUS={corpus}", f"GOLDEN={golden}", "REPORT=scale")
        cache_mib = sum(f.stat().st_size for f in (tmp / "cache").rglob("*") if f.is_file()) / 2**20
        report_mib = sum(f.stat().st_size for f in (tmp / "output" / "scale").iterdir()) / 2**20
    print(f"9. make evaluate at scale: {SCALE_DOCS:,} documents, {SCALE_QUESTIONS:,} questions, cold cache; {os.cpu_count()} "
          f"cores, no GPU; load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"   {seconds:.0f} s in all (target <= {SCALE_TARGET_S} s: {'met' if seconds <= SCALE_TARGET_S else 'MISSED'}); "
          f"the terminal part {terminal:.0f} s, the report {seconds - terminal:.0f} s; peak memory {peak_kib / 1024:.0f} MiB (the largest process); cache {cache_mib:.1f} MiB (target <= "
          f"{SCALE_TARGET_MB} MB: {'met' if cache_mib * 2**20 <= SCALE_TARGET_MB * 1e6 else 'MISSED'}); report folder "
          f"{report_mib:.0f} MiB")
    return [(f"`make evaluate`, {SCALE_DOCS:,} documents, {SCALE_QUESTIONS:,} questions, empty cache",
             f"{seconds:.0f} s in all (target 5 minutes): {terminal:.0f} s until the report, {seconds - terminal:.0f} s "
             f"the report; peak {peak_kib / 1024:.0f} MiB; cache {cache_mib:.1f} MiB")]


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOTEBOOK_COUNT = len(NOTEBOOKS)
IMPORT_TARGET_S, TOTAL_CPU_TARGET_S = 1.0, 40.0

IMPORT_REPEATS = 5
IMPORT = """
import sys, time
start = time.perf_counter()
import helpers
print(time.perf_counter() - start, "torch" in sys.modules)
"""

RUN_NOTEBOOK = """
import json, sys, time
import nbformat
from nbclient import NotebookClient

path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(
    "import resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF); print(_u.ru_utime + _u.ru_stime)"))
start = time.perf_counter()
NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "cpu": float(nb.cells[-1].outputs[0]["text"])}))
"""


def run_notebooks(cache: Path) -> dict:
    """``{notebook name: (wall s, kernel CPU s)}``, each executed in a fresh kernel with ``cache`` as the cache."""
    env = {**os.environ, "RETRIEVAL_EVAL_CACHE": str(cache)}
    times = {}
    for path in NOTEBOOKS[:NOTEBOOK_COUNT]:
        out = subprocess.run([sys.executable, "-c", RUN_NOTEBOOK, str(path), str(path.parent)], env=env,
                             capture_output=True, text=True, check=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        times[path.stem] = (result["wall"], result["cpu"])
    return times


def bench_notebooks():
    imports = [subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, check=True).stdout.split()
               for _ in range(IMPORT_REPEATS)]
    import_s = statistics.median(float(seconds) for seconds, _ in imports)
    torch = any(flag == "True" for _, flag in imports)
    print(f"5. Notebooks. `import helpers`: {import_s:.2f} s (median of {IMPORT_REPEATS} fresh processes; target <= "
          f"{IMPORT_TARGET_S} s: {'met' if import_s <= IMPORT_TARGET_S else 'MISSED'}); torch imported: {torch}")
    with tempfile.TemporaryDirectory() as cache:
        cold = run_notebooks(Path(cache))
        warm = run_notebooks(Path(cache))
    print(f"   {'notebook':<28} {'cold wall':>9} {'cold CPU':>9} {'warm wall':>9} {'warm CPU':>9}  (seconds)")
    for name in cold:
        print(f"   {name:<28} {cold[name][0]:9.1f} {cold[name][1]:9.1f} {warm[name][0]:9.1f} {warm[name][1]:9.1f}")
    # The target was set for the nine notebooks 00-08 of the series then; 09 and 10 came later.
    first_nine = [name for name in cold if name[:2].isdigit() and int(name[:2]) <= 8]
    rows = {"00-08 (target's nine)": first_nine, f"all {len(cold)}": list(cold)}
    totals = {label: [sum(run[name][i] for name in names) for run in (cold, warm) for i in (0, 1)]
              for label, names in rows.items()}
    for label, total in totals.items():
        print(f"   {label:<28} {total[0]:9.1f} {total[1]:9.1f} {total[2]:9.1f} {total[3]:9.1f}")
    nine = totals["00-08 (target's nine)"][3]
    print(f"   warm cache: kernel CPU {nine:.1f} s for 00-08 (target <= {TOTAL_CPU_TARGET_S:.0f} s: "
          f"{'met' if nine <= TOTAL_CPU_TARGET_S else 'MISSED'})")
    slowest = max(cold, key=lambda name: cold[name][1])
    return [(f"`import helpers`; {len(cold)} notebooks executed headless, empty cache then warm",
             f"import {import_s:.2f} s; kernel CPU {totals[f'all {len(cold)}'][1]:.0f} s cold, "
             f"{totals[f'all {len(cold)}'][3]:.0f} s warm; slowest cold {slowest} {cold[slowest][1]:.0f} s")]


# --- 6. Widgets in the browser -------------------------------------------------------------------

WIDGET_TARGETS_MS = {"playground": 100, "ceiling": 300, "ranks": 300}  # issue 14, median per interaction
CEILING_FIRST_DRAW_MS = 150  # issue 22, item 7: median first draw of a ceiling setting, idle machine
WIDGET_REPEATS = 15
WIDGET_FIXTURE = ROOT / "tests" / "data" / "widgets.ipynb"  # every widget, as the browser test opens it

ARM = """([root, watch]) => {
  const r = document.querySelector(root), w = document.querySelector(watch);
  const state = () => (w.tagName === 'IMG' ? w.src : w.innerHTML);
  const m = {t0: null, t1: null, before: state()};
  window.__latency = m;
  const start = () => { if (m.t0 === null) m.t0 = performance.now(); };
  document.addEventListener('keydown', start, {capture: true, once: true});
  document.addEventListener('click', start, {capture: true, once: true});
  const check = () => {
    if (m.t0 !== null && m.t1 === null && state() !== m.before && !r.classList.contains('rw-busy')) {
      m.t1 = performance.now(); observer.disconnect();
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(r, {subtree: true, childList: true, attributes: true, characterData: true});
}"""


def _latency_ms(page, root: str, watch: str, act) -> float:
    """Milliseconds from the input event that ``act()`` causes to the updated, no longer busy widget."""
    page.evaluate(ARM, [root, watch])
    act()
    page.wait_for_function("() => window.__latency.t1 !== null", timeout=30_000)
    return page.evaluate("() => window.__latency.t1 - window.__latency.t0")


def _median_latency(page, root: str, watch: str, acts, warm_up: int = 2) -> tuple[float, int]:
    """Median latency of ``acts`` (callables, one interaction each) after ``warm_up`` of them; and the count."""
    times = [_latency_ms(page, root, watch, act) for act in acts]
    measured = times[warm_up:]
    return statistics.median(measured), len(measured)


def _key(page, selector: str, key: str):
    def act():
        page.locator(selector).first.focus()
        page.keyboard.press(key)
    return act


def _bounce(start: int, low: int, high: int, n: int, keys=("ArrowLeft", "ArrowRight")) -> list[str]:
    """n keys that move a control from ``start`` between ``low`` and ``high`` and back: every key changes it."""
    position, step, out = start, 1, []
    for _ in range(n):
        if not low <= position + step <= high:
            step = -step
        position += step
        out.append(keys[1] if step > 0 else keys[0])
    return out


def bench_widgets():
    sys.path.insert(0, str(ROOT / "tests"))
    import lab  # tests/lab.py: the browser test's JupyterLab and Chromium start-up

    if not lab.CHROMIUM.exists():
        raise SystemExit(f"6. Widgets: needs {lab.CHROMIUM} (Debian's chromium package)")
    setup = h.evaluation_setup()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, \
            lab.jupyterlab(Path(tmp), [WIDGET_FIXTURE]) as (base, token), lab.chromium() as browser:
        page = lab.new_page(browser, 1366, 768)
        lab.open_and_run(page, base, token, WIDGET_FIXTURE.name, [".depth-widget"])
        n = WIDGET_REPEATS + 2

        def measure(widget, what, root, watch, acts, warm_up=2):
            lab.show_at_top(page, root)
            median, count = _median_latency(page, root, watch, acts, warm_up)
            rows.append((widget, what, median, count))

        def keys(selector, sequence):
            return [_key(page, selector, key) for key in sequence]

        def reveal(root):
            lab.show_at_top(page, root)
            page.locator(f"{root} .rw-reveal").first.click()
            page.wait_for_timeout(1500)

        reveal(".playground-widget")  # numbers shown: the table changes with every click
        measure("playground", "click a result (its gain cycles)", ".playground-widget", ".playground-scores",
                [lambda i=i: page.locator(f".playground-rank-{1 + i % 10}").first.click() for i in range(n)])
        measure("playground", "cut-off k, arrow key on the slider", ".playground-widget", ".playground-scores",
                keys(".playground-k .noUi-handle", _bounce(5, 1, 10, n)))

        # The ceiling figure is drawn once per setting and then reused: with the numbers shown, sweeping k
        # from 1 to 10 for each retriever meets every setting for the first time (hidden, the figure
        # depends on k only); sweeping again meets each a second time.
        reveal(".ceiling-widget")
        page.locator(".ceiling-k .noUi-handle").first.focus()
        page.keyboard.press("Home")  # k = 1
        page.wait_for_timeout(1500)
        first_visits, k = [], 1
        for retriever in range(len(setup.runs)):
            if retriever:
                _latency_ms(page, ".ceiling-widget", ".ceiling-sentence",
                            _key(page, ".ceiling-retriever button.mod-active", "ArrowRight"))
            sweep = _bounce(k, 1, 10, 9)  # 1 → 10, or 10 → 1
            k = 11 - k
            first_visits.append(_median_latency(page, ".ceiling-widget", ".ceiling-sentence",
                                                keys(".ceiling-k .noUi-handle", sweep), warm_up=0))
        rows.append(("ceiling", "cut-off k, arrow key, numbers shown, a setting drawn for the first time",
                     statistics.median(m for m, _ in first_visits), sum(c for _, c in first_visits)))
        measure("ceiling", "cut-off k, arrow key, a setting seen before", ".ceiling-widget", ".ceiling-sentence",
                keys(".ceiling-k .noUi-handle", _bounce(k, 1, 10, n)))
        measure("ceiling", "show / hide the numbers", ".ceiling-widget", ".ceiling-sentence",
                [lambda: page.locator(".ceiling-widget .rw-reveal").first.click() for _ in range(n)])

        ids = list(setup.golden["id"])
        start = ids.index(page.locator(".ranks-question select").first.input_value().split(" · ")[0])
        measure("ranks", "question, arrow key in the list", ".ranks-widget", ".ranks-head",
                keys(".ranks-question select", _bounce(start, 0, len(ids) - 1, n, ("ArrowUp", "ArrowDown"))))
        reveal(".ranks-widget")
        measure("ranks", "cut-off k, arrow key on the slider, numbers shown", ".ranks-widget", ".ranks-heatmap",
                keys(".ranks-k .noUi-handle", _bounce(3, 1, 10, n)))
        search = page.locator(".ranks-search input").first
        times = []
        for word in ["frost", "battery", "theft", "invoice", "student", "frost", "warranty", "battery"]:
            search.fill("")
            page.wait_for_timeout(800)
            search.press_sequentially(word[:-1], delay=80)
            page.evaluate(ARM, [".ranks-widget", ".ranks-matches"])  # "n of 47 match"
            search.press(word[-1])  # timed from the last key
            page.wait_for_function("() => window.__latency.t1 !== null", timeout=30_000)
            times.append(page.evaluate("() => window.__latency.t1 - window.__latency.t0"))
        rows.append(("ranks", "search, from the last key (includes the 0.3 s pause it waits for)",
                     statistics.median(times[2:]), len(times) - 2))
        search.fill("")
        page.wait_for_timeout(800)

        reveal(".rrf-widget")
        measure("RRF explainer", "RRF constant, arrow key on the slider", ".rrf-widget", ".rrf-fused",
                keys(".rrf-k .noUi-handle", _bounce(60, 0, 100, n)))
        start = ids.index(page.locator(".rrf-question select").first.input_value().split(" · ")[0])
        measure("RRF explainer", "question, arrow key in the list", ".rrf-widget", ".rrf-sentence",
                keys(".rrf-question select", _bounce(start, 0, len(ids) - 1, n, ("ArrowUp", "ArrowDown"))))

        reveal(".depth-widget")  # each (first stage, N) once: every step a first draw
        first_visits = [_median_latency(page, ".depth-widget", ".depth-sentence",
                                        keys(".depth-n .noUi-handle", ["Home", "ArrowRight", "ArrowRight", "ArrowRight"]),
                                        warm_up=0)]
        for _ in range(len(setup.runs) - 1):
            _latency_ms(page, ".depth-widget", ".depth-sentence", _key(page, ".depth-stage button.mod-active", "ArrowLeft"))
            first_visits.append(_median_latency(page, ".depth-widget", ".depth-sentence",
                                                keys(".depth-n .noUi-handle", ["Home", "ArrowRight", "ArrowRight"]),
                                                warm_up=0))
        rows.append(("two-stage", "N, arrow key, numbers shown, a setting drawn for the first time",
                     statistics.median(m for m, _ in first_visits), sum(c for _, c in first_visits)))
    load_after = os.getloadavg()
    print(f"6. Widgets in JupyterLab, headless Chromium, 1366x768; {os.cpu_count()} cores, load average "
          f"(1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"   {'widget':<14} {'interaction':<72} {'median':>8} {'n':>3}")
    for widget, what, median, count in rows:
        print(f"   {widget:<14} {what:<72} {median:6.0f} ms {count:>3}")
    for widget, target in WIDGET_TARGETS_MS.items():
        medians = [m for wd, what, m, _ in rows if wd == widget and "search" not in what]
        worst = max(medians)
        print(f"   {widget}: slowest median {worst:.0f} ms (target <= {target} ms: {'met' if worst <= target else 'MISSED'})")
    first = next(m for wd, what, m, _ in rows if wd == "ceiling" and "first time" in what)
    print(f"   ceiling, first draw of a setting: {first:.0f} ms (target <= {CEILING_FIRST_DRAW_MS} ms on an idle machine: "
          f"{'met' if first <= CEILING_FIRST_DRAW_MS else 'MISSED'})")
    return [("the widgets in JupyterLab in headless Chromium, 1366×768", f"median per interaction "
             f"{min(m for *_, m, _ in rows):.0f}–{max(m for wd, what, m, _ in rows if 'search' not in what):.0f} ms; the "
             f"ceiling widget's first draw of a setting {first:.0f} ms (target {CEILING_FIRST_DRAW_MS} ms)")]


# --- 8. A BEIR folder through make evaluate ------------------------------------------------------

BEIR_CHUNKS, BEIR_QUESTIONS, BEIR_TARGET_S = 1_000, 300, 180


def write_beir_folder(folder: Path, seed: int = SEED) -> Path:
    """A BEIR folder of BEIR_CHUNKS chunks (100-word windows of the Polder documents, titled by document) and
    BEIR_QUESTIONS questions (8 consecutive words of a chunk: gain 2; any other chunk holding them: gain 1)."""
    rng = np.random.default_rng(seed)
    windows = [(doc, " ".join(words[i : i + 100])) for doc, text in h.load_corpus().items()
               for words in [text.split()] for i in range(0, max(1, len(words) - 100), 8)]
    picked = sorted(rng.choice(len(windows), BEIR_CHUNKS, replace=len(windows) < BEIR_CHUNKS))
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for i, w in enumerate(picked):
            f.write(json.dumps({"_id": f"c{i:04d}", "title": windows[w][0].replace("_", " "), "text": windows[w][1]}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as q, open(folder / "qrels" / "test.tsv", "w") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        spans = {}  # distinct questions: a window drawn twice (or a repeated phrase) would repeat one
        for i in rng.permutation(BEIR_CHUNKS):
            words = windows[picked[i]][1].split()
            start = int(rng.integers(0, len(words) - 8))
            span = " ".join(words[start : start + 8])
            spans.setdefault(h.normalise(span), (span, i))
        for n, (span, i) in enumerate(list(spans.values())[:BEIR_QUESTIONS]):
            q.write(json.dumps({"_id": f"q{n:03d}", "text": span + "?"}) + "\n")
            r.write("".join(f"q{n:03d}\tc{j:04d}\t{2 if j == i else 1}\n" for j, w in enumerate(picked) if span in windows[w][1]))
    return folder


def bench_beir():
    from retrieval_eval.retrieval.setup import load_inputs

    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = write_beir_folder(tmp / "beir")
        t_read, inputs = best_of(lambda: load_inputs(golden=folder), repeat=1)
        seconds, terminal, peak_kib = time_make_evaluate(tmp, f"BEIR={folder}", "REPORT=beir")
        scores = pd.read_csv(tmp / "output" / "beir" / "scores.csv")
    means = scores[scores["k"] == 3].groupby(["run", "metric"], sort=False)["value"].mean().unstack()
    sizes = pd.Series([len(g) for g in inputs.qrels.values()])
    print(f"8. make evaluate BEIR=... on {len(inputs.chunks):,} chunks and {len(inputs.golden)} questions (relevant "
          f"chunks per question: median {sizes.median():.0f}, most {sizes.max()}), empty cache; {os.cpu_count()} cores; "
          f"load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"   {seconds:.0f} s in all (target <= {BEIR_TARGET_S} s: {'met' if seconds <= BEIR_TARGET_S else 'MISSED'}): the "
          f"terminal part {terminal:.0f} s (reading and checking the folder alone {t_read:.1f} s), the report "
          f"{seconds - terminal:.0f} s; peak memory {peak_kib / 1024:.0f} MiB")
    print("   means at k = 3: " + "; ".join(f"{run} " + ", ".join(f"{m} {v:.3f}" for m, v in row.items())
                                           for run, row in means.iterrows()))
    return [(f"`make evaluate BEIR=...`, {len(inputs.chunks):,} chunks, {len(inputs.golden)} questions (up to "
             f"{sizes.max()} relevant chunks each), empty cache", f"{seconds:.0f} s in all (target 3 minutes): "
             f"{terminal:.0f} s until the report, {seconds - terminal:.0f} s the report; peak {peak_kib / 1024:.0f} MiB")]


# --- 10. The built-in second stage ----------------------------------------------------------------------


def bench_rerank():
    """The median time the sentence reranker adds per question at N = 10 on the teaching set (hybrid's top 10):
    every sentence encoded anew (as a cross-encoder reads every pair; each question once, after a warm-up), and with
    its sentence vectors stored. Written, dated and with the machine, to benchmarks/rerank.json: notebook 06 reads it."""
    from retrieval_eval.course.teaching import machine
    from retrieval_eval.retrieval.rerank import SentenceReranker, seconds_per_question

    setup = h.evaluation_setup()
    texts, questions = {c["id"]: c["text"] for c in setup.chunks}, dict(zip(setup.golden["id"], setup.golden["question"]))
    reranker, run = SentenceReranker(), dict(list(setup.runs["hybrid"].items())[:RERANK_QUESTIONS])
    load = os.getloadavg()[0]
    print(f"10. second stage (load average {load:.1f}): the sentence reranker on hybrid's top 10, {len(run)} questions")
    medians = {}
    for fresh, name in ((True, "every sentence encoded anew"), (False, "sentence vectors stored")):
        seconds = seconds_per_question(reranker, run, texts, questions, depth=10, fresh=fresh, repeat=1 if fresh else 3)
        medians[name] = round(seconds.median() * 1000, 1)
        print(f"   {name}: median {seconds.median() * 1000:.0f} ms per question (from {seconds.min() * 1000:.0f} to "
              f"{seconds.max() * 1000:.0f} ms)")
    record = {"measured": time.strftime("%Y-%m-%d", time.gmtime()), "machine": machine(),
              "load average": round(max(load, os.getloadavg()[0]), 1), "questions": len(run), "depth": 10,
              "ms per question": medians}
    if WRITE_RECORDS:
        (ROOT / "benchmarks" / "rerank.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    encoded, stored = medians.values()
    return [("the built-in reranker on hybrid's top 10, per question", f"median {encoded:,.0f} ms, every sentence "
             f"encoded anew (as a cross-encoder reads every pair); {stored:,.0f} ms with the sentence vectors stored")]


# --- 11. make gate at scale ----------------------------------------------------------------------------

GATE_TARGET_S = 5  # `make gate` on GATE_SIZE (questions, ranks), the whole target (issue 31)
GATE_SIZE = (10_000, 100)


def bench_gate():
    """`make gate` as CI runs it (its own process, from the TREC files to the verdict and its files): section 1's
    synthetic run against a candidate with every tenth question's ranking reversed."""
    n_questions, depth = GATE_SIZE
    run, qrels = synthetic_evaluation(np.random.default_rng(SEED), n_questions, depth)
    candidate = {q: ranked[::-1] if i % 10 == 0 else ranked for i, (q, ranked) in enumerate(run.items())}
    with tempfile.TemporaryDirectory() as tmp:
        qrels_file, base, new = h.export_trec({"base": run, "new": candidate}, qrels, tmp)
        start, cpu = time.perf_counter(), os.times()
        try:
            done = make("gate", f"QRELS={qrels_file}", f"BASELINE={base}", f"CANDIDATE={new}", output=Path(tmp) / "out")
        except subprocess.CalledProcessError as exc:  # exit 1 (worse) is a verdict too; 2 is not
            if exc.returncode != 1:
                raise SystemExit(f"make gate failed: {exc.stderr}") from None
            done = exc
        seconds, after = time.perf_counter() - start, os.times()
    cpu = after.children_user + after.children_system - cpu.children_user - cpu.children_system  # what load cannot inflate
    verdict = next(line for line in done.stdout.splitlines() if line.startswith(("Worse", "Not shown worse")))
    print(f"11. make gate: {n_questions:,} questions x {depth} ranks, two TREC runs against their qrels (load "
          f"{os.getloadavg()[0]:.1f})")
    print(f"   {seconds:.1f} s ({cpu:.1f} s of CPU), exit status {done.returncode} (target < {GATE_TARGET_S} s: "
          f"{'met' if seconds < GATE_TARGET_S else 'MISSED'})\n   {verdict}")
    return [(f"make gate, {n_questions:,} questions x {depth} ranks, two TREC runs", f"{seconds:.1f} s, {cpu:.1f} s of "
             f"CPU (target < {GATE_TARGET_S} s: {'met' if seconds < GATE_TARGET_S else 'MISSED'})")]



LABEL_SIZE = (10_000, 20_000)  # documents, questions


def bench_labels():
    import resource

    n_docs, n_questions = LABEL_SIZE
    rng = np.random.default_rng(SEED)  # its own generator: the same data whichever sections run
    load, before = os.getloadavg(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    chunks = synthetic_chunks(rng, n_docs, synthetic_vocabulary(rng))
    picked = rng.integers(0, len(chunks), size=n_questions)
    evidence = []
    for i in picked:
        words = chunks[i]["text"].split()
        start = int(rng.integers(0, len(words) - 8))
        evidence.append(" ".join(words[start : start + 8]))
    golden = pd.DataFrame({"id": [f"q{i:05d}" for i in range(len(evidence))], "evidence": evidence})
    start = time.perf_counter()
    qrels = h.label_chunks(golden, chunks)
    seconds = time.perf_counter() - start
    sizes = pd.Series([len(g) for g in qrels.values()])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"11. Labelling {len(chunks):,} documents × {len(golden):,} questions (evidence strings of 8 words; relevant "
          f"chunks per question: median {sizes.median():.0f}, most {sizes.max()}); {os.cpu_count()} cores; load average "
          f"{load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"   label_chunks {seconds:.1f} s (target < 300 s: {'met' if seconds < 300 else 'MISSED'}); peak memory "
          f"{before / 1024:.0f} MiB before, {peak / 1024:.0f} MiB after")
    return [(f"labelling {len(chunks):,} documents x {len(golden):,} questions (label_chunks)",
             f"{seconds:.1f} s (target < 300 s), peak memory {peak / 1024:.0f} MiB")]



# --- 12. memory at scale: evaluate-runs and the gate -------------------------------------------------

SCALE_RUNS = {"evaluate-runs": ((30_000, 100, 3 * 1024), (100_000, 100, 2 * 1024)), "gate": ((1_000_000, 100, 8 * 1024),)}


def peak_mib(command: list[str], env: dict) -> tuple[int, float, int]:
    """A command in its own child process: (its peak resident memory in MiB, wall seconds, exit status)."""
    probe = ("import resource, subprocess, sys, time; start = time.perf_counter(); done = subprocess.run(sys.argv[1:], "
             "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, "
             "time.perf_counter() - start, done.returncode)")
    out = subprocess.run([sys.executable, "-c", probe, *command], env=env, capture_output=True, text=True, check=True).stdout
    mib, seconds, status = out.split()
    return int(mib), float(seconds), int(status)


def bench_scale():
    """The console command on two synthetic runs (section 1's generator, every tenth ranking reversed): the peak memory
    of ``evaluate-runs`` at 30,000 and 100,000 questions and of ``gate`` at 1,000,000, against their targets."""
    rows, command = [], Path(sys.executable).parent / "retrieval-eval"
    for verb, sizes in SCALE_RUNS.items():
        for n_questions, depth, target in sizes:
            run, qrels = synthetic_evaluation(np.random.default_rng(SEED), n_questions, depth)
            candidate = {q: ranked[::-1] if i % 10 == 0 else ranked for i, (q, ranked) in enumerate(run.items())}
            with tempfile.TemporaryDirectory() as tmp:
                qrels_file, base, new = h.export_trec({"base": run, "new": candidate}, qrels, tmp)
                del run, candidate, qrels
                flags = ["--runs", str(base), str(new)] if verb == "evaluate-runs" else ["--baseline", str(base), "--candidate", str(new)]
                env = {**os.environ, "RETRIEVAL_EVAL_OUTPUT": str(Path(tmp) / "out"), "RETRIEVAL_EVAL_CACHE": str(Path(tmp) / "cache")}
                mib, seconds, status = peak_mib([str(command), verb, "--qrels", str(qrels_file), *flags], env)
            if status not in (0, 1):
                raise SystemExit(f"retrieval-eval {verb} exited {status} on {n_questions:,} questions")
            met = "met" if mib < target else "MISSED"
            print(f"12. retrieval-eval {verb}: {n_questions:,} questions x {depth} ranks, two runs: peak {mib:,} MiB "
                  f"(target < {target:,} MiB: {met}), {seconds:.0f} s")
            rows.append((f"retrieval-eval {verb}, {n_questions:,} questions x {depth} ranks, two TREC runs, peak memory",
                         f"{mib:,} MiB, {seconds:.0f} s (target < {target / 1024:g} GiB: {met})"))
    return rows


# A section: a function that prints its figures and returns the table's rows [(what, measured)]. To add one, write
# it and name it here; tests/test_bench.py runs every section on TINY inputs.
SECTIONS = {"evaluation": bench_evaluation, "bm25": bench_bm25, "embeddings": bench_embeddings,
            "vector-search": bench_vector_search, "notebooks": bench_notebooks, "engine": bench_engine,
            "beir": bench_beir, "report": bench_report, "rerank": bench_rerank, "widgets": bench_widgets,
            "gate": bench_gate, "labels": bench_labels, "scale": bench_scale}
OPTIONAL_SECTIONS = ("widgets",)  # run only when named: needs Chromium
MEASURED = {}  # figures one section leaves for the summary of others
WRITE_RECORDS = True  # benchmarks/rerank.json (notebook 06 reads it); not on tiny inputs
RERANK_QUESTIONS = None  # the rerank section's first questions: all of them (on tiny inputs 3)
TINY = {"EVAL_SIZES": ((50, 20),), "BM25_SIZES": (200, 400), "EMBED_CHUNKS": 20, "VECTORS": 1_000, "NOTEBOOK_COUNT": 1,
        "IMPORT_REPEATS": 1, "ENGINE_CHUNKS": 500, "ENGINE_QUESTIONS": 20, "RANK_BM25_QUESTIONS": 5, "SCALE_DOCS": 40,
        "SCALE_QUESTIONS": 20, "BEIR_CHUNKS": 40, "BEIR_QUESTIONS": 10, "WIDGET_REPEATS": 1, "REPEATS": 1,
        "WRITE_RECORDS": False, "RERANK_QUESTIONS": 3, "GATE_SIZE": (50, 20), "LABEL_SIZE": (40, 20),
        "SCALE_RUNS": {"evaluate-runs": ((50, 20, 3 * 1024),), "gate": ((50, 20, 8 * 1024),)}}


def run(names, tiny=False) -> list[tuple[str, str, str]]:
    """Run the named sections (all but the optional ones if none); one row (what, measured, load) per figure."""
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    if tiny:
        globals().update(TINY)
    from retrieval_eval.course.teaching import machine

    rows, cpu = [], machine()
    for name in names or [name for name in SECTIONS if name not in OPTIONAL_SECTIONS]:
        before = os.getloadavg()[0]
        measured = SECTIONS[name]()
        load = f"{before:.1f} → {os.getloadavg()[0]:.1f}"
        rows += [(f"{what} ({name}; {cpu})", figure, load) for what, figure in measured]
    if {"bm25 " + str(BM25_SIZES[0]), "bm25 " + str(BM25_SIZES[1]), "throughput", "search_ms"} <= set(MEASURED):
        # Latency grows linearly with the corpus: extrapolate from the measured points.
        small, large = (MEASURED[f"bm25 {n}"] for n in BM25_SIZES)
        bm25_limit = BM25_SIZES[0] + (BUDGET_MS - small) / ((large - small) / (BM25_SIZES[1] - BM25_SIZES[0]))
        print(f"Where a {BUDGET_MS} ms query budget runs out (linear extrapolation from the figures above):")
        print(f"   BM25 with rank-bm25, ranking every chunk: about {bm25_limit:,.0f} chunks")
        print(f"   exact vector search: about {VECTORS * BUDGET_MS / MEASURED['search_ms']:,.0f} vectors (plus "
              f"{MEASURED['query_ms']:.0f} ms to embed the question)")
        print(f"   embedding a corpus once at {MEASURED['throughput']:.0f} chunks/s: 100,000 chunks take "
              f"{100_000 / MEASURED['throughput'] / 3600:.1f} h")
    return rows


def main():
    start = time.perf_counter()
    rows = run(sys.argv[1:])
    print(f"\n{os.cpu_count()} cores; load average = the 1-minute load at a section's start → its end\n")
    print("| what (`make bench` section) | measured | load average |\n|---|---|---|")
    print("\n".join(f"| {what} | {figure} | {load} |" for what, figure, load in rows))
    print(f"\nTotal bench time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
