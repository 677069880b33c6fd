"""The figures README.md states about the golden set are the ones the code computes."""

import re
from pathlib import Path

import pytest

import helpers as h

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_sizes(golden, chunks, qrels):
    assert f"golden set: {len(golden)} questions" in README
    assert f"split into {len(chunks)} chunks" in README
    single = sum(len(g) == 1 for g in qrels.values())
    assert f"{single} questions have exactly one relevant chunk" in README
    ceiling = h.precision_ceiling(qrels, 3)
    assert f"pass about {ceiling:.2f} here" in README
    judged = int(golden["partial_evidence"].str.strip().ne("").sum())
    partial = sum(1 for g in h.graded_labels(golden, chunks).values() if 1 in g.values())
    assert f"`partial_evidence` for the {judged} questions that have a hand-judged partial answer (gain 1 for the " \
           f"{partial} whose partial answer is in a chunk without the evidence" in README


def test_bm25_floor_figures(golden, chunks, qrels, bm25):
    floored = sum(bool((bm25.idf_table(q)["raw idf"] < 0).any()) for q in golden["question"])
    assert f"({floored} of the {len(golden)} questions contain such a word)" in README
    default = h.BM25Retriever(chunks, epsilon=0.25, show_progress=False)
    recall = {
        name: h.evaluate({"x": h.run_retrievers([r], golden, progress=False)["BM25"]}, qrels, ks=[3]).iloc[0][("recall", 3)]
        for name, r in [("default", default), ("ours", bm25)]
    }
    match = re.search(r"recall@3 (\d\.\d{3}) with the default floor, (\d\.\d{3}) with ours", README)
    assert match and (float(match[1]), float(match[2])) == pytest.approx((recall["default"], recall["ours"]), abs=5e-4)


def test_audit_slice_size_figure():
    bound = h.best_case_detectable_difference(15)
    assert f"a slice of 15 questions cannot show a difference below {bound:.2f}" in README
