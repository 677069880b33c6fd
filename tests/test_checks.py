"""retrieval_eval/core/checks.py: the checks at the door, called directly; then the whole kind through every door —
every public function that takes ids refuses an id that is not str and names it, and every list parameter
refuses a single value."""

import inspect
import math
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.analysis.comparisons import values_at_k
from retrieval_eval.core.checks import (
    check_gains,
    check_ids,
    check_k,
    check_ks,
    check_list,
    check_probability,
    check_qrels,
    check_ranking,
    check_relevant,
    check_run,
    check_runs,
    finite_number,
    naming_question,
)
from retrieval_eval.retrieval.fusion import fuse_runs


def test_check_k_accepts_numpy_integers_and_names_the_argument():
    assert check_k(3) == 3
    value = check_k(np.int64(5), "depth")
    assert value == 5 and type(value) is int
    with pytest.raises(ValueError, match="depth must be >= 1, got 0"):
        check_k(0, "depth")
    for bad in (True, 2.0, "3", None, math.nan):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            check_k(bad)


def test_check_ks_and_check_list_take_ordered_containers_only():
    assert check_ks((1, 3)) == [1, 3] and check_ks(range(1, 4)) == [1, 2, 3] and check_ks(np.array([5, 10])) == [5, 10]
    assert check_ks(pd.Series([3, 1])) == [3, 1]  # the order given
    for single in (3, "13", {1, 3}, {1: 1}, iter([1])):
        with pytest.raises(ValueError, match="ks must be a list of cut-offs"):
            check_ks(single)
    with pytest.raises(ValueError, match=r"ks holds the cut-off\(s\) \[3\] twice"):
        check_ks([3, 1, 3])
    with pytest.raises(ValueError, match="ks: k must be >= 1, got 0"):
        check_ks([1, 0])
    assert check_list(("a", "b"), "names", "names") == ["a", "b"]


def test_check_probability_is_strictly_between_0_and_1_and_names_the_argument():
    assert check_probability(0.95, "confidence") == 0.95
    assert type(check_probability(np.float32(0.5), "power")) is float
    for bad in (0, 1, 95, -0.1, math.nan, True, "0.05", None):
        with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
            check_probability(bad, "alpha")


def test_check_ranking_returns_a_list_and_refuses_unordered_containers():
    assert check_ranking(("b", "a")) == ["b", "a"]
    assert check_ranking(np.array(["b", "a"])) == ["b", "a"]
    assert check_ranking([]) == []
    for bad in ("ab", {"a", "b"}, {"a": 1}, iter(["a"]), None, pd.Series(["a"])):
        with pytest.raises(ValueError, match="a ranking must be a list or tuple of ids"):
            check_ranking(bad)
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        check_ranking(["a", "b", "a"])


def test_check_relevant_returns_a_set_and_refuses_gains():
    assert check_relevant(["a", "b", "a"]) == {"a", "b"}
    with pytest.raises(ValueError, match="not a mapping of gains"):
        check_relevant({"a": 1})
    with pytest.raises(ValueError, match="must be a collection of ids"):
        check_relevant("a")
    with pytest.raises(ValueError, match="relevant is empty"):
        check_relevant(set())


def test_check_gains_and_finite_number():
    gains = {"a": 2, "b": 0.5, "c": np.float32(1), "d": -1}
    assert check_gains(gains) is gains
    for bad in (math.inf, math.nan, "1", True, None, np.nan):
        assert not finite_number(bad)
        with pytest.raises(ValueError, match="gain of 'x' must be a finite number"):
            check_gains({"a": 1, "x": bad})
    with pytest.raises(ValueError, match="gains must be a mapping"):
        check_gains(["a"])


def test_check_qrels_and_runs_return_plain_dicts_in_qrels_order():
    qrels = check_qrels({"q2": {"b": 1}, "q1": {"a": 1, "z": 0}})
    assert qrels == {"q2": {"b": 1}, "q1": {"a": 1, "z": 0}} and list(qrels) == ["q2", "q1"]
    assert check_qrels({"q": {"a": 0}}, scorable=False) == {"q": {"a": 0}}
    run = check_run({"q1": ("a",), "extra": ["x"], "q2": np.array(["b"])}, qrels)
    assert run == {"q2": ["b"], "q1": ["a"]} and list(run) == ["q2", "q1"]
    runs, checked = check_runs({"X": {"q1": [], "q2": []}}, qrels, chunk_ids=["a", "b", "z"])
    assert runs == {"X": {"q2": [], "q1": []}} and checked == qrels
    with pytest.raises(ValueError, match=r"qrels of question 'q1' name unknown chunk ids \['z'\]"):
        check_runs({"X": {"q1": [], "q2": []}}, qrels, chunk_ids=["a", "b"])


def test_naming_question_prefixes_a_value_error_and_nothing_else():
    with pytest.raises(ValueError, match="^run X, question 'q1': boom$"):
        with naming_question("q1", "run X, "):
            raise ValueError("boom")
    with pytest.raises(KeyError):
        with naming_question("q1"):
            raise KeyError("other errors pass through")


def test_check_ids_names_the_first_bad_id_its_type_and_position():
    check_ids(["a", "b"], "the ranking holds", "rank")
    check_ids([], "the ranking holds", "rank")
    for bad, shown in [(None, "None (NoneType)"), (math.nan, "nan (float)"), (b"a", "b'a' (bytes)"), (["a"], "['a'] (list)"),
                       (("a",), "('a',) (tuple)"), (np.int64(3), "(int64)"), (2.0, "2.0 (float)")]:
        with pytest.raises(ValueError, match=rf"the ranking holds .*{re.escape(shown)} at rank 2: ids must be str"):
            check_ids(["a", bad, 5], "the ranking holds", "rank")
    assert check_ids(np.array(["a", "b"]), "x") is None  # numpy's str_ is a str


# --- the whole kind: every public function that takes ids refuses one that is not str -------------------

# Hashable bad ids can be dict keys (gains, question ids); lists cannot.
HASHABLE_BAD = st.one_of(st.integers(), st.none(), st.just(math.nan), st.floats(allow_nan=False), st.binary(max_size=3),
                         st.tuples(st.text(max_size=2)), st.booleans())
BAD = st.one_of(HASHABLE_BAD, st.lists(st.text(max_size=2), max_size=2))
POOL = [f"d{i}" for i in range(8)]

# What each parameter name of a public function carries: rankings, judged ids, question ids, chunk ids.
ID_PARAMETERS = {
    "ranked": {"ranking"}, "rankings": {"ranking"}, "run": {"ranking", "question"}, "runs": {"ranking", "question"},
    "relevant": {"judged"}, "relevants": {"judged"}, "gains": {"judged"}, "qrels": {"judged", "question"},
    "golden": {"question"}, "chunks": {"chunk"}, "chunk_ids": {"chunk"}, "docs": {"chunk"},
}
# Public names that take such a parameter but check nothing themselves: records, or second stages fed checked runs.
RECORDS = {
    "rerank": "a second stage: reorders a run that entered through evaluation_setup (texts by chunk id)",
    "oracle_rerank": "a second stage: reorders a checked run by checked qrels",
    "slice_gap": "reads the rank table first_relevant_ranks made from checked runs; its run is a run's name",
}

EXAMPLE = Path(__file__).parent.parent / "examples" / "library_hours"
TEXT = "{} holds the words alpha beta gamma and {}"


class Zero:
    def score(self, question, texts):
        return [0.0] * len(texts)

    def key(self):
        return {"reranker": "zero"}


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
    w = world
    one = {"ranked": w.ranked, "relevant": w.relevant}
    scored = {"ranked": w.ranked, "gains": w.gains, "k": 3}
    over_questions = {"run": w.run, "qrels": w.qrels, "k": 3}
    runs = {"runs": w.runs, "qrels": w.qrels}
    chunk_ids = [c["id"] if isinstance(c, dict) and "id" in c else "?" for c in w.chunks]
    questions = {w.qid: "alpha beta"}
    return {
        "recall_at_k": {**one, "k": 3}, "precision_at_k": {**one, "k": 3}, "reciprocal_rank": one,
        "success_at_k": {**one, "k": 3}, "first_relevant_rank": one,
        "mrr": {"rankings": [w.ranked], "relevants": [w.relevant], "k": 3},
        "ndcg_at_k": scored, "relevant_ids": {"gains": w.gains}, "iprec_at_recall": {"ranked": w.ranked, "gains": w.gains},
        **{name: scored for name in ("hit_rate", "capped_recall", "precision_of_returned",
                                     "average_precision", "ndcg_retrieved_ideal")},
        "macro_mean": {"score": h.hit_rate, **over_questions},
        **{name: over_questions for name in ("micro_recall", "share_of_ceiling", "switchboard", "trec_eval_means")},
        "split_into_chunks": {"docs": w.docs, "tokenizer": TOKENIZER, "chunk_size": 64},
        "label_chunks": {"golden": w.golden, "chunks": w.chunks, "docs": w.docs},
        "with_known_false_negatives": {"chunks": w.chunks, "qrels": w.qrels, "path": folder / "known.csv"},
        "reciprocal_rank_fusion": {"rankings": [list(POOL[:2]), w.ranked]},
        "BM25Retriever": {"chunks": w.chunks},
        "evaluate": {"runs": {"r": w.run}, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "per_question_scores": {"runs": {"r": w.run}, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "batch_scores": {"run": w.run, "qrels": w.qrels, "ks": [3], "chunk_ids": chunk_ids},
        "first_relevant_ranks": {**runs, "golden": w.golden},
        "precision_ceiling": {"qrels": w.qrels, "k": 3},
        "random_baseline": {"qrels": w.qrels, "n_chunks": len(POOL), "k": 3},
        "paired_comparisons": {**runs, "k": 3},
        "against_chance": {**runs, "n_chunks": len(POOL), "k": 3},
        "interval_table": {**runs, "k": 3},
        "rerank": {"run": w.run, "reranker": Zero(), "texts": {d: d for d in POOL}, "questions": questions},
        "oracle_rerank": {"run": w.run, "qrels": w.qrels},
        "two_stage_table": {**runs},
        "bm25_table": {"settings": {"ours": {}}, "chunks": w.chunks, "questions": questions, "qrels": w.qrels},
        "tie_effect": {"runs": list(w.runs.values()), "qrels": w.qrels},
        "golden_set_audit": {"golden": w.golden, "chunks": w.chunks, **runs},
        "plot_precision_recall": {**runs},
        "plot_rankings": {"rankings": {"a": w.ranked}, "gains": w.gains, "k": 3},
        "ceiling_widget": {**runs},
        "depth_widget": {**runs},
        "document_level": {**runs, "chunks": w.chunks},
        "graded_labels": {"golden": w.golden, "chunks": w.chunks},
        "published_metrics": over_questions,
        "ranks_widget": {**runs, "golden": w.golden, "chunks": w.chunks},
        "rrf_widget": {**runs, "golden": w.golden, "inputs": ["a", "b"]},
        "export_trec": {**runs, "folder": folder / "trec"},
        "agreement": {"a": w.qrels, "b": w.qrels, "runs": w.runs, "resamples": 10},
        "gate": {"baseline": w.run, "candidate": w.run, "qrels": w.qrels, "k": 3},
    }


def public_calls(world: World, folder) -> dict:
    return {name: (lambda fn=getattr(h, name), kw=kwargs: fn(**kw))  # noqa: B008 - each lambda binds its own function
            for name, kwargs in public_arguments(world, folder).items()}


def _holds_ids(parameter: inspect.Parameter) -> bool:
    """False for a path (``golden`` as a file name) and for gains given per rank (``Sequence[int]``)."""
    annotation = str(parameter.annotation)
    if parameter.annotation is inspect.Parameter.empty or "Path" in annotation:
        return parameter.annotation is inspect.Parameter.empty and parameter.name in ("run", "runs", "qrels")
    return parameter.name != "gains" or "Mapping" in annotation


def id_kinds(name: str) -> set:
    """The kinds of id the public function ``name`` takes, from its parameter names."""
    try:
        parameters = inspect.signature(getattr(h, name)).parameters.values()
    except (TypeError, ValueError):
        return set()
    return set().union(*(ID_PARAMETERS.get(p.name, set()) for p in parameters if _holds_ids(p)))


TOKENIZER = None


@pytest.fixture(scope="module", autouse=True)
def tokenizer():
    """The bundled model's word pieces, read with the tokenizers library (no torch)."""
    from retrieval_eval.inputs.models import fast_tokenizer

    global TOKENIZER
    TOKENIZER = fast_tokenizer(None)


def test_every_public_function_that_takes_ids_is_fed_bad_ids(tmp_path):
    """The list is derived from helpers.__all__: a new public function that takes ids (by its parameter
    names) fails here until it is added to public_arguments (or to RECORDS, with a reason)."""
    taking_ids = {name for name in h.__all__ if id_kinds(name)}
    assert taking_ids - set(RECORDS) == set(public_arguments(World(list(POOL[:3]), {"d0": 1}), tmp_path)) - set(RECORDS)




@st.composite
def cases(draw):
    """A question's ranking and judged ids over str ids, and a bad id with where it goes."""
    ranked = list(draw(st.permutations(POOL)))[: draw(st.integers(1, len(POOL)))]
    gains = {d: 1 for d in draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique=True))}
    where = draw(st.sampled_from(["ranking", "judged", "question", "chunk"]))
    bad = draw(BAD if where == "ranking" else HASHABLE_BAD)
    return ranked, gains, where, bad


def refuses(call, bad, name="") -> str:
    try:
        call()
    except ValueError as err:
        return str(err)
    finally:
        plt.close("all")
    raise AssertionError(f"{name} accepted {bad!r}")


@settings(max_examples=examples(40), deadline=None)
@given(cases())
def test_every_entry_point_refuses_an_id_that_is_not_str_and_names_it(tmp_path_factory, case):
    ranked, gains, where, bad = case
    folder = tmp_path_factory.mktemp("out")
    for name, call in public_calls(World(ranked, gains, where, bad), folder).items():
        if where not in id_kinds(name) or name in RECORDS:
            continue
        message = refuses(call, bad, name)
        assert f"{bad!r:.60} ({type(bad).__name__})" in message and "ids must be str" in message, (name, message)
    assert sorted(p.name for p in folder.iterdir()) == []  # nothing half-written


@pytest.mark.slow
def test_the_vector_retriever_refuses_a_chunk_id_that_is_not_str(tmp_path):
    from retrieval_eval.retrieval.retrievers import VectorRetriever

    message = refuses(lambda: VectorRetriever(World(list(POOL[:3]), {"d0": 1}, "chunk", 7).chunks, cache_dir=tmp_path), 7)
    assert "7 (int)" in message and "ids must be str" in message


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
    taking_chunks = [name for name in h.__all__ if "chunk" in id_kinds(name)
                     and "chunks" in inspect.signature(getattr(h, name)).parameters and name not in RECORDS]
    assert len(taking_chunks) >= 5
    calls = public_calls(world, tmp_path)
    for name in taking_chunks:
        with pytest.raises(ValueError, match=re.escape(message)):
            calls[name]()
        plt.close("all")


# --- a single value where a list is expected ------------------------------------------------------


def list_parameters() -> list[tuple[str, str]]:
    """(function, parameter) for every public parameter annotated as a Sequence or Iterable."""
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
    "playground_widget": {"gains": [1, 0], "k": 1},
    "bootstrap_ci": {"values": [1.0, 0.0]}, "mean_interval": {"values": [1.0, 0.0]}, "holm": {"p_values": [0.01, 0.2]},
    **{name: {"a": [1.0, 0.0], "b": [0.0, 0.0]} for name in ("mcnemar_test", "permutation_test", "paired_test")},
    "chance_found": {"n_relevant": [1, 2], "n_chunks": 5, "k": 2}, "beats_chance": {"found": 1, "chances": [0.5, 0.5]},
    "chunking_experiment": {"chunk_sizes": [128, 256]},  # refused before anything is read
    "tie_effect": {"runs": [{"q1": ["a"]}, {"q1": ["b"]}], "qrels": {"q1": {"a": 1}}},
    "evaluation_setup": {"corpus": EXAMPLE / "corpus", "golden": EXAMPLE / "golden.csv", "chunk_size": 128, "cutoffs": [3]},
    "load_corpus": {"folder": EXAMPLE / "corpus"},
    "reranked_runs": {"setup": SimpleNamespace(level="chunk", runs={})},  # refused before anything is read
    "model_judge": {"thresholds": [0.5]}, "default_retrievers": {"names": ["BM25"]},
    "recall_at_budget": {"settings": {"s": SimpleNamespace(chunks=[{"id": "d0", "n_tokens": 5}], qrels={"q1": {"d0": 1}},
                                                           runs={"a": {"q1": ["d0"]}})}},
    "judging_widget": {"setup": SimpleNamespace(qrels={"q1": {"d0": 1}}, runs={"a": {"q1": ["d0", "d1"]}}), "judge": "ann",
                       "questions": ["q1"], "folder": Path("/nonexistent")},  # refused before any file
    "ann_tradeoff": {"n_chunks": 50, "n_questions": 5, "settings": [(4, 4)]},
    "gate_error_rates": {"ns": [5], "simulations": 10},
}


@pytest.mark.parametrize("single", [3, "abc", {"a": 1}])
def test_a_single_value_where_a_list_is_expected_is_refused_naming_the_parameter(tmp_path, single):
    """The tester's case: batch_scores(..., ks=3) and evaluate(..., ks=3) stopped inside len() or a loop."""
    arguments = {**public_arguments(World(list(POOL[:3]), {"d0": 1}), tmp_path), **LIST_CALLS}
    found = list_parameters()
    assert {"ks", "metrics", "rankings", "inputs", "show", "depths", "chunk_sizes"} <= {p for _, p in found}
    for name, parameter in found:
        assert name in arguments, f"{name} takes the list {parameter}: add it to LIST_CALLS"
        if parameter not in arguments[name] and parameter not in ("ks", "metrics", "depths"):
            continue  # a parameter left at its default
        with pytest.raises(ValueError, match=rf"({parameter}|a ranking) must be a (flat )?list|must be a list of"):
            getattr(h, name)(**{**arguments[name], parameter: single})
        plt.close("all")


@settings(max_examples=examples(30), deadline=None)
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
    assert fuse_runs([{"q1": list(POOL[:2])}, run]) == {"q1": calls["reciprocal_rank_fusion"]()}
    assert calls["hit_rate"]() == calls["success_at_k"]() == h.macro_mean(h.hit_rate, run, qrels, 3)
    assert values_at_k({"r": run}, qrels, 3, "MRR")["r"].tolist() == [expected["MRR"]]
