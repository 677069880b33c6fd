"""retrieval_eval/analysis/audit.py: the golden-set audit on a toy set checked by hand, on Polder and on the library example."""


import pandas as pd
import pytest

import helpers as h
from retrieval_eval.analysis.audit import content_words, golden_set_audit, near_duplicate_chunks

# --- the pieces -----------------------------------------------------------------------------------


def test_content_words_drop_stop_words_and_stem():
    assert content_words("Renewing the loans; renews, renewal") == {"renew", "loan"}
    assert content_words("When does the pool open?") == {"pool", "open"}
    assert content_words("The, and a!") == set()


@pytest.mark.parametrize("call, message", [
    (lambda: near_duplicate_chunks([{"id": "a", "text": "x y z"}], shingle=0), "shingle must be >= 1"),
])
def test_bad_input_to_the_pieces(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_near_duplicates_by_hand():
    words = [f"w{i}" for i in range(12)]
    chunks = [
        {"id": "a", "text": " ".join(words)},  # 10 shingles of 3 words
        {"id": "b", "text": " ".join(words[:11] + ["other"])},  # shares 9 of them: Jaccard 9 / (10 + 10 − 9)
        {"id": "c", "text": "Something else entirely, nothing shared here"},
        {"id": "d", "text": "tiny"},  # shorter than a shingle: one shingle of its one word
        {"id": "e", "text": "Tiny!"},  # the same tokens: Jaccard 1
    ]
    table = near_duplicate_chunks(chunks, threshold=0.8)
    assert table[["chunk a", "chunk b"]].values.tolist() == [["d", "e"], ["a", "b"]]
    assert table["jaccard"].tolist() == [1.0, 9 / 11] and table["shared shingles"].tolist() == [1, 9]
    assert len(near_duplicate_chunks(chunks, threshold=0.9)) == 1
    assert near_duplicate_chunks([{"id": "x", "text": "---"}]).empty


# --- the audit on a toy set whose answers are known ------------------------------------------------

TOY_GOLDEN = pd.DataFrame({
    "id": ["t1", "t2", "t3", "t4"],
    "question": ["When does the pool open?", "Who repairs broken lamps?", "Where is parking?", "Is the cafe open late?"],
    "evidence": ["The pool opens at seven", "Lamps are repaired by the caretaker", "Parking is behind the hall",
                 "The cafe closes at nine"],
    "slice": ["exact_term", "paraphrase", "exact_term", "paraphrase"],
})
TOY_CHUNKS = [
    {"id": "c1", "text": "The pool opens at seven every morning."},
    {"id": "c2", "text": "Lamps are repaired by the caretaker on Mondays."},
    {"id": "c3", "text": "Parking is behind the hall. Parking is behind the hall too, says the map."},
    {"id": "c4", "text": "Map: Parking is behind the hall."},
    {"id": "c5", "text": "The cafe closes at nine, the pool at ten."},
    {"id": "c6", "text": "Opening times: the cafe closing hour is nine at night."},  # holds the words, not the string
]


@pytest.fixture
def toy():
    qrels = h.label_chunks(TOY_GOLDEN, TOY_CHUNKS)
    runs = {
        "A": {"t1": ["c1", "c5"], "t2": ["c5", "c1"], "t3": ["c3"], "t4": ["c6", "c5"]},
        "B": {"t1": ["c1"], "t2": ["c3", "c4"], "t3": ["c4", "c3"], "t4": ["c5"]},
    }
    return qrels, runs, golden_set_audit(TOY_GOLDEN, TOY_CHUNKS, qrels, runs, k=1)


def test_the_toy_audit(toy):
    qrels, runs, audit = toy
    assert qrels["t3"] == {"c3": 1, "c4": 1}  # the evidence is in two chunks
    assert list(audit.all_first.index) == ["t1", "t3"]  # A and B both rank a relevant chunk first
    assert list(audit.all_missed.index) == ["t2"]  # neither has c2 in its top 1
    assert audit.repeated_evidence.to_dict("index") == {
        "t3": {"evidence": "Parking is behind the hall", "chunks": 2, "chunk ids": "c3, c4"}}
    # c6 is unlabelled for t4, ranked 1 by A, and holds all the content words of the evidence: cafe, close, nine
    assert audit.review[["question_id", "chunk", "best rank", "evidence words shared"]].values.tolist() == [
        ["t4", "c6", 1, 1.0]]
    assert audit.overlap_by_slice.loc["exact_term", "questions"] == 2
    # t1: {pool, open} all in the evidence; t3: {park} in it; t2: {repair, broken, lamp}: 2 of 3; t4: {cafe, open, late}: 1
    assert audit.overlap_by_slice["mean"].to_dict() == pytest.approx({"exact_term": 1.0, "paraphrase": (2 / 3 + 1 / 3) / 2})
    # hit rate@1: A finds t1, t3; B finds t1, t3, t4: a difference of 1/4 overall, 1/2 in the paraphrase slice
    sizes = audit.slice_sizes
    assert sizes.loc["all", "largest observed"] == 0.25 and sizes.loc["paraphrase", "largest observed"] == 0.5
    assert sizes.loc["all", "between"] == "A − B" and sizes.loc["exact_term", "between"] == ""
    assert sizes["smallest possible"].isna().all()  # 4 questions can never show a difference
    text = audit.summary()
    assert "**2** questions are answered at rank 1 by every retriever and **1** are missed in the top 1" in text
    assert "**1** unlabelled chunks in some retriever's top 1 hold at least 80%" in text
    assert "paraphrase (2 questions) nothing (too few questions) against 0.50" in text


@pytest.mark.parametrize("change, message", [
    ({"k": 0}, "k must be >= 1"),
    ({"runs": {}}, "runs is empty"),
    ({"threshold": 0}, r"threshold must be in \(0, 1\]"),
    ({"min_shared": 1.5}, r"min_shared must be in \(0, 1\]"),
    ({"alpha": 0}, "alpha"),
    ({"golden": TOY_GOLDEN.iloc[:3]}, r"question\(s\) \['t4'\] of the qrels are not in the golden set"),
    ({"runs": {"A": {"t1": ["c1"]}}}, r"A has no ranking for question\(s\) \['t2', 't3', 't4'\]"),
    ({"chunks": ["c1"]}, "chunk 1 must be a mapping with id and text"),
])
def test_bad_input_to_the_audit(toy, change, message):
    qrels, runs, _ = toy
    arguments = {"golden": TOY_GOLDEN, "chunks": TOY_CHUNKS, "qrels": qrels, "runs": runs} | change
    with pytest.raises(ValueError, match=message):
        golden_set_audit(**arguments)


# --- on Polder and on the library example ----------------------------------------------------------


def test_the_audit_of_polder(golden, chunks, qrels, runs):
    audit = golden_set_audit(golden, chunks, qrels, runs)
    ranks = h.first_relevant_ranks(runs, qrels, golden)[list(runs)]
    assert list(audit.all_first.index) == list(ranks.index[(ranks == 1).all(axis=1)])
    assert list(audit.all_missed.index) == list(ranks.index[(ranks.fillna(11) > 10).all(axis=1)])
    assert list(audit.repeated_evidence.index) == [q for q, gains in qrels.items() if len(gains) > 1]
    assert audit.overlap_by_slice["questions"].to_dict() == golden["slice"].value_counts().to_dict()
    assert audit.slice_sizes.loc["all", "questions"] == len(golden)
    assert audit.slice_sizes.loc["all", "smallest possible"] == 6 / len(golden)
    strict = golden_set_audit(golden, chunks, qrels, runs, alpha=0.05 / 9)  # Holm's first step in a family of 9
    assert strict.slice_sizes.loc["all", "smallest possible"] == 9 / len(golden)  # 2 × 0.5^9 = 0.0039 <= 0.0056 < 2 × 0.5^8
    assert "α = 0.0056" in strict.summary()
    assert (audit.review["evidence words shared"] >= 0.8).all() and (audit.review["best rank"] <= 10).all()
    for row in audit.review.itertuples():
        assert row.chunk not in qrels[row.question_id]


def test_the_audit_of_the_library_example(example_dir, example_docs, example_chunks):
    from retrieval_eval.inputs.golden import load_golden

    labelled = load_golden(example_dir / "golden.csv", example_chunks, example_docs)
    golden, qrels = labelled.golden, labelled.qrels
    bm25 = h.BM25Retriever(example_chunks)
    runs = {"BM25": {q: bm25.rank(text) for q, text in zip(golden["id"], golden["question"])}}
    audit = golden_set_audit(golden, example_chunks, qrels, runs)
    assert audit.slice_sizes.loc["all", "questions"] == len(golden) == 10
    assert audit.slice_sizes.loc["all", "smallest possible"] == 0.6
    assert audit.slice_sizes["largest observed"].isna().all()  # one retriever: no pair to compare
    assert audit.near_duplicates.empty and audit.repeated_evidence.empty
    assert set(audit.overlap_by_slice.index) == set(golden["slice"])
