"""retrieval_eval/metrics.py: the metrics by hand, their bad inputs, and agreement with trec_eval."""

import math

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h

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


def test_ndcg_by_hand():
    # Relevant at ranks 2 and 3 with gains 2 and 1; ideal puts 2 then 1 at ranks 1 and 2.
    gains = {"b": 2, "c": 1}
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert h.ndcg_at_k(RANKED, gains, 3) == pytest.approx(dcg / idcg)
    # The ideal uses all judged gains, including one that was not retrieved.
    gains = {"a": 1, "zzz": 1}
    assert h.ndcg_at_k(RANKED, gains, 3) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # Negative gain counts as not relevant.
    assert h.ndcg_at_k(["x", "a"], {"x": -1, "a": 1}, 2) == pytest.approx(1 / math.log2(3))


def test_empty_ranking_scores_zero():
    assert h.recall_at_k([], {"a"}, 3) == 0.0
    assert h.precision_at_k([], {"a"}, 3) == 0.0
    assert h.reciprocal_rank([], {"a"}) == 0.0
    assert h.ndcg_at_k([], {"a": 1}, 3) == 0.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.recall_at_k(RANKED, {"a"}, 0), "k must be >= 1"),
        (lambda: h.precision_at_k(RANKED, {"a"}, -2), "k must be >= 1"),
        (lambda: h.precision_at_k(RANKED, {"a"}, 2.5), "k must be an integer"),
        (lambda: h.recall_at_k(RANKED, set(), 3), "relevant is empty"),
        (lambda: h.recall_at_k(["a", "b", "a"], {"a"}, 3), "duplicate id 'a'"),
        (lambda: h.ndcg_at_k(["a", "a"], {"a": 1}, 3), "duplicate id 'a'"),
        (lambda: h.ndcg_at_k(RANKED, {"a": 0}, 3), "no gain > 0"),
        (lambda: h.reciprocal_rank(RANKED, {"a"}, k=0), "k must be >= 1"),
        (lambda: h.mrr([], []), "rankings is empty"),
        (lambda: h.mrr([RANKED], [{"a"}, {"b"}]), "1 rankings but 2"),
        (lambda: h.mrr([RANKED, RANKED], [{"a"}, set()]), "question at position 1"),
        # inputs that once gave a silently wrong number
        (lambda: h.recall_at_k(iter(["a", "b"]), {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k({"a", "b"}, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(None, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(["a"], {"a": 0, "b": 1}, 1), "not a mapping of gains"),
        (lambda: h.reciprocal_rank(["a"], None), "must be a collection of ids"),
        (lambda: h.ndcg_at_k(["a"], {"a": math.nan, "b": 1}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.ndcg_at_k(["a"], {"a": "2"}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.mrr([["a"]], [{"a"}], k=0), "^k must be >= 1"),
        (lambda: h.mrr({"q1": ["a"]}, [{"a"}]), "rankings must be a list, not a dict"),
        # a NaN or infinite gain would make DCG NaN or infinite without a word
        (lambda: h.dcg_at_k([1, math.nan], 2), "the gain at rank 2 must be a finite number, got nan"),
        (lambda: h.dcg_at_k([math.inf], 1), "the gain at rank 1 must be a finite number, got inf"),
        (lambda: h.dcg_at_k([1, -math.inf], 2), "the gain at rank 2 must be a finite number, got -inf"),
        (lambda: h.dcg_at_k([1, "2"], 2), "the gain at rank 2 must be a finite number, got '2'"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- agreement with trec_eval (pytrec_eval) ---------------------------------------------------


def trec_eval(ranked, gains, measures):
    """Score one ranking with trec_eval; scores strictly decrease with rank so no re-sorting."""
    qrels = {"q": {d: int(g) for d, g in gains.items()}}
    run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)["q"]


def ours(ranked, gains, k):
    relevant = h.relevant_ids(gains)
    return {
        f"P_{k}": h.precision_at_k(ranked, relevant, k),
        f"recall_{k}": h.recall_at_k(ranked, relevant, k),
        f"ndcg_cut_{k}": h.ndcg_at_k(ranked, gains, k),
        "recip_rank": h.reciprocal_rank(ranked, relevant),
    }


POOL = [f"d{i}" for i in range(15)]


@st.composite
def cases(draw):
    ranked = draw(st.permutations(POOL).map(lambda p: p[: draw(st.integers(1, len(POOL)))]))
    judged = draw(st.dictionaries(st.sampled_from(POOL), st.integers(-1, 3), min_size=1))
    if not any(g > 0 for g in judged.values()):
        judged[draw(st.sampled_from(POOL))] = draw(st.integers(1, 3))
    k = draw(st.sampled_from([1, 2, 3, 5, 10, 15, 20]))
    return ranked, judged, k


@settings(max_examples=2000, deadline=None)
@given(cases())
def test_agrees_with_trec_eval_on_random_cases(case):
    ranked, gains, k = case
    expected = trec_eval(ranked, gains, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", "recip_rank"})
    got = ours(ranked, gains, k)
    for measure, value in got.items():
        assert value == pytest.approx(expected[measure], abs=1e-4), measure


@pytest.mark.parametrize(
    "ranked, gains, k",
    [
        (["a", "b"], {"b": 1}, 5),  # fewer results than k
        (["a", "b", "c"], {"c": 1}, 2),  # first relevant below the cut-off
        (["a", "b", "c"], {"a": 1, "c": 1, "z": 1}, 3),  # several relevant, one never retrieved
        (["a", "b", "c"], {"a": 1, "b": 2, "c": 3}, 2),  # graded gains in the wrong order
        (["a", "b", "c"], {"a": -1, "b": 0, "c": 2}, 3),  # negative and zero gains
    ],
)
def test_agrees_with_trec_eval_on_edge_cases(ranked, gains, k):
    expected = trec_eval(ranked, gains, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", "recip_rank"})
    for measure, value in ours(ranked, gains, k).items():
        assert value == pytest.approx(expected[measure], abs=1e-4), measure


def test_rr_at_k_equals_trec_eval_on_a_run_cut_at_k():
    ranked, relevant = ["a", "b", "c", "d"], {"d"}
    assert h.reciprocal_rank(ranked, relevant, k=3) == trec_eval(ranked[:3], {"d": 1}, {"recip_rank"})["recip_rank"]


# --- success@k, R-precision, average precision -------------------------------------------------


def test_success_r_precision_and_average_precision_by_hand():
    # relevant b (rank 2) and d (rank 4), and z never retrieved
    relevant = {"b", "d", "z"}
    assert h.success_at_k(RANKED, relevant, 1) == 0.0
    assert h.success_at_k(RANKED, relevant, 2) == 1.0
    assert h.success_at_k(RANKED, relevant, 5) == 1.0  # recall@5 is 2/3: success only asks whether one was found
    assert h.r_precision(RANKED, relevant) == pytest.approx(1 / 3)  # R = 3: b in the top 3
    assert h.average_precision(RANKED, relevant) == pytest.approx((1 / 2 + 2 / 4) / 3)  # z adds 0
    assert h.r_precision(["b", "d", "z"], relevant) == h.average_precision(["b", "d", "z"], relevant) == 1.0
    assert h.success_at_k([], {"a"}, 3) == h.r_precision([], {"a"}) == h.average_precision([], {"a"}) == 0.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.success_at_k(RANKED, {"a"}, 0), "k must be >= 1"),
        (lambda: h.success_at_k(["a", "a"], {"a"}, 1), "duplicate id 'a'"),
        (lambda: h.r_precision(RANKED, set()), "relevant is empty"),
        (lambda: h.r_precision(["a", "a"], {"a"}), "duplicate id 'a'"),
        (lambda: h.average_precision(RANKED, {"a": 1}), "not a mapping of gains"),
        (lambda: h.average_precision({"a"}, {"a"}), "must be a list or tuple of ids"),
    ],
)
def test_bad_input_to_the_three_more_metrics(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def ours_more(ranked, gains, k):
    relevant = h.relevant_ids(gains)
    return {f"success_{k}": h.success_at_k(ranked, relevant, k), "Rprec": h.r_precision(ranked, relevant),
            "map": h.average_precision(ranked, relevant)}


@settings(max_examples=2000, deadline=None)
@given(cases())
def test_success_r_precision_and_average_precision_agree_with_trec_eval(case):
    ranked, gains, k = case
    expected = trec_eval(ranked, gains, {f"success.{k}", "Rprec", "map"})
    for measure, value in ours_more(ranked, gains, k).items():
        assert value == pytest.approx(expected[measure], abs=1e-12), measure


@pytest.mark.parametrize(
    "ranked, gains, k",
    [
        (["a", "b"], {"b": 1, "c": 1, "d": 1}, 5),  # fewer results than R and than k
        (["a", "b", "c"], {"c": 1}, 2),  # the only relevant item below the cut-off
        (["a", "b", "c"], {"a": -1, "b": 0, "c": 2}, 3),  # negative, zero and graded gains
        ([], {"a": 1}, 1),  # nothing retrieved
    ],
)
def test_the_three_more_metrics_on_edge_cases(ranked, gains, k):
    expected = trec_eval(ranked, gains, {f"success.{k}", "Rprec", "map"}) if ranked else {
        f"success_{k}": 0.0, "Rprec": 0.0, "map": 0.0}  # trec_eval -c scores a question with no result 0
    for measure, value in ours_more(ranked, gains, k).items():
        assert value == pytest.approx(expected[measure], abs=1e-12), measure
