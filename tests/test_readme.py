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


def test_bm25_figures(golden, chunks, qrels, bm25):
    floored = sum(bool((bm25.idf_table(q)["raw idf"] < 0).any()) for q in golden["question"])
    assert f"{floored} of the {len(golden)} questions hold a term found in more than\n  half the chunks" in README
    steps = h.bm25_steps(chunks, golden, qrels, k=3)["recall"]
    match = re.search(r"recall@3\s+goes from (\d\.\d{3}) \(raw words, rank-bm25 as shipped\) to (\d\.\d{3}) with Lucene's 33 stop "
                      r"words, (\d\.\d{3}) with\s+NLTK's 179, (\d\.\d{3}) with stemming and (\d\.\d{3}) with the floor at 0, the "
                      r"default; a random order of the\s+chunks has (\d\.\d{3})", README)
    assert match, "the BM25 steps sentence is gone from the README"
    assert [float(x) for x in match.groups()] == pytest.approx(steps.tolist(), abs=5e-4)
    trec = re.search(r"the default\s+BM25 has recall@3 (\d\.\d{3})", README)
    assert trec and float(trec[1]) == pytest.approx(steps.iloc[-2], abs=5e-4)
    variants = h.bm25_variants(chunks, golden, qrels, k=3)["recall"]
    spread = re.search(r"over (\d+) settings \(Robertson's or Lucene's idf; rank-bm25's,\s+Lucene's or Anserini's `k1` and "
                       r"`b`\), recall@3 runs from (\d\.\d{3}) to (\d\.\d{3}) \(notebook 05,\s+`h.bm25_variants`\); Lucene's "
                       r"idf gives (\d\.\d{3}) with Lucene's defaults and (\d\.\d{3}) with Anserini's\.", README)
    assert spread, "the BM25 settings sentence is gone from the README"
    assert int(spread[1]) == len(variants)
    lucene = [label for label, idf, *_ in h.BM25_VARIANTS if idf == "lucene"]
    defaults = [next(label for label in lucene if engine in label) for engine in ("Lucene's and", "Anserini's")]
    assert [float(x) for x in spread.groups()[1:]] == pytest.approx(
        [variants.min(), variants.max(), *variants[defaults]], abs=5e-4)


def test_verdict_figures(runs, qrels):
    pairs = h.paired_comparisons(runs, qrels, k=3)
    assert "On the Polder set no pair of the three retrievers is told apart on recall@3, MRR@3 or\n  nDCG@3 (a family of 9 tests)" in README
    assert len(pairs) == 9 and (pairs["verdict"] == "not distinguishable").all()


def test_label_audit_figures(chunks, qrels, runs):
    known = h.read_known_false_negatives(chunks, qrels)
    assert f"found {len(known)} such chunks" in README and f"(a label audit found {len(known)})" in README
    fixed = h.with_known_false_negatives(qrels, known)
    assert "(no\n  verdict of the family moves)" in README
    assert (h.paired_comparisons(runs, fixed, k=3)["verdict"] == h.paired_comparisons(runs, qrels, k=3)["verdict"]).all()
    sizes = sorted(len(g) for g in qrels.values())
    assert f"the golden set's shape: {sizes.count(1)} questions\n  with one relevant chunk, {sum(n == 2 for n in sizes)} with two." in README


def test_window_and_slice_figures(golden, chunks):
    longer = sum(c["n_tokens"] > 256 for c in chunks)
    assert f"({longer} of the {len(chunks)} chunks are\n  longer than 256)" in README
    assert f"({len(golden)} questions in {golden['slice'].nunique()} slices along one dimension, the wording" in README


def test_audit_slice_size_figure():
    bound = h.best_case_detectable_difference(15)
    assert f"a slice of 15 questions cannot show a difference below {bound:.2f}" in README
    family = 0.05 / 6  # notebook 08's slice family: 2 slices × 3 pairs, Holm's first step
    assert (f"`h.fewest_discordant(0.05 / m)`: {h.fewest_discordant(family)} for\nthe 6 slice tests of notebook 08, so 15 "
            f"questions cannot pass that step below a difference of {h.best_case_detectable_difference(15, family):.2f}.") in README


def test_the_teachers_key_is_the_one_the_widgets_give(setup):
    """The README's key is what driving the widgets gives now: regenerate it with
    ``markdown_table(teacher_key(h.evaluation_setup()))`` when a widget or a notebook's toy changes."""
    from retrieval_eval.teaching import markdown_table, teacher_key

    shown = README.split("<!-- teacher key: start -->\n")[1].split("\n<!-- teacher key: end -->")[0]
    assert shown == markdown_table(teacher_key(setup))
