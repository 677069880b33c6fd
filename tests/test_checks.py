"""retrieval_eval/checks.py: the input checks behind every metric, called directly.

The metrics' own bad-input tests (test_metrics.py) reach these checks through the public functions;
here each check is called on its own: what it accepts, the form it returns, the name it reports.
"""

import math

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
