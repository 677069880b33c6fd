"""retrieval_eval/batch.py: the NumPy batch evaluator gives the per-question metric functions' values and raises the same errors."""

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h

POOL = [f"d{i}" for i in range(15)]
KS = [1, 2, 3, 5, 10, 15, 20]


@st.composite
def batches(draw):
    """A run and qrels for 1–6 questions: rankings of any length (empty too), graded and negative gains."""
    run, qrels = {}, {}
    for i in range(draw(st.integers(1, 6))):
        qid = f"q{i}"
        run[qid] = draw(st.permutations(POOL).map(lambda p: p[: draw(st.integers(0, len(POOL)))]))
        judged = draw(st.dictionaries(st.sampled_from(POOL + ["never_retrieved"]), st.integers(-1, 3), min_size=1))
        if not any(g > 0 for g in judged.values()):
            judged[draw(st.sampled_from(POOL))] = draw(st.integers(1, 3))
        qrels[qid] = judged
    ks = draw(st.lists(st.sampled_from(KS), min_size=1, max_size=4, unique=True))
    return run, qrels, ks


@settings(max_examples=500, deadline=None)
@given(batches())
def test_batch_equals_the_per_question_functions_on_random_cases(case):
    run, qrels, ks = case
    table = h.batch_scores(run, qrels, ks)
    assert list(table.index) == list(qrels)
    for qid, gains in qrels.items():
        ranked, relevant = run[qid], h.relevant_ids(gains)
        for k in ks:
            assert table.loc[qid, ("recall", k)] == h.recall_at_k(ranked, relevant, k)
            assert table.loc[qid, ("precision", k)] == h.precision_at_k(ranked, relevant, k)
            assert table.loc[qid, ("MRR", k)] == h.reciprocal_rank(ranked, relevant, k)
            assert table.loc[qid, ("nDCG", k)] == pytest.approx(h.ndcg_at_k(ranked, gains, k), rel=1e-12, abs=1e-15)


def test_batch_mean_equals_the_evaluation_table(runs, qrels, chunks):
    table = h.evaluate(runs, qrels)
    ids = [c["id"] for c in chunks]
    batch = pd.DataFrame({name: h.batch_scores(run, qrels, chunk_ids=ids).mean() for name, run in runs.items()}).T
    pd.testing.assert_frame_equal(batch, table, check_names=False, rtol=1e-12)


def test_run_questions_not_in_the_qrels_are_ignored():
    table = h.batch_scores({"q1": ["a", "b"], "extra": ["a"]}, {"q1": {"b": 1}}, ks=[1, 2])
    assert list(table.index) == ["q1"]
    assert table.loc["q1", ("MRR", 2)] == 0.5


@pytest.mark.parametrize(
    "run, qrels, ks, message",
    [
        ({"q1": ["a"], "q2": ["b", "c", "b"]}, {"q1": {"a": 1}, "q2": {"b": 1}}, [3], "question 'q2': duplicate id 'b'"),
        ({"q1": ["a"]}, {"q1": {"a": 1}}, [0], "k must be >= 1"),
        ({"q1": ["a"]}, {"q1": {"a": 1}}, [2.5], "k must be an integer"),
        ({"q1": ["a"]}, {"q1": {"a": 1}}, [], "ks is empty"),
        ({"q1": ["a"], "q2": ["a"]}, {"q1": {"a": 1}, "q2": {"a": 0}}, [3], r"question\(s\) \['q2'\] have no relevant chunk"),
        ({"q1": ["a"]}, {"q1": {"a": 1}, "q2": {"a": 1}}, [3], r"no ranking for question\(s\) \['q2'\]"),
        ({"q1": "abc"}, {"q1": {"a": 1}}, [3], "question 'q1': a ranking must be a list or tuple of ids"),
        ({"q1": ["a"]}, {}, [3], "qrels is empty"),
    ],
)
def test_bad_input_raises_an_error_naming_the_question(run, qrels, ks, message):
    with pytest.raises(ValueError, match=message):
        h.batch_scores(run, qrels, ks)


def test_unknown_chunk_ids_are_refused_when_chunk_ids_are_given():
    with pytest.raises(ValueError, match=r"question 'q1': unknown chunk ids \['zzz'\]"):
        h.batch_scores({"q1": ["a", "zzz"]}, {"q1": {"a": 1}}, chunk_ids=["a", "b"])
