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

import inspect  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
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

# What each parameter name of a public function carries: rankings, judged ids, question ids, chunk ids.
ID_PARAMETERS = {
    "ranked": {"ranking"}, "rankings": {"ranking"}, "ids": {"ranking"}, "docids": {"ranking"},
    "run": {"ranking", "question"}, "runs": {"ranking", "question"},
    "relevant": {"judged"}, "relevants": {"judged"}, "gains": {"judged"}, "qrels": {"judged", "question"},
    "golden": {"question"}, "chunks": {"chunk"}, "chunk_ids": {"chunk"}, "docs": {"chunk"},
}
# Public names that take such a parameter but check nothing themselves: records of checked values.
RECORDS = {
    "Setup": "a record built by evaluation_setup from checked inputs",
    "RunsEvaluation": "a record built by load_runs from files, whose ids are text",
    "Run": "a record built by read_run from a file, whose ids are text",
    "Chunking": "a record built by chunk_and_rank from checked inputs",
}


def id_kinds(name: str) -> set:
    """The kinds of id the public function ``name`` takes, from its parameter names."""
    try:
        parameters = inspect.signature(getattr(h, name)).parameters.values()
    except (TypeError, ValueError):
        return set()
    return set().union(*(ID_PARAMETERS.get(p.name, set()) for p in parameters if _holds_ids(p)))


def public_arguments_names(name: str) -> list[str]:
    return list(inspect.signature(getattr(h, name)).parameters)


def _holds_ids(parameter: inspect.Parameter) -> bool:
    """False for a path (``golden`` as a file name) and for gains given per rank (``Sequence[int]``)."""
    annotation = str(parameter.annotation)
    if parameter.annotation is inspect.Parameter.empty or "Path" in annotation:
        return False
    return parameter.name != "gains" or "Mapping" in annotation


TEXT = "{} holds the words alpha beta gamma and {}"


class World:
    """One question's inputs over the chunks ``POOL``, in every form the public functions take, with
    ``bad`` put where ``where`` says: in the ranking, among the judged ids, as the question id, or as
    a chunk (and document) id."""

    def __init__(self, ranked: list, gains: dict, where: str | None = None, bad=None):
        self.qid = bad if where == "question" else "q1"
        self.ranked = [*ranked[:1], bad, *ranked[1:]] if where == "ranking" else ranked
        self.gains = {**gains, bad: 1} if where == "judged" else gains
        self.relevant = set(self.gains)
        self.run, self.qrels = {self.qid: self.ranked}, {self.qid: self.gains}
        self.runs = {"a": self.run, "b": {self.qid: list(POOL[:2])}}
        ids = [bad if where == "chunk" and i == 1 else d for i, d in enumerate(POOL)]
        self.chunks = [{"id": cid, "doc": "doc", "text": TEXT.format(d, d)} for cid, d in zip(ids, POOL)]
        self.docs = {bad if where == "chunk" else "doc": "\n\n".join(TEXT.format(d, d) for d in POOL)}
        self.golden = pd.DataFrame({"id": pd.Series([self.qid], dtype=object), "question": ["alpha beta"],
                                    "evidence": [TEXT.format("d0", "d0")], "slice": ["s"]})


def public_arguments(world: World, folder) -> dict:
    """Every public function that takes ids, with arguments from one world: ``{name: {parameter: value}}``."""
    w, table = world, h.evaluate({"a": {"q1": POOL[:3]}}, {"q1": {"d0": 1}}, ks=[1, 3])
    golden_file = folder / "golden.csv"
    w.golden.assign(id="q1").to_csv(golden_file, index=False)
    bm25 = h.BM25Retriever([{"id": d, "text": TEXT.format(d, d)} for d in POOL], show_progress=False)
    one = {"ranked": w.ranked, "relevant": w.relevant}
    scored = {"ranked": w.ranked, "gains": w.gains, "k": 3}
    over_questions = {"run": w.run, "qrels": w.qrels, "k": 3}
    runs = {"runs": w.runs, "qrels": w.qrels}
    chunk_ids = [c["id"] if isinstance(c, dict) and "id" in c else "?" for c in w.chunks]
    return {
        "recall_at_k": {**one, "k": 3}, "precision_at_k": {**one, "k": 3}, "reciprocal_rank": one,
        "success_at_k": {**one, "k": 3}, "r_precision": one, "average_precision": one,
        "mrr": {"rankings": [w.ranked], "relevants": [w.relevant], "k": 3},
        "ndcg_at_k": scored, "relevant_ids": {"gains": w.gains}, "exponential_gains": {"gains": w.gains},
        **{name: scored for name in ("hit_rate", "capped_recall", "precision_of_returned", "f1_at_k", "ap_at_k",
                                     "context_precision", "ndcg_retrieved_ideal")},
        "macro_mean": {"score": h.hit_rate, **over_questions},
        **{name: over_questions for name in ("micro_recall", "share_of_ceiling", "switchboard", "trec_eval_means")},
        "split_into_chunks": {"docs": w.docs, "tokenizer": TOKENIZER, "chunk_size": 64},
        "stored_or_split_chunks": {"docs": w.docs, "corpus": folder, "chunk_size": 64, "progress": False},
        "write_chunks": {"chunks": w.chunks, "path": folder / "chunks.jsonl"},
        "stored_chunks_differ": {"docs": w.docs, "chunks": w.chunks},
        "check_chunks": {"chunks": w.chunks},
        "label_chunks": {"golden": w.golden, "chunks": w.chunks, "docs": w.docs},
        "load_golden_with_qrels": {"path": golden_file, "chunks": w.chunks, "docs": w.docs},
        "graded_labels": {"golden": w.golden, "chunks": w.chunks},
        "reciprocal_rank_fusion": {"rankings": [list(POOL[:2]), w.ranked]},
        "fuse_runs": {"runs": [{q: list(POOL[:2]) for q in w.run}, w.run]},
        "BM25Retriever": {"chunks": w.chunks, "show_progress": False},
        "VectorRetriever": {"chunks": w.chunks, "cache_dir": folder, "show_progress": False},
        "run_retrievers": {"retrievers": [bm25], "golden": w.golden, "progress": False},
        "rank_by_score": {"ids": w.ranked, "scores": [1.0] * len(w.ranked)},
        "unindexable_chunks": {"chunks": w.chunks},
        "evaluate": {"runs": {"r": w.run}, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "per_question_scores": {"runs": {"r": w.run}, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "first_relevant_ranks": {**runs, "golden": w.golden},
        "precision_ceiling": {"qrels": w.qrels, "k": 3},
        "slice_report": {**runs, "golden": w.golden, "k": 3},
        "check_run": {"run": w.run, "qrels": w.qrels, "chunk_ids": chunk_ids},
        "plot_metrics": {"table": table, "qrels": w.qrels},
        "plot_precision_ceiling": {"qrels": w.qrels, "ks": [1, 3]},
        "plot_rankings": {"rankings": {"a": w.ranked}, "gains": w.gains, "k": 3},
        "interval_table": {**runs, "k": 3, "n_resamples": 10},
        "paired_comparisons": {**runs, "k": 3},
        "ceiling_widget": {**runs},
        "ceiling_report": {"qrels": w.qrels, "table": table, "k": 3, "retriever": "a"},
        "ceiling_by_k": {"qrels": w.qrels, "table": table},
        "hypothetical_qrels": {"qrels": w.qrels, "n_relevant": 2},
        "ranks_widget": {**runs, "golden": w.golden, "chunks": w.chunks},
        "question_view": {"question_id": w.qid, **runs, "golden": w.golden, "chunks": w.chunks, "k": 3},
        "rrf_widget": {**runs, "golden": w.golden, "inputs": ["a", "b"]},
        "rrf_explanation": {"rankings": {"a": w.ranked, "b": list(POOL[:2])}, "gains": w.gains},
        "fusion_cases": {**runs, "inputs": ["a", "b"]},
        "batch_scores": {"run": w.run, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "write_trec_run": {"run": w.run, "path": folder / "run.txt", "tag": "t"},
        "write_trec_qrels": {"qrels": w.qrels, "path": folder / "qrels.txt"},
        "export_trec": {**runs, "folder": folder / "trec"},
        "trec_order": {"docids": w.ranked, "scores": [1.0] * len(w.ranked)},
        "align_run": {"run": w.run, "qrels": w.qrels},
        "scores_table": {"rankings": {"a": w.run}, "qrels": w.qrels, "ks": [3]},
        "golden_set_audit": {"golden": w.golden, "chunks": w.chunks, **runs},
        "near_duplicate_chunks": {"chunks": w.chunks},
        "chunk_spans": {"text": w.docs.get("doc", ""), "chunks": w.chunks},
        "chunk_and_rank": {"docs": w.docs, "golden": w.golden, "chunk_size": 64, "corpus": folder, "cache_dir": folder,
                           "rank": False},
        "shared_word_pieces": {"setting": h.Chunking(64, 0, w.chunks, w.qrels, {}, {}), "docs": w.docs},
        "bm25_steps": {"chunks": w.chunks, "golden": w.golden, "qrels": w.qrels},
        "bm25_variants": {"chunks": w.chunks, "golden": w.golden, "qrels": w.qrels},
        "random_baseline": {"qrels": w.qrels, "n_chunks": len(POOL), "k": 3},
        "read_known_false_negatives": {"chunks": w.chunks, "qrels": w.qrels, "path": folder / "known.csv"},
        "with_known_false_negatives": {"qrels": w.qrels, "known": pd.DataFrame(
            {"id": pd.Series([], dtype=object), "chunk": pd.Series([], dtype=object)})},
        "per_question_table": {**runs, "k": 3},
        "power_table": {**runs, "k": 3},
        "rrf_tie_effect": {"runs": list(w.runs.values()), "qrels": w.qrels},
        "slice_intervals": {**runs, "golden": w.golden, "n_resamples": 10},
        "slice_comparisons": {**runs, "golden": w.golden, "n_resamples": 10},
    }


def public_calls(world: World, folder) -> dict:
    """The calls of :func:`public_arguments`: ``{name: call}``."""
    return {name: (lambda fn=getattr(h, name), kw=kwargs: fn(**kw))
            for name, kwargs in public_arguments(world, folder).items()}


TOKENIZER = h.load_tokenizer()


def test_every_public_function_that_takes_ids_is_fed_bad_ids(tmp_path):
    """The list below is derived from helpers.__all__: a new public function that takes ids (by
    its parameter names) fails here until it is added to public_calls (or to RECORDS, with a reason)."""
    taking_ids = {name for name in h.__all__ if id_kinds(name)}
    assert taking_ids - set(RECORDS) == set(public_calls(World(list(POOL[:3]), {"d0": 1}), tmp_path))


@st.composite
def cases(draw):
    """A question's ranking and judged ids over str ids, and a bad id with where it goes: in the
    ranking, among the judged ids, as the question id, or as a chunk id."""
    ranked = list(draw(st.permutations(POOL)))[: draw(st.integers(1, len(POOL)))]
    gains = {d: 1 for d in draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True))}
    where = draw(st.sampled_from(["ranking", "judged", "question", "chunk"]))
    bad = draw(BAD if where == "ranking" else HASHABLE_BAD)
    return ranked, gains, where, bad


@settings(max_examples=150, deadline=None)
@given(cases())
def test_every_entry_point_refuses_an_id_that_is_not_str_and_names_it(tmp_path_factory, case):
    ranked, gains, where, bad = case
    folder = tmp_path_factory.mktemp("out")
    for name, call in public_calls(World(ranked, gains, where, bad), folder).items():
        if where not in id_kinds(name):
            continue
        try:
            call()
        except ValueError as err:
            message = str(err)
        else:
            raise AssertionError(f"{name} accepted {bad!r} in the {where}")
        finally:
            plt.close("all")
        assert f"{bad!r:.60} ({type(bad).__name__})" in message and "ids must be str" in message, (name, message)
    assert sorted(p.name for p in folder.iterdir()) == ["golden.csv"]  # nothing half-written


@pytest.mark.parametrize("chunks, message", [
    (["hello world"], "chunk 1 must be a mapping with id and text, got 'hello world'"),
    ([{"id": "a", "text": "x"}, {"text": "no id"}], "chunk 2 must be a mapping with id and text"),
    ([{"id": "a", "text": "x"}, ("b", "tuple")], "chunk 2 must be a mapping with id and text"),
    ("hello world", "chunks must be a list of chunks"),
    ({"id": "a", "text": "one chunk, not a list"}, "chunks must be a list of chunks"),
])
def test_every_function_that_takes_chunks_refuses_chunks_of_the_wrong_shape(tmp_path, chunks, message):
    """The tester's case: BM25Retriever(["hello world"]) stopped with an AttributeError."""
    world = World(list(POOL[:3]), {"d0": 1})
    world.chunks = chunks
    taking_chunks = [name for name in h.__all__ if "chunk" in id_kinds(name) and "chunks" in public_arguments_names(name)]
    assert len(taking_chunks) > 10
    calls = public_calls(world, tmp_path)
    for name in taking_chunks:
        if name in RECORDS:
            continue
        with pytest.raises(ValueError, match=re.escape(message)):
            calls[name]()


# Parameters that take a list (their annotation says Sequence or Iterable): a single value or a string is refused.
def list_parameters() -> list[tuple[str, str]]:
    found = []
    for name in h.__all__:
        try:
            parameters = inspect.signature(getattr(h, name)).parameters.values()
        except (TypeError, ValueError):
            continue
        found += [(name, p.name) for p in parameters if str(p.annotation).startswith(("Sequence", "Iterable"))]
    return found


LIST_CALLS = {  # the list parameters of functions that take no ids, with valid arguments
    "dcg_at_k": {"gains_in_rank_order": [1, 0], "k": 2},
    "disagree_at_k": {"ranks": pd.DataFrame({"a": [1], "b": [2]}, index=["q1"]), "retrievers": ["a", "b"], "k": 1},
    "filter_questions": {"ranks": pd.DataFrame({"question": ["x"], "slice": ["s"], "a": [1], "b": [2]}, index=["q1"]),
                         "retrievers": ["a", "b"], "disagree_k": 1},
    "playground_widget": {"gains": [1, 0], "k": 1}, "playground_scores": {"gains": [1, 0], "k": 1, "missed": [1]},
    "load_runs": {"run_paths": ["run.txt"], "qrels": "qrels.txt"},
    "bootstrap_ci": {"values": [1.0, 0.0]}, "sign_test": {"a": [1.0], "b": [0.0]},
    "chunking_experiment": {"chunk_sizes": [128, 256]},  # refused before anything is read
    "setting_scores": {"setting": h.Chunking(64, 0, [], {}, {}, {}), "ks": [3]},
    "mean_interval": {"values": [1.0, 0.0]}, "holm": {"p_values": [0.01, 0.2]},
    **{name: {"a": [1.0], "b": [0.0]} for name in ("mcnemar_test", "permutation_test", "paired_test")},
    "column_comparisons": {"wide": pd.DataFrame([[1.0, 0.0], [0.0, 0.0]], columns=pd.MultiIndex.from_tuples(
                               [("a", "recall"), ("b", "recall")], names=["retriever", "metric"])),
                           "pairs": [("a", "b")], "family": "toy", "k": 3},
}


@pytest.mark.parametrize("single", [3, "abc", {"a": 1}])
def test_a_single_value_where_a_list_is_expected_is_refused_naming_the_parameter(tmp_path, single):
    """The tester's case: batch_scores(..., ks=3) and evaluate(..., ks=3) stopped inside len() or a loop."""
    arguments = {**public_arguments(World(list(POOL[:3]), {"d0": 1}), tmp_path), **LIST_CALLS}
    found = list_parameters()
    assert {"ks", "metrics", "rankings", "retrievers", "inputs", "show"} <= {p for _, p in found}
    for name, parameter in found:
        assert name in arguments, f"{name} takes the list {parameter}: add it to LIST_CALLS"
        if parameter not in arguments[name]:
            continue  # a parameter left at its default
        with pytest.raises(ValueError, match=rf"({parameter}|a ranking) must be a (flat )?list"):
            getattr(h, name)(**{**arguments[name], parameter: single})
        plt.close("all")


@settings(max_examples=100, deadline=None)
@given(st.permutations(POOL), st.integers(0, len(POOL)), st.lists(st.sampled_from(POOL), min_size=1, max_size=4, unique=True))
def test_with_str_ids_every_entry_point_gives_the_same_values(tmp_path_factory, ranked, n, judged):
    ranked, gains = list(ranked)[:n], {d: 1 for d in judged}
    run, qrels = {"q1": ranked}, {"q1": gains}
    calls = public_calls(World(ranked, gains), tmp_path_factory.mktemp("trec"))
    table, batch = calls["evaluate"](), calls["batch_scores"]()
    expected = {"recall": calls["recall_at_k"](), "precision": calls["precision_at_k"](),
                "MRR": h.reciprocal_rank(ranked, set(judged), 3), "nDCG": calls["ndcg_at_k"]()}
    for metric, value in expected.items():
        assert table.loc["r", (metric, 3)] == value == batch.loc["q1", (metric, 3)], metric
    assert calls["mrr"]() == expected["MRR"]
    long = calls["per_question_scores"]()
    assert dict(zip(long["metric"], long["value"])) == pytest.approx(expected)
    assert calls["fuse_runs"]() == {"q1": calls["reciprocal_rank_fusion"]()}
    assert calls["hit_rate"]() == calls["success_at_k"]() == h.macro_mean(h.hit_rate, run, qrels, 3)
    assert isinstance(calls["write_trec_run"](), type(calls["write_trec_qrels"]()))
    pd.testing.assert_frame_equal(table, h.evaluate({"r": run}, qrels, ks=[3]))


@pytest.mark.parametrize("call, message", [
    (lambda: h.first_relevant_ranks({"r": {1: ["a"]}}, {1: {"a": 1}}, pd.DataFrame({"id": [1], "question": ["x"], "slice": ["s"]})),
     r"the golden set holds question id 1 \(int\) at row 1: ids must be str"),
    (lambda: h.macro_mean(h.hit_rate, {1: ["a"]}, {1: {"a": 1}}, 1), r"the qrels hold question id 1 \(int\): ids must be str"),
    (lambda: h.trec_eval_means({1: ["a"]}, {1: {"a": 1}}, 1), r"the qrels hold question id 1 \(int\): ids must be str"),
    (lambda: h.rank_by_score([1, 2], [0.5, 0.6]), r"ids holds 1 \(int\) at position 1: ids must be str"),
    (lambda: h.batch_scores({"q": ["a"]}, {"q": {"a": 1}}, ks=3), "ks must be a list of cut-offs, got 3"),
    (lambda: h.evaluate({"r": {"q": ["a"]}}, {"q": {"a": 1}}, ks=3), "ks must be a list of cut-offs, got 3"),
    (lambda: h.BM25Retriever(["hello world"]), "chunk 1 must be a mapping with id and text"),
])
def test_the_testers_cases(call, message):
    """Each returned a value, or stopped with a TypeError or AttributeError, before these checks."""
    with pytest.raises(ValueError, match=message):
        call()
