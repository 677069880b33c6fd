"""The three retrievers and the evaluation table on the golden set."""

import pytest
import pytrec_eval

import helpers as h


def test_vector_window_is_512_and_no_chunk_is_truncated(vector, chunks):
    assert vector.model.max_seq_length == 512
    longest = max(len(vector.model.tokenizer.encode(c["text"])) for c in chunks)
    assert longest <= vector.model.max_seq_length


def test_chunk_longer_than_window_is_refused(chunks, tmp_path):
    with pytest.raises(ValueError, match="more than the model's window of 256"):
        h.VectorRetriever(chunks, max_seq_length=256, cache_dir=tmp_path, show_progress=False)


def test_embeddings_are_normalised_and_cached(vector, chunks):
    import numpy as np

    assert np.allclose(np.linalg.norm(vector.embeddings, axis=1), 1.0, atol=1e-5)
    assert len(list(vector.cache_folder.glob("*.npy"))) == len(chunks)
    cached = h.VectorRetriever(chunks, cache_dir=vector.cache_folder.parent, show_progress=False)
    assert np.array_equal(cached.embeddings, vector.embeddings)


def test_rankings_hold_unique_known_chunks_at_least_10_where_they_match(runs, chunks, bm25, golden):
    ids = {c["id"] for c in chunks}
    for name, run in runs.items():
        for qid, ranked in run.items():
            assert len(set(ranked)) == len(ranked) and set(ranked) <= ids, (name, qid)
            if name != "BM25":
                assert len(ranked) >= 10, (name, qid)
    # BM25 ranks exactly the chunks that match (score > 0), never padding with non-matches.
    for qid, question in zip(golden["id"], golden["question"]):
        assert len(runs["BM25"][qid]) == int((bm25.scores(question) > 0).sum()) >= 5


def test_bm25_tokenizer_strips_punctuation_and_case():
    assert h.tokenize("Policy? E-07, don't!") == ["policy", "e-07", "don't"]


def test_bm25_query_with_unknown_words_gets_an_empty_ranking(bm25, qrels):
    assert bm25.rank("xyzzy plugh") == []
    assert bm25.rank("the and is") == []  # words in half the chunks or more have idf 0
    assert h.recall_at_k(bm25.rank("xyzzy"), h.relevant_ids(next(iter(qrels.values()))), 10) == 0.0


def test_bm25_idf_floor_of_rank_bm25_reverses_idf_order(bm25, chunks):
    """rank-bm25's default floor weighs "the" (in every chunk) above rarer words; ours does not."""
    table = bm25.idf_table("the theft damage")
    assert table.loc["the", "chunks"] == len(chunks)
    for word in ("theft", "damage"):
        assert table.loc[word, "chunks"] < len(chunks) / 2
        assert table.loc[word, "idf, epsilon 0.25"] < table.loc["the", "idf, epsilon 0.25"]
        assert table.loc[word, "idf used"] > table.loc["the", "idf used"] == 0.0


def test_empty_query_is_refused(bm25):
    with pytest.raises(ValueError, match="the query must be non-empty text"):
        bm25.rank("   ")


def test_evaluation_table_equals_trec_eval(runs, qrels):
    table = h.evaluate(runs, qrels)
    for name, run in runs.items():
        trec_run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
        for k in h.KS:
            per_q = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}"}).evaluate(trec_run)
            for metric, measure in [("precision", f"P_{k}"), ("recall", f"recall_{k}"), ("nDCG", f"ndcg_cut_{k}")]:
                expected = sum(v[measure] for v in per_q.values()) / len(qrels)
                assert table.loc[name, (metric, k)] == pytest.approx(expected, abs=1e-4), (name, metric, k)
            cut = {q: {d: s for d, s in ranked.items() if s > len(run[q]) - k} for q, ranked in trec_run.items()}
            rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
            assert table.loc[name, ("MRR", k)] == pytest.approx(sum(v["recip_rank"] for v in rr.values()) / len(qrels), abs=1e-4)


def test_ceiling_bounds_every_precision(runs, qrels):
    table = h.evaluate(runs, qrels)
    for k in h.KS:
        assert (table[("precision", k)] <= h.precision_ceiling(qrels, k) + 1e-12).all()


def test_two_runs_give_identical_tables(bm25, vector, golden, qrels, runs):
    again = h.run_retrievers([bm25, vector, h.HybridRetriever(bm25, vector)], golden, progress=False)
    assert again == runs
    assert h.evaluate(again, qrels).equals(h.evaluate(runs, qrels))


def test_run_naming_an_unknown_chunk_is_refused(runs, qrels, chunks):
    run = {q: list(r) for q, r in runs["BM25"].items()}
    first = next(iter(run))
    run[first] = ["no_such_chunk#99"] + run[first]
    with pytest.raises(ValueError, match=rf"question '{first}': unknown chunk ids \['no_such_chunk#99'\]"):
        h.evaluate({"BM25": run}, qrels, chunk_ids=[c["id"] for c in chunks])


def test_run_missing_a_question_is_refused(runs, qrels):
    run = dict(runs["BM25"])
    dropped = run.popitem()[0]
    with pytest.raises(ValueError, match=rf"no ranking for question '{dropped}'"):
        h.evaluate({"BM25": run}, qrels)
