"""retrieval_eval/fusion.py: reciprocal rank fusion by hand, over whole runs, and its bad inputs."""

import math

import pytest

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
    with pytest.raises(ValueError, match="question 'q2': duplicate id 'b'"):
        h.fuse_runs([{"q1": ["a"], "q2": ["b", "b"]}, {"q1": ["a"], "q2": ["b"]}])
