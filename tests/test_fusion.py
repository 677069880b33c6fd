"""retrieval_eval/retrieval/fusion.py: reciprocal rank fusion by hand, over whole runs, exact ties, and its bad inputs."""

import math
from fractions import Fraction

import numpy as np
import pytest
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.retrieval.fusion import TIE_RULES, fuse_runs


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


def test_fuse_runs_equals_the_committed_hybrid_run(runs, qrels):
    """``runs["hybrid"]`` (conftest) is the committed run of data/runs/, equal to a fresh ranking (test_pipeline)."""
    fused = fuse_runs([runs["BM25"], runs["vector"]])
    assert list(fused) == list(runs["hybrid"]) == list(qrels) and len(fused) == 47
    assert fused == runs["hybrid"]
    assert all(len(r) <= 20 for r in fused.values())  # the top 10 of each


def test_fuse_runs_refuses_runs_over_different_questions():
    with pytest.raises(ValueError, match="the runs hold different question ids"):
        fuse_runs([{"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q3": ["b"]}])
    with pytest.raises(ValueError, match="the runs hold different question ids"):
        fuse_runs([{"q1": ["a"], "q2": ["b"]}, {"q1": ["a"]}])
    with pytest.raises(ValueError, match="question 'q2': ranking 1: duplicate id 'b'"):
        fuse_runs([{"q1": ["a"], "q2": ["b", "b"]}, {"q1": ["a"], "q2": ["b"]}])
    with pytest.raises(ValueError, match="runs is empty: nothing to fuse"):
        fuse_runs([])
    with pytest.raises(ValueError, match=r"run 1 must be a mapping \{question_id: ranking\}, not list"):
        fuse_runs([["a", "b"], ["b", "a"]])  # two rankings where two runs belong
    with pytest.raises(ValueError, match="runs must be a list of runs"):
        fuse_runs({"q1": ["a"]})


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


@settings(max_examples=examples(150), deadline=None)
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
    with pytest.raises(ValueError, match=r"run 2 holds question id 7 \(int\): ids must be str"):
        fuse_runs([{"q1": ["a"]}, {7: ["a"]}])
    with pytest.raises(ValueError, match=r"run 1 holds question id 7 \(int\)"):
        fuse_runs([{7: ["a"]}, {7: ["a"]}])


def test_the_tie_rule_orders_equal_scores_and_nothing_else():
    # a: 1/61 + 1/62 and b: 1/62 + 1/61 tie exactly; c: 1/63 comes last under either rule
    lists = [["a", "b", "c"], ["b", "a"]]
    assert h.reciprocal_rank_fusion(lists) == ["a", "b", "c"]
    assert h.reciprocal_rank_fusion(lists, ties="id descending") == ["b", "a", "c"]
    assert fuse_runs([{"q": lists[0]}, {"q": lists[1]}], ties="id descending") == {"q": ["b", "a", "c"]}
    with pytest.raises(ValueError, match=r"ties must be one of \['id ascending', 'id descending'\], got 'random'"):
        h.reciprocal_rank_fusion(lists, ties="random")


# --- tie_effect: what the tie rule decides -----------------------------------------------------------


def test_tie_effect_by_hand():
    # q1: a and b tie (ranks 1 and 2 in one list, 2 and 1 in the other); b is relevant: rank 2 ours, 1 the other way.
    # q2: no tie near the relevant chunk.
    first, second = {"q1": ["a", "b"], "q2": ["c", "d"]}, {"q1": ["b", "a"], "q2": ["c", "e"]}
    effect = h.tie_effect([first, second], {"q1": {"b": 1}, "q2": {"c": 1}}, k=1)
    assert effect.questions.to_dict("index") == {"q1": {"id ascending": 2, "id descending": 1}}
    assert effect.means.loc["id ascending", "recall"] == 0.5 and effect.means.loc["id descending", "recall"] == 1.0
    assert effect.means.loc["spread", "MRR"] == 0.5 and effect.k == 1


def test_tie_effect_on_the_teaching_set_keeps_our_hybrid_as_the_first_rule(runs, qrels):
    effect = h.tie_effect([runs["BM25"], runs["vector"]], qrels, k=3)
    ours = h.evaluate({"hybrid": runs["hybrid"]}, qrels, ks=[3]).xs(3, axis=1, level="k").loc["hybrid"]
    assert effect.means.loc[TIE_RULES[0]].tolist() == pytest.approx(ours.tolist())
    ranks = h.first_relevant_ranks(runs, qrels)["hybrid"]
    assert (effect.questions[TIE_RULES[0]].fillna(0) == ranks[effect.questions.index].fillna(0)).all()
    assert (effect.questions[TIE_RULES[0]].fillna(0) != effect.questions[TIE_RULES[1]].fillna(0)).all()
