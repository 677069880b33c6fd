"""The Polder corpus, its chunks, the golden set and the computed relevance labels."""

import collections

import pandas as pd
import pytest

import helpers as h


def test_stored_chunks_equal_a_fresh_rebuild(docs, chunks):
    assert h.chunk_corpus(docs, h.load_tokenizer()) == chunks


def test_chunk_count_and_size(chunks):
    assert 30 <= len(chunks) <= 40
    assert max(c["n_tokens"] for c in chunks) <= h.CHUNK_SIZE
    assert {c["doc"] for c in chunks} == set(h.load_corpus())


def test_golden_set_shape(golden):
    assert len(golden) == 47
    assert golden["id"].is_unique
    slices = collections.Counter(golden["slice"])
    assert len(slices) >= 3 and min(slices.values()) >= 8, slices


def test_relevance_shape_46_single_one_multiple(qrels):
    """The reference lesson's shape: 46 questions with one relevant chunk, one with more."""
    sizes = collections.Counter(len(g) for g in qrels.values())
    assert sizes[1] == 46
    assert sum(n for size, n in sizes.items() if size > 1) == 1


def test_normalise_handles_typography():
    assert h.normalise("ﬁve\u00a0days \u2013 “fully”\n  covered") == 'five days - "fully" covered'


def write_golden(tmp_path, rows, columns=h.GOLDEN_COLUMNS):
    path = tmp_path / "golden.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


GOOD = ("q1", "How long does delivery take?", "a sufficiently long evidence string", "paraphrase")


def test_missing_column_is_named(tmp_path):
    path = write_golden(tmp_path, [GOOD[:3]], columns=h.GOLDEN_COLUMNS[:3])
    with pytest.raises(h.GoldenSetError, match=r"misses column\(s\) \['slice'\]"):
        h.load_golden(path)


def test_all_problems_reported_at_once_with_question_ids(tmp_path):
    rows = [GOOD, ("q2", " ", "another long enough evidence string", "paraphrase"), ("q3", "Why?", "too short", "x"), GOOD]
    with pytest.raises(h.GoldenSetError) as err:
        h.load_golden(write_golden(tmp_path, rows))
    message = str(err.value)
    assert "question 'q2': blank question" in message
    assert "question 'q3': evidence 'too short' is shorter" in message
    assert "question 'q1': duplicate id" in message


def test_wrong_encoding_is_reported(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_bytes("id,question,evidence,slice\nq1,Café?,a long enough evidence string,x\n".encode("latin-1"))
    with pytest.raises(h.GoldenSetError, match="not UTF-8"):
        h.load_golden(path)


def test_evidence_not_in_corpus_names_the_question(golden, chunks, docs):
    bad = golden.head(2).copy()
    bad.loc[bad.index[1], "evidence"] = "this sentence appears nowhere in the Polder corpus"
    with pytest.raises(h.GoldenSetError, match=rf"question '{bad.iloc[1]['id']}'.*not in the corpus"):
        h.label_chunks(bad, chunks, docs)


def test_evidence_cut_by_chunk_boundary_names_both_chunks(golden, chunks, docs):
    first, second = chunks[0], chunks[1]
    assert first["doc"] == second["doc"]
    straddling = " ".join(first["text"].split()[-4:] + second["text"].split()[:4])
    bad = golden.head(1).copy()
    bad["evidence"] = straddling
    with pytest.raises(h.GoldenSetError, match=rf"cut by a chunk boundary between chunks \['{first['id']}', '{second['id']}'\]"):
        h.label_chunks(bad, chunks, docs)


def test_empty_chunk_is_refused(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"id": "d#00", "doc": "d", "text": "  ", "n_tokens": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="chunk 'd#00' has empty"):
        h.load_chunks(path)


def test_evidence_is_located_in_raw_text_as_the_labels_match_it(golden, chunks, qrels):
    text = "Open 09:00\u201317:00 on\nweekdays, \u201cclosed\u201d on Sundays."
    start, end = h.locate_evidence(text, "Open 09:00-17:00 on weekdays")
    assert text[start:end] == "Open 09:00\u201317:00 on\nweekdays"
    assert h.locate_evidence(text, "not in this text at all") is None
    by_id = {c["id"]: c["text"] for c in chunks}
    for qid, evidence in zip(golden["id"], golden["evidence"]):
        for chunk_id in qrels[qid]:
            assert h.locate_evidence(by_id[chunk_id], evidence) is not None, (qid, chunk_id)
