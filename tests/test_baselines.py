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


def test_bm25_variants_start_at_the_default_and_use_lucenes_idf(chunks, golden, qrels, runs):
    defaults = {name: p.default for name, p in inspect.signature(h.BM25Retriever).parameters.items()}
    _, idf, k1, b = h.BM25_VARIANTS[0]
    assert (idf, k1, b, defaults["epsilon"]) == ("robertson", defaults["k1"], defaults["b"], 0.0)
    table = h.bm25_variants(chunks, golden, qrels, k=3)
    labels = [label for label, *_ in h.BM25_VARIANTS]
    assert list(table.index) == labels and list(table.columns) == list(h.METRICS)
    assert table.attrs["runs"][labels[0]] == runs["BM25"]
    for label, idf, k1, b in h.BM25_VARIANTS[1:]:
        if idf == "robertson":
            assert table.attrs["runs"][label] == h.run_retrievers([h.BM25Retriever(chunks, k1=k1, b=b, show_progress=False)],
                                                                  golden, progress=False)["BM25"]


def test_lucene_idf_is_the_documented_formula_and_never_0():
    """Three toy chunks: "bike" is in all of them (Robertson's idf ln(0.5/3.5) < 0, floored to 0 by ours); Lucene's
    idf ln(1 + (N − n + 0.5)/(n + 0.5)) keeps it above 0, so a question of that one word still ranks the chunks."""
    from retrieval_eval.baselines import _LuceneBM25

    toy = [{"id": "a", "text": "bike lock"}, {"id": "b", "text": "bike bell"}, {"id": "c", "text": "bike"}]
    lucene = _LuceneBM25(toy, k1=1.2, b=0.75)
    assert h.BM25Retriever(toy, show_progress=False).rank("bike") == []
    assert lucene.rank("bike") == ["c", "a", "b"]  # the shortest chunk first, then ties by id
    # one occurrence in a chunk of average length: idf × tf / (tf + k1) (Lucene drops BM25's constant k1 + 1)
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    length = {"a": 2, "b": 2, "c": 1}
    average = sum(length.values()) / 3
    score = lucene.scores("lock")[0]
    assert score == pytest.approx(idf / (1 + 1.2 * (1 - 0.75 + 0.75 * length["a"] / average)), rel=1e-6)


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
