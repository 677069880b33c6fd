"""Questions the corpus cannot answer: marked in a golden set (answerable=no), kept apart from the 47, scored by
abstention in deep dive 17 and in ``make evaluate``'s report."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import helpers as h
from retrieval_eval.analysis.abstention import (
    UNANSWERABLE_PATH,
    abstention,
    abstention_table,
    top_scores,
    unanswerable_runs,
)
from retrieval_eval.core.errors import FormatError, GoldenSetError
from retrieval_eval.inputs.golden import load_golden
from retrieval_eval.tool import cli
from retrieval_eval.tool import report as report_module

ROOT = Path(__file__).resolve().parent.parent
GOOD = "Polder Plus | €74.00 | 3 months"


@pytest.fixture(scope="module")
def polder():
    return h.evaluation_setup()


def golden_file(tmp_path, rows, header="id,question,evidence,answerable"):
    path = tmp_path / "golden.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_question_marked_unanswerable_is_read_and_not_labelled(tmp_path, polder):
    path = golden_file(tmp_path, [f"q1,What does Polder Plus cost?,{GOOD},", "u1,Who makes the motors?,,no",
                                  f"q2,What is the price of Plus?,{GOOD},Yes"])
    labelled = load_golden(path, polder.chunks)
    assert labelled.golden["answerable"].tolist() == [True, False, True]
    assert list(labelled.qrels) == ["q1", "q2"]


@pytest.mark.parametrize("row, message", [
    ("u1,Who makes the motors?,,", "line 3, question 'u1': blank evidence (mark a question the corpus cannot answer answerable=no)"),
    (f"u1,Who makes the motors?,{GOOD},no", "line 3, question 'u1': marked answerable=no but gives evidence"),
    ("u1,Who makes the motors?,,maybe", "line 3, question 'u1': answerable is 'maybe': give yes or no"),
])
def test_an_unmarked_empty_label_or_a_contradiction_is_one_error_naming_its_line(tmp_path, polder, row, message):
    path = golden_file(tmp_path, [f"q1,What does Polder Plus cost?,{GOOD},", row])
    with pytest.raises(GoldenSetError) as raised:
        load_golden(path, polder.chunks)
    assert "has 1 problem(s)" in str(raised.value) and message in str(raised.value)


def test_without_an_answerable_column_an_empty_evidence_is_named_as_before(tmp_path, polder):
    path = golden_file(tmp_path, [f"q1,What does Polder Plus cost?,{GOOD}", "q2,Who makes the motors?,"],
                       "id,question,evidence")
    with pytest.raises(GoldenSetError, match="(?s)has 1 problem.*line 3, question 'q2': blank evidence"):
        load_golden(path, polder.chunks)


def test_polders_unanswerable_questions_are_apart_and_hold_no_evidence(polder):
    kept = h.read_golden_csv(UNANSWERABLE_PATH)
    assert 5 <= len(kept) <= 8 and not kept["answerable"].any() and not kept["evidence"].str.strip().any()
    assert not set(kept["id"]) & set(polder.golden["id"]) and len(polder.qrels) == 47


def test_the_curve_counts_the_questions_below_each_threshold(polder):
    curve = abstention(polder, UNANSWERABLE_PATH).curve  # committed runs and judge scores: no model
    asked, runs = unanswerable_runs(polder, UNANSWERABLE_PATH)
    none = top_scores(polder, asked, runs)
    some = top_scores(polder, dict(zip(polder.golden["id"], polder.golden["question"])), polder.runs)
    assert list(curve["run"].unique()) == list(polder.runs) and len(none) == len(asked) and len(some) == 47
    for name, part in curve.groupby("run"):
        assert part["threshold"].is_monotonic_increasing and part.iloc[-1]["threshold"] == np.inf
        assert part.iloc[0][["unanswerable abstained", "answerable lost"]].tolist() == [0, 0]
        hit = pd.Series({q: h.success_at_k(polder.runs[name][q], {c for c, g in polder.qrels[q].items() if g > 0}, 3) for q in polder.qrels})  # lost: in the top 3
        assert part.iloc[-1][["unanswerable abstained", "answerable lost"]].tolist() == [1, hit.mean()] and hit.mean() < 1
        for t, share, lost in zip(part["threshold"], part["unanswerable abstained"], part["answerable lost"]):
            assert share == (none[name] < t).sum() / len(none)
            assert lost == ((some[name] < t) & (hit[some.index] > 0)).sum() / len(some)
    table = abstention_table(curve, lost=0.1)
    assert (table["answerable lost"] <= 0.1).all() and list(table.index) == list(polder.runs)


@pytest.mark.slow
def test_the_committed_scores_of_the_unanswerable_questions_equal_the_models(polder):
    asked, runs = unanswerable_runs(polder, UNANSWERABLE_PATH)
    fresh = h.model_judge("cosine", fresh=True).scorer
    texts = {c["id"]: c["text"] for c in polder.chunks}
    expected = {q: {n: fresh.score(question, [texts[run[q][0]]])[0] for n, run in runs.items()} for q, question in asked.items()}
    pd.testing.assert_frame_equal(top_scores(polder, asked, runs), pd.DataFrame.from_dict(expected, orient="index"),
                                  atol=1e-5, check_dtype=False)


@pytest.mark.slow  # ranks 53 questions with the embedding model
def test_make_evaluate_scores_the_answerable_questions_as_before_and_reports_abstention(tmp_path, capsys):
    both = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in (ROOT / "data" / "golden.csv", UNANSWERABLE_PATH)])
    both.fillna("").to_csv(tmp_path / "with_unanswerable.csv", index=False)
    environ = {"PWD": str(Path.cwd()), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output"),
               "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache")}
    assert cli.main(["evaluate"], environ | {"GOLDEN": str(tmp_path / "with_unanswerable.csv"), "CORPUS": "data/corpus"}) == 0
    assert cli.main(["evaluate"], environ | {"GOLDEN": "data/golden.csv", "CORPUS": "data/corpus"}) == 0
    capsys.readouterr()
    folder, plain = sorted((tmp_path / "output").iterdir(), key=lambda p: "unanswerable" not in p.name)
    a, b = (pd.read_csv(f / "scores.csv", dtype={"question": str}) for f in (folder, plain))
    assert a["question"].nunique() == 47
    pd.testing.assert_frame_equal(a, b, atol=1e-9)  # every number about the 47 stays as it is
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "Questions the corpus cannot answer: abstention" in page and "6 questions are marked answerable=no" in page
    assert "no question of the golden set is marked answerable=no" in (plain / "report.html").read_text(encoding="utf-8")
    ev = report_module.load_bundle(folder)
    curve = abstention(h.evaluation_setup("data/corpus", tmp_path / "with_unanswerable.csv",
                                          cache_dir=tmp_path / "cache")).curve
    pd.testing.assert_frame_equal(ev.abstention, curve)
    assert report_module.render(ev) == (folder / "report.html").read_text(encoding="utf-8")
    assert os.path.exists(folder / "abstention.csv")


C = "01_plans_and_prices#00"
ID_FILES = {  # every golden format with its own fields: (file name, marked row, unmarked row, header)
    "ids.csv": ("id,question,relevant,answerable", f"q1,What does Plus cost?,{C},", "u1,Who makes the motors?,,no",
                "u1,Who makes the motors?,,"),
    "ids.jsonl": ("", f'{{"id": "q1", "question": "What does Plus cost?", "relevant": ["{C}"]}}',
                  '{"id": "u1", "question": "Who makes the motors?", "relevant": [], "answerable": false}',
                  '{"id": "u1", "question": "Who makes the motors?", "relevant": []}'),
    "ragas.jsonl": ("", f'{{"user_input": "What does Polder Plus cost?", "reference": "", "reference_contexts": ["{GOOD}"]}}',
                    '{"user_input": "Who makes the motors?", "reference": "", "reference_contexts": [], "answerable": "no"}',
                    '{"user_input": "Who makes the motors?", "reference": "", "reference_contexts": []}'),
}


@pytest.mark.parametrize("name", ID_FILES)
def test_every_golden_format_reads_an_empty_label_marked_so_and_names_the_line_of_one_not(tmp_path, polder, name):
    header, answerable, marked, unmarked = ID_FILES[name]
    path = tmp_path / name
    path.write_text("\n".join(filter(None, [header, answerable, marked])) + "\n", encoding="utf-8")
    labelled = load_golden(path, polder.chunks)
    assert labelled.golden["answerable"].tolist() == [True, False] and list(labelled.qrels) == [labelled.golden["id"][0]]
    path.write_text("\n".join(filter(None, [header, answerable, unmarked])) + "\n", encoding="utf-8")
    with pytest.raises((FormatError, GoldenSetError)) as raised:
        load_golden(path, polder.chunks)
    line = 3 if header else 2
    assert str(raised.value).count("no id") + str(raised.value).count("blank evidence") == 1
    assert f":{line}" in str(raised.value) or f"line {line}" in str(raised.value)
