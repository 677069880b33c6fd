"""retrieval_eval/analysis/baselines.py: BM25 built one choice at a time and under other engines' settings, each row
the BM25 it names, with the questions it moves and a random-order floor."""

import inspect
import math
from types import SimpleNamespace

import numpy as np
import pytest

import helpers as h
from retrieval_eval.analysis.baselines import held_out_gains
from retrieval_eval.core.registry import shown_metrics

RANDOM = "random order (expected)"


@pytest.fixture(scope="module")
def questions(golden):
    return dict(zip(golden["id"], golden["question"]))


@pytest.fixture(scope="module")
def steps(chunks, questions, qrels):
    return h.bm25_table(h.BM25_STEPS, chunks, questions, qrels, k=3)


def test_the_steps_end_at_the_default_bm25(steps, chunks, qrels, runs):
    defaults = {name: p.default for name, p in inspect.signature(h.BM25Retriever).parameters.items()}
    last = list(h.BM25_STEPS.values())[-1]
    assert all(defaults[name] == value for name, value in last.items())
    labels = list(h.BM25_STEPS)
    assert list(steps.index) == [*labels, RANDOM] and steps.index.name == "BM25 at k = 3"
    assert steps.attrs["runs"][labels[-1]] == runs["BM25"]
    means = h.evaluate(runs, qrels, ks=[3]).xs(3, axis=1, level="k")
    assert steps.loc[labels[-1], shown_metrics()].tolist() == pytest.approx(means.loc["BM25"].tolist())
    assert steps.loc[RANDOM, shown_metrics()].tolist() == pytest.approx(h.random_baseline(qrels, len(chunks), 3).tolist())


def test_each_row_is_the_bm25_it_names(steps, chunks, questions, qrels):
    for label, options in h.BM25_STEPS.items():
        bm25 = h.BM25Retriever(chunks, **options)
        assert steps.attrs["runs"][label] == {q: bm25.rank(text) for q, text in questions.items()}, label


def test_the_moves_count_questions_against_the_row_before(steps, qrels):
    labels = list(h.BM25_STEPS)
    ranks = h.first_relevant_ranks(steps.attrs["runs"], qrels)[labels].astype(float).fillna(math.inf)
    for before, after in zip(labels, labels[1:]):
        moved = ranks[after] != ranks[before]
        into = (ranks[after] <= 3) & (ranks[before] > 3)
        out = (ranks[after] > 3) & (ranks[before] <= 3)
        assert steps.loc[after, ["first rank moved", "into top k", "out of top k"]].tolist() == [
            moved.sum(), into.sum(), out.sum()], after
        found = (ranks[after] <= 3).mean() - (ranks[before] <= 3).mean()  # success@3 moves by what entered minus left
        assert found == pytest.approx((into.sum() - out.sum()) / len(qrels))
    assert steps["first rank moved"].isna().tolist() == [True] + [False] * (len(labels) - 1) + [True]
    assert str(steps["first rank moved"].dtype) == "Int64"


def test_every_step_is_far_above_the_random_order(steps, chunks):
    """A sanity floor, not a comparison: random recall@3 is 3/34; every BM25 step is far above it."""
    assert steps.loc[RANDOM, "recall"] == pytest.approx(3 / len(chunks))
    assert (steps.drop(RANDOM)["recall"] > 5 * steps.loc[RANDOM, "recall"]).all()


def test_the_variants_start_at_our_default_and_end_at_an_engine(chunks, questions, qrels, runs):
    table = h.bm25_table(h.BM25_VARIANTS, chunks, questions, qrels, k=3)
    labels = list(h.BM25_VARIANTS)
    assert list(table.index) == [*labels, RANDOM]
    assert h.BM25_VARIANTS[labels[0]] == {} and table.attrs["runs"][labels[0]] == runs["BM25"]
    assert h.BM25_VARIANTS[labels[-1]] == h.LUCENE_ENGLISH
    engine = h.BM25Retriever(chunks, **h.LUCENE_ENGLISH)
    assert table.attrs["runs"][labels[-1]] == {q: engine.rank(text) for q, text in questions.items()}
    assert all(options.get("idf", "robertson") in ("robertson", "lucene") for options in h.BM25_VARIANTS.values())


@pytest.mark.parametrize("settings, k, message", [
    ({"bad": {"k1": -1}}, 3, "BM25 needs k1 >= 0"),
    ({"bad": {"stop_words": "english"}}, 3, "unknown stop-word list 'english'"),
    ({"bad": {"kl": 1.2}}, 3, "unexpected keyword argument 'kl'"),
    ({"ours": {}}, 0, "k must be >= 1"),
])
def test_bad_settings_are_refused(chunks, questions, qrels, settings, k, message):
    with pytest.raises((ValueError, TypeError), match=message):
        h.bm25_table(settings, chunks, questions, qrels, k=k)


def test_a_toy_table_by_hand():
    chunks = [{"id": "a", "text": "bike lock and chain"}, {"id": "b", "text": "bike bell"}, {"id": "c", "text": "a chain"},
              {"id": "d", "text": "rain cover for the basket"}]
    qrels = {"q1": {"c": 1}, "q2": {"d": 1}}
    table = h.bm25_table({"ours": {}, "Lucene's idf": {"idf": "lucene"}}, chunks, {"q1": "chain", "q2": "rain"}, qrels, k=1)
    # "chain" is in 2 of the 4 chunks: Robertson's idf ln((4 − 2 + 0.5) / (2 + 0.5)) = 0, so our BM25 matches nothing;
    # Lucene's idf stays above 0 and puts the shorter chunk c first. "rain" is only in d.
    assert table.attrs["runs"]["ours"] == {"q1": [], "q2": ["d"]}
    assert table.attrs["runs"]["Lucene's idf"] == {"q1": ["c", "a"], "q2": ["d"]}
    assert table["recall"].tolist() == [0.5, 1.0, pytest.approx(1 / 4)]
    assert table.loc["Lucene's idf", ["first rank moved", "into top k", "out of top k"]].tolist() == [1, 1, 0]


def test_held_out_gains_keep_a_real_gain_and_lose_a_gain_picked_from_noise():
    qrels = {f"q{i:02d}": {f"d{i}": 1} for i in range(40)}
    found, missed = ({q: [f"d{i}" if hit else "x", "y", "z"] for i, q in enumerate(qrels)} for hit in (True, False))
    rng = np.random.default_rng(1)
    hits = [set(rng.permutation(list(qrels))[:20]) for _ in range(8)]  # each setting finds 20 of the 40 questions
    noise = {f"noise {j}": {q: found[q] if q in hit else missed[q] for q in qrels} for j, hit in enumerate(hits)}
    setup = SimpleNamespace(qrels=qrels)
    table = held_out_gains(setup, n_splits=200, choices={"real": ("none", {"none": missed, "all": found}),
                                                         "noise": ("noise 0", noise)})
    real, chance = table.loc["real"], table.loc["noise"]
    assert (real["in-sample gain"], real["held-out gain"], real["share kept"], real["best on all"]) == (1, 1, 1, "all")
    # Equal totals: a setting's hits on one half of 20 are 20 minus those on the other, so the best pick on one half is
    # the worst on the other: every in-sample gain comes back held out with its sign flipped.
    assert chance["in-sample gain"] > 0.1 and chance["held-out gain"] == pytest.approx(-chance["in-sample gain"])
    assert chance["gain on all"] == 0 and chance["picks that lost held out"] > 0.5
    assert real["held out, leave one out"] == 1  # each question left out: the pick on the other 39 finds it
    # Leave one out by hand: the pick on the other 39 questions, scored on the one left out.
    values = np.array([[noise[s][q][0] in qrels[q] for s in noise] for q in qrels], dtype=float)
    by_hand = np.mean([values[i, np.delete(values, i, 0).mean(0).argmax()] - values[i, 0] for i in range(40)])
    assert chance["held out, leave one out"] == pytest.approx(by_hand)
