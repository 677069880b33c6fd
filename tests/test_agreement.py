"""retrieval_eval/analysis/agreement.py: kappa equal to scikit-learn's on random labellings, a toy by hand, and the
evidence rule against the expert's relabelling on Polder."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

import helpers as h
from retrieval_eval.inputs.golden import with_known_false_negatives


@pytest.mark.parametrize("seed", range(20))
def test_kappa_equals_scikit_learn_on_random_labellings(seed):
    rng = np.random.default_rng(seed)
    chunks = [f"c{i}" for i in range(8)]
    pool = {f"q{j}": chunks for j in range(int(rng.integers(2, 8)))}
    a = {q: {c: int(rng.integers(0, 3)) for c in ids} for q, ids in pool.items()}
    b = {q: {c: int(rng.integers(0, 3)) for c in ids if rng.random() < 0.7} for q, ids in pool.items()}  # absent: 0
    flat_a = [a[q][c] for q in pool for c in chunks]
    flat_b = [b[q].get(c, 0) for q in pool for c in chunks]
    result = h.agreement(a, b, pool=pool, resamples=50)
    assert result.pairs == len(flat_a) and result.questions == len(pool)
    assert result.kappa == pytest.approx(cohen_kappa_score(np.array(flat_a) > 0, np.array(flat_b) > 0))
    assert result.weighted_kappa == pytest.approx(cohen_kappa_score(flat_a, flat_b, weights="linear"))
    assert result.confusion.to_numpy().sum() == len(flat_a)
    assert np.trace(result.confusion.to_numpy()) / len(flat_a) == pytest.approx(result.observed)
    low, high = result.interval
    assert low <= high
    # the same pairs as one question: every resample is then the whole pool, so the interval is the point
    one = h.agreement({"q": {f"{q}{c}": g for q in a for c, g in a[q].items()}}, {"q": {f"{q}{c}": g for q in b for c, g in b[q].items()}},
                      pool={"q": [f"{q}{c}" for q in pool for c in chunks]}, resamples=5)
    assert one.interval == pytest.approx((one.kappa, one.kappa)) and one.kappa == pytest.approx(result.kappa)


def test_a_toy_by_hand():
    # 4 pairs: both relevant, both not, A only, B only: p_o = 1/2, p_e = 1/2, kappa 0
    a, b = {"q": {"x": 1, "z": 1}}, {"q": {"x": 1, "w": 2}}
    result = h.agreement(a, b, pool={"q": ["x", "y", "z", "w"]}, names=("ann", "bob"))
    assert result.kappa == 0 and result.observed == 0.5
    assert result.confusion.loc[1, 2] == 0 and result.confusion.loc[0, 2] == 1 and result.confusion.loc[1, 0] == 1
    assert result.confusion.index.name == "ann" and "ann and bob" in result.summary()
    assert h.agreement(a, a, pool={"q": ["x", "y", "z"]}).kappa == 1


@pytest.mark.parametrize("call, message", [
    (lambda: h.agreement({"q": {"x": 1}}, {"p": {"x": 1}}), "different questions: only in A"),
    (lambda: h.agreement({"q": {"x": 1}}, {"q": {"x": 1}}, pool={}), "the pool holds no"),
    (lambda: h.agreement({"q": {"x": 1}}, {"q": {"x": 0.5}}, names=("ann", "bob")), "whole numbers: bob grades question 'q'"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_rule_against_the_expert_on_polder(qrels, runs, chunks):
    expert = with_known_false_negatives(qrels, chunks).qrels
    result = h.agreement(qrels, expert, runs=runs, names=("rule", "expert"))
    added = sum(len(expert[q]) - len(qrels[q]) for q in qrels)
    assert result.confusion.loc[0].drop(0).sum() == added and result.confusion[0].drop(0).sum() == 0
    assert 0.8 < result.kappa < 1 and result.interval[0] < result.kappa < result.interval[1]
    success = {name: [h.success_at_k(runs[name][q], h.relevant_ids(expert[q]), 3) for q in qrels] for name in runs}
    assert result.means["expert"].to_dict() == pytest.approx({name: np.mean(v) for name, v in success.items()})
    assert -1 <= result.tau <= 1 and len(result.verdicts) == len(runs) * (len(runs) - 1) // 2
    assert "Kendall's tau" in result.summary()


# --- a model as judge (a stub scorer and a stub chat model: no model, no network) ----------------------------------


class WordScorer:
    """Scores a chunk by the share of the question's words it holds: a judge with no model."""

    def score(self, question, texts):
        words = set(question.lower().split())
        return [len(words & set(t.lower().split())) / len(words) for t in texts]


def test_a_score_judge_grades_by_thresholds_and_calibrates(setup):
    from retrieval_eval.analysis.judges import ScoreJudge, pool

    judge = ScoreJudge("words", WordScorer(), (0.25, 0.75))
    assert judge("pool open", "the pool is open") == 2 and judge("pool open", "the pool") == 1 and judge("pool open", "x") == 0
    labels = judge.label(setup, depth=3)
    assert {q: sorted(g) for q, g in labels.items()} == pool(setup, 3)
    assert all(set(g) >= set(setup.qrels[q]) for q, g in labels.items())
    calibrated = judge.calibrate(setup.qrels, setup, depth=3)
    (threshold,) = calibrated.thresholds
    kappa = h.agreement(setup.qrels, calibrated.label(setup, depth=3), pool=pool(setup, 3)).kappa
    for other in (threshold - 0.05, threshold + 0.05):  # no other threshold agrees better on the same pool
        labelled = ScoreJudge("words", WordScorer(), (other,)).label(setup, depth=3)
        assert h.agreement(setup.qrels, labelled, pool=pool(setup, 3), resamples=1).kappa <= kappa


def test_a_chat_judge_reads_the_umbrela_score():
    from retrieval_eval.analysis.judges import UMBRELA

    prompts = []

    def chat(prompt):
        prompts.append(prompt)
        return "M: 2, T: 2\n##final score: 3" if "pool" in prompt.split("Passage:")[1] else "##final score: 1"

    judge = h.model_judge(chat)
    assert judge("When does it open?", "The pool opens at 9.") == 2 and judge("When does it open?", "Nothing.") == 0
    assert prompts[0] == UMBRELA.format(question="When does it open?", passage="The pool opens at 9.")
    with pytest.raises(ValueError, match="reply holds no score 0–3: 'I cannot say'"):
        h.model_judge(lambda prompt: "I cannot say")("q", "t")


@pytest.mark.parametrize("call, message", [
    (lambda: h.model_judge("llm"), "kind must be one of"),
    (lambda: h.model_judge("cosine", thresholds=(0.6, 0.3)), "ascending order"),
])
def test_bad_judges(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
def test_the_committed_judge_scores_equal_the_models(setup):
    """data/judge_scores.csv (what notebook 17 reads, made by ``judges.write_scores``) equals the model's scores."""
    from retrieval_eval.analysis.judges import SCORES_PATH, pair_key, pool

    committed = pd.read_csv(SCORES_PATH, dtype={"pair": str})
    texts, asked = {c["id"]: c["text"] for c in setup.chunks}, dict(zip(setup.golden["id"], setup.golden["question"]))
    for kind in ("cosine", "sentence"):
        known = dict(committed.loc[committed["judge"] == kind, ["pair", "score"]].itertuples(index=False))
        fresh = h.model_judge(kind, fresh=True).scorer
        for q, ids in list(pool(setup).items())[::6]:  # every sixth question: the model is slow on two shared cores
            keys = [pair_key(asked[q], texts[c]) for c in ids]
            assert [known[k] for k in keys] == pytest.approx(fresh.score(asked[q], [texts[c] for c in ids]), abs=1e-5)


def test_a_committed_score_is_read_and_a_new_pair_computed():
    from retrieval_eval.analysis.judges import _Committed, pair_key

    committed = _Committed(WordScorer(), "words")
    committed.known = {pair_key("pool open", "the pool"): 0.9}
    assert committed.score("pool open", ["the pool", "the pool is open"]) == [0.9, 1.0]


def test_over_a_pool_only_its_questions_count_and_a_question_left_out_is_all_0():
    a, b = {"q": {"x": 1}, "r": {"y": 1}}, {"q": {"x": 1, "z": 1}}
    result = h.agreement(a, b, pool={"q": ["x", "z"]})
    assert result.pairs == 2 and result.observed == 0.5
    assert h.agreement(a, {"r": {"y": 1}}, pool={"q": ["x", "z"]}).observed == 0.5  # b holds no q: all 0


def test_the_cosine_judge_reads_a_chunk_as_vector_search_does(setup):
    """Same model, same window: on every question vector search's top chunk is the judge's highest cosine."""
    from retrieval_eval.analysis.judges import pool

    scorer = h.model_judge("cosine").scorer  # the committed scores: no model
    texts, asked = {c["id"]: c["text"] for c in setup.chunks}, dict(zip(setup.golden["id"], setup.golden["question"]))
    for q, ids in pool(setup).items():
        scores = scorer.score(asked[q], [texts[c] for c in ids])
        assert ids[scores.index(max(scores))] == setup.runs["vector"][q][0]


def test_both_labellings_score_the_runs_on_the_same_questions():
    """A question one labelling gives no relevant chunk is left out of both means: one set of questions."""
    a, b = {"q1": {"x": 1}, "q2": {"y": 1}}, {"q1": {"x": 1}, "q2": {}}
    runs = {"r": {"q1": ["x"], "q2": ["z"]}, "s": {"q1": ["z"], "q2": ["y"]}}
    result = h.agreement(a, b, runs=runs, k=1, names=("a", "b"), resamples=10)
    assert result.scored == 1 and result.means.to_dict() == {"a": {"r": 1.0, "s": 0.0}, "b": {"r": 1.0, "s": 0.0}}
    assert "the 1 questions both labellings give a relevant chunk" in result.summary()


def test_tied_means_are_shown_as_ties_not_as_an_order():
    a, b = {"q1": {"x": 1}, "q2": {"y": 1}}, {"q1": {"x": 1, "z": 1}, "q2": {"y": 1, "z": 1}}
    runs = {"r": {"q1": ["x"], "q2": ["z"]}, "s": {"q1": ["z"], "q2": ["y"]}}
    summary = h.agreement(a, b, runs=runs, k=1, names=("a", "b"), resamples=10).summary()
    assert "a: r = s; b: r = s" in summary and "the same order" in summary and "tau undefined" in summary
