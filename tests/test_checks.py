"""retrieval_eval/checks.py: the input checks behind every metric, called directly.

The metrics' own bad-input tests (test_metrics.py) reach these checks through the public functions;
here each check is called on its own: what it accepts, the form it returns, the name it reports.
"""

import math
import re

import numpy as np
import pytest

from retrieval_eval.checks import check_gains, check_positive_int, check_probability, check_ranking, check_relevant


def test_positive_int_accepts_numpy_integers_and_names_the_argument():
    assert check_positive_int(3) == 3
    value = check_positive_int(np.int64(5), "depth")
    assert value == 5 and type(value) is int
    with pytest.raises(ValueError, match="depth must be >= 1, got 0"):
        check_positive_int(0, "depth")
    for bad in (True, 2.0, "3", None):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            check_positive_int(bad)


def test_probability_is_strictly_between_0_and_1_and_names_the_argument():
    assert check_probability(0.95, "confidence") == 0.95
    assert type(check_probability(np.float32(0.5), "power")) is float
    for bad in (0, 1, 95, -0.1, math.nan, True, "0.05", None):
        with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
            check_probability(bad, "alpha")


def test_ranking_is_returned_as_a_list_and_unordered_containers_are_refused():
    assert check_ranking(("b", "a")) == ["b", "a"]
    assert check_ranking(np.array(["b", "a"])) == ["b", "a"]
    assert check_ranking([]) == []
    for bad in ("ab", {"a", "b"}, {"a": 1}, iter(["a"]), None):
        with pytest.raises(ValueError, match="a ranking must be a list or tuple of ids"):
            check_ranking(bad)
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        check_ranking(["a", "b", "a"])


def test_relevant_is_returned_as_a_set_and_gains_are_refused():
    assert check_relevant(["a", "b", "a"]) == {"a", "b"}
    with pytest.raises(ValueError, match="not a mapping of gains"):
        check_relevant({"a": 1})
    with pytest.raises(ValueError, match="must be a collection of ids"):
        check_relevant("a")
    with pytest.raises(ValueError, match="relevant is empty"):
        check_relevant(set())


def test_gains_must_be_finite_numbers():
    gains = {"a": 2, "b": 0.5, "c": np.float32(1), "d": -1}
    assert check_gains(gains) is gains
    for bad in (math.inf, math.nan, "1", True, None):
        with pytest.raises(ValueError, match="gain of 'x' must be a finite number"):
            check_gains({"a": 1, "x": bad})
    with pytest.raises(ValueError, match="gains must be a mapping"):
        check_gains(["a"])


# --- ids that are not str: one check, every entry point ----------------------------------------

import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import helpers as h  # noqa: E402
from retrieval_eval.checks import check_ids  # noqa: E402


def test_the_issue_case_is_refused_naming_the_id():
    """recall_at_k([1, 2], {"1"}, 2) returned 0.0; pytrec_eval refuses integer ids."""
    with pytest.raises(ValueError, match=r"the ranking holds 1 \(int\) at rank 1: ids must be str"):
        h.recall_at_k([1, 2], {"1"}, 2)
    with pytest.raises(ValueError, match=r"relevant holds 1 \(int\): ids must be str"):
        h.recall_at_k(["1"], {1}, 2)


def test_check_ids_names_the_first_bad_id_its_type_and_position():
    check_ids(["a", "b"], "the ranking holds", "rank")
    check_ids([], "the ranking holds", "rank")
    for bad, shown in [(None, "None (NoneType)"), (math.nan, "nan (float)"), (b"a", "b'a' (bytes)"), (["a"], "['a'] (list)"),
                       (("a",), "('a',) (tuple)"), (np.int64(3), "(int64)"), (2.0, "2.0 (float)")]:
        with pytest.raises(ValueError, match=rf"the ranking holds .*{re.escape(shown)} at rank 2: ids must be str"):
            check_ids(["a", bad, 5], "the ranking holds", "rank")
    assert check_ids(np.array(["a", "b"]), "x") is None  # numpy's str_ is a str


# Hashable bad ids can be dict keys (gains, question ids); lists cannot.
HASHABLE_BAD = st.one_of(st.integers(), st.none(), st.just(math.nan), st.floats(allow_nan=False), st.binary(max_size=3),
                         st.tuples(st.text(max_size=2)), st.booleans())
BAD = st.one_of(HASHABLE_BAD, st.lists(st.text(max_size=2), max_size=2))
POOL = [f"d{i}" for i in range(8)]


def entry_points(run: dict, qrels: dict, tmp_path) -> dict:
    """Every entry point that takes ids, called on one run and its qrels: ``{name: call}``."""
    (qid, gains), = qrels.items()
    ranked, relevant = run.get(qid, []), h.relevant_ids(gains) if all(isinstance(d, str) for d in gains) else set(gains)
    return {
        "recall_at_k": lambda: h.recall_at_k(ranked, relevant, 3),
        "precision_at_k": lambda: h.precision_at_k(ranked, relevant, 3),
        "reciprocal_rank": lambda: h.reciprocal_rank(ranked, relevant),
        "mrr": lambda: h.mrr([ranked], [relevant], k=3),
        "ndcg_at_k": lambda: h.ndcg_at_k(ranked, gains, 3),
        "relevant_ids": lambda: h.relevant_ids(gains),
        "evaluate": lambda: h.evaluate({"r": run}, qrels, ks=[3]),
        "per_question_scores": lambda: h.per_question_scores({"r": run}, qrels, ks=[3]),
        "batch_scores": lambda: h.batch_scores(run, qrels, ks=[3]),
        "reciprocal_rank_fusion": lambda: h.reciprocal_rank_fusion([list(POOL[:2]), ranked]),
        "fuse_runs": lambda: h.fuse_runs([{q: list(POOL[:2]) for q in run}, run]),
        "write_trec_run": lambda: h.write_trec_run(run, tmp_path / "run.txt", "t"),
        "write_trec_qrels": lambda: h.write_trec_qrels(qrels, tmp_path / "qrels.txt"),
    }


@st.composite
def cases(draw):
    """A question's run and qrels over str ids, then one id replaced by a bad one: in the ranking,
    among the judged ids, or as the question id."""
    ranked = list(draw(st.permutations(POOL)))[: draw(st.integers(1, len(POOL)))]
    gains = {d: 1 for d in draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True))}
    where = draw(st.sampled_from(["ranking", "judged", "question"]))
    bad = draw(BAD if where == "ranking" else HASHABLE_BAD)
    qid = "q1"
    if where == "ranking":
        ranked[draw(st.integers(0, len(ranked) - 1))] = bad
    elif where == "judged":
        gains = {**gains, bad: 1}
    else:
        qid = bad
    return {qid: ranked}, {qid: gains}, where, bad


@settings(max_examples=150, deadline=None)
@given(cases())
def test_every_entry_point_refuses_an_id_that_is_not_str_and_names_it(tmp_path_factory, case):
    run, qrels, where, bad = case
    folder = tmp_path_factory.mktemp("trec")
    skip = {"question": {"recall_at_k", "precision_at_k", "reciprocal_rank", "mrr", "ndcg_at_k", "relevant_ids",
                         "reciprocal_rank_fusion"},  # they take no question id
            "judged": {"reciprocal_rank_fusion", "fuse_runs", "write_trec_run"},  # they take no judgements
            "ranking": {"relevant_ids", "write_trec_qrels"}}[where]  # they take no ranking
    for name, call in entry_points(run, qrels, folder).items():
        if name in skip:
            continue
        try:
            call()
        except ValueError as err:
            message = str(err)
        else:
            raise AssertionError(f"{name} accepted {bad!r} in the {where}")
        assert f"{bad!r:.60} ({type(bad).__name__})" in message and "ids must be str" in message, (name, message)
    assert not any(folder.iterdir())  # nothing half-written


@settings(max_examples=100, deadline=None)
@given(st.permutations(POOL), st.integers(0, len(POOL)), st.lists(st.sampled_from(POOL), min_size=1, max_size=4, unique=True))
def test_with_str_ids_every_entry_point_gives_the_same_values(tmp_path_factory, ranked, n, judged):
    ranked, gains = list(ranked)[:n], {d: 1 for d in judged}
    run, qrels = {"q1": ranked}, {"q1": gains}
    calls = entry_points(run, qrels, tmp_path_factory.mktemp("trec"))
    table, batch = calls["evaluate"](), calls["batch_scores"]()
    expected = {"recall": calls["recall_at_k"](), "precision": calls["precision_at_k"](),
                "MRR": h.reciprocal_rank(ranked, set(judged), 3), "nDCG": calls["ndcg_at_k"]()}
    for metric, value in expected.items():
        assert table.loc["r", (metric, 3)] == value == batch.loc["q1", (metric, 3)], metric
    assert calls["mrr"]() == expected["MRR"]
    long = calls["per_question_scores"]()
    assert dict(zip(long["metric"], long["value"])) == pytest.approx(expected)
    assert calls["fuse_runs"]() == {"q1": calls["reciprocal_rank_fusion"]()}
    assert isinstance(calls["write_trec_run"](), type(calls["write_trec_qrels"]()))
    pd.testing.assert_frame_equal(table, h.evaluate({"r": run}, qrels, ks=[3]))
