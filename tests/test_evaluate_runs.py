"""retrieval_eval/evaluate_runs.py and `make evaluate-runs`: trec_eval's own test files scored as trec_eval
scores them, paths as typed, the golden-set labels, and bad files and variables named."""

import json
import os
import shlex
import shutil
import subprocess

import nbformat
import pandas as pd
import pytest

import helpers as h
from retrieval_eval import evaluate_runs
from retrieval_eval.evaluate_runs import main, parse_ks, parse_runs
from retrieval_eval.parameters import ParameterError

DATA = h.ROOT / "tests" / "data" / "trec_eval"  # copied from trec_eval 10.0, see its README.md
TREC_KS = (1, 5, 10, 15, 20, 30, 100, 200, 500, 1000)  # every cut-off trec_eval's all_trec prints
TREC_NAMES = {"precision": "P_{k}", "recall": "recall_{k}", "ndcg": "ndcg_cut_{k}", "success": "success_{k}",
              "reciprocal_rank": "recip_rank", "r_precision": "Rprec", "average_precision": "map"}


def trec_eval_output(name):
    """trec_eval's output lines ``measure <tab> question <tab> value`` as {(measure, question): text}."""
    table = {}
    for line in (DATA / name).read_text().splitlines():
        measure, question, value = line.split()
        table[measure, question] = value
    return table


def compare(scores, run, expected_file):
    """Every value of ``run`` in scores.csv that trec_eval's output also has, printed as trec_eval prints it (%.4f)."""
    expected = trec_eval_output(expected_file)
    part = scores[scores["run"] == run]
    means = part.groupby(["metric", "k"], dropna=False)["value"].mean().reset_index().assign(question="all")
    compared, wrong = 0, []
    for row in pd.concat([part, means]).itertuples():
        if row.metric == "reciprocal_rank" and pd.notna(row.k):
            continue  # RR@k: trec_eval's recip_rank has no cut-off
        key = (TREC_NAMES[row.metric].format(k=row.k), str(row.question))
        if key in expected:
            compared += 1
            if f"{row.value:.4f}" != expected[key]:
                wrong.append((key, f"{row.value:.4f}", expected[key]))
    assert not wrong, f"{len(wrong)} of {compared} values differ from {expected_file}: {wrong[:10]}"
    return compared


def make(tmp_path, *arguments):
    """Run `make evaluate-runs ARGUMENTS` in the project folder with output/ moved to tmp_path/output."""
    env = {**os.environ, "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output")}
    # -o: take .venv as installed (the test runs inside it) instead of re-installing when a file is newer
    return subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "evaluate-runs", *arguments],
                          cwd=h.ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def trec_report(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("evaluate_runs")
    done = make(tmp_path, f"QRELS={DATA / 'qrels.test'}", f"RUNS={DATA / 'results.test'} {DATA / 'results.trunc'}",
                f"KS={' '.join(map(str, TREC_KS))}", "REPORT=trec_eval")
    assert done.returncode == 0, done.stderr
    for step in ("Runs ", "Judgements ", "Report folder ", "Running the report notebook"):  # as make evaluate shows them
        assert step in done.stdout, step
    assert "Executing" in done.stderr  # papermill's bar of the notebook's cells
    return tmp_path / "output" / "trec_eval"


# --- `make evaluate-runs` on trec_eval's own test files -------------------------------------------


def test_make_evaluate_runs_reproduces_trec_eval_per_question(trec_report):
    scores = pd.read_csv(trec_report / "scores.csv", dtype={"question": str}).astype({"k": "Int64"})
    assert list(scores.columns) == ["run", "question", "metric", "k", "value"]
    assert set(scores["metric"]) == set(TREC_NAMES)
    # trec_eval -m all_trec -q qrels.test results.test: 3 questions and the means
    assert compare(scores, "results.test", "out.test.aq") == 4 * (3 * 9 + 3 + 3)
    # trec_eval -m all_trec -q -c qrels.test results.trunc: question 302 is not in the run and scores 0
    assert compare(scores, "results.trunc", "out.test.aqc") == 4 * (3 * 9 + 3 + 3)
    assert scores.query("run == 'results.trunc' and question == '302'")["value"].eq(0).all()
    # the default measures, means only
    assert compare(scores, "results.test", "out.test") == 9 + 3  # P at 9 cut-offs, recip_rank, Rprec, map


def test_the_report_says_how_runs_were_read_and_counts_questions(trec_report):
    assert sorted(p.name for p in trec_report.iterdir()) == ["inputs.json", "report.html", "report.ipynb", "scores.csv"]
    html = (trec_report / "report.html").read_text(encoding="utf-8")
    for words in ("<strong>score, highest first</strong>", "<strong>document id descending</strong>",
                  "<strong>rank column ignored</strong>", "<strong>3 questions</strong> are scored",
                  "1 in the qrels but not in the run, scored 0 ('302')", "even a perfect ranking reaches"):
        assert words in html, words
    cells = [c for c in nbformat.read(trec_report / "report.ipynb", as_version=4).cells if c.cell_type == "code"]
    assert all(c.execution_count and all(o.output_type != "error" for o in c.outputs) for c in cells)


def test_other_cut_offs_and_graded_labels_as_trec_eval():
    # trec_eval -q -m P.5,7,3 -m recall.20,2000 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 ... qrels.test results.test
    evaluation = h.load_runs([DATA / "results.test"], qrels=DATA / "qrels.test")
    scores = h.scores_table(evaluation.rankings, evaluation.qrels, ks=[2, 3, 5, 7, 10, 20, 23, 2000])
    assert compare(scores, "results.test", "out.test.meas_params") == 4 * 11  # P 3, 5, 7; recall 20, 2000; nDCG 10, 20, 23; success 2, 5, 20
    # graded labels -1 to 4 (qrels.rel_level): ndcg_cut takes them as gains whatever -l says (out.test.aql used -l2)
    evaluation = h.load_runs([DATA / "results.test"], qrels=DATA / "qrels.rel_level")
    scores = h.scores_table(evaluation.rankings, evaluation.qrels, ks=TREC_KS[1:])
    assert compare(scores[scores["metric"] == "ndcg"], "results.test", "out.test.aql") == 4 * 9


# --- paths as typed -------------------------------------------------------------------------------


def test_paths_with_spaces_quotes_and_non_ascii_letters_arrive_unchanged(tmp_path):
    folder = tmp_path / "my runs é"
    folder.mkdir()
    runs = [shutil.copy(DATA / "results.test", folder / "run 1 (BM25) ü.trec"), shutil.copy(DATA / "results.trunc", folder / "it's.trec")]
    qrels = shutil.copy(DATA / "qrels.test", folder / "qrels $HOME.txt")  # a $ reaches make in the environment only
    env_qrels = {"QRELS": str(qrels)}
    done = subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", "evaluate-runs", f"RUNS={shlex.join(map(str, runs))}",
         "REPORT=rapport é 1"],
        cwd=h.ROOT, env={**os.environ, **env_qrels, "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output")},
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = tmp_path / "output" / "rapport é 1"
    assert json.loads((report / "inputs.json").read_text(encoding="utf-8"))["RUNS"] == "\n".join(map(str, runs))
    assert json.loads((report / "inputs.json").read_text(encoding="utf-8"))["QRELS"] == str(qrels)
    scores = pd.read_csv(report / "scores.csv")
    assert list(scores["run"].unique()) == ["run 1 (BM25) ü.trec", "it's.trec"]


def test_parse_runs_splits_like_a_shell_and_parse_ks():
    assert parse_runs('a.trec "my runs/b é.trec"  c\\ d.trec') == ["a.trec", "my runs/b é.trec", "c d.trec"]
    assert parse_ks("1 3, 5,10") == [1, 3, 5, 10]


@pytest.mark.parametrize("environ, message", [
    ({"RUNS": "r.trec"}, "give either a qrels file"),
    ({"RUNS": "r.trec", "QRELS": "q", "GOLDEN": "g.csv", "CORPUS": "c"}, "give either a qrels file"),
    ({"RUNS": "r.trec", "GOLDEN": "g.csv"}, "give either a qrels file"),
    ({"QRELS": "q"}, "RUNS is empty"),
    ({"QRELS": "q", "RUNS": "  "}, "RUNS is empty"),
    ({"QRELS": "q", "RUNS": '"my run.trec'}, "close every quote"),
    ({"QRELS": "q", "RUNS": "a/r.trec b/r.trec"}, "two runs are named 'r.trec'"),
    ({"QRELS": "q", "RUNS": "r.trec", "KS": "1 x"}, "KS='1 x': 'x' is not an integer >= 1"),
    ({"QRELS": "q", "RUNS": "r.trec", "KS": "0"}, "'0' is not an integer >= 1"),
    ({"QRELS": "q", "RUNS": "r.trec", "KS": "3 3"}, "3 is given twice"),
    ({"QRELS": "q", "RUNS": "r.trec", "K": "2.5"}, r"K must be a whole number >= 1 \(the cut-off of the intervals "
                                                    r"and paired tests\), e.g. 3, got 2.5 \(float\)"),
    ({"QRELS": "q", "RUNS": "r.trec", "K": "3 5"}, r"K must be a whole number >= 1 .* got '3 5' \(str\)"),
    ({"QRELS": "q", "RUNS": "r.trec", "CHUNK_SIZE": "-1"}, "CHUNK_SIZE applies to GOLDEN and CORPUS only"),
    ({"GOLDEN": str(h.GOLDEN_PATH), "CORPUS": str(h.CORPUS_DIR), "RUNS": "r.trec", "CHUNK_SIZE": "5_12"},
     r"CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got '5_12' \(str\)"),
    ({"GOLDEN": str(h.GOLDEN_PATH), "CORPUS": str(h.CORPUS_DIR), "RUNS": "r.trec", "MODEL_NAME": "/nonexistent"},
     r"MODEL_NAME '/nonexistent' was not found locally"),
    ({"QRELS": "q", "RUNS": "r.trec", "REPORT": "../elsewhere"}, "report name '../elsewhere' must be a plain folder name"),
])
def test_bad_variables_are_named(tmp_path, environ, message):
    with pytest.raises(ValueError, match=message):
        main(environ, output_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_every_problem_with_the_variables_is_reported_at_once(tmp_path):
    """The tester's case: `make evaluate-runs QRELS=q.txt RUNS=r.txt K=0 KS=abc` reported only KS."""
    with pytest.raises(ParameterError) as err:
        main({"QRELS": "q.txt", "RUNS": "r.txt", "K": "0", "KS": "abc", "START_DIR": str(tmp_path)}, output_dir=tmp_path)
    assert [line.split()[0] for line in err.value.problems] == ["RUNS", "QRELS", "KS='abc':", "K"]
    assert f"no such file {tmp_path / 'r.txt'}" in err.value.problems[0]
    assert not any(tmp_path.iterdir())


def test_the_default_report_name_is_always_valid(tmp_path):
    """The tester's case (make evaluate): a golden file in "-dash/" gave the report name "-dash", refused."""
    folder = tmp_path / "-dash"
    folder.mkdir()
    shutil.copy(DATA / "qrels.test", folder / "qrels.txt")
    report = main({"QRELS": str(folder / "qrels.txt"), "RUNS": str(DATA / "results.test")}, output_dir=tmp_path / "output")
    assert report.name == "runs--dash" and (report / "inputs.json").is_file()


# --- bad files: the error names the file and the line ----------------------------------------------


def test_a_bad_run_line_stops_make_with_its_file_and_line(tmp_path):
    bad = tmp_path / "bad run.trec"
    bad.write_text("301 Q0 a 1 2.5 t\n301 Q0 b 2 high t\n")
    done = make(tmp_path, f"QRELS={DATA / 'qrels.test'}", f"RUNS={shlex.quote(str(bad))}")
    assert done.returncode != 0
    assert f"make evaluate-runs: {bad}:2: score 'high' is not a number" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "output").exists()


@pytest.mark.parametrize("run, qrels, message", [
    ("q1 Q0 a 1 2 t\nq1 Q0 a 2 1 t\n", "q1 0 a 1\n", r"run.trec:2: document 'a' is listed twice for question 'q1'"),
    ("q1 Q0 a 1 2\n", "q1 0 a 1\n", r"run.trec:1: a run line needs 6 fields"),
    ("q1 Q0 a 1 2 t\n", "q1 0 a 1\nq1 0 b yes\n", r"qrels.txt:2: relevance 'yes' is not an integer"),
    ("q1 Q0 a 1 2 t\n", "q1 0 a 0\n", r"no question of the qrels file .* has a relevant document"),
])
def test_bad_files_are_named(tmp_path, run, qrels, message):
    (tmp_path / "run.trec").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    with pytest.raises(ValueError, match=message):
        h.load_runs([tmp_path / "run.trec"], qrels=tmp_path / "qrels.txt")


def test_questions_ignored_scored_zero_and_left_out_are_counted(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 0\n")
    (tmp_path / "run.trec").write_text("q1 Q0 a 1 2 t\nq9 Q0 z 1 2 t\nq3 Q0 c 1 2 t\n")
    evaluation = h.load_runs([tmp_path / "run.trec"], qrels=tmp_path / "qrels.txt")
    coverage = evaluation.coverage["run.trec"]
    assert (coverage.scored, coverage.run_only, coverage.missing, coverage.no_relevant) == (
        ("q1", "q2"), ("q9",), ("q2",), ("q3",))
    scores = h.scores_table(evaluation.rankings, evaluation.qrels, ks=[1])
    assert list(scores["question"].unique()) == ["q1", "q2"]
    assert scores.groupby("question")["value"].agg(["min", "max"]).to_dict("index") == {
        "q1": {"min": 1.0, "max": 1.0}, "q2": {"min": 0.0, "max": 0.0}}


# --- against a golden set: the evidence-string labels ---------------------------------------------


def test_golden_set_runs_reproduce_the_evaluation_table(runs, qrels, tmp_path):
    paths = [h.write_trec_run(run, tmp_path / f"run.{name}.txt", name) for name, run in runs.items()]
    evaluation = h.load_runs(paths, golden=h.GOLDEN_PATH, corpus=h.CORPUS_DIR)
    assert evaluation.qrels == qrels
    for name, run in runs.items():  # an empty ranking writes no line: the question is missing and scores 0
        assert evaluation.coverage[f"run.{name}.txt"].missing == tuple(q for q, r in run.items() if not r)
    scores = h.scores_table(evaluation.rankings, evaluation.qrels)
    means = scores.groupby(["run", "metric", "k"])["value"].mean()
    table = h.evaluate(runs, qrels)
    ours = {"recall": "recall", "precision": "precision", "reciprocal_rank": "MRR", "ndcg": "nDCG"}
    for name in runs:
        for metric, theirs in ours.items():
            for k in h.KS:
                assert means[f"run.{name}.txt", metric, k] == pytest.approx(table.loc[name, (theirs, k)], abs=1e-12)


def test_golden_set_runs_must_rank_our_chunk_ids(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q01 Q0 01_plans_and_prices#00 1 2 t\nq01 Q0 passage-17 2 1 t\n")
    with pytest.raises(h.TrecFormatError, match=r"run.trec:2: document 'passage-17' \(question 'q01'\) is not a chunk id"):
        h.load_runs([run], golden=h.GOLDEN_PATH, corpus=h.CORPUS_DIR)


def test_the_template_is_in_the_package():
    """In the wheel too: tests/test_helpers.py builds one."""
    assert evaluate_runs.TEMPLATE.is_file()


@pytest.mark.parametrize("what", ["document", "question"])
def test_ids_a_trec_file_cannot_hold_are_refused(tmp_path, example_dir, example_chunk_size, what):
    corpus = shutil.copytree(example_dir / "corpus", tmp_path / "corpus")
    golden = pd.read_csv(example_dir / "golden.csv", dtype=str, keep_default_na=False)
    if what == "document":  # a file name with a space gives chunk ids with a space
        (corpus / "02_borrowing.md").rename(corpus / "02 borrowing.md")
        message = "chunk id '02 borrowing#00' contains whitespace"
    else:
        golden.loc[0, "id"] = "lh 01"
        message = "question id 'lh 01' contains whitespace"
    golden.to_csv(tmp_path / "golden.csv", index=False)
    (tmp_path / "run.trec").write_text("lh02 Q0 01_opening_hours#00 1 2 t\n")
    with pytest.raises(ValueError, match=message):
        h.load_runs([tmp_path / "run.trec"], golden=tmp_path / "golden.csv", corpus=corpus, chunk_size=example_chunk_size)


def test_make_evaluate_runs_on_a_golden_set_shows_its_progress(tmp_path, example_dir, example_chunks, example_chunk_size):
    """The tester's case: with GOLDEN and CORPUS on a large corpus, make evaluate-runs was silent for 12-25 s."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"lh01 Q0 {c['id']} {i} {100 - i} t\n" for i, c in enumerate(example_chunks[:5], start=1)))
    done = make(tmp_path, f"GOLDEN={example_dir / 'golden.csv'}", f"CORPUS={example_dir / 'corpus'}",
                f"CHUNK_SIZE={example_chunk_size}", f"RUNS={run}", "REPORT=golden")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "chunking" in done.stderr and "Executing" in done.stderr
    assert (tmp_path / "output" / "golden" / "inputs.json").is_file()
