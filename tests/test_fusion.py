"""retrieval_eval/fusion.py: reciprocal rank fusion by hand, over whole runs, exact ties, and its bad inputs."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h


def test_rrf_by_hand():
    # a: 1/61 + 1/63; b: 1/62 + 1/61; c: 1/63; d: 1/62
    fused = h.reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]], k=60)
    assert fused == ["b", "a", "d", "c"]
    # Tie: x and y each rank 1 in one list -> equal scores -> id order, whichever list comes first.
    assert h.reciprocal_rank_fusion([["y"], ["x"]]) == ["x", "y"]
    assert h.reciprocal_rank_fusion([["x"], ["y"]]) == ["x", "y"]
    # Only the top `depth` of each list votes.
    assert h.reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "a"]], depth=1) == ["a", "c"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.reciprocal_rank_fusion([]), "rankings is empty"),
        (lambda: h.reciprocal_rank_fusion([["a", "a"]]), "duplicate id 'a'"),
        (lambda: h.reciprocal_rank_fusion([["a"], ["b"]], k=math.nan), "k must be a finite number"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_fuse_runs_equals_the_hybrid_retriever_on_the_golden_set(runs):
    """``runs["hybrid"]`` (conftest) comes from HybridRetriever(bm25, vector) querying both retrievers live."""
    fused = h.fuse_runs([runs["BM25"], runs["vector"]])
    assert list(fused) == list(runs["hybrid"]) and len(fused) == 47
    assert fused == runs["hybrid"]


def test_fuse_runs_refuses_runs_over_different_questions():
    with pytest.raises(ValueError, match="the runs hold different question ids"):
        h.fuse_runs([{"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q3": ["b"]}])
    with pytest.raises(ValueError, match="the runs hold different question ids"):
        h.fuse_runs([{"q1": ["a"], "q2": ["b"]}, {"q1": ["a"]}])
    with pytest.raises(ValueError, match="question 'q2': ranking 1: duplicate id 'b'"):
        h.fuse_runs([{"q1": ["a"], "q2": ["b", "b"]}, {"q1": ["a"], "q2": ["b"]}])


# --- ties decided exactly, whatever the order of the lists ---------------------------------------


def test_equal_fused_scores_tie_exactly_and_go_by_id():
    """a and b both score 2/61 + 1/62 = 185/3782 exactly; summed in floating point, in different
    orders, b came out higher. The documented rule (id ascending) must decide."""
    lists = [["b"], ["a"], ["a", "b"], ["b", "a"]]
    score = Fraction(1, 61) * 2 + Fraction(1, 62)
    assert score == Fraction(185, 3782)
    assert h.reciprocal_rank_fusion(lists) == ["a", "b"]
    assert h.reciprocal_rank_fusion(lists[::-1]) == ["a", "b"]


RANKINGS = st.lists(st.permutations([f"d{i}" for i in range(8)]).flatmap(lambda p: st.integers(0, 8).map(lambda n: p[:n])),
                    min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(RANKINGS, st.one_of(st.integers(0, 100), st.floats(0, 100, allow_nan=False)), st.integers(1, 8), st.randoms())
def test_the_order_of_the_input_lists_never_changes_the_fused_ranking(rankings, k, depth, random):
    fused = h.reciprocal_rank_fusion(rankings, k=k, depth=depth)
    shuffled = list(rankings)
    random.shuffle(shuffled)
    assert h.reciprocal_rank_fusion(shuffled, k=k, depth=depth) == fused
    # The fused order is the exact scores, highest first, then id ascending.
    exact = {d: sum((Fraction(1) / (Fraction(k) + r) for ranked in rankings for r, x in enumerate(ranked[:depth], 1)
                     if x == d), Fraction(0)) for d in fused}
    assert fused == sorted(exact, key=lambda d: (-exact[d], d))


def test_k_of_any_numeric_type_is_taken_exactly():
    lists = [["b"], ["a"], ["a", "b"], ["b", "a"]]
    for k in (60, 60.0, np.int64(60), np.float32(60), np.float64(60)):
        assert h.reciprocal_rank_fusion(lists, k=k) == ["a", "b"]
    assert h.reciprocal_rank_fusion([["x", "y"], ["y", "x"]], k=0.1) == ["x", "y"]


def test_ids_that_are_not_str_are_refused_naming_the_list_and_rank():
    with pytest.raises(ValueError, match=r"ranking 2: the ranking holds 1 \(int\) at rank 2: ids must be str"):
        h.reciprocal_rank_fusion([["a"], ["b", 1]])
    with pytest.raises(ValueError, match=r"run 2 holds question id 7 \(int\)"):
        h.fuse_runs([{"q1": ["a"]}, {7: ["a"]}])


def test_the_tie_rule_orders_equal_scores_and_nothing_else():
    # a: 1/61 + 1/62 and b: 1/62 + 1/61 tie exactly; c: 1/63 comes last under either rule
    lists = [["a", "b", "c"], ["b", "a"]]
    assert h.reciprocal_rank_fusion(lists) == ["a", "b", "c"]
    assert h.reciprocal_rank_fusion(lists, ties="id descending") == ["b", "a", "c"]
    assert h.fuse_runs([{"q": lists[0]}, {"q": lists[1]}], ties="id descending") == {"q": ["b", "a", "c"]}
    with pytest.raises(ValueError, match=r"ties must be one of \['id ascending', 'id descending'\], got 'random'"):
        h.reciprocal_rank_fusion(lists, ties="random")
