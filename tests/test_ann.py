"""Approximate vector search: hnsw_search (faiss-cpu's HNSW graph) against exact search, the ApproximateVector stage's
key and its place in the registry, and the overlap figure of ann_tradeoff recomputed on a small index."""

import numpy as np
import pytest

import helpers as h
from retrieval_eval.analysis.regression import ann_tradeoff
from retrieval_eval.retrieval.retrievers import ApproximateVector, hnsw_search
from retrieval_eval.retrieval.setup import RETRIEVERS


def unit(rng, n, dim=32):
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_graph_searched_widely_enough_is_exact_and_a_narrow_one_is_not():
    rng = np.random.default_rng(3)
    chunks, queries = unit(rng, 2000), unit(rng, 50)
    exact = np.argsort(-(queries @ chunks.T), axis=1, kind="stable")[:, :10]
    wide = hnsw_search(chunks, queries, 10, m=16, ef_search=2000)
    assert wide == exact.tolist()
    narrow = hnsw_search(chunks, queries, 10, m=2, ef_search=1)
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(narrow, exact.tolist())])
    assert overlap < 0.9 and narrow == hnsw_search(chunks, queries, 10, m=2, ef_search=1)  # and the same every time


def test_equal_scores_go_by_the_place_given():
    chunks = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]], dtype=np.float32)
    queries = np.array([[1.0, 0.0]], dtype=np.float32)
    assert hnsw_search(chunks, queries, 3, ef_search=8) == [[0, 1, 2]]
    assert hnsw_search(chunks, queries, 3, ef_search=8, place=np.array([2, 0, 1, 3])) == [[1, 2, 0]]
    with pytest.raises(ValueError, match="ef_search must be a whole number >= 1, got 0"):
        hnsw_search(chunks, queries, 3, ef_search=0)


def test_the_settings_are_in_the_stages_key():
    key = ApproximateVector(m=8, ef_search=32).key()
    assert (key["stage"], key["m"], key["ef_search"], key["ef_construction"]) == ("ApproximateVector", 8, 32, 40)
    assert key != ApproximateVector(m=8, ef_search=64).key()


def test_the_tradeoffs_overlap_figure_is_the_share_of_exact_top_k_the_index_returns():
    table = ann_tradeoff(n_chunks=3000, n_questions=200, dim=32, settings=((2, 1), (16, 3000)), seed=5)
    assert table.loc["M 16, ef 3000", "overlap with exact"] == 1.0
    assert table.loc["M 16, ef 3000", "recall@3"] == table.attrs["exact"]["recall@3"]
    assert table.loc["M 16, ef 3000", "gate"] == "not shown worse"
    narrow = table.loc["M 2, ef 1"]
    assert narrow["overlap with exact"] < 1 and narrow["recall@3"] < table.attrs["exact"]["recall@3"]
    assert narrow["answers lost"] - narrow["answers gained"] == round(
        (table.attrs["exact"]["recall@3"] - narrow["recall@3"]) * 200)


HNSW = "vector, HNSW M 16 ef 16"


def test_the_index_is_registered_and_ranks_only_where_named():
    assert isinstance(RETRIEVERS[HNSW], ApproximateVector) and HNSW not in h.default_retrievers()
    assert list(h.default_retrievers()) == ["BM25", "vector", "hybrid"]  # the core's comparison family
    named = h.default_retrievers("some-model", 256, [HNSW])[HNSW]
    assert (named.m, named.ef_search, named.model_name, named.window) == (16, 16, "some-model", 256)
    with pytest.raises(ValueError, match=r"no registered retriever is named \['HNSW'\]"):
        h.evaluation_setup(retrievers=["HNSW"])


@pytest.mark.slow
def test_the_registered_index_at_34_chunks_returns_exact_searchs_top_3(setup, tmp_path):
    """Named, it ranks beside the three, whose runs stay the committed ones; at 34 chunks the graph is exact."""
    named = h.evaluation_setup(retrievers=[HNSW], cache_dir=tmp_path)  # encodes the questions: loads the model
    assert list(named.runs) == [*h.default_retrievers(), HNSW]
    assert all(named.runs[name] == setup.runs[name] for name in h.default_retrievers())
    exact, index = named.runs["vector"], named.runs[HNSW]
    overlap = np.mean([len(set(exact[q][:3]) & set(index[q][:3])) / 3 for q in exact])
    assert overlap == 1.0


def test_build_and_search_are_timed_apart_per_setting_and_for_exact_search():
    rng = np.random.default_rng(3)
    chunks, seconds = rng.standard_normal((200, 8), dtype=np.float32), {}
    assert hnsw_search(chunks, chunks[:5], 3, seconds=seconds) == hnsw_search(chunks, chunks[:5], 3)
    assert set(seconds) == {"build", "search"} and all(s > 0 for s in seconds.values())
    table = ann_tradeoff(n_chunks=500, n_questions=20, dim=8, settings=((4, 4), (8, 8)), seed=5)
    assert (table[["build, s", "search, s"]] > 0).all().all() and table["build, s"].nunique() == 2
    assert table.attrs["exact"]["build, s"] > 0 and table.attrs["exact"]["search, s"] > 0
