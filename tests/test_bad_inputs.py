"""Inputs that once gave a silently wrong number now raise a clear ValueError naming the culprit."""

import math

import pandas as pd
import pytest

import helpers as h

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}
RUN = {"q1": ["a", "b"], "q2": ["b"]}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: h.recall_at_k(iter(["a", "b"]), {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k({"a", "b"}, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(None, {"a"}, 2), "must be a list or tuple of ids"),
        (lambda: h.recall_at_k(["a"], {"a": 0, "b": 1}, 1), "not a mapping of gains"),
        (lambda: h.reciprocal_rank(["a"], None), "must be a collection of ids"),
        (lambda: h.ndcg_at_k(["a"], {"a": math.nan, "b": 1}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.ndcg_at_k(["a"], {"a": "2"}, 2), "gain of 'a' must be a finite number"),
        (lambda: h.mrr([["a"]], [{"a"}], k=0), "^k must be >= 1"),
        (lambda: h.reciprocal_rank_fusion([["a"], ["b"]], k=math.nan), "k must be a finite number"),
        (lambda: h.evaluate({"X": {"q1": iter(["a"]), "q2": ["b"]}}, QRELS), r"X, question 'q1': a ranking must be"),
        (lambda: h.evaluate({"X": RUN}, {"q1": {"a": math.nan}, "q2": {"b": 1}}), r"X, question 'q1': gain of 'a'"),
        (lambda: h.evaluate({"X": RUN}, {}), "at least one entry"),
        (lambda: h.evaluate({"X": RUN}, QRELS, ks=[]), "ks is empty"),
        (lambda: h.precision_ceiling({"q1": {"a": 0}}, 3), r"\['q1'\] have no relevant chunk"),
        (lambda: h.precision_ceiling({}, 3), "qrels is empty"),
        (lambda: h.bootstrap_ci([0.5, math.nan, 1.0]), "finite numbers"),
        (lambda: h.bootstrap_ci([0.5, 1.0], confidence=95), "confidence must be between 0 and 1"),
        (lambda: h.permutation_p([1, math.nan], [1, math.nan]), "finite numbers"),
        (lambda: h.sign_test([], []), "non-zero length"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x y"}], k1=math.nan, show_progress=False), "BM25 needs k1 >= 0"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], show_progress=False), "duplicate chunk id 'a'"),
        (lambda: h.BM25Retriever([{"id": "a", "text": "x"}], show_progress=False).rank(None), "the query must be non-empty text"),
        (lambda: h.BM25Retriever([], show_progress=False), "there is no chunk"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_first_relevant_ranks_and_rank_differences_refuse_ambiguous_names():
    golden = pd.DataFrame({"id": ["q1", "q2"], "question": ["x", "y"], "evidence": ["-", "-"], "slice": ["s", "s"]})
    with pytest.raises(ValueError, match="clash with the table's own columns"):
        h.first_relevant_ranks({"question": RUN}, QRELS, golden)
    with pytest.raises(ValueError, match="X, question 'q1': duplicate id 'a'"):
        h.first_relevant_ranks({"X": {"q1": ["a", "a"], "q2": ["b"]}}, QRELS, golden)
    with pytest.raises(ValueError, match="only in the qrels"):
        h.first_relevant_ranks({"X": RUN}, {**QRELS, "q3": {"c": 1}}, golden)
    ranks = h.first_relevant_ranks({"X": RUN, "Y": {"q1": ["b", "a"], "q2": ["b"]}}, QRELS, golden)
    assert ranks[["X", "Y"]].values.tolist() == [[1, 2], [1, 1]]
    with pytest.raises(ValueError, match="no retriever 'n_relevant'"):
        h.rank_differences(ranks, "n_relevant", "X")


def test_paired_series_are_matched_by_question():
    a = pd.Series([1.0, 0.0], index=["q1", "q2"])
    b = pd.Series([0.0, 1.0], index=["q2", "q1"])
    assert h.sign_test(a, b) == {"wins": 0, "losses": 0, "ties": 2, "p": 1.0}


def test_run_retrievers_refuses_two_retrievers_with_one_name(bm25, golden):
    with pytest.raises(ValueError, match="retriever names must differ"):
        h.run_retrievers([bm25, bm25], golden, progress=False)


def test_golden_file_problems(tmp_path, golden, chunks):
    header_only = tmp_path / "empty.csv"
    header_only.write_text("id,question,evidence,slice\n", encoding="utf-8")
    with pytest.raises(h.GoldenSetError, match="holds no question"):
        h.load_golden(header_only)
    blank = tmp_path / "blank.csv"
    blank.write_text("", encoding="utf-8")
    with pytest.raises(h.GoldenSetError, match="not a readable CSV file"):
        h.load_golden(blank)
    short_partial = golden.head(1).assign(partial_evidence="the")
    short_partial.to_csv(tmp_path / "partial.csv", index=False)
    with pytest.raises(h.GoldenSetError, match="partial_evidence 'the' is shorter than"):
        h.load_golden(tmp_path / "partial.csv")
    with pytest.raises(h.GoldenSetError, match="question 'q9': evidence '  ' is shorter than"):
        h.label_chunks(pd.DataFrame({"id": ["q9"], "evidence": ["  "]}), chunks)


def test_invisible_characters_do_not_hide_evidence():
    assert h.normalise("bat\u00adtery\u200b charge\ufeff") == "battery charge"


def test_corpus_with_two_documents_of_one_name(tmp_path):
    (tmp_path / "a.md").write_text("first", encoding="utf-8")
    (tmp_path / "a.txt").write_text("second", encoding="utf-8")
    with pytest.raises(ValueError, match="two documents are named 'a'"):
        h.load_corpus(tmp_path)


def test_chunks_file_errors_name_the_line(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "ok", "n_tokens": 3}\n{not json}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="chunks.jsonl, line 2: not valid JSON"):
        h.load_chunks(path)


def test_long_query_is_refused_not_cut(vector):
    with pytest.raises(ValueError, match="more than the model's window of 512"):
        vector.rank("lorem ipsum " * 400 + "How do I charge the battery?")


def test_qrels_naming_an_unknown_chunk_is_refused(runs, qrels, chunks):
    bad = {**qrels, "q01": {"no_such_chunk#00": 1}}
    with pytest.raises(ValueError, match=r"qrels of question 'q01' name unknown chunk ids \['no_such_chunk#00'\]"):
        h.evaluate(runs, bad, chunk_ids=[c["id"] for c in chunks])


def test_empty_question_is_refused_before_ranking(bm25, golden):
    with pytest.raises(ValueError, match="question 'q01' is empty or not text"):
        h.run_retrievers([bm25], golden.head(2).assign(question=["  ", "ok?"]), progress=False)
