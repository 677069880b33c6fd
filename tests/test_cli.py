"""retrieval_eval/tool/cli.py and the make targets evaluate and evaluate-runs: every parameter checked at once
before anything is read, relative paths and PWD, folders that cannot be written, report folders claimed
once and never replaced, inputs inside the corpus left out, cut-offs past the corpus refused, a bad cache
file set aside by name, one line for a failing report, trec_eval's numbers, and the report run on the
checkout's own code."""

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pandas as pd
import pytest
from cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import helpers as h  # noqa: E402
from retrieval_eval.core.errors import (
    ParameterError,  # noqa: E402
    ReportError,  # noqa: E402
)
from retrieval_eval.retrieval import setup as pipeline  # noqa: E402
from retrieval_eval.retrieval import stages
from retrieval_eval.retrieval.retrievers import BM25  # noqa: E402
from retrieval_eval.tool import cli  # noqa: E402
from retrieval_eval.tool import report as report_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "library_hours"
TREC = ROOT / "tests" / "data" / "trec_eval"  # copied from trec_eval 10.0, see its README.md


def run_make(target, *assignments, tmp, cwd=ROOT, env=None, timeout=900):
    """`make TARGET VAR=value ...` as a shell passes what a user types, output and cache under ``tmp``,
    with the environment of this test run (its venv taken as installed)."""
    venv = Path(sys.prefix)
    env = {**os.environ, "RETRIEVAL_EVAL_OUTPUT": str(tmp / "output"), "RETRIEVAL_EVAL_CACHE": str(tmp / "cache"),
           "PWD": str(cwd), **(env or {})}
    return subprocess.run(["make", "--no-print-directory", f"VENV={venv}", "-o", f"{venv}/.installed", target, *assignments],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def problems(target, tmp_path, **environ):
    """The lines of the ParameterError of ``target`` with ``environ`` ([] when accepted)."""
    try:
        cli.read_parameters(target, {"PWD": str(Path.cwd()), **environ}, tmp_path / "output", tmp_path / "cache")
    except ParameterError as exc:
        return exc.problems
    return []


def main(target, tmp_path, capsys, **environ):
    """``python -m retrieval_eval.tool.cli target`` in this process: (exit status, stdout, stderr)."""
    status = cli.main([target], {"PWD": str(Path.cwd()), "RETRIEVAL_EVAL_OUTPUT": str(tmp_path / "output"),
                                 "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache"), **environ})
    out, err = capsys.readouterr()
    return status, out, err


# --- every parameter at once, before anything is read ------------------------------------------------


def test_every_problem_is_listed_at_once_and_nothing_is_written(tmp_path):
    lines = problems("evaluate", tmp_path, CORPUS="no such folder", MODEL_NAME="no/such-model", CHUNK_SIZE="5_12",
                     K="2.5", KS="1 x", REPORT="../x", RERANKER="unknown-reranker", RUNS="a.trec")
    assert [line.split("=")[0].split()[0] for line in lines] == [
        "CORPUS", "RUNS", "CHUNK_SIZE", "K", "KS", "RERANKER", "REPORT", "the", "MODEL_NAME"]
    assert f"CORPUS='no such folder': no such folder or file: {Path.cwd() / 'no such folder'}" in lines
    assert "RUNS is a parameter of make evaluate-runs only; leave it out" in lines
    assert all("\n" not in line for line in lines)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["0", "2.5", "abc", "5_12", "+3", "\u0663", "1e3", "3 5", "-1"])
def test_numbers_are_whole_and_in_plain_digits(tmp_path, text):
    """int() reads "5_12" and Arabic-Indic digits; papermill handed "2.5" over as a float."""
    assert problems("evaluate", tmp_path, K=text) == [f"K={text!r}: must be a whole number >= 1 in plain digits, e.g. 3"]


@pytest.mark.parametrize("environ, message", [
    ({"KS": "3 3"}, "KS='3 3': holds a cut-off twice"),
    ({"KS": "1 0"}, "KS='1 0': must be a whole number >= 1"),
    ({"K": "101"}, "the cut-off 101 is more than the 100 ranks each run keeps"),
    ({"KS": "1 3 500"}, "the cut-off 500 is more than the 100 ranks each run keeps"),
    ({"MODEL_NAME": "no/such-model"}, "MODEL_NAME 'no/such-model': not installed here: no such folder, and not in the local "
                                      "Hugging Face cache (nothing is downloaded)"),
    ({"CHUNK_SIZE": "1024"}, "CHUNK_SIZE 1024 is larger than the model's window of 512 word pieces"),
    ({"CHUNK_SIZE": "2"}, "CHUNK_SIZE 2 leaves no room for text beside the 2 special and prompt tokens"),
    ({"MODEL_NAME": str(EXAMPLE)}, f"MODEL_NAME {str(EXAMPLE)!r}: {EXAMPLE} holds no config.json: it is not a model folder"),
    ({"RERANKER": "no/such-cross-encoder"}, "RERANKER='no/such-cross-encoder': not installed here: no such folder, and "
                                            "not in the local Hugging Face cache (nothing is downloaded); or "
                                            "RERANKER=sentence, the built-in re-scorer"),
    ({"METRICS": "recall AP"}, "METRICS='recall AP': names each metric once, of recall precision MRR nDCG MAP"),
    ({"REPORT": ".hidden"}, "REPORT='.hidden': must be a plain folder name"),
    ({"REPORT": "a/b"}, "REPORT='a/b': must be a plain folder name"),
    ({"GOLDEN": str(EXAMPLE), "CORPUS": str(EXAMPLE)}, f"GOLDEN={str(EXAMPLE)!r}: {EXAMPLE} is a folder and not a BEIR folder"),
])
def test_each_kind_of_bad_parameter_is_one_line_naming_it(tmp_path, environ, message):
    lines = problems("evaluate", tmp_path, **environ)
    assert len(lines) == 1 and message in lines[0], lines


@pytest.mark.parametrize("environ, message", [
    ({"RUNS": "r.trec"}, "the labels are missing: QRELS=qrels.txt, GOLDEN=golden.csv with CORPUS, or BEIR=folder"),
    ({"RUNS": "r.trec", "GOLDEN": "q"}, "CORPUS is missing: the chunks or documents these labels judge"),
    ({"RUNS": "r.trec", "QRELS": "q", "CORPUS": "q"}, "QRELS and QUESTIONS go together (with CORPUS)"),
    ({"QRELS": "q"}, "RUNS is missing"),
    ({"QRELS": "q", "RUNS": '"my run.trec'}, "No closing quotation (RUNS is split like a shell command line"),
    ({"QRELS": "q", "RUNS": "a/r.trec b/r.trec"}, "runs are named by their file name, and ['r.trec'] is given twice"),
    ({"QRELS": "q", "RUNS": "slice"}, "a run named ['slice'] (its file name) would take the place of a column"),
    ({"QRELS": "q", "RUNS": "r.trec", "CHUNK_SIZE": "256"}, "CHUNK_SIZE applies to a corpus only; with QRELS alone"),
    ({"QRELS": "q", "RUNS": "r.trec", "LEVEL": "document"}, "LEVEL applies to a corpus only; with QRELS alone"),
    ({"QRELS": "q", "RUNS": "r.trec", "RERANKER": "sentence"}, "RERANKER is a parameter of make evaluate only"),
])
def test_evaluate_runs_parameters(tmp_path, environ, message):
    for name in ("q", "r.trec", "slice", "a/r.trec", "b/r.trec"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        lines = problems("evaluate-runs", tmp_path, PWD=str(tmp_path), **environ)
    finally:
        os.chdir(cwd)
    assert any(message in line for line in lines), lines


FORMATS = ROOT / "tests" / "data" / "formats"


@pytest.mark.parametrize("environ, message", [
    ({"BEIR": FORMATS / "beir", "CORPUS": FORMATS / "chunks.jsonl"}, "BEIR holds its own corpus (corpus.jsonl): leave CORPUS out"),
    ({"GOLDEN": FORMATS / "golden_ids.csv", "BEIR": FORMATS / "beir"}, "give the labels once: GOLDEN and BEIR were all given"),
    ({"QRELS": FORMATS / "qrels.txt", "CORPUS": FORMATS / "chunks.jsonl"}, "QRELS and QUESTIONS go together"),
    ({"GOLDEN": FORMATS / "golden_ids.csv"}, "CORPUS is missing: the chunks or documents these labels judge"),
    ({"LEVEL": "page"}, "LEVEL='page': must be one of ['chunk', 'document']"),
    ({"CORPUS": FORMATS / "chunks.jsonl"}, "the labels are missing: GOLDEN=golden.csv, or QRELS with QUESTIONS"),
])
def test_each_wrong_combination_of_labels_and_corpus_is_one_line(tmp_path, environ, message):
    lines = problems("evaluate", tmp_path, **{name: str(value) for name, value in environ.items()})
    assert len(lines) == 1 and message in lines[0], lines


@pytest.mark.parametrize("environ", [{"BEIR": "beir"}, {"GOLDEN": "beir"}, {"GOLDEN": "llamaindex.json"},
                                     {"CORPUS": "chunks.jsonl", "GOLDEN": "golden_ids.csv"},
                                     {"CORPUS": "chunks.csv", "QRELS": "qrels.txt", "QUESTIONS": "questions.jsonl"}])
def test_every_format_is_a_parameter_and_labels_that_hold_their_corpus_need_none(tmp_path, environ):
    assert problems("evaluate", tmp_path, **{name: str(FORMATS / value) for name, value in environ.items()}) == []


@pytest.mark.slow
def test_a_beir_folder_is_evaluated_with_its_own_corpus_and_split(tmp_path):
    values = cli.read_parameters("evaluate", {"BEIR": str(FORMATS / "beir")}, tmp_path / "o", tmp_path / "c")
    ev = cli.evaluate(values, tmp_path / "c")
    assert ev.about["BEIR folder"] == str(FORMATS / "beir") and ev.about["split"] == "test" and "corpus" not in ev.about
    assert set(ev.qrels) == {"q1", "q2", "q3", "q4"} and "q5" in ev.left_out["detail"].iloc[0]


def test_runs_of_chunks_are_scored_as_documents_when_the_labels_name_documents(tmp_path):
    run = tmp_path / "chunks.trec"
    run.write_text("q1 Q0 d02#00 1 3 t\nq1 Q0 d01#01 2 2 t\nq1 Q0 d01#00 3 1 t\n")
    environ = {"GOLDEN": str(FORMATS / "golden_documents.csv"), "CORPUS": str(FORMATS / "chunks.jsonl"), "RUNS": str(run)}
    ev = cli.evaluate_runs(cli.read_parameters("evaluate-runs", environ, tmp_path / "o", tmp_path / "c"), tmp_path / "c")
    assert ev.unit == "document" and ev.runs["chunks.trec"]["q1"] == ["d02", "d01"]
    assert ev.scores.query("question == 'q1' and metric == 'MRR' and k == 3")["value"].item() == 0.5


def test_a_run_none_of_whose_ids_is_judged_is_refused_naming_both_kinds_of_id(tmp_path):
    run = tmp_path / "docs.trec"
    run.write_text("q1 Q0 d01 1 3 t\n")
    environ = {"QRELS": str(FORMATS / "qrels.txt"), "QUESTIONS": str(FORMATS / "questions.jsonl"),
               "CORPUS": str(FORMATS / "chunks.jsonl"), "RUNS": str(run)}
    with pytest.raises(Exception, match=r"is not a chunk id of this corpus"):
        cli.evaluate_runs(cli.read_parameters("evaluate-runs", environ, tmp_path / "o", tmp_path / "c"), tmp_path / "c")


@pytest.mark.parametrize("name, damage, expected", [
    ("config.json", "[]", "must hold a JSON object"),
    ("tokenizer.json", "{", "cannot be read as a tokenizer"),
    ("model.safetensors", None, "is damaged"),
])
def test_a_damaged_model_is_one_line_naming_its_file(tmp_path, name, damage, expected):
    """A copy of the bundled model (links to its files) with one file damaged."""
    from retrieval_eval.inputs.models import model_path

    model = tmp_path / "model"
    model.mkdir()
    for path in Path(model_path(None)).iterdir():
        (model / path.name).symlink_to(path)
    (model / name).unlink()
    if damage is None:
        (model / name).write_bytes((Path(model_path(None)) / name).read_bytes()[:1000])
    else:
        (model / name).write_text(damage)
    [line] = problems("evaluate", tmp_path, MODEL_NAME=str(model))
    assert line.startswith(f"MODEL_NAME {str(model)!r}: ") and str(model / name) in line and expected in line, line


@pytest.mark.parametrize("text, name", [("my report é", "my report é"), ("cafe\u0301", "caf\u00e9"), ("v1.2-final", "v1.2-final")])
def test_plain_report_names_with_spaces_and_other_letters_are_taken_in_nfc(tmp_path, text, name):
    values = cli.read_parameters("evaluate", {"REPORT": text, "PWD": str(Path.cwd())}, tmp_path / "o", tmp_path / "c")
    assert values["REPORT"] == name


def test_the_checks_load_no_model_and_no_torch(tmp_path):
    script = ("import sys; from pathlib import Path; from retrieval_eval.tool import cli; "
              f"cli.read_parameters('evaluate', {{'RERANKER': 'sentence', 'PWD': str(Path.cwd())}}, Path({str(tmp_path)!r}), "
              f"Path({str(tmp_path)!r})); print([m for m in ('torch', 'sentence_transformers') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
    assert report_module.TEMPLATE.is_file()  # the template is package data (pyproject.toml)


def test_the_built_in_reranker_and_a_model_folder_are_accepted(tmp_path):
    assert problems("evaluate", tmp_path, RERANKER="sentence") == []
    from retrieval_eval.inputs.models import model_path

    assert problems("evaluate", tmp_path, MODEL_NAME=model_path(None), CHUNK_SIZE="256") == []


# --- relative paths, PWD, folders that cannot be written -------------------------------------------------


def test_a_relative_path_is_refused_when_pwd_names_another_folder(tmp_path):
    """A program that changed folder without updating PWD, or make -C: the path would be read from the wrong
    project. Absolute paths, and relative ones when PWD is this folder, are read as they are."""
    stale = tmp_path / "stale"
    (stale / "examples" / "library_hours").mkdir(parents=True)
    relative = os.path.relpath(EXAMPLE / "golden.csv", ROOT)
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        [line] = problems("evaluate", tmp_path, GOLDEN=relative, PWD=str(stale), CORPUS=str(EXAMPLE / "corpus"))
        assert line == (f"GOLDEN={relative!r}: a relative path, and PWD ({stale}) is not the folder make runs in ({ROOT}): "
                        "make -C, or a program that changed folder without updating PWD; give an absolute path")
        assert problems("evaluate", tmp_path, GOLDEN=relative, PWD=str(ROOT), CORPUS=str(EXAMPLE / "corpus")) == []
        assert problems("evaluate", tmp_path, GOLDEN=str(EXAMPLE / "golden.csv"), PWD=str(stale), CORPUS=str(EXAMPLE / "corpus")) == []
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("where", ["under a file", "/sys"])
def test_an_output_or_cache_folder_that_cannot_be_written_is_one_line_naming_both_variables(tmp_path, where):
    (tmp_path / "file").write_text("x")
    base = tmp_path / "file" if where == "under a file" else Path("/sys/retrieval-eval-test")
    if where == "/sys" and os.access("/sys", os.W_OK) and not _sys_refuses():
        pytest.skip("/sys can be written here")
    try:
        cli.read_parameters("evaluate", {"PWD": str(Path.cwd())}, base / "output", base / "cache")
    except ParameterError as exc:
        lines = exc.problems
    assert [line.split(" cannot be written")[0] for line in lines] == [str(base / "output"), str(base / "cache")]
    assert all("RETRIEVAL_EVAL_OUTPUT moves the reports, RETRIEVAL_EVAL_CACHE the cache" in line for line in lines)
    assert lines[0].split(": set ")[1].startswith("RETRIEVAL_EVAL_OUTPUT") and lines[1].split(": set ")[1].startswith(
        "RETRIEVAL_EVAL_CACHE")


def _sys_refuses() -> bool:
    try:
        os.mkdir("/sys/retrieval-eval-probe")
    except OSError:
        return True
    os.rmdir("/sys/retrieval-eval-probe")
    return False


@pytest.mark.slow
def test_a_read_only_checkout_is_one_line_naming_its_folders_and_the_variables(tmp_path):
    """The checkout mounted read-only in a private mount namespace (nothing changes outside it)."""
    script = (f"mount --bind {shlex.quote(str(ROOT))} {shlex.quote(str(ROOT))} && mount -o remount,bind,ro "
              f"{shlex.quote(str(ROOT))} && cd {shlex.quote(str(ROOT))} && exec {shlex.quote(sys.executable)} -m retrieval_eval.tool.cli evaluate")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_EVAL_")} | {"PWD": str(ROOT)}
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    if "mount:" in done.stderr or "unshare:" in done.stderr:
        pytest.skip(f"no private read-only mount here: {done.stderr.strip()[:200]}")
    assert done.returncode == 2, done.stderr
    assert f"- {ROOT / 'output'} cannot be written (Read-only file system): set RETRIEVAL_EVAL_OUTPUT" in done.stderr
    cache_line = f"{ROOT / '.cache'} cannot be written (Read-only file system): set RETRIEVAL_EVAL_CACHE"
    # an existing cache is read as it is (a note); one that is not there cannot be made
    assert (f"note: {cache_line}" if (ROOT / ".cache").is_dir() else f"- {cache_line}") in done.stderr
    assert "Traceback" not in done.stderr


def test_a_read_only_cache_that_holds_what_is_needed_is_read_with_a_note(tmp_path, capsys, monkeypatch):
    (tmp_path / "cache").mkdir()
    real = cli.tempfile.TemporaryDirectory

    def read_only(dir=None, **kwargs):
        if Path(dir) == tmp_path / "cache":
            raise PermissionError(errno.EROFS, "Read-only file system")
        return real(dir=dir, **kwargs)

    monkeypatch.setattr(cli.tempfile, "TemporaryDirectory", read_only)
    status, _, err = main("evaluate-runs", tmp_path, capsys, QRELS=str(TREC / "qrels.test"), RUNS=str(TREC / "results.test"))
    assert status == 0 and f"note: {tmp_path / 'cache'} cannot be written (Read-only file system)" in err
    assert "what it holds is read" in err
    # a cache that holds the runs is read without writing anything
    chunks = [{"id": f"c{i}", "doc": "d", "text": f"word{i} common text {i}", "n_tokens": 5} for i in range(6)]
    first = stages.run_registry({"BM25": BM25()}, chunks, {"q1": "word1 text"}, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(stages, "write_atomically", lambda *args: (_ for _ in ()).throw(PermissionError(errno.EROFS, "ro")))
    assert stages.run_registry({"BM25": BM25()}, chunks, {"q1": "word1 text"}, cache_dir=tmp_path / "cache") == first



# --- report folders: claimed once, never replaced --------------------------------------------------------


def test_a_default_name_is_claimed_once_even_by_runs_started_together(tmp_path):
    claimed = []
    threads = [threading.Thread(target=lambda: claimed.append(cli.claim(tmp_path, "golden-set", False))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(p.name for p in claimed) == sorted(["golden-set"] + [f"golden-set-{i}" for i in range(2, 9)])


def test_a_given_report_name_that_exists_is_refused(tmp_path):
    (tmp_path / "output" / "mine").mkdir(parents=True)
    with pytest.raises(ReportError, match="exists: a report never replaces another"):
        cli.claim(tmp_path / "output", "mine", True)
    [line] = problems("evaluate", tmp_path, REPORT="mine")
    assert line.startswith("REPORT='mine': ") and line.endswith(
        "exists (not a report folder); a report never replaces another: REPORT='mine-2' is free, or delete that folder")
    (tmp_path / "output" / "link").symlink_to(tmp_path)  # a link is taken as existing too
    assert "exists" in problems("evaluate", tmp_path, REPORT="link")[0]


def test_default_names_differ_with_the_golden_files_stem(tmp_path):
    name = lambda path, target="evaluate": cli.default_name({"GOLDEN": Path(path), "QRELS": None}, target)  # noqa: E731
    assert name("/a/set/golden.csv") == "set-golden" and name("/b/set/golden-v2.csv") == "set-golden-v2"
    assert name("/-dash/golden.csv", "evaluate-runs") == "runs--dash-golden"
    assert name(cli.GOLDEN_PATH) == "data-golden"


@settings(max_examples=examples(60), deadline=None)
@given(st.text(max_size=120), st.text(min_size=1, max_size=40))
def test_every_default_name_is_a_valid_report_name(folder, stem):
    path = Path("/data") / folder.replace("/", "_").replace("\x00", "") / (stem.replace("/", "_").replace("\x00", "") + ".csv")
    name = cli.default_name({"GOLDEN": path, "QRELS": None}, "evaluate")
    assert cli._report_name(name) == name


# --- the data: inputs inside the corpus, cut-offs past it, a golden set checked before any model loads ------


@pytest.fixture
def corpus(tmp_path):
    return Path(shutil.copytree(EXAMPLE / "corpus", tmp_path / "corpus"))


@pytest.mark.parametrize("name", ["golden.txt", "sub/Golden.TXT"])
def test_a_golden_file_inside_the_corpus_is_left_out_and_said_so(corpus, name):
    """Excel's "Unicode text" is a .txt file: read as a document, its chunks held every evidence string."""
    golden = corpus / name
    golden.parent.mkdir(exist_ok=True)
    shutil.copy(EXAMPLE / "golden.csv", golden)
    setup = pipeline.load_inputs(corpus, golden, chunk_size=128)
    assert (name, "an input of this evaluation (the golden set, qrels or a run), not a document: left out of the corpus") \
        in setup.skipped
    assert all(not c["doc"].lower().startswith(("golden", "sub/")) for c in setup.chunks)
    assert all(len(gains) == 1 for gains in setup.qrels.values())  # each evidence in its one document's chunk


def test_a_run_file_inside_the_corpus_is_left_out_too(corpus):
    run = corpus / "bm25 run.txt"
    run.write_text("lh01 Q0 01_opening_hours#00 1 1 t\n")
    setup = pipeline.load_inputs(corpus, EXAMPLE / "golden.csv", chunk_size=128, exclude=[run])
    assert setup.skipped[0][0] == "bm25 run.txt" and "bm25 run" not in {c["doc"] for c in setup.chunks}


def test_a_cut_off_larger_than_the_corpus_is_refused_before_anything_is_ranked(tmp_path, capsys):
    status, _, err = main("evaluate", tmp_path, capsys, CORPUS=str(EXAMPLE / "corpus"), GOLDEN=str(EXAMPLE / "golden.csv"),
                          CHUNK_SIZE="128", KS="1 3 50")
    assert status == 2 and "- the cut-off k = 50 is more than the 11 chunks of the corpus" in err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "output").exists()


def test_a_broken_golden_set_lists_every_problem_before_any_model_loads(tmp_path, capsys):
    golden = pd.read_csv(EXAMPLE / "golden.csv", dtype=str, keep_default_na=False)
    golden.loc[1, "question"] = " "
    golden.loc[2, "evidence"] = "lent for 21 days"
    golden.loc[3, "evidence"] = "the library lends bicycles for a week"
    golden.to_csv(tmp_path / "golden.csv", index=False)
    status, _, err = main("evaluate", tmp_path, capsys, CORPUS=str(EXAMPLE / "corpus"), GOLDEN=str(tmp_path / "golden.csv"),
                          CHUNK_SIZE="128")
    assert status == 1 and "golden.csv has 3 problem(s)" in err
    assert all(f"question '{q}'" in err for q in ("lh02", "lh03", "lh04"))
    assert not (tmp_path / "cache").exists() and not (tmp_path / "output").exists()  # nothing embedded, nothing ranked


@pytest.mark.parametrize("damage, problem", [
    (lambda run: {q: ["not a chunk"] + r[1:] for q, r in run.items()}, "unknown chunk ids ['not a chunk']"),
    (lambda run: {q: r + r[:1] for q, r in run.items()}, "in the ranking; each id may appear once"),
    (lambda run: dict(list(run.items())[1:]), "is not JSON holding one ranking per question"),
])
def test_a_cache_file_that_fails_its_checks_is_named_set_aside_and_rebuilt(tmp_path, damage, problem):
    import json

    chunks = [{"id": f"c{i}", "doc": "d", "text": f"word{i} common text {i}", "n_tokens": 5} for i in range(6)]
    questions = {"q1": "word1 text", "q2": "word4"}
    first = stages.run_registry({"BM25": BM25()}, chunks, questions, cache_dir=tmp_path)
    [path] = (tmp_path / "rankings").glob("*.json")
    path.write_text(json.dumps(damage(first["BM25"])))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = stages.run_registry({"BM25": BM25()}, chunks, questions, cache_dir=tmp_path)
    assert again == first and path.with_suffix(".bad").exists()
    [message] = [str(w.message) for w in caught]
    assert message.startswith(f"the rankings cache file {path} ") and problem in message
    assert message.endswith(f": set aside as {path.stem}.bad, ranked again")


# --- evaluate-runs: files named with their line -----------------------------------------------------------


def test_a_bad_run_line_is_one_line_with_its_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad run.trec"
    bad.write_text("301 Q0 a 1 2.5 t\n301 Q0 b 2 high t\n")
    status, _, err = main("evaluate-runs", tmp_path, capsys, QRELS=str(TREC / "qrels.test"), RUNS=shlex.quote(str(bad)))
    assert status == 1 and err.strip() == f"evaluate-runs: {bad}:2: score 'high' is not a number (the line reads " \
                                          "'301 Q0 b 2 high t')"
    assert not (tmp_path / "output").exists()


@pytest.mark.parametrize("run, qrels, message", [
    ("q1 Q0 a 1 2 t\nq1 Q0 a 2 1 t\n", "q1 0 a 1\n", "run.trec:2: document 'a' is listed twice for question 'q1'"),
    ("q1 Q0 a 1 2\n", "q1 0 a 1\n", "run.trec:1: a run line needs 6 fields"),
    ("q1 Q0 a 1 2 t\n", "q1 0 a 1\nq1 0 b yes\n", "qrels.txt:2: relevance 'yes' is not an integer"),
    ("q1 Q0 a 1 2 t\n", "q1 0 a 0\n", "no judged question has a relevant document: there is nothing to score"),
])
def test_bad_files_stop_before_anything_is_written_naming_the_file_and_line(tmp_path, capsys, run, qrels, message):
    (tmp_path / "run.trec").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    status, _, err = main("evaluate-runs", tmp_path, capsys, QRELS=str(tmp_path / "qrels.txt"), RUNS=str(tmp_path / "run.trec"))
    assert status == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "output").exists()


def test_runs_against_a_golden_set_must_rank_its_chunk_ids(tmp_path, capsys):
    run = tmp_path / "run.trec"
    run.write_text("lh01 Q0 01_opening_hours#00 1 2 t\nlh01 Q0 passage-17 2 1 t\n")
    status, _, err = main("evaluate-runs", tmp_path, capsys, GOLDEN=str(EXAMPLE / "golden.csv"),
                          CORPUS=str(EXAMPLE / "corpus"), CHUNK_SIZE="128", RUNS=str(run))
    assert status == 1 and f"{run}:2: 'passage-17' (question 'lh01') is not a chunk id of this corpus" in err
    assert not (tmp_path / "output").exists()


def test_a_reports_trec_files_score_against_its_golden_set_even_with_spaces_in_ids(corpus, tmp_path):
    """A corpus file named with a space gives chunk ids with a space, which a report's TREC files percent-encode."""
    from retrieval_eval.inputs.trec import run_text
    from retrieval_eval.tool.report import trec_id

    (corpus / "02_borrowing.md").rename(corpus / "02 borrowing.md")
    setup = pipeline.load_inputs(corpus, EXAMPLE / "golden.csv", chunk_size=128)
    ideal = {q: list(gains) for q, gains in setup.qrels.items()}
    assert any(" " in c for r in ideal.values() for c in r)
    run = tmp_path / "ideal.trec"
    run.write_text(run_text({trec_id(q): [trec_id(c) for c in r] for q, r in ideal.items()}, "ideal"))
    values = cli.read_parameters("evaluate-runs", {"GOLDEN": str(EXAMPLE / "golden.csv"), "CORPUS": str(corpus),
                                                   "CHUNK_SIZE": "128", "RUNS": str(run)}, tmp_path / "o", tmp_path / "c")
    ev = cli.evaluate_runs(values, tmp_path / "c")
    assert ev.runs["ideal.trec"] == ideal and set(ev.scores.query("metric == 'recall'")["value"]) == {1.0}


# --- the make targets end to end ----------------------------------------------------------------------


def trec_eval_output(name):
    table = {}
    for line in (TREC / name).read_text().splitlines():
        measure, question, value = line.split()
        table[measure, question] = value
    return table


@pytest.mark.slow
def test_make_evaluate_runs_reproduces_trec_eval_per_question_and_two_runs_never_share_a_folder(tmp_path):
    """trec_eval -m all_trec -q (and -c for the run missing question 302) on its own test files. Two runs
    started together with the same default name each get a folder of their own."""
    arguments = [f"QRELS={TREC / 'qrels.test'}", f"RUNS={TREC / 'results.test'} {TREC / 'results.trunc'}",
                 "KS=5 10 15 20 30 100 200 500 1000"]
    together = [threading.Thread(target=lambda: done.append(run_make("evaluate-runs", *arguments, tmp=tmp_path)))
                for _ in range(2)]
    done = []
    for t in together:
        t.start()
    for t in together:
        t.join()
    assert [d.returncode for d in done] == [0, 0], [d.stderr[-2000:] for d in done]
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == ["runs-trec_eval-qrels", "runs-trec_eval-qrels-2"]
    report = tmp_path / "output" / "runs-trec_eval-qrels"
    scores = pd.read_csv(report / "scores.csv", dtype={"question": str})
    names = {"recall": "recall_{k}", "precision": "P_{k}", "nDCG": "ndcg_cut_{k}"}
    for run, expected in (("results.test", trec_eval_output("out.test.aq")), ("results.trunc", trec_eval_output("out.test.aqc"))):
        part = scores[(scores["run"] == run) & scores["metric"].isin(names)]
        compared = [(names[r.metric].format(k=r.k), r.question, f"{r.value:.4f}") for r in part.itertuples()]
        compared = [(m, q, v) for m, q, v in compared if (m, q) in expected]  # K = 3 is no cut-off of all_trec
        assert len(compared) == 3 * 9 * 3 and all(expected[m, q] == v for m, q, v in compared), compared[:5]
    assert {"report.html", "report.ipynb", "qrels.txt", "run.results.test.trec", "run.results.trunc.trec"} <= {
        p.name for p in report.iterdir()}
    page = (report / "report.html").read_text()
    assert "1 × judged question the run does not answer: scored 0: 302 (results.trunc)" in page
    assert "No run ranks more than" in page


@pytest.mark.slow
def test_make_evaluate_runs_with_one_judged_question_leaves_out_what_it_cannot_compute(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "one.trec").write_text("q1 Q0 b 1 2 one\nq1 Q0 a 2 1 one\n")
    (tmp_path / "two.trec").write_text("q1 Q0 a 1 2 two\n")
    done = run_make("evaluate-runs", f"QRELS={tmp_path / 'qrels.txt'}", f"RUNS={tmp_path / 'one.trec'} {tmp_path / 'two.trec'}",
                    tmp=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    page = next((tmp_path / "output").glob("*/report.html")).read_text()
    assert "Left out: an interval needs at least 2 questions, and this evaluation has 1." in page
    assert "Left out: no paired test can reach p &lt; 0.05 unless at least 6 questions differ" in page


def test_metrics_beyond_the_four_appear_in_scores_csv_and_the_report_when_named(tmp_path, capsys):
    named = ["recall", "MAP", "R-precision", "F1", "context-precision"]
    status, _, err = main("evaluate-runs", tmp_path, capsys, QRELS=str(TREC / "qrels.test"), RUNS=str(TREC / "results.test"),
                          METRICS=" ".join(named), KS="5 10")
    assert status == 0, err
    folder = tmp_path / "output" / "runs-trec_eval-qrels"
    scores = pd.read_csv(folder / "scores.csv", dtype={"question": str})
    assert list(scores["metric"].unique()) == ["recall", "precision", "MRR", "nDCG", *named[1:]]  # the four and those named
    expected = trec_eval_output("out.test.aq")
    for k in (5, 10):
        rows = scores[(scores["metric"] == "MAP") & (scores["k"] == k)]
        assert all(expected[f"map_cut_{k}", r.question] == f"{r.value:.4f}" for r in rows.itertuples())
    page = (folder / "report.html").read_text()
    assert all(label in page for label in ("MAP@10", "R-precision@10", "F1@10", "context precision@10"))


def test_a_failing_section_is_one_line_and_the_bundle_is_kept(tmp_path, capsys, monkeypatch):
    def fails(ev):
        return 1 / 0

    monkeypatch.setattr(report_module, "SECTIONS", (*report_module.SECTIONS[:2], fails, *report_module.SECTIONS[2:]))
    status, _, err = main("evaluate-runs", tmp_path, capsys, QRELS=str(TREC / "qrels.test"), RUNS=str(TREC / "results.test"))
    folder = tmp_path / "output" / "runs-trec_eval-qrels"
    assert status == 1 and err.strip().endswith("evaluate-runs: the report stopped in its section fails with "
                                                 f"ZeroDivisionError: division by zero ({folder} is marked unfinished in "
                                                 "UNFINISHED.txt)")
    assert (folder / "report.ipynb").exists() and (folder / "bundle.json").exists() and not (folder / "report.html").exists()


def test_a_full_disk_names_the_file_leaves_no_part_of_it_and_marks_the_folder_unfinished(tmp_path, capsys, monkeypatch):
    """An OSError while report.html is written (ENOSPC after 4 kB): the error names the file, no half-written file is
    left under its name or any other, the folder says it is unfinished and why; a rerun with that REPORT says what it
    found and offers the next free name."""
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle, mode):
            self.f = real_fdopen(handle, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            if data.startswith(b"<!DOCTYPE html>"):
                self.f.write(data[:4096])
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

    monkeypatch.setattr(report_module.os, "fdopen", FullDisk)
    environ = {"QRELS": str(TREC / "qrels.test"), "RUNS": str(TREC / "results.test"), "REPORT": "full"}
    status, _, err = main("evaluate-runs", tmp_path, capsys, **environ)
    folder = tmp_path / "output" / "full"
    assert status == 1 and f"{folder / 'report.html'} could not be written: No space left on device" in err
    assert not (folder / "report.html").exists() and not list(folder.glob(".*")), sorted(folder.iterdir())
    assert (folder / "UNFINISHED.txt").read_text().startswith("stopped by: ") and "No space left" in (
        folder / "UNFINISHED.txt").read_text()
    monkeypatch.undo()
    status, _, err = main("evaluate-runs", tmp_path, capsys, **environ)
    assert status == 2 and "exists (an unfinished report (stopped by: " in err and "REPORT='full-2' is free" in err
    status, _, err = main("evaluate-runs", tmp_path, capsys, **{**environ, "REPORT": "full-2"})
    assert status == 0 and not (tmp_path / "output" / "full-2" / "UNFINISHED.txt").exists()
    assert "exists (a finished report)" in problems("evaluate-runs", tmp_path, **{**environ, "REPORT": "full-2"})[0]


def test_a_report_stopped_by_kill_9_is_marked_unfinished_from_the_start(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "write_report", lambda *args: os.kill(os.getpid(), 0) or sys.exit("killed"))
    with pytest.raises(SystemExit):  # not caught: nothing after it runs, as with kill -9
        main("evaluate-runs", tmp_path, capsys, QRELS=str(TREC / "qrels.test"), RUNS=str(TREC / "results.test"))
    mark = tmp_path / "output" / "runs-trec_eval-qrels" / "UNFINISHED.txt"
    assert mark.read_text().startswith(f"being written by process {os.getpid()}")


@pytest.mark.slow  # make evaluate-runs in a fresh process (what it imports is the test)
def test_the_report_is_rendered_in_this_process_and_its_notebook_shows_the_same(tmp_path):
    """No kernel is started; report.ipynb, unexecuted, calls the same sections on the bundle: the same page."""
    script = (f"import sys; from retrieval_eval.tool import cli; status = cli.main(['evaluate-runs'], {{"
              f"'QRELS': {str(TREC / 'qrels.test')!r}, 'RUNS': {str(TREC / 'results.test')!r}, "
              f"'RETRIEVAL_EVAL_OUTPUT': {str(tmp_path / 'output')!r}, 'RETRIEVAL_EVAL_CACHE': {str(tmp_path / 'cache')!r}}}); "
              "print(status, [m for m in ('nbclient', 'jupyter_client', 'ipykernel') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.splitlines()[-1] == "0 []", done.stderr[-2000:]
    folder = tmp_path / "output" / "runs-trec_eval-qrels"
    notebook = json.loads((folder / "report.ipynb").read_text(encoding="utf-8"))
    assert all(cell.get("outputs") == [] for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert report_module.render(report_module.load_bundle(folder)) == (folder / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_make_evaluate_alone_reports_the_teaching_set_and_a_reranker_adds_its_run(tmp_path):
    done = run_make("evaluate", "RERANKER=sentence", tmp=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = tmp_path / "output" / "data-golden"
    scores = pd.read_csv(report / "scores.csv")
    assert list(scores["run"].unique()) == [*h.default_retrievers(), "hybrid + rerank"]
    assert scores["question"].nunique() == 47 and set(scores["metric"]) == {m for m, metric in h.METRICS.items() if metric.shown}
    assert {"run.BM25.trec", "run.hybrid_+_rerank.trec", "qrels.txt", "chunks.jsonl", "questions.csv"} <= {
        p.name for p in report.iterdir()}
    page = (report / "report.html").read_text()
    for title in ("What was evaluated", "The scores", "The precision ceiling", "Where each run puts the first relevant chunk",
                  "How sure: intervals", "Is a difference real? Paired tests", "Can this golden set tell the runs apart?"):
        assert title in page, title
    assert "hybrid + rerank" in page and "Check yourself" not in page  # no quiz, no lesson
    # the slow parts say how far they have come in the terminal, and the report keeps none of it
    assert "paired tests" in done.stderr and "/18 " in done.stderr and "it/s" not in page


@pytest.mark.slow
def test_a_copied_checkout_runs_its_own_code_with_paths_as_typed(tmp_path):
    """`cp -r` of a checkout with its .venv: the environment's editable install still points to the
    original, yet the report's kernel must import the copy's code (and the copy's .cache is filled)."""
    copy = tmp_path / "copy of it"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", ".cache", "output", "__pycache__"))
    venv = copy / ".venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", venv)
    for part in ("lib", "share"):
        (venv / part).symlink_to(Path(sys.prefix) / part)
    (venv / "bin" / "python").symlink_to(Path(sys.prefix) / "bin" / "python")
    (venv / ".installed").touch()
    report_py = copy / "retrieval_eval" / "tool" / "report.py"
    report_py.write_text(report_py.read_text().replace('"What was evaluated"', '"What this copy evaluated"'))
    data = tmp_path / "my data é 'q' $HOME"
    shutil.copytree(EXAMPLE, data)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",) and not k.startswith("RETRIEVAL_EVAL_")}
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "evaluate", f"CORPUS={data / 'corpus'}",
                           f"GOLDEN={data / 'golden.csv'}", "CHUNK_SIZE=128", "REPORT=copied"],
                          cwd=copy, env={**env, "PWD": str(copy)}, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for step in ("chunking", "BM25 indexing", "embedding chunks", "ranking with BM25", "report"):  # progress, in the terminal
        assert step in done.stderr, step
    page = (copy / "output" / "copied" / "report.html").read_text()
    assert "What this copy evaluated" in page and str(data / "corpus") in page.replace("&#x27;", "'")
    assert any((copy / ".cache").rglob("*.json"))  # the copy's own cache


@pytest.mark.parametrize("split", ["../../x", "a/b", "/etc/passwd", ".hidden", "test/../../x", "..", "a b"])
def test_a_split_that_is_a_path_is_one_line_naming_it(tmp_path, split):
    found = problems("evaluate", tmp_path, BEIR=str(FORMATS / "beir"), SPLIT=split)
    assert len(found) == 1 and found[0].startswith(f"SPLIT={split!r}: must be a plain split name"), found
    assert problems("evaluate", tmp_path, BEIR=str(FORMATS / "beir"), SPLIT="dev.v2") == []
