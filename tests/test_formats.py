"""retrieval_eval/inputs/formats.py and the label levels: every golden-set format of issue 23, read from small fixtures
(tests/data/formats: six chunks of three documents, four questions), scored through evaluation_setup and
checked against pytrec_eval on the TREC files written from the same runs and labels; a malformed version of
each format gives one error naming its file and line; the cookbook converter and its published formulas."""

import gzip
import importlib.util
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import pytrec_eval

import helpers as h
from retrieval_eval.analysis.conventions import published_summary
from retrieval_eval.core.errors import FormatError, GoldenSetError
from retrieval_eval.core.paths import DATA_DIR, ROOT
from retrieval_eval.inputs.formats import id_labels, load_chunks, load_qrels_and_questions
from retrieval_eval.inputs.golden import document_qrels, document_run, load_golden
from retrieval_eval.inputs.trec import export_trec
from retrieval_eval.retrieval.setup import load_inputs
from retrieval_eval.tool import cli

FORMATS = ROOT / "tests" / "data" / "formats"
LABELS = {"q1": {"d01#01": 2, "d01#00": 1}, "q2": {"d02#00": 2, "d02#01": 1}, "q3": {"d03#00": 1}, "q4": {"d03#01": 1}}
BINARY = {q: dict.fromkeys(gains, 1) for q, gains in LABELS.items()}
WITH_ZERO = {**LABELS, "q3": {"d03#00": 1, "d01#00": 0}}  # the TREC and BEIR qrels also judge one chunk not relevant
DOCUMENTS = {"q1": {"d01": 1}, "q2": {"d02": 1}, "q3": {"d03": 1}, "q4": {"d03": 1}}
CHUNK_IDS = ["d01#00", "d01#01", "d02#00", "d02#01", "d03#00", "d03#01"]


def fake_vector(question: str) -> list[str]:
    """A stand-in for vector search (no embedding model in these tests): a fixed order that depends on the question."""
    shift = len(question) % len(CHUNK_IDS)
    return CHUNK_IDS[shift:] + CHUNK_IDS[:shift]


def setup_of(tmp_path, corpus, golden, **kwargs):
    return h.evaluation_setup(corpus and FORMATS / corpus, FORMATS / golden, retrievers={"vector": fake_vector},
                              cache_dir=tmp_path / "cache", **kwargs)


def assert_equal_to_pytrec_eval(setup, folder, ks=(1, 3, 5)):
    """Every per-question value of every run equals pytrec_eval's on the qrels and run files export_trec writes."""
    paths = export_trec(setup.runs, setup.qrels, folder)
    with open(paths[0]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    ours = h.per_question_scores(setup.runs, setup.qrels, ks).set_index(["run", "question", "metric", "k"])["value"]
    compared = 0
    for path, name in zip(paths[1:], setup.runs):
        with open(path) as f:
            run = pytrec_eval.parse_run(f)
        for k in ks:
            cut = {q: dict(sorted(r.items(), key=lambda item: -item[1])[:k]) for q, r in run.items()}
            theirs = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}"}).evaluate(run)
            rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)  # RR@k: trec_eval -M k
            for q in setup.qrels:  # a question with an empty ranking has no line: pytrec_eval leaves it out, we score 0
                for metric, value in [("precision", theirs.get(q, {}).get(f"P_{k}", 0.0)),
                                      ("recall", theirs.get(q, {}).get(f"recall_{k}", 0.0)),
                                      ("nDCG", theirs.get(q, {}).get(f"ndcg_cut_{k}", 0.0)),
                                      ("MRR", rr.get(q, {}).get("recip_rank", 0.0))]:
                    assert ours[name, q, metric, k] == pytest.approx(value, abs=1e-12), (name, q, metric, k)
                    compared += 1
    assert compared == len(setup.runs) * len(ks) * len(setup.qrels) * 4


# --- every format, read and scored ----------------------------------------------------------------

CASES = {
    "ids CSV, chunks JSONL": ("chunks.jsonl", "golden_ids.csv", {}, LABELS, "chunk"),
    "ids JSONL, chunks CSV": ("chunks.csv", "golden_ids.jsonl", {}, LABELS, "chunk"),
    "list in a cell, no id column, chunks JSON": ("chunks.json", "golden_list_cell.csv", {}, BINARY, "chunk"),
    "TREC qrels + questions": ("chunks.jsonl", "qrels.txt", {"questions": FORMATS / "questions.jsonl"}, WITH_ZERO, "chunk"),
    "LlamaIndex dataset": (None, "llamaindex.json", {}, BINARY, "chunk"),
    "BEIR folder": (None, "beir", {}, WITH_ZERO, "chunk"),
    "evidence strings, several per question": ("chunks.jsonl", "golden_evidence.csv", {}, BINARY, "chunk"),
    "document labels, detected": ("chunks.jsonl", "golden_documents.csv", {}, DOCUMENTS, "document"),
    "chunk labels scored by document": ("chunks.jsonl", "golden_ids.csv", {"level": "document"},
                                        {"q1": {"d01": 2}, "q2": {"d02": 2}, "q3": {"d03": 1}, "q4": {"d03": 1}}, "document"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_format_is_read_and_scores_as_pytrec_eval(case, tmp_path):
    corpus, golden, kwargs, qrels, level = CASES[case]
    setup = setup_of(tmp_path, corpus, golden, **kwargs)
    assert setup.qrels == qrels and setup.level == level
    assert list(setup.golden["id"]) == list(qrels) and list(setup.runs) == list(h.default_retrievers())
    if level == "document":
        assert all(d in {"d01", "d02", "d03"} for run in setup.runs.values() for r in run.values() for d in r)
        assert any("scored at the document level" in note for note in setup.notes)
        assert setup.chunk_ids == ["d01", "d02", "d03"]  # what the runs rank: h.evaluate(..., chunk_ids=...) checks them
    h.evaluate(setup.runs, setup.qrels, chunk_ids=setup.chunk_ids)
    assert_equal_to_pytrec_eval(setup, tmp_path / "trec")


@pytest.mark.slow  # loads the embedding model
def test_a_beir_folder_with_the_three_retrievers_scores_as_pytrec_eval(tmp_path):
    setup = h.evaluation_setup(golden=FORMATS / "beir", cache_dir=tmp_path / "cache")
    assert list(setup.runs) == list(h.default_retrievers()) and setup.qrels == WITH_ZERO
    assert all(len(ranked) == 6 for ranked in setup.runs["vector"].values())  # vector search ranks every chunk
    assert_equal_to_pytrec_eval(setup, tmp_path / "trec")


def test_questions_the_labels_do_not_judge_are_left_out_with_a_note(tmp_path):
    for golden, kwargs in [("beir", {}), ("qrels.txt", {"questions": FORMATS / "questions.jsonl"})]:
        setup = setup_of(tmp_path, "chunks.jsonl" if kwargs else None, golden, **kwargs)
        assert "q5" not in setup.qrels
        assert [n for n in setup.notes if "no label in" in n] == [
            f"left out when reading {FORMATS / ('beir/queries.jsonl' if not kwargs else 'questions.jsonl')}: 1 question(s) have no "
            f"label in {'test.tsv' if not kwargs else 'qrels.txt'}, not scored: 'q5'"]
    dev = load_inputs(None, FORMATS / "beir", split="dev")
    assert dev.qrels == {"q5": {"d02#00": 1}}


def test_the_readers_return_what_the_files_hold():
    chunks = load_chunks(FORMATS / "chunks.json")  # BEIR-style names, the title joined to the text
    assert chunks[0] == {"id": "d01#00", "doc": "d01", "text": "Opening hours\n\nThe garden centre opens at nine in the "
                                                               "morning from Monday to Saturday."}
    assert [c["id"] for c in load_chunks(FORMATS / "chunks.csv")] == CHUNK_IDS
    assert "doc" not in load_chunks(FORMATS / "llamaindex.json")[0]
    beir = load_inputs(None, FORMATS / "beir")  # corpus.jsonl, the test split's questions and their graded labels
    assert len(beir.chunks) == 6 and list(beir.golden["id"]) == ["q1", "q2", "q3", "q4"] and beir.qrels == WITH_ZERO
    labels = load_qrels_and_questions(FORMATS / "qrels.txt", FORMATS / "questions.jsonl")
    assert labels.where["q3", "d01#00"] == f"{FORMATS / 'qrels.txt'}:7"
    assert list(id_labels(FORMATS / "golden_list_cell.csv").golden["id"]) == ["q1", "q2", "q3", "q4"]
    evidence = h.read_golden_csv(FORMATS / "golden_evidence.csv")
    assert evidence.set_index("id").loc["q1", "evidence_strings"] == ("On Sundays the garden centre opens at eleven",
                                                                      "opens at nine in the morning")


def test_a_question_with_two_evidence_strings_needs_both_in_some_chunk():
    chunks = load_chunks(FORMATS / "chunks.jsonl")
    golden = h.read_golden_csv(FORMATS / "golden_evidence.csv")
    golden.loc[0, "evidence_strings"] = ("On Sundays the garden centre opens at eleven", "closes at midnight on Fridays")
    with pytest.raises(GoldenSetError, match="question 'q1': evidence 'closes at midnight on Fridays' is in no chunk"):
        h.label_chunks(golden, chunks)


# --- the document level -----------------------------------------------------------------------------


def test_document_run_puts_each_document_at_its_best_chunks_rank():
    chunks = load_chunks(FORMATS / "chunks.jsonl")
    assert document_run({"q": ["d02#01", "d01#00", "d02#00", "d03#01", "d01#01"]}, chunks) == {"q": ["d02", "d01", "d03"]}
    assert document_qrels({"q": {"d01#00": 1, "d01#01": 2, "d03#00": 0}}, chunks) == {"q": {"d01": 2, "d03": 0}}
    runs, qrels = h.document_level({"a": {"q1": ["d01#01", "d01#00"]}}, {"q1": {"d01#00": 1}}, chunks)
    assert runs == {"a": {"q1": ["d01"]}} and qrels == {"q1": {"d01": 1}}
    # the lesson of haystack#7772: chunk runs against document labels never meet
    assert h.evaluate({"a": {"q1": ["d01#01", "d01#00"]}}, {"q1": {"d01": 1}})[("recall", 1)].iloc[0] == 0
    assert h.evaluate(runs, qrels)[("recall", 1)].iloc[0] == 1


@pytest.mark.parametrize("call, message", [
    (lambda c: document_run({"q": ["d01#00", "nope"]}, c), r"question 'q': chunk ids no chunk has: \['nope'\]"),
    (lambda c: document_run({"q": ["d01#00", "d01#00"]}, c), "question 'q': duplicate id 'd01#00'"),
    (lambda c: document_run({"q": ["x"]}, [{"id": "x", "text": "t"}]), r"chunk\(s\) \['x'\] name no document"),
    (lambda c: document_qrels({"q": {"zz": 1}}, c), r"question 'q': labels name chunk ids no chunk has: \['zz'\]"),
])
def test_document_level_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call(load_chunks(FORMATS / "chunks.jsonl"))


def test_labels_that_no_chunk_or_document_has_are_listed_with_file_and_line(tmp_path):
    path = tmp_path / "golden.csv"
    path.write_text("id,question,relevant\nq1,Sunday hours?,d01#01|d09#00\nq2,Delivery?,d02#00\nq3,Roses?,d07#01\n")
    with pytest.raises(GoldenSetError) as err:
        load_inputs(FORMATS / "chunks.jsonl", path)
    assert str(err.value) == (f"2 label(s) name ids that no chunk has:\n- {path}:2: question 'q1', id 'd09#00'\n"
                              f"- {path}:4: question 'q3', id 'd07#01'")
    path.write_text("id,question,relevant\nq1,Sunday hours?,d01\n")
    with pytest.raises(GoldenSetError, match=r"no chunk has \(they are document ids: score at the document level"):
        load_inputs(FORMATS / "chunks.jsonl", path, level="chunk")
    with pytest.raises(ValueError, match="needs each chunk's document"):
        load_golden(path, load_chunks(FORMATS / "llamaindex.json"), level="document")


def test_parameters_are_checked_before_anything_is_read(tmp_path):
    with pytest.raises(ValueError) as err:
        load_inputs(tmp_path / "nowhere.jsonl", tmp_path / "none.csv", questions=tmp_path / "q.jsonl", level="page",
                    split=" ")
    message = str(err.value)
    assert message.startswith("5 problem(s) with the parameters")
    for part in ["GOLDEN", "CORPUS", "QUESTIONS", "LEVEL must be chunk or document", "SPLIT must be the name"]:
        assert part in message
    with pytest.raises(ValueError, match="GOLDEN: give the golden set of this CORPUS"):
        load_inputs(FORMATS / "chunks.jsonl", None)


# --- malformed files: one error naming the file and the line ----------------------------------------

CHUNK_LINE = '{"id": "d01#00", "doc": "d01", "text": "Some text."}'
BAD_FILES = [
    # (file name, content, what reads it, the message after "<path>:")
    ("chunks.jsonl", CHUNK_LINE + "\n{not json}\n", "chunks", "2: is not valid JSON (Expecting property name"),
    ("chunks.jsonl", CHUNK_LINE + "\n\n" + CHUNK_LINE + "\n", "chunks",
     "3: the chunk id 'd01#00' again (first on line 1): chunk ids must be unique"),
    ("chunks.jsonl", '{"id": "a", "txt": "x"}\n', "chunks", "1: the chunk misses the field(s) ['text']"),
    ("chunks.jsonl", '{"id": "a", "text": "  "}\n', "chunks", "1: chunk 'a': the field text is empty"),
    ("chunks.jsonl", '{"id": "a b ", "text": "x"}\n', "chunks", "1: the field id must be an id (one line, no space at either end), found 'a b '"),
    ("chunks.jsonl", '{"id": "a\\nb", "text": "x"}\n', "chunks", "1: the field id must be an id (one line, no space at either end), found 'a\\nb'"),
    ("chunks.jsonl", '{"id": 1.5, "text": "x"}\n', "chunks", "1: the field id must be an id (one line, no space at either end), found a number"),
    ("chunks.jsonl", '{"id": "a", "_id": "b", "text": "x"}\n', "chunks", "1: the keys 'id' and '_id' both give the id"),
    ("chunks.jsonl", '["a", "x"]\n', "chunks", "1: a chunk must be a JSON object {...}, not a list"),
    ("chunks.jsonl", '{"id": "a", "text": "x", "n_tokens": "many"}\n', "chunks", "1: the field n_tokens must be a whole number"),
    ("chunks.csv", "id,text\na,first\nb,second\na,third\n", "chunks", "4: the chunk id 'a' again (first on line 2)"),
    ("chunks.csv", "id,body\na,first\n", "chunks", "1: misses column(s) ['text']: its header line is 'id,body'"),
    ("chunks.csv", 'id,text\na,"an open quote\n', "chunks", "2: is not readable CSV"),
    ("chunks.json", '{"id": "a", "text": "x"}', "chunks", "1: a .json file of chunks holds a list of objects"),
    ("chunks.json", '[\n {"id": "a", "text": "x"},\n 7\n]', "chunks", "3: a chunk must be a JSON object {...}, not a number"),
    ("chunks.json", '[\n {"id": "a", "text": "x"},\n {"id": "a", "text": "y"}\n]', "chunks",
     "3: the chunk id 'a' again (first on line 2)"),
    ("chunks.json", '[{"id": "a",\n "text": "x"]', "chunks", "2: is not valid JSON"),
    ("chunks.parquet", "x", "chunks", " is a .parquet: give a .jsonl, .json or .csv (.tsv, .txt) file"),
    ("golden.csv", "id,question,relevant,gain\nq1,Why?,d01#00|d01#01,2|1|1\n", "golden",
     "2: the field gain gives 3 gains for the 2 ids of the field relevant"),
    ("golden.csv", "id,question,relevant,gain\nq1,Why?,d01#00,high\n", "golden", "2: the field gain must be a whole number"),
    ("golden.csv", "id,question,relevant\nq1,Why?,\n", "golden", "2: the field relevant names no id"),
    ("golden.csv", 'id,question,relevant\nq1,Why?,"[""d01#00"", "\n', "golden", "2: the field relevant is not valid JSON"),
    ("golden.csv", "id,question,relevant\nq1,Why?,d01#00\nq1,How?,d02#00\n", "golden",
     "3: the question id 'q1' again (first on line 2)"),
    ("golden.csv", "id,question,relevant\nq1, ,d01#00\n", "golden", "2: question 'q1': the question is blank"),
    ("golden.csv", "id,question,relevant\nq1,Why?,d01#00|d01#00\n", "golden", "2: question 'q1' labels 'd01#00' again"),
    ("golden.csv", "id,question,relevant,evidence\nq1,Why?,d01#00,a long evidence string here\n", "golden",
     " has both an evidence and a relevant column"),
    ("golden.csv", "question,answer\nWhy?,Because.\n", "golden", "1: misses column(s) ['evidence or relevant']"),
    ("golden.jsonl", '{"id": "q1", "question": "Why?", "relevant": true}\n', "golden",
     "1: the field relevant must be an id (one line, no space at either end), found a true/false"),
    ("golden.jsonl", '{"id": "q1", "question": "Why?", "relevant": {"d01#00": 1}, "gain": 2}\n', "golden",
     "1: the field relevant gives {id: gain} already"),
    ("golden.json", '{"queries": {"q1": "Why?",\n "q1": "How?"}, "corpus": {}, "relevant_docs": {}}', "golden",
     "2: the key 'q1' again (first on line 1)"),
    ("golden.json", '{"queries": {"q1": "Why?"}, "corpus": {},\n "relevant_docs": {"q1": "d01#00"}}', "golden",
     "2: relevant_docs of 'q1' must be a list of ids, not a string"),
    ("golden.json", '{"queries": {"q1": "Why?", "q2": "How?"}, "corpus": {}, "relevant_docs": {"q1": ["d01#00"]}}',
     "golden", "1: question 'q2' has no relevant id"),
    ("qrels.txt", "q1 0 d01#00 1\nq1 0 d01#01\n", "qrels", "2: a qrels line needs 4 fields"),
    ("qrels.txt", "q1 0 d01#00 1\nq9 0 d01#01 1\n", "qrels", "2: question 'q9' is not in questions.jsonl"),
    ("qrels.txt", "q1 0 d01#00 1\nq1 0 d01#00 2\n", "qrels", "2: document 'd01#00' is judged twice for question 'q1'"),
]


def _read(kind, path, tmp_path):
    if kind == "chunks":
        return load_chunks(path)
    if kind == "golden":
        return load_golden(path, load_chunks(FORMATS / "chunks.jsonl"))
    (tmp_path / "questions.jsonl").write_text('{"_id": "q1", "text": "Why?"}\n')
    return load_golden(path, load_chunks(FORMATS / "chunks.jsonl"), questions=tmp_path / "questions.jsonl")


@pytest.mark.parametrize("name, content, kind, message", BAD_FILES)
def test_a_malformed_file_gives_one_error_naming_file_and_line(tmp_path, name, content, kind, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises((FormatError, GoldenSetError)) as err:
        _read(kind, path, tmp_path)
    text = str(err.value)
    assert f"{path}:{message}" in text or f"{path}{message}" in text, text


def test_a_malformed_beir_folder_names_the_file_and_line(tmp_path):
    folder = tmp_path / "beir"
    shutil.copytree(FORMATS / "beir", folder)
    with pytest.raises(FormatError, match=r"has no qrels/train.tsv; its splits: dev, test"):
        load_inputs(None, folder, split="train")
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td01#00\t1\nq2\td02#00\n")
    with pytest.raises(FormatError, match=rf"{qrels}:3: a line needs 3 fields \(query-id, corpus-id, score\), found 2"):
        load_inputs(None, folder)
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td01#00\tyes\n")
    with pytest.raises(FormatError, match=rf"{qrels}:2: the field score must be a whole number"):
        load_inputs(None, folder)
    qrels.write_text("q1 0 d01#00 1\n")
    with pytest.raises(FormatError, match="found 4 \\(it looks like a TREC qrels line"):
        load_inputs(None, folder)
    qrels.write_text("q1\td09#00\t1\n")  # no header line: read all the same
    with pytest.raises(GoldenSetError, match=rf"{qrels}:1: question 'q1', id 'd09#00'"):
        load_inputs(None, folder)
    (folder / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "title": "y", "text": "z"}\n')
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: the chunk id 'a' again \(first on line 1\)"):
        load_inputs(None, folder)
    shutil.copy(FORMATS / "beir" / "corpus.jsonl", folder / "corpus.jsonl")
    (folder / "queries.jsonl").unlink()
    with pytest.raises(FormatError, match="is not a BEIR folder: it has no queries.jsonl"):
        load_inputs(None, folder)


def test_all_problems_of_a_labels_file_are_listed_at_once(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text('{"id": "q1", "question": "Why?", "relevant": ["d01#00"]}\n'
                    '{"id": "q1", "question": " ", "relevant": ["d02#00"]}\n'
                    '{"id": "q3", "question": "How?", "relevant": {"d03#00": 0}}\n')
    with pytest.raises(GoldenSetError) as err:
        load_golden(path, load_chunks(FORMATS / "chunks.jsonl"))
    assert str(err.value) == (f"3 problem(s); fix them all and run again:\n- {path}:2: the question id 'q1' again (first "
                              f"on line 1)\n- {path}:2: question 'q1': the question is blank\n"
                              f"- {path}:3: question 'q3' has no relevant id")


# --- the cookbook's set ---------------------------------------------------------------------------------

CONVERT = DATA_DIR / "cookbook" / "convert.py"
_spec = importlib.util.spec_from_file_location("cookbook_convert", CONVERT)
convert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convert)


def test_the_cookbook_converter_on_a_fake_pair(tmp_path):
    chunks_path, golden_path = convert.cookbook_to_series(FORMATS / "cookbook" / "anthropic_docs.json",
                                                          FORMATS / "cookbook" / "docs_evaluation_dataset.json", tmp_path)
    chunks = load_chunks(chunks_path)
    assert chunks[1] == {"id": "https://docs.example.com/en/d01#01", "doc": "https://docs.example.com/en/d01",
                         "text": "Opening hours\n\nOn Sundays the garden centre opens at eleven and closes at five."}
    inputs = load_inputs(chunks_path, golden_path)
    assert inputs.level == "chunk" and list(inputs.golden["id"]) == ["eq1", "eq2", "eq3", "eq4"]
    assert [len(g) for g in inputs.qrels.values()] == [2, 2, 1, 1]
    pages = load_inputs(chunks_path, golden_path, level="document").qrels
    assert pages["eq1"] == {"https://docs.example.com/en/d01": 1}
    bad = tmp_path / "eval.json"
    bad.write_text('[\n{"id": "e1", "question": "Why?", "correct_chunks": "https://x#y"}\n]')
    with pytest.raises(FormatError, match=rf"{bad}:2: the field correct_chunks must be a non-empty list"):
        convert.cookbook_to_series(FORMATS / "cookbook" / "anthropic_docs.json", bad, tmp_path)


def test_the_cookbook_script_runs_from_the_command_line(tmp_path):
    """``python data/cookbook/convert.py <docs> <eval> <folder>`` writes the same two files as the function."""
    fake = [FORMATS / "cookbook" / "anthropic_docs.json", FORMATS / "cookbook" / "docs_evaluation_dataset.json"]
    done = subprocess.run([sys.executable, CONVERT, *fake, tmp_path / "cli"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    convert.cookbook_to_series(*fake, tmp_path / "call")
    for name in ("chunks.jsonl", "golden.csv"):
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "call" / name).read_bytes()
    usage = subprocess.run([sys.executable, CONVERT], capture_output=True, text=True, cwd=ROOT)
    assert usage.returncode == 1 and usage.stderr.startswith("usage: python data/cookbook/convert.py")


COOKBOOK = DATA_DIR / "cookbook"


def test_the_shipped_cookbook_set():
    inputs = load_inputs(COOKBOOK / "chunks.jsonl", COOKBOOK / "golden.csv")
    assert len(inputs.chunks) == 232 and len(inputs.golden) == 100 and inputs.level == "chunk"
    sizes = pd.Series([len(g) for g in inputs.qrels.values()]).value_counts().to_dict()
    assert sizes == {1: 17, 2: 75, 3: 7, 4: 1}  # the count: most questions have several relevant chunks
    assert "MIT License" in (COOKBOOK / "LICENSE").read_text() and "Copyright (c) 2023 Anthropic" in (COOKBOOK / "LICENSE").read_text()


@pytest.mark.parametrize("name, rows", [
    ("one", "evaluation_results_detailed.csv"), ("level_two", "evaluation_results_detailed_level_two.csv"),
    ("level_three", "evaluation_results_detailed_level_three.csv")])
def test_the_published_table_is_reproduced_from_its_per_question_rows(name, rows):
    """The cookbook's averages are plain means of its per-question rows; its F1 is the F1 of the mean precision
    and mean recall (a mean of per-question F1 would differ)."""
    published = json.loads((COOKBOOK / "published" / f"evaluation_results_{name}.json").read_text())
    table = pd.read_csv(COOKBOOK / "published" / rows).rename(
        columns={"retrieval_precision": "precision", "retrieval_recall": "recall", "retrieval_mrr": "MRR"})
    assert len(table) == 100
    summary = published_summary(table)
    for ours, theirs in [("precision", "average_precision"), ("recall", "average_recall"), ("F1", "average_f1"),
                         ("MRR", "average_mrr")]:
        assert summary[ours] == pytest.approx(published[theirs], abs=1e-12), ours
    p, r = table["precision"], table["recall"]
    mean_of_f1 = (2 * p * r / (p + r)).fillna(0).mean()
    assert abs(mean_of_f1 - published["average_f1"]) > 1e-3


def test_published_metrics_on_hand_made_rankings():
    qrels = {"a": {"x": 1, "y": 1}, "b": {"z": 1}, "c": {"w": 1, "v": 1, "u": 1}}
    run = {"a": ["x", "n", "y", "m"], "b": ["n"], "c": []}  # b returns one result, c none
    rows = h.published_metrics(run, qrels, k=3, per_question=True)
    assert rows.to_dict("index") == {"a": {"precision": 2 / 3, "recall": 1.0, "MRR": 1.0},
                                     "b": {"precision": 0.0, "recall": 0.0, "MRR": 0.0},
                                     "c": {"precision": 0.0, "recall": 0.0, "MRR": 0.0}}
    run["b"] = ["z"]  # one result, relevant: precision 1 (of the one returned), where precision@3 is 1/3
    summary = h.published_metrics(run, qrels, k=3)
    p, r = (2 / 3 + 1) / 3, (1 + 1) / 3
    assert summary.to_dict() == pytest.approx({"precision": p, "recall": r, "F1": 2 * p * r / (p + r), "MRR": 2 / 3})
    assert h.evaluate({"run": run}, qrels, [3])[("precision", 3)].iloc[0] == pytest.approx((2 / 3 + 1 / 3) / 3)
    with pytest.raises(ValueError, match="question 'c': no ranking"):
        h.published_metrics({"a": ["x"], "b": ["z"]}, qrels)


def test_a_beir_folder_shipped_gzipped_reads_as_the_plain_one(tmp_path):
    """corpus.jsonl.gz, queries.jsonl.gz and qrels/test.tsv.gz, as BEIR datasets are shipped: the same labels and
    chunks as the plain folder; the parameter check at the door takes the folder too."""
    folder = tmp_path / "beir"
    shutil.copytree(FORMATS / "beir", folder)
    for path in [folder / "corpus.jsonl", folder / "queries.jsonl", *(folder / "qrels").glob("*.tsv")]:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    plain, gzipped = load_inputs(None, FORMATS / "beir"), load_inputs(None, folder)
    assert (gzipped.qrels, gzipped.chunks, gzipped.notes[0][1]) == (plain.qrels, plain.chunks, plain.notes[0][1])
    assert cli._labels_path(str(folder), None) == folder
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b"x")[:10])
    with pytest.raises(ValueError, match=r"corpus.jsonl.gz is a gzip file that does not decompress"):
        load_inputs(None, folder)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_ragas_testset_is_a_golden_set_of_evidence_strings(tmp_path, suffix):
    """Ragas' testset shape (``testset.to_pandas()`` saved as CSV, its contexts a Python list, or as JSONL): the question
    is user_input, each reference_contexts entry an evidence string; the same labels as our CSV of the same strings."""
    chunks = load_chunks(FORMATS / "chunks.jsonl")
    texts = [c["text"] for c in chunks]
    testset = pd.DataFrame({"user_input": ["What does the first chunk say?", "And the others?"],
                            "reference_contexts": [[texts[0][:40]], [texts[1][5:45], texts[2][:30]]],
                            "reference": ["An answer.", "Another answer."], "synthesizer_name": ["a", "b"]})
    path = tmp_path / f"testset{suffix}"
    if suffix == ".csv":
        testset.to_csv(path, index=False)  # a list cell reads "['...']"
    else:
        testset.to_json(path, orient="records", lines=True, force_ascii=False)
    ours = tmp_path / "golden.csv"
    pd.DataFrame([(f"q{i}", q, e) for i, (q, cs) in enumerate(zip(testset["user_input"], testset["reference_contexts"]), 1)
                  for e in cs], columns=["id", "question", "evidence"]).to_csv(ours, index=False)
    read = load_golden(path, chunks)
    assert read.qrels == load_golden(ours, chunks).qrels and len(read.qrels["q2"]) == 2
    assert list(read.golden["question"]) == list(testset["user_input"])
    path.write_text(path.read_text().replace(texts[0][:40], "not in any chunk of this corpus at all"))
    with pytest.raises(GoldenSetError, match=r"question 'q1': evidence 'not in any chunk of this corpus at all' is in no chunk"):
        load_golden(path, chunks)
