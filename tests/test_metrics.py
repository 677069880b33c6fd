"""retrieval_eval/core/metrics.py and registry.py: the metrics by hand, their bad inputs, the registry (each metric's batch
kernel against its definition and against trec_eval, its random-order expectation against every
permutation), and a fifth metric registered at run time."""

import itertools
import math

import matplotlib
import numpy as np
import pytest
import pytrec_eval
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.evaluation import judge
from retrieval_eval.core.metrics import RECALL_LEVELS, context_precision, f1_at_k, r_precision
from retrieval_eval.core.registry import METRICS, Judged, Metric, shown_metrics
from retrieval_eval.course.plots import plot_metrics

matplotlib.use("Agg")

RANKED = ["a", "b", "c", "d", "e"]


# --- hand-computed values --------------------------------------------------------------------


def test_recall_by_hand():
    assert h.recall_at_k(RANKED, {"c"}, 3) == 1.0
    assert h.recall_at_k(RANKED, {"c"}, 2) == 0.0
    assert h.recall_at_k(RANKED, {"b", "e", "z"}, 3) == pytest.approx(1 / 3)
    assert h.recall_at_k(RANKED, {"b", "e", "z"}, 10) == pytest.approx(2 / 3)


def test_precision_divides_by_k_even_when_fewer_returned():
    assert h.precision_at_k(RANKED, {"a", "c"}, 3) == pytest.approx(2 / 3)
    assert h.precision_at_k(["a"], {"a"}, 3) == pytest.approx(1 / 3)  # not 1/1
    assert h.precision_at_k(RANKED, {"a"}, 10) == pytest.approx(0.1)


def test_reciprocal_rank_with_and_without_cutoff():
    assert h.reciprocal_rank(RANKED, {"d"}) == 0.25
    assert h.reciprocal_rank(RANKED, {"d"}, k=3) == 0.0
    assert h.reciprocal_rank(RANKED, {"d", "b"}, k=3) == 0.5
    assert h.mrr([RANKED, RANKED, []], [{"a"}, {"d"}, {"a"}]) == pytest.approx((1 + 0.25 + 0) / 3)
    assert h.mrr([RANKED, RANKED], [{"a"}, {"d"}], k=3) == pytest.approx(1 / 2)


def test_ndcg_by_hand():
    # Relevant at ranks 2 and 3 with gains 2 and 1; ideal puts 2 then 1 at ranks 1 and 2.
    gains = {"b": 2, "c": 1}
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert h.ndcg_at_k(RANKED, gains, 3) == pytest.approx(dcg / idcg)
    # The ideal uses all judged gains, including one that was not retrieved.
    assert h.ndcg_at_k(RANKED, {"a": 1, "zzz": 1}, 3) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # Negative gain counts as not relevant.
    assert h.ndcg_at_k(["x", "a"], {"x": -1, "a": 1}, 2) == pytest.approx(1 / math.log2(3))
    assert h.dcg_at_k([3, -1, 1], 3) == pytest.approx(3 + 1 / 2)


def test_success_and_first_relevant_rank_by_hand():
    relevant = {"b", "d", "z"}
    assert h.success_at_k(RANKED, relevant, 1) == 0.0
    assert h.success_at_k(RANKED, relevant, 2) == 1.0
    assert h.success_at_k(RANKED, relevant, 5) == 1.0  # recall@5 is 2/3: success asks only whether one was found
    assert h.first_relevant_rank(RANKED, relevant) == 2 and h.first_relevant_rank(RANKED, {"z"}) is None
    assert h.relevant_ids({"a": 2, "b": 0, "c": -1, "d": 0.5}) == {"a", "d"}


def test_empty_ranking_scores_zero():
    assert h.recall_at_k([], {"a"}, 3) == h.precision_at_k([], {"a"}, 3) == h.success_at_k([], {"a"}, 3) == 0.0
    assert h.reciprocal_rank([], {"a"}) == h.ndcg_at_k([], {"a": 1}, 3) == 0.0
    assert all(m.score([], {"a": 1}, 3) == 0.0 for m in METRICS.values())


def test_the_registry_holds_the_four_metrics_of_the_series():
    series = {"recall": ("recall@3", "recall.{k}"), "precision": ("precision@3", "P.{k}"), "MRR": ("MRR@3", "recip_rank"),
              "nDCG": ("nDCG@3", "ndcg_cut.{k}")}
    assert {name: (METRICS[name].at(3), METRICS[name].trec) for name in series} == series
    assert all(METRICS[name].random is not None and METRICS[name].shown for name in series)
    assert shown_metrics() == list(series)  # the others (MAP, R-precision, F1, context precision) only when named


def test_beyond_the_four_by_hand():
    gains = {"b": 1, "d": 2, "z": 1}  # RANKED = a b c d e: relevant at ranks 2 and 4, z never retrieved
    assert h.average_precision(RANKED, gains, 5) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert h.average_precision(RANKED, gains, 3) == pytest.approx((1 / 2) / 3)
    assert r_precision(RANKED, gains) == pytest.approx(1 / 3) and r_precision(RANKED, gains, 1) == 0
    assert f1_at_k(RANKED, gains, 5) == pytest.approx(2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3)) == pytest.approx(4 / 8)
    assert context_precision(RANKED, gains, 5) == pytest.approx((1 / 2 + 2 / 4) / 2)
    # recall 2/3 reaches 0.7 too: trec_eval's rounding needs ⌊0.7·3 + 0.9⌋ = 2 hits (0.7·3 is 2.0999…)
    assert h.iprec_at_recall(RANKED, gains) == {level: (0.5 if level <= 0.7 else 0.0) for level in RECALL_LEVELS}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.recall_at_k(RANKED, {"a"}, 0), "k must be >= 1"),
        (lambda: h.precision_at_k(RANKED, {"a"}, -2), "k must be >= 1"),
        (lambda: h.precision_at_k(RANKED, {"a"}, 2.5), "k must be an integer"),
        (lambda: h.precision_at_k(RANKED, {"a"}, True), "k must be an integer"),
        (lambda: h.recall_at_k(RANKED, set(), 3), "relevant is empty"),
        (lambda: h.recall_at_k(["a", "b", "a"], {"a"}, 3), "duplicate id 'a'"),
        (lambda: h.ndcg_at_k(["a", "a"], {"a": 1}, 3), "duplicate id 'a'"),
        (lambda: h.ndcg_at_k(RANKED, {"a": 0}, 3), "no gain > 0"),
        (lambda: h.ndcg_at_k(RANKED, {"a": -1}, 3), "no gain > 0"),
        (lambda: h.reciprocal_rank(RANKED, {"a"}, k=0), "k must be >= 1"),
        (lambda: h.success_at_k(["a", "a"], {"a"}, 1), "duplicate id 'a'"),
        (lambda: h.mrr([], []), "at least one: 0 rankings"),
        (lambda: h.mrr([RANKED], [{"a"}, {"b"}]), "1 rankings, 2 relevant sets"),
        (lambda: h.mrr([RANKED, RANKED], [{"a"}, set()]), "question at position 1: relevant is empty"),
        (lambda: h.mrr([["a"]], [{"a"}], k=0), "question at position 0: k must be >= 1"),
        (lambda: h.mrr({"q1": ["a"]}, [{"a"}]), "rankings must be a list of rankings"),
        # inputs that once gave a silently wrong number
        (lambda: h.recall_at_k(iter(["a", "b"]), {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k({"a", "b"}, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k("ab", {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(None, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(["a"], {"a": 0, "b": 1}, 1), "not a mapping of gains"),
        (lambda: h.recall_at_k([1, 2], {"1"}, 2), r"the ranking holds 1 \(int\) at rank 1: ids must be str"),
        (lambda: h.recall_at_k(["1"], {1}, 2), r"relevant holds 1 \(int\): ids must be str"),
        (lambda: h.reciprocal_rank(["a"], None), "must be a collection of ids"),
        (lambda: h.ndcg_at_k(["a"], {"a": math.nan, "b": 1}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.ndcg_at_k(["a"], {"a": "2"}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.ndcg_at_k(["a"], {None: 1}, 2), r"the gains hold id None \(NoneType\)"),
        # a NaN or infinite gain would make DCG NaN or infinite without a word
        (lambda: h.dcg_at_k([1, math.nan], 2), "the gain at rank 2 must be a finite number, got nan"),
        (lambda: h.dcg_at_k([math.inf], 1), "the gain at rank 1 must be a finite number, got inf"),
        (lambda: h.dcg_at_k([1, "2"], 2), "the gain at rank 2 must be a finite number, got '2'"),
        (lambda: h.dcg_at_k(3, 2), "gains_in_rank_order must be a list"),
        (lambda: h.register_metric("AP"), "register a Metric, not str"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- every registered metric: batch kernel = definition = trec_eval --------------------------


def trec_eval(run, qrels, measure):
    """Per-question values of one trec_eval measure; scores fall with rank so trec_eval keeps our order."""
    scored = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
    labels = {q: {d: int(g) for d, g in gains.items()} for q, gains in qrels.items()}
    out = pytrec_eval.RelevanceEvaluator(labels, {measure}).evaluate(scored)
    return {q: out[q][measure.replace(".", "_")] for q in qrels}


# metrics trec_eval has no measure for, built from the measures it has
DERIVED = {"F1": lambda p, r, ap: 2 * p * r / (p + r) if p + r else 0.0, "context-precision": lambda p, r, ap: ap / r if r else 0.0}


def trec_values(metric: Metric, run, qrels, k):
    """What trec_eval gives for ``metric`` at k: ``trec`` with k filled in, or without ``{k}`` on the run cut at k;
    without ``trec``, :data:`DERIVED` from P, recall and map_cut at k."""
    if not metric.trec:
        p, r, ap = (trec_eval(run, qrels, f"{m}.{k}") for m in ("P", "recall", "map_cut"))
        return {q: DERIVED[metric.name](p[q], r[q], ap[q]) for q in qrels}
    if "{k}" in metric.trec:
        return trec_eval(run, qrels, metric.trec.format(k=k))
    return trec_eval({q: r[:k] for q, r in run.items()}, qrels, metric.trec)


POOL = [f"d{i:02d}" for i in range(12)]
UNJUDGED_POOL = POOL + ["u1", "u2", "u3"]  # ids that may be ranked but are never judged


@st.composite
def batches(draw):
    """A run and qrels over 1-5 questions: rankings empty, shorter or longer than k, unjudged ids,
    graded, zero and negative gains (every question with at least one gain > 0), and cut-offs."""
    run, qrels = {}, {}
    for i in range(draw(st.integers(1, 5))):
        q = f"q{i}"
        judged = draw(st.dictionaries(st.sampled_from(POOL), st.integers(-2, 3), min_size=1, max_size=8))
        if not any(g > 0 for g in judged.values()):
            judged[draw(st.sampled_from(POOL))] = draw(st.integers(1, 3))
        qrels[q] = judged
        run[q] = draw(st.lists(st.sampled_from(UNJUDGED_POOL), unique=True, max_size=len(UNJUDGED_POOL)))
    ks = draw(st.lists(st.sampled_from([1, 2, 3, 5, 10, 20]), min_size=1, max_size=3, unique=True))
    return run, qrels, ks


@settings(max_examples=examples(1000), deadline=None)
@given(batches())
def test_every_metric_batch_equals_its_score_and_trec_eval(case):
    run, qrels, ks = case
    judged = judge(run, qrels, max(ks))
    for metric in METRICS.values():
        for k in ks:
            batch = metric.batch(judged, k)
            score = [metric.score(run[q], qrels[q], k) for q in qrels]
            trec = trec_values(metric, run, qrels, k)
            assert batch.tolist() == pytest.approx(score, rel=1e-12, abs=1e-15), (metric.name, k)
            assert score == pytest.approx([trec[q] for q in qrels], abs=1e-4), (metric.name, k)


@pytest.mark.parametrize(
    "ranked, gains, k",
    [
        ([], {"b": 1}, 3),  # nothing retrieved
        (["a", "b"], {"b": 1}, 5),  # fewer results than k
        (["a", "b", "c"], {"c": 1}, 2),  # first relevant below the cut-off
        (["a", "b", "c"], {"a": 1, "c": 1, "z": 1}, 3),  # several relevant, one never retrieved
        (["a", "b", "c"], {"a": 1, "b": 2, "c": 3}, 2),  # graded gains in the wrong order
        (["a", "b", "c"], {"a": -1, "b": 0, "c": 2}, 3),  # negative and zero gains
        (["x", "y", "c"], {"c": 1}, 3),  # unjudged ids first
    ],
)
def test_every_metric_agrees_with_trec_eval_on_edge_cases(ranked, gains, k):
    run, qrels = {"q": ranked}, {"q": gains}
    judged = judge(run, qrels, k)
    for metric in METRICS.values():
        value = metric.score(ranked, gains, k)
        assert value == pytest.approx(trec_values(metric, run, qrels, k)["q"], abs=1e-12), metric.name
        assert metric.batch(judged, k)[0] == pytest.approx(value, rel=1e-12, abs=1e-15), metric.name


def test_the_batch_kernels_read_ranks_beyond_the_ranking_as_not_relevant():
    """The matrix is as deep as the largest k; a short ranking leaves zeros, which no kernel counts."""
    judged = judge({"q": ["a"]}, {"q": {"a": 1, "b": 2}}, 4)
    assert isinstance(judged, Judged) and judged.gains.tolist() == [[1, 0, 0, 0]]
    assert judged.ideal.tolist() == [[2, 1, 0, 0]] and judged.n_relevant.tolist() == [2]
    assert judged.hits(4).tolist() == [1]


def test_success_at_k_agrees_with_trec_eval():
    run = {"q1": ["a", "b", "c"], "q2": ["x", "y"], "q3": []}
    qrels = {"q1": {"c": 1, "z": 1}, "q2": {"y": 2}, "q3": {"a": 1}}
    for k in (1, 2, 3, 5):
        trec = trec_eval(run, qrels, f"success.{k}")
        assert [h.success_at_k(run[q], h.relevant_ids(qrels[q]), k) for q in qrels] == [trec[q] for q in qrels]


# --- the random-order expectation against every permutation -------------------------------------

TINY = [
    {"c1": 1},  # one relevant chunk
    {"c2": 2, "c3": 1, "c4": 0},  # graded, with a judged non-relevant chunk
    {"c1": 1, "c4": 1, "c5": 1},  # three relevant chunks
    {"c1": 3, "c2": -1, "c6": 1},  # a negative gain
]


@pytest.mark.parametrize("n", [3, 4, 6])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_metric_random_equals_the_mean_over_every_permutation(n, k):
    chunks = [f"c{i}" for i in range(1, n + 1)]
    orders = list(itertools.permutations(chunks))
    for gains in TINY:
        gains = {d: g for d, g in gains.items() if d in chunks}
        positive = sorted((g for g in gains.values() if g > 0), reverse=True)
        if not positive:
            continue
        for metric in (m for m in METRICS.values() if m.random):
            brute = sum(metric.score(list(order), gains, k) for order in orders) / len(orders)
            assert metric.random(positive, n, k) == pytest.approx(brute, abs=1e-12), (metric.name, gains, n, k)


# --- a fifth metric registered at run time ---------------------------------------------------------


def ap_batch(judged: Judged, k: int) -> np.ndarray:
    """AP@k for every question at once: Σ precision@r over the relevant ranks r ≤ k, / |R|."""
    relevant = judged.gains[:, :k] > 0
    precision = np.cumsum(relevant, axis=1) / np.arange(1, relevant.shape[1] + 1)
    return (precision * relevant).sum(axis=1) / judged.n_relevant


AP = Metric("AP", "AP@{k}", "map_cut.{k}", h.average_precision, ap_batch)


@settings(max_examples=examples(60), deadline=None)
@given(batches())
def test_the_fifth_metric_kernel_equals_its_score_and_trec_eval(case):
    run, qrels, ks = case
    judged = judge(run, qrels, max(ks))
    for k in ks:
        score = [AP.score(run[q], qrels[q], k) for q in qrels]
        assert AP.batch(judged, k).tolist() == pytest.approx(score, rel=1e-12, abs=1e-15)
        assert score == pytest.approx(list(trec_values(AP, run, qrels, k).values()), abs=1e-4)


def test_a_fifth_metric_appears_in_every_table_and_plot(restore_metrics, runs, qrels, close_figures):
    ks = [1, 3, 10]
    four = plot_metrics(h.evaluate(runs, qrels, ks))
    before = list(METRICS)
    h.register_metric(AP)
    assert list(METRICS) == [*before, "AP"]
    table = h.evaluate(runs, qrels, ks)
    assert list(dict.fromkeys(table.columns.get_level_values("metric"))) == shown_metrics()
    long = h.per_question_scores(runs, qrels, ks)
    for name, run in runs.items():
        batch = h.batch_scores(run, qrels, ks)
        for k in ks:
            trec = trec_values(AP, run, qrels, k)
            assert batch[("AP", k)].tolist() == pytest.approx([trec[q] for q in qrels], abs=1e-4)
            assert table.loc[name, ("AP", k)] == pytest.approx(sum(trec.values()) / len(qrels), abs=1e-4)
            rows = long[(long["run"] == name) & (long["metric"] == "AP") & (long["k"] == k)]
            assert rows["question"].tolist() == list(qrels)
            assert rows["value"].tolist() == batch[("AP", k)].tolist()
    five = plot_metrics(table)
    visible = [ax for ax in five.axes if ax.get_visible()]
    assert len(visible) == len([ax for ax in four.axes if ax.get_visible()]) + 1 == 5
    assert [ax.get_title() for ax in visible][-1] == "AP@k"
    assert "AP" not in h.random_baseline(qrels, 34, 3)  # no random formula: left out, not guessed


def test_the_registry_is_back_to_four_after_the_fifth(restore_metrics):
    h.register_metric(AP)
    h.register_metric(AP)  # the same name again replaces it
    assert list(METRICS).count("AP") == 1


def test_no_test_leaves_a_fifth_metric_behind(built_in_metrics):
    assert METRICS == built_in_metrics


@settings(max_examples=examples(1000), deadline=None)
@given(batches())
def test_iprec_at_recall_equals_trec_eval(case):
    run, qrels, _ = case
    out = pytrec_eval.RelevanceEvaluator({q: {d: int(g) for d, g in j.items()} for q, j in qrels.items()},
                                         {"iprec_at_recall"}).evaluate({q: {d: float(len(r) - i) for i, d in enumerate(r)}
                                                                        for q, r in run.items()})
    for q in qrels:
        ours = h.iprec_at_recall(run[q], qrels[q])
        # an empty ranking: pytrec_eval gives NaN at level 0; ours is 0 (trec_eval -c)
        theirs = [out[q][f"iprec_at_recall_{level:.2f}"] if run[q] else 0.0 for level in RECALL_LEVELS]
        assert list(ours.values()) == pytest.approx(theirs, abs=1e-4), q
