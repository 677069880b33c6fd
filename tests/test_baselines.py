"""retrieval_eval/baselines.py: the random baseline's exact expectations against every permutation, and BM25 step by step."""

import inspect
import itertools
import math

import pytest

import helpers as h

TOY_QRELS = {"one": {"c1": 1}, "graded": {"c2": 2, "c3": 1, "c4": 0}, "three": {"c1": 1, "c4": 1, "c5": 1}}
TOY_CHUNKS = [f"c{i}" for i in range(1, 7)]


@pytest.mark.parametrize("k", [1, 2, 3, 6, 8])
def test_random_baseline_equals_the_mean_over_every_permutation(k):
    """Every one of the 6! orders of six chunks, scored by the metric functions, averaged: the exact expectation."""
    totals = dict.fromkeys(h.METRICS, 0.0)
    orders = list(itertools.permutations(TOY_CHUNKS))
    for order in orders:
        for gains in TOY_QRELS.values():
            for metric, score in h.METRICS.items():
                totals[metric] += score(list(order), gains, k)
    expected = h.random_baseline(TOY_QRELS, len(TOY_CHUNKS), k)
    assert list(expected.index) == list(h.METRICS)
    for metric, total in totals.items():
        assert expected[metric] == pytest.approx(total / len(orders) / len(TOY_QRELS), abs=1e-12), metric


def test_random_baseline_on_polder_by_formula(qrels, chunks):
    n = len(chunks)
    for k in (1, 3, 10):
        expected = h.random_baseline(qrels, n, k)
        assert expected["recall"] == pytest.approx(k / n)  # every relevant chunk is in the top k with chance k/N
        relevant = sum(len(h.relevant_ids(g)) for g in qrels.values())
        assert expected["precision"] == pytest.approx(relevant / len(qrels) / n)
    # one relevant chunk: at each rank with chance 1/N, so E[RR@k] = (1 + 1/2 + ... + 1/k) / N
    single = {q: g for q, g in qrels.items() if len(g) == 1}
    assert h.random_baseline(single, n, 3)["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3) / n)


def test_bm25_steps_end_at_the_default_bm25(chunks, golden, qrels, runs):
    defaults = {name: p.default for name, p in inspect.signature(h.BM25Retriever).parameters.items()}
    assert all(defaults[name] == value for name, value in h.BM25_STEPS[-1][1].items())
    table = h.bm25_steps(chunks, golden, qrels, k=3)
    labels = [label for label, _ in h.BM25_STEPS]
    assert list(table.index) == [*labels, h.RANDOM_BASELINE]
    assert table.attrs["runs"][labels[-1]] == runs["BM25"]
    means = h.evaluate(runs, qrels, ks=[3]).xs(3, axis=1, level="k")
    assert table.loc[labels[-1], list(h.METRICS)].tolist() == pytest.approx(means.loc["BM25"].tolist())
    assert table.loc[h.RANDOM_BASELINE, list(h.METRICS)].tolist() == pytest.approx(h.random_baseline(qrels, len(chunks), 3).tolist())
    moves = table.loc[labels[1:]]
    # a question that enters or leaves the top 3 has moved; recall moves by what entered minus what left
    assert (moves["first rank moved"] >= moves["into top k"] + moves["out of top k"]).all()
    assert table["first rank moved"].isna().tolist() == [True] + [False] * (len(labels) - 1) + [True]


def test_every_step_is_far_above_the_random_baseline(chunks, golden, qrels):
    """A sanity floor, not a comparison of retrievers: random recall@3 is 3/34; every BM25 step is far above it."""
    table = h.bm25_steps(chunks, golden, qrels, k=3)
    assert table.loc[h.RANDOM_BASELINE, "recall"] == pytest.approx(3 / len(chunks))
    assert (table.drop(h.RANDOM_BASELINE)["recall"] > 5 * table.loc[h.RANDOM_BASELINE, "recall"]).all()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.random_baseline({}, 5, 3), "qrels is empty"),
        (lambda: h.random_baseline({"q": {"a": 1, "b": 1}}, 1, 3), "question 'q' has 2 relevant chunks; a random ranking of 1 chunks"),
        (lambda: h.random_baseline({"q": {"a": 0}}, 4, 3), "question 'q' has 0 relevant chunks"),
        (lambda: h.random_baseline({"q": {"a": 1}}, 0, 3), "n_chunks must be >= 1"),
        (lambda: h.random_baseline({"q": {"a": 1}}, 4, 0), "k must be >= 1"),
        (lambda: h.random_baseline({1: {"a": 1}}, 4, 3), r"the qrels hold question id 1 \(int\)"),
        (lambda: h.random_baseline({"q": {"a": math.nan}}, 4, 3), "gain of 'a' must be a finite number"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
