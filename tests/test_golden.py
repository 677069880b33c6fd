"""retrieval_eval/golden.py: the golden set, the computed relevance labels, and every problem a golden file can have."""

import collections

import pandas as pd
import pytest

import helpers as h


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


def test_graded_labels(golden, chunks, qrels):
    graded = h.graded_labels(golden, chunks)
    assert {qid: {c for c, g in gains.items() if g == 2} for qid, gains in graded.items()} == {q: set(g) for q, g in qrels.items()}
    partial = [qid for qid, gains in graded.items() if 1 in gains.values()]
    assert len(partial) >= 15


def test_example_golden_set_is_valid(example_docs, example_chunks, example_dir):
    golden, qrels = h.load_golden_with_qrels(example_dir / "golden.csv", example_chunks, example_docs)
    assert 5 <= len(golden) <= 10 and list(qrels) == list(golden["id"])


# --- bad input ---------------------------------------------------------------------------------


def write_golden(tmp_path, rows, columns=h.GOLDEN_COLUMNS):
    path = tmp_path / "golden.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


GOOD = ("q1", "How long does delivery take?", "a sufficiently long evidence string", "paraphrase")


def test_missing_column_is_named(tmp_path):
    path = write_golden(tmp_path, [GOOD[:3]], columns=h.GOLDEN_COLUMNS[:3])
    with pytest.raises(h.GoldenSetError, match=r"misses column\(s\) \['slice'\]"):
        h.read_golden_csv(path)


def test_all_problems_reported_at_once_with_question_ids(tmp_path):
    rows = [GOOD, ("q2", " ", "another long enough evidence string", "paraphrase"), ("q3", "Why?", "too short", "x"), GOOD]
    with pytest.raises(h.GoldenSetError) as err:
        h.read_golden_csv(write_golden(tmp_path, rows))
    message = str(err.value)
    assert "question 'q2': blank question" in message
    assert "question 'q3': evidence 'too short' is shorter" in message
    assert "question 'q1': duplicate id" in message


def test_wrong_encoding_is_reported(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_bytes("id,question,evidence,slice\nq1,Café?,a long enough evidence string,x\n".encode("latin-1"))
    with pytest.raises(h.GoldenSetError, match="not UTF-8"):
        h.read_golden_csv(path)


def test_golden_file_problems(tmp_path, golden, chunks):
    header_only = tmp_path / "empty.csv"
    header_only.write_text("id,question,evidence,slice\n", encoding="utf-8")
    with pytest.raises(h.GoldenSetError, match="holds no question"):
        h.read_golden_csv(header_only)
    blank = tmp_path / "blank.csv"
    blank.write_text("", encoding="utf-8")
    with pytest.raises(h.GoldenSetError, match="not a readable CSV file"):
        h.read_golden_csv(blank)
    short_partial = golden.head(1).assign(partial_evidence="the")
    short_partial.to_csv(tmp_path / "partial.csv", index=False)
    with pytest.raises(h.GoldenSetError, match="partial_evidence 'the' is shorter than"):
        h.read_golden_csv(tmp_path / "partial.csv")
    with pytest.raises(h.GoldenSetError, match="question 'q9': evidence '  ' is shorter than"):
        h.label_chunks(pd.DataFrame({"id": ["q9"], "evidence": ["  "]}), chunks)


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


def test_partial_evidence_only_in_the_evidence_chunk_is_refused(golden, chunks):
    bad = golden.head(1).copy()
    bad["partial_evidence"] = bad["evidence"]
    with pytest.raises(h.GoldenSetError, match=rf"question '{bad.iloc[0]['id']}': partial evidence"):
        h.graded_labels(bad, chunks)


def test_every_problem_is_listed_at_once_with_question_ids(example_docs, example_chunks, broken_golden):
    path, first, second = broken_golden
    with pytest.raises(h.GoldenSetError) as err:
        h.load_golden_with_qrels(path, example_chunks, example_docs)
    message = str(err.value)
    assert message.startswith("golden.csv has 5 problem(s)")
    for expected in [
        "question 'lh02': blank question",
        "question 'lh03': evidence 'lent for 21 days' is shorter than 20 characters",
        "question 'lh06': duplicate id",
        "question 'lh04': evidence 'the library lends bicycles for a week' is in no chunk and not in the corpus",
        "question 'lh05': evidence",
        f"is cut by a chunk boundary between chunks ['{first}', '{second}']",
    ]:
        assert expected in message
