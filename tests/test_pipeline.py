"""retrieval_eval/retrieval/setup.py and stages.py: evaluation_setup, the registry of retrievers, the committed teaching runs
and the rankings cache."""

import codecs
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from cases import examples
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import helpers as h
from retrieval_eval.core.errors import ParameterError
from retrieval_eval.core.evaluation import run_columns
from retrieval_eval.core.paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH, OUTPUT_DIR, ROOT, RUNS_DIR
from retrieval_eval.inputs.golden import GOLDEN_COLUMNS
from retrieval_eval.inputs.trec import read_run
from retrieval_eval.retrieval import stages
from retrieval_eval.retrieval.fusion import Fusion, fuse_runs
from retrieval_eval.retrieval.retrievers import BM25, Vector
from retrieval_eval.retrieval.setup import Setup
from retrieval_eval.retrieval.stages import Stage, stage_fingerprint
from retrieval_eval.tool.runs import fresh_runs, inputs_and_registry, made_from

PYTHON = [sys.executable, "-c"]


def python(script: str, *args) -> subprocess.CompletedProcess:
    """Run ``script`` in a new interpreter with this worktree's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*PYTHON, script, *map(str, args)], capture_output=True, text=True, cwd=ROOT, env=env)


# --- the set-up of the teaching set: committed runs -------------------------------------------------


def test_setup_holds_the_data_and_the_three_committed_runs(setup, docs, chunks, golden, qrels):
    assert isinstance(setup, Setup)
    assert setup.docs == docs and setup.chunks == chunks and setup.qrels == qrels
    pd.testing.assert_frame_equal(setup.golden, golden)
    assert setup.chunk_ids == [c["id"] for c in chunks]
    assert list(setup.runs) == list(h.default_retrievers())
    for name, run in setup.runs.items():
        assert run == read_run(stages.run_file(name)).rankings
        assert list(run) == list(golden["id"]) and all(len(r) <= stages.DEPTH for r in run.values())
    assert setup.runs["hybrid"] == fuse_runs([setup.runs["BM25"], setup.runs["vector"]])
    assert setup.skipped == [] and setup.unreadable == {"chunks": [], "questions": [], "cut": []}


def test_each_committed_folder_names_what_it_was_made_from_and_its_stages(setup):
    """Every folder of data/runs/ is one `make runs` writes, for the inputs it names; a stage whose settings changed,
    or other inputs, leave the committed run unused."""
    assert sorted(str(p.parent.relative_to(RUNS_DIR)) for p in RUNS_DIR.rglob("settings.json")) == sorted(made_from())
    for name, spec in made_from().items():
        stored = json.loads((RUNS_DIR / name / "settings.json").read_text(encoding="utf-8"))
        chunks, questions, registry = inputs_and_registry(spec)
        assert stored["made from"] == spec and stored["inputs"] == stages.inputs_fingerprint(chunks, questions), name
        assert stored["runs"] == {stages.run_file(n).name: stages.portable(stage.key()) for n, stage in registry.items()}
        assert sorted(stored["runs"]) == sorted(p.name for p in (RUNS_DIR / name).glob("*.trec"))
        assert stages.committed_folder(chunks, questions) == RUNS_DIR / name
    assert stages.committed_folder(setup.chunks[1:], {}) is None  # other inputs: none
    assert stages.committed_run("BM25", BM25(k1=1.2), RUNS_DIR) is None  # other settings: not the committed run
    assert stages.committed_run("BM25", BM25(), RUNS_DIR) == setup.runs["BM25"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(made_from()))
def test_each_committed_folder_equals_a_fresh_ranking(name):
    """data/runs/ is what `make runs` writes: each folder's registry ranked now, with no cache (loads the model)."""
    chunks, questions, registry = inputs_and_registry(made_from()[name])
    fresh = fresh_runs(chunks, questions, registry)
    assert list(fresh) == list(registry)
    for run in registry:
        assert read_run(stages.run_file(run, RUNS_DIR / name)).rankings == fresh[run], run


WARM = """
import json, sys
import helpers as h
setup = h.evaluation_setup(sys.argv[1], sys.argv[2], chunk_size=int(sys.argv[3]), cache_dir=sys.argv[4])
loaded = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
print(json.dumps({"runs": setup.runs, "loaded": loaded}))
"""


def cache_files(folder) -> dict:
    """``{path relative to folder: (size, modification time)}`` of every file under ``folder``."""
    folder = Path(folder)
    return {p.relative_to(folder): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_committed_runs_and_a_warm_cache_give_the_same_runs_without_torch(setup, tmp_path, example_dir, example_chunk_size):
    teaching = python(WARM, CORPUS_DIR, GOLDEN_PATH, 512, tmp_path / "t")
    assert teaching.returncode == 0, teaching.stderr[-2000:]
    assert json.loads(teaching.stdout) == {"runs": setup.runs, "loaded": []}
    assert not (tmp_path / "t").exists()  # nothing computed, nothing cached
    corpus, golden, cache = example_dir / "corpus", example_dir / "golden.csv", tmp_path / "example"
    cold = h.evaluation_setup(corpus, golden, chunk_size=example_chunk_size, cache_dir=cache)  # ranks, loads the model
    before = cache_files(cache)
    warm = python(WARM, corpus, golden, example_chunk_size, cache)
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert json.loads(warm.stdout) == {"runs": cold.runs, "loaded": []}
    assert cache_files(cache) == before  # read, not computed or written again


# --- bring your own retriever ---------------------------------------------------------------------


def first_words(setup_chunks):
    """A toy retriever: the chunks that share the question's first content word, in chunk order."""
    words = {c["id"]: set(h.tokenize(c["text"])) for c in setup_chunks}

    def mine(question: str) -> list[str]:
        terms = h.tokenize(question)[:1]
        return [cid for cid, w in words.items() if set(terms) & w]

    return mine


def test_your_own_retriever_joins_every_table(tmp_path, chunks, qrels, golden):
    mine = first_words(chunks)
    setup = h.evaluation_setup(retrievers={"mine": mine}, cache_dir=tmp_path)
    assert list(setup.runs) == [*h.default_retrievers(), "mine"]
    assert setup.runs["mine"] == {q: mine(text) for q, text in zip(golden["id"], golden["question"])}
    assert not (tmp_path / "rankings").exists()  # a function is called every time, never cached
    table = h.evaluate(setup.runs, setup.qrels)
    assert list(table.index) == list(setup.runs)
    one = h.evaluate({"mine": setup.runs["mine"]}, qrels)
    pd.testing.assert_frame_equal(table.loc[["mine"]], one)
    ranks = h.first_relevant_ranks(setup.runs, setup.qrels, setup.golden)
    assert run_columns(ranks) == list(setup.runs)
    comparisons = h.paired_comparisons(setup.runs, setup.qrels, k=3, metrics=["recall"])
    assert {("BM25 − mine", "recall"), ("hybrid − mine", "recall")} <= set(comparisons.index)
    assert len(comparisons) == 6  # 4 runs: 6 pairs


def test_a_name_already_there_replaces_the_default_and_what_reads_it_follows(tmp_path):
    """A user's BM25 must reach hybrid (RRF of BM25 and vector): its committed run was made from the default BM25."""
    setup = h.evaluation_setup(retrievers={"BM25": BM25(k1=0.9, b=0.4)}, cache_dir=tmp_path)
    default = h.evaluation_setup(cache_dir=tmp_path)
    assert list(setup.runs) == list(h.default_retrievers())
    assert setup.runs["BM25"] != default.runs["BM25"] and setup.runs["vector"] == default.runs["vector"]
    assert setup.runs["hybrid"] == fuse_runs([setup.runs["BM25"], setup.runs["vector"]]) != default.runs["hybrid"]
    function = h.evaluation_setup(retrievers={"BM25": lambda question: ["01_plans_and_prices#00"]}, cache_dir=tmp_path)
    assert set(map(tuple, function.runs["BM25"].values())) == {("01_plans_and_prices#00",)}
    assert function.runs["hybrid"] == fuse_runs([function.runs["BM25"], function.runs["vector"]])


class Missing(Stage):
    """A stage whose run leaves out one question."""

    cached = False

    def run(self, context):
        return {q: [] for q in list(context.questions)[1:]}


CHUNK = "01_plans_and_prices#00"


@pytest.mark.parametrize("function, message", [
    (lambda q: ["no_such_chunk#00"], r"retriever 'mine', question 'q01': unknown chunk ids \['no_such_chunk#00'\]"),
    (lambda q: [CHUNK, CHUNK], rf"retriever 'mine', question 'q01': duplicate id '{CHUNK}' in the ranking"),
    (lambda q: [CHUNK, 7], r"retriever 'mine', question 'q01': the ranking holds 7 \(int\) at rank 2: ids must be str"),
    (lambda q: [None], r"retriever 'mine', question 'q01': the ranking holds None \(NoneType\) at rank 1: ids must be str"),
    (lambda q: [CHUNK, float("nan")], r"retriever 'mine', question 'q01': the ranking holds nan \(float\) at rank 2: ids must be str"),
    (lambda q: [b"x"], r"retriever 'mine', question 'q01': the ranking holds b'x' \(bytes\) at rank 1: ids must be str"),
    (lambda q: CHUNK, rf"retriever 'mine', question 'q01': a ranking must be a list or tuple of ids, best first, not str '{CHUNK}'"),
    (lambda q: None, r"retriever 'mine', question 'q01': a ranking must be a list or tuple of ids, best first, not NoneType None"),
    (lambda q: {CHUNK: 1.0}, r"retriever 'mine', question 'q01': a ranking must be a list or tuple of ids, best first, not dict"),
    (lambda q: [][1], r"retriever 'mine', question 'q01': the function raised IndexError: list index out of range"),
    (Missing(), r"retriever 'mine' has no ranking for question\(s\) \['q01'\]"),
    (3, r"retriever 'mine' must be a function question -> \[chunk ids\] or a stage, got 3"),
])
def test_a_bad_retriever_gets_one_error_naming_it_and_the_question(tmp_path, function, message):
    with pytest.raises(ValueError, match=message) as error:
        h.evaluation_setup(retrievers={"mine": function}, cache_dir=tmp_path)
    assert "\n" not in str(error.value)


def test_retrievers_must_be_a_mapping(tmp_path):
    for retrievers in ([lambda q: []], lambda q: [], "BM25"):
        with pytest.raises(ValueError, match=r"retrievers must be a mapping \{name: function or stage\}"):
            h.evaluation_setup(retrievers=retrievers, cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_the_teaching_set_needs_no_tokenizer_check_at_set_up(setup):
    """evaluation_setup skips the window and unknown-token checks for the teaching set: they hold, computed here."""
    from retrieval_eval.inputs.models import model_window, token_counter, unknown_only

    counter = token_counter(None)
    assert max(counter(q) for q in setup.golden["question"]) <= model_window(None)
    assert unknown_only({c["id"]: c["text"] for c in setup.chunks}) == []
    assert unknown_only(dict(zip(setup.golden["id"], setup.golden["question"]))) == []


def test_a_retriever_name_must_be_text(tmp_path):
    for name in ("", "  ", 3, None):
        with pytest.raises(ValueError, match="a retriever's name must be non-empty text"):
            h.evaluation_setup(retrievers={name: lambda q: []}, cache_dir=tmp_path)


def test_a_stage_that_reads_a_run_that_comes_later_is_refused(tmp_path):
    mine = first_words(h.load_chunks())
    with pytest.raises(ValueError, match=r"retriever 'fused' reads the runs \['BM25', 'mine'\], but \['mine'\] come later"):
        h.evaluation_setup(retrievers={"fused": Fusion(("BM25", "mine")), "mine": mine}, cache_dir=tmp_path)
    later = h.evaluation_setup(retrievers={"mine": mine, "fused": Fusion(("BM25", "mine"))}, cache_dir=tmp_path)
    assert later.runs["fused"] == fuse_runs([later.runs["BM25"], later.runs["mine"]])

    class Zero:
        def score(self, question, texts):
            return [0.0] * len(texts)

        def key(self):
            return {"reranker": "zero"}

    with pytest.raises(ValueError, match=r"retriever 'again' reads the runs \['nowhere'\], but \['nowhere'\] come later or not"):
        h.evaluation_setup(retrievers={"again": h.Rerank("nowhere", Zero())}, cache_dir=tmp_path)


# --- the rankings cache -----------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["cut in half", "not a run", "an unknown chunk", "an id twice", "a question missing"])
def test_a_damaged_cache_file_is_set_aside_and_rebuilt(tmp_path, chunks, golden, damage):
    stage = {"BM25 k1 1.2": BM25(k1=1.2)}
    first = h.evaluation_setup(retrievers=stage, cache_dir=tmp_path).runs["BM25 k1 1.2"]
    bm25 = h.BM25Retriever(chunks, k1=1.2)
    assert first == {q: bm25.rank(text) for q, text in zip(golden["id"], golden["question"])}
    [path] = (tmp_path / "rankings").glob("*.json")
    run = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps({
        "cut in half": run, "not a run": {"q01": [1, 2]},
        "an unknown chunk": {**run, "q05": ["no_such_chunk#00", *run["q05"]]},
        "an id twice": {**run, "q05": [run["q05"][0], *run["q05"]]},
        "a question missing": {q: r for q, r in run.items() if q != "q05"},
    }[damage])
    path.write_text(text[: len(text) // 2] if damage == "cut in half" else text, encoding="utf-8")
    assert h.evaluation_setup(retrievers=stage, cache_dir=tmp_path).runs["BM25 k1 1.2"] == first  # rebuilt, right
    assert json.loads(path.read_text(encoding="utf-8")) == first
    assert sorted(p.name for p in (tmp_path / "rankings").iterdir()) == sorted([path.name, path.with_suffix(".bad").name])


def test_the_stage_fingerprint_changes_with_every_input(chunks, golden, setup, model_copy):
    questions = dict(zip(golden["id"], golden["question"]))
    runs = setup.runs
    rerank = h.Rerank("hybrid", type("Zero", (), {"score": lambda s, q, t: [0.0] * len(t), "key": lambda s: {"r": 0}})())
    for stage in (BM25(), Vector(), Fusion(("BM25", "vector")), rerank):
        base = stage_fingerprint(stage, chunks, questions, runs)
        assert stage_fingerprint(stage, chunks, questions, runs) == base  # stable
        edited_chunks = [dict(c) for c in chunks]
        edited_chunks[5]["text"] += " One more sentence."
        edited_questions = {**questions, "q04": questions["q04"] + " Please."}
        keys = [base, stage_fingerprint(stage, edited_chunks, questions, runs),  # a chunk text
                stage_fingerprint(stage, chunks, edited_questions, runs)]  # a question text
        if stage.reads:  # the runs it reads
            read = stage.reads[0]
            edited_runs = {**runs, read: {**runs[read], "q01": runs[read]["q01"][::-1]}}
            keys.append(stage_fingerprint(stage, chunks, questions, edited_runs))
        assert len(set(keys)) == len(keys), stage
    settings = [BM25(), BM25(k1=1.2), BM25(b=0.5), BM25(epsilon=0.25), BM25(stop_words="lucene"), BM25(stemmer=None),
                BM25(idf="lucene"), Vector(), Vector(window=256), Vector(str(model_copy)), Fusion(), Fusion(depth=20),
                Fusion(rrf_k=10), Fusion(("vector", "BM25")), rerank, h.Rerank("hybrid", rerank.reranker, depth=5),
                h.Rerank("BM25", rerank.reranker)]
    keys = [stage_fingerprint(s, chunks, questions, runs) for s in settings]
    assert len(set(keys)) == len(keys)
    flipped = model_copy / "model.safetensors"  # the model's content, size unchanged
    data = bytearray(flipped.read_bytes())
    data[-1] ^= 1
    flipped.write_bytes(bytes(data))
    assert stage_fingerprint(Vector(str(model_copy)), chunks, questions, runs) not in keys


SCRIPT = """
import json, sys, helpers as h
setup = h.evaluation_setup(sys.argv[1], sys.argv[2], chunk_size=int(sys.argv[3]), cache_dir=sys.argv[4])
print(json.dumps({"runs": setup.runs, "table": h.evaluate(setup.runs, setup.qrels).to_json(),
                  "ranks": h.first_relevant_ranks(setup.runs, setup.qrels).to_json()}))
"""


@pytest.mark.slow
def test_two_processes_give_identical_runs_and_tables(tmp_path, example_dir, example_chunk_size):
    """This process and a fresh one, each with an empty cache."""
    result = python(SCRIPT, example_dir / "corpus", example_dir / "golden.csv", example_chunk_size, tmp_path / "there")
    assert result.returncode == 0, result.stderr[-2000:]
    setup = h.evaluation_setup(example_dir / "corpus", example_dir / "golden.csv", chunk_size=example_chunk_size,
                               cache_dir=tmp_path / "here")
    here = {"runs": setup.runs, "table": h.evaluate(setup.runs, setup.qrels).to_json(),
            "ranks": h.first_relevant_ranks(setup.runs, setup.qrels).to_json()}
    assert json.loads(json.dumps(here)) == json.loads(result.stdout)


# --- what the set-up reports, and the arguments it refuses --------------------------------------------


@pytest.mark.slow
def test_setup_lists_what_the_evaluation_cannot_see(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "faq").mkdir(parents=True)
    (corpus / "faq" / "hours.MD").write_text("# Hours\n\nThe library opens at nine every morning.\n\n"
                                              "It closes at eight in the evening, except on Sundays.", encoding="utf-8")
    (corpus / "faq" / "rule.md").write_text("---\n", encoding="utf-8")
    (corpus / "中文.txt").write_text("图书馆每天早上九点开门，晚上八点关门，周日中午十二点开门。", encoding="utf-16")
    (corpus / "scan.pdf").write_bytes(b"%PDF")
    (corpus / "notes.md").write_text("   ", encoding="utf-8")
    (corpus / "thai.md").write_text("ห้องสมุดเปิดเวลาเก้าโมงเช้าทุกวัน", encoding="utf-8")
    golden = tmp_path / "golden.csv"
    golden.write_text("ID;Question;Evidence;Slice\nh1;When does it open?;The library opens at nine every morning;en\n"
                      "h2;图书馆几点开门？;图书馆每天早上九点开门，晚上八点关门，周日中午十二点开门;zh\nh3;???;It closes at eight in the evening;en\n"
                      "h4;ห้องสมุดเปิดกี่โมง;ห้องสมุดเปิดเวลาเก้าโมงเช้าทุกวัน;th\n", encoding="utf-8-sig")
    setup = h.evaluation_setup(corpus, golden, chunk_size=64, cache_dir=tmp_path / "cache")
    assert setup.skipped == [("notes.md", "empty or only whitespace"),
                             ("scan.pdf", "a .pdf file, not a document: only .md, .markdown, .txt files are read "
                                          "(convert it to one)")]
    assert list(setup.docs) == ["faq/hours", "faq/rule", "thai", "中文"]
    assert setup.runs["BM25"]["h2"][0] == "中文#00"  # Chinese is ranked, not dropped
    assert setup.runs["BM25"]["h3"] == []  # "???" has no word BM25 can match
    # all-MiniLM reads Thai as [UNK] only: vector search ranks that chunk, and for that question, by accident
    assert setup.unreadable == {"chunks": ["thai#00"], "questions": ["h4"], "cut": []}
    assert setup.notes == [
        "left out when reading notes.md: empty or only whitespace",
        "left out when reading scan.pdf: a .pdf file, not a document: only .md, .markdown, .txt files are read (convert it to one)",
        "chunk 'faq/rule#00' has no word BM25 can index: BM25 can never find it",
        "BM25 ranked no chunk for 1 question(s): h3 (they score 0)",
        "the embedding model reads 1 chunks as unknown tokens only (thai#00): vector search places them by accident",
        "the embedding model reads 1 questions as unknown tokens only (h4): vector search ranks for them by accident",
    ]


def test_bad_arguments_are_refused_before_anything_is_read(tmp_path):
    with pytest.raises(ParameterError) as err:
        h.evaluation_setup(tmp_path / "nowhere", tmp_path / "nowhere.csv", chunk_size=1024, cache_dir=tmp_path / "cache")
    assert [line.split()[0] for line in str(err.value).splitlines()[1:]] == ["-"] * 3
    assert "CHUNK_SIZE 1024 is larger than the model's window of 512" in str(err.value)
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_a_question_longer_than_the_window_stops_the_setup_before_any_model_loads(tmp_path, example_dir):
    golden = pd.read_csv(example_dir / "golden.csv", dtype=str, keep_default_na=False)
    golden.loc[1, "question"] = "Tell me " + "really " * 200 + "how long I may keep a film?"
    golden.to_csv(tmp_path / "golden.csv", index=False)
    script = f"""
import sys, helpers as h
from retrieval_eval.core.errors import GoldenSetError
try:
    h.evaluation_setup({str(example_dir / 'corpus')!r}, {str(tmp_path / 'golden.csv')!r}, chunk_size=128,
                       cache_dir={str(tmp_path / 'cache')!r})
except GoldenSetError as exc:
    print(exc)
print("sentence_transformers" in sys.modules, "torch" in sys.modules)
"""
    result = python(script)
    out = result.stdout.strip().splitlines()
    assert out[-1] == "False False", result.stderr[-2000:]  # the model was never loaded
    assert re.fullmatch(r"- question 'lh02': the question is \d+ word pieces long, more than the model's window of 128; "
                        r"shorten it \(the window is CHUNK_SIZE\)", out[1]), out


@pytest.mark.slow
def test_long_steps_show_progress_bars(tmp_path, capsys, example_dir):
    h.evaluation_setup(example_dir / "corpus", example_dir / "golden.csv", chunk_size=128, progress=True, cache_dir=tmp_path,
                       retrievers={"mine": lambda question: []})
    shown = capsys.readouterr().err
    for step in ("chunking", "BM25 indexing", "ranking with BM25", "embedding chunks", "embedding questions", "ranking with mine"):
        assert re.search(rf"{step}( \([^)]*\))?: +100%", shown), step
    assert re.search(r"embedding chunks \(\d+ not cached, \d+ a batch\)", shown)  # how many, before the first batch


# --- messy real-world input, end to end ---------------------------------------------------------

SENTENCES = [
    "Wrenfield Public Library has three branches and Central is the largest of them all.",
    "Books and audiobooks are lent for 21 days, films and video games for 7 days only.",
    "An adult card holds up to 30 items at a time, of which at most 5 may be films.",
    "Group rooms on the second floor can be booked online up to two weeks ahead.",
    "Printing costs ten cents a page in black and white and forty cents in colour.",
    "图书馆每天早上九点开门，晚上八点关门，周日中午十二点开门。",
    "会員カードは図書館のカウンターで無料で作ることができます。",
]
ODD = ["---", "🙂🙂🙂", "* * *", "", "   \n\t"]
ENCODINGS = {"utf-8": lambda t: t.encode("utf-8"), "utf-8-sig": lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
             "utf-16": lambda t: t.encode("utf-16"), "latin-1": lambda t: t.encode("latin-1", errors="replace")}
FAULTS = ["none", "document not UTF-8", "golden not UTF-8", "two files, one document id",
          "no document", "evidence in no document", "evidence too short", "blank question", "question too long",
          "golden is a spreadsheet", "golden misses a column"]


@st.composite
def messy_inputs(draw, fault: str):
    """A corpus folder and a golden file as users make them, with at most one fault (one of ``FAULTS``).

    Messy but valid: extensions in any case, subfolders (one with a space), UTF-8 with or without
    a byte-order mark or UTF-16, Windows line endings, Markdown rules, emoji and empty documents,
    Chinese and Japanese text, hidden and system files, other file types; golden files with any of
    three separators, headers in any case with spaces, odd question ids, a trailing row of empty cells.
    Returns ``(files, golden_bytes, golden_name, culprit)``; ``culprit`` is what an error caused by
    ``fault`` must name (``None`` for no fault).
    """
    files, sentences = {}, []
    for i in range(draw(st.integers(1, 3))):
        name = f"{draw(st.sampled_from(['', 'faq/', 'Sub Folder/']))}doc{i}{draw(st.sampled_from(['.md', '.MD', '.txt', '.Markdown']))}"
        body = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3))
        body.insert(draw(st.integers(0, len(body))), draw(st.sampled_from(ODD)))
        sentences += body
        files[name] = ENCODINGS[draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))]("\r\n\r\n".join(body))
    files.update(draw(st.dictionaries(st.sampled_from([".DS_Store", "Thumbs.db", "~$doc0.docx", "slides.pptx", "notes",
                                                      ".git/config", "empty.md"]), st.binary(max_size=8), max_size=3)))
    files = {path: (b"" if path == "empty.md" else raw) for path, raw in files.items()}
    document, culprit = next(iter(files)), None
    if fault == "document not UTF-8":
        files[document], culprit = "Caf\xe9 au lait.".encode("latin-1"), document
    elif fault == "two files, one document id":
        twin = document.rsplit(".", 1)[0] + ".txt" if not document.endswith(".txt") else document[:-4] + ".md"
        files[twin], culprit = b"A twin.", twin
    elif fault == "no document":
        files, culprit = {"slides.pptx": b"PK"}, "no document"
    found = [x for x in sentences if x in SENTENCES]
    rows = []
    for j in range(draw(st.integers(1, 3))):
        qid = draw(st.sampled_from(["q{}", "{}", "0{}", "Q {}", "é{}", "a,{}"])).format(j)
        source = draw(st.sampled_from(found))
        rows.append([qid, f"({j}) {source[len(source) // 2 :]}", source[: len(source) // 2 + 10],  # distinct: repeats are refused
                     draw(st.sampled_from(["a", "b"]))])
    target = rows[-1]
    if fault in ("evidence in no document", "evidence too short", "blank question", "question too long"):
        column, value = {"evidence in no document": (2, "this sentence is in no document at all"),
                         "evidence too short": (2, "21 days"), "blank question": (1, " "),
                         "question too long": (1, "Please tell me " + "really " * 130 + "what it says?")}[fault]
        target[column], culprit = value, f"question {target[0]!r}"
    sep = draw(st.sampled_from([",", ";", "\t"]))
    columns = [c for c in GOLDEN_COLUMNS if not (fault == "golden misses a column" and c == "slice")]
    header = sep.join(draw(st.sampled_from([c, c.upper(), f" {c.title()} "])) for c in columns)
    quote = lambda cell: '"' + cell.replace('"', '""') + '"'  # noqa: E731
    text = header + "\r\n" + "".join(sep.join(map(quote, row[: len(columns)])) + "\r\n" for row in rows) + sep * 3 + "\r\n"
    golden_name = draw(st.sampled_from(["golden.csv", "my golden set.csv", "vragen é.csv"]))
    golden_raw = ENCODINGS[draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))](text)
    if fault == "golden not UTF-8":
        golden_raw = text.encode("latin-1", errors="replace") + "z,Caf\xe9?,an evidence string long enough,a\r\n".encode("latin-1")
        culprit = golden_name
    elif fault == "golden is a spreadsheet":
        golden_raw, culprit = b"PK\x03\x04" + bytes(20), golden_name
    elif fault == "golden misses a column":
        culprit = golden_name
    return files, golden_raw, golden_name, culprit


WRITES = []  # (event, path) of every file written or folder made while WATCHING holds the allowed folders
WATCHING: list = []


def _watch(event, args):
    if not WATCHING or event not in ("open", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "shutil.rmtree"):
        return
    path = args[0]
    if event == "open":
        mode, flags = args[1], args[2]
        writes = (mode and any(c in mode for c in "wax+")) or (mode is None and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if not writes or not isinstance(path, (str, bytes, os.PathLike)):
            return
    path = os.path.abspath(os.fsdecode(path))
    if not any(path == str(root) or path.startswith(str(root) + os.sep) for root in WATCHING):
        WRITES.append((event, path))


sys.addaudithook(_watch)


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
@hypothesis_settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                            HealthCheck.too_slow])
@given(data=st.data())
def test_messy_corpora_and_golden_files_give_a_result_or_an_error_that_names_the_culprit(tmp_path_factory, fault, data):
    files, golden_raw, golden_name, culprit = data.draw(messy_inputs(fault))
    base = tmp_path_factory.mktemp("messy")
    corpus, cache = base / "my corpus é", base / "cache"
    corpus.mkdir()
    for relative, raw in files.items():
        (corpus / relative).parent.mkdir(parents=True, exist_ok=True)
        (corpus / relative).write_bytes(raw)
    (base / golden_name).write_bytes(golden_raw)
    WATCHING[:] = [base, OUTPUT_DIR, CACHE_DIR]
    try:
        setup = h.evaluation_setup(corpus, base / golden_name, chunk_size=128, cache_dir=cache)
    except (ValueError, OSError) as exc:  # GoldenSetError and the corpus errors are ValueErrors
        assert fault != "none", exc
        assert culprit in str(exc), (fault, culprit, str(exc))
    else:
        assert fault == "none", fault
        assert list(setup.runs) == list(h.default_retrievers())
        assert all(list(run) == list(setup.golden["id"]) for run in setup.runs.values())
        assert all(setup.runs["vector"].values())  # vector search ranks every chunk for every question
        listed = {path.rstrip("/") for path, _ in setup.skipped}
        for relative in files:  # every file is a document or is listed
            document = relative.rsplit(".", 1)[0] if "." in relative.split("/")[-1] else None
            assert document in setup.docs or relative in listed or relative.split("/")[0] in listed, (relative, listed)
        odd = [c["id"] for c in setup.chunks if c["text"].strip() in ODD]
        assert [n for n in setup.notes if "no word BM25 can index" in n] == [
            f"chunk {c!r} has no word BM25 can index: BM25 can never find it" for c in odd]
    finally:
        WATCHING.clear()
    assert WRITES == [], WRITES
