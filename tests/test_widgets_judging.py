"""The judging widget driven by its keys in the kernel (tests/test_browser.py drives it in JupyterLab), and the merge."""

import pytest
import pytrec_eval

import helpers as h
from retrieval_eval.course.widgets.judging import judgement_file, merge_judgements
from retrieval_eval.inputs.trec import read_qrels


@pytest.fixture(scope="module")
def s():
    return h.evaluation_setup()


def test_keys_grade_skip_and_go_back_and_every_grade_is_saved_at_once(s, tmp_path):
    widget = h.judging_widget(s, "ann", questions=["q01", "q02"], folder=tmp_path)
    assert [c for q, c in widget.pairs if q == "q01"] == sorted({*s.qrels["q01"], *(c for r in s.runs.values() for c in r["q01"][:3])})
    for key in "2s0b1x":  # x: not a key of the widget, ignored
        widget.press(key)
    first, second, third = (c for q, c in widget.pairs[:3])
    assert widget.qrels == {"q01": {first: 2, third: 1}} == read_qrels(tmp_path / "ann.qrels")
    assert widget.at == 3 and f"Pair 4 of {len(widget.pairs)}" in widget.view_html()
    again = h.judging_widget(s, "ann", questions=["q01", "q02"], folder=tmp_path)  # resumed at the skipped pair
    assert again.qrels == widget.qrels and again.at == 1
    for _ in widget.pairs:
        widget.press("0")
    assert "The end of the pool" in widget.view_html() and len(read_qrels(tmp_path / "ann.qrels")["q02"]) > 0


def test_a_judge_writes_only_their_own_file(s, tmp_path):
    bob = h.judging_widget(s, "bob", questions=["q01"], folder=tmp_path)
    bob.press("1")
    before = (tmp_path / "bob.qrels").read_bytes()
    ann = h.judging_widget(s, "ann", questions=["q01"], folder=tmp_path)
    ann.press("2")
    assert (tmp_path / "bob.qrels").read_bytes() == before
    with pytest.raises(ValueError, match="differs only by case"):
        judgement_file("Bob", tmp_path)
    with pytest.raises(ValueError, match="plain name"):
        judgement_file("../bob", tmp_path)
    with pytest.raises(ValueError, match="not in this pool"):
        h.judging_widget(s, "bob", questions=["q02"], folder=tmp_path)


def test_merged_qrels_equal_the_judges_files_and_score_as_pytrec_eval_does(s, tmp_path):
    grades = {"ann": "2010", "bob": "1200", "cy": "0s21"}
    for judge, keys in grades.items():
        widget = h.judging_widget(s, judge, questions=["q03"], folder=tmp_path)
        for key in keys:
            widget.press(key)
    paths = [tmp_path / f"{judge}.qrels" for judge in grades]
    by_judge, merged = merge_judgements(paths)
    assert by_judge == {judge: read_qrels(tmp_path / f"{judge}.qrels") for judge in grades}
    pairs = {(q, c) for qrels in by_judge.values() for q, gains in qrels.items() for c in gains}
    assert {(q, c) for q, gains in merged.items() for c in gains} == pairs
    for q, c in pairs:
        given = sorted(qrels[q][c] for qrels in by_judge.values() if c in qrels.get(q, {}))
        assert merged[q][c] == given[(len(given) - 1) // 2]
    assert widget.merge is merge_judgements
    evaluator = pytrec_eval.RelevanceEvaluator(merged, {"ndcg_cut.3"})
    run = {"q03": {c: 100.0 - i for i, c in enumerate(s.runs["BM25"]["q03"])}}
    expected = evaluator.evaluate(run)["q03"]
    ours = h.evaluate({"BM25": s.runs["BM25"]}, merged, ks=[3], metrics=["nDCG"])
    assert ours.loc["BM25", ("nDCG", 3)] == pytest.approx(expected["ndcg_cut_3"], abs=1e-12)


def test_the_static_copy_says_what_the_widget_does(s, tmp_path):
    text = h.judging_widget(s, "ann", questions=["q01"], folder=tmp_path).static_html()
    assert "running kernel" in text and "0, 1, 2, s (skip) and b (back)" in text and "output/judgements/" in text


def test_the_class_activity_of_the_readme_runs(s, tmp_path):
    """README's lesson plan: students grade five questions, the files are merged, kappas go on the projector."""
    five = list(s.qrels)[:5]
    for judge, key in (("ann", "2"), ("bob", "0")):
        me = h.judging_widget(s, judge, questions=five, folder=tmp_path)
        for i, _ in enumerate(me.pairs[:12]):
            me.press(key if i % 3 else "1")
    by_judge, merged = me.merge(sorted(tmp_path.glob("*.qrels")))
    pair = h.agreement(by_judge["ann"], by_judge["bob"], pool=me.pool)
    rule = h.agreement(s.qrels, merged, pool=me.pool)
    assert -1 <= pair.kappa <= 1 and -1 <= rule.kappa <= 1 and len(pair.confusion)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_every_file_written_whole_gets_the_permissions_a_plain_write_gives(s, tmp_path, umask):
    """A judge's file (and every cache file: one writer, write_atomically) is readable as the user's umask allows; the
    temporary file's 0600 made a teacher unable to read the students' files on a shared server."""
    import os

    from retrieval_eval.core.paths import write_atomically

    old = os.umask(umask)
    try:
        h.judging_widget(s, "ann", questions=["q01"], folder=tmp_path).press("1")
        write_atomically(tmp_path / "cache" / "x.bin", b"x")
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "ann.qrels", tmp_path / "cache" / "x.bin",
                                                       tmp_path / "plain.txt")}
    assert set(modes.values()) == {0o666 & ~umask}, modes
