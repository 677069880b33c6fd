"""retrieval_eval/pipeline.py: evaluation_setup, the set-up call of the notebooks, and its rankings cache."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import helpers as h
from retrieval_eval.pipeline import rankings_fingerprint


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def cold(cache_dir):
    """evaluation_setup on an empty cache: the rankings are computed and stored."""
    return h.evaluation_setup(cache_dir=cache_dir)


def cache_files(folder) -> dict:
    """``{path relative to folder: (size, modification time)}`` of every file under ``folder``."""
    folder = Path(folder)
    return {p.relative_to(folder): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_setup_holds_the_data_and_the_runs_of_the_three_retrievers(cold, docs, chunks, golden, qrels, runs):
    """``runs`` (conftest) is built directly: BM25Retriever, VectorRetriever, HybridRetriever and run_retrievers."""
    assert isinstance(cold, h.Setup)
    assert cold.docs == docs and cold.chunks == chunks and cold.qrels == qrels
    pd.testing.assert_frame_equal(cold.golden, golden)
    assert cold.chunk_ids == [c["id"] for c in chunks]
    assert list(cold.runs) == ["BM25", "vector", "hybrid"]
    assert cold.runs == runs


def test_rankings_are_cached_as_json_under_their_fingerprint(cold, cache_dir):
    files = cache_files(cache_dir)
    key = rankings_fingerprint(cold.chunks, cold.golden, None, h.CHUNK_SIZE)
    assert [p for p in files if p.parts[0] == "rankings"] == [Path("rankings", f"{key}.json")]
    assert {p.suffix for p in files if p.parts[0] != "rankings"} == {".npy"}  # the embeddings
    raw = (cache_dir / "rankings" / f"{key}.json").read_bytes()
    assert raw.startswith(b"{")  # JSON, not a pickle (which starts with b"\x80")
    assert json.loads(raw.decode("utf-8")) == cold.runs


WARM = """
import json, sys

def refuse(event, args):
    if event == "pickle.find_class":
        raise RuntimeError(f"pickle loaded a class: {args}")

sys.addaudithook(refuse)
import helpers as h
setup = h.evaluation_setup(cache_dir=sys.argv[1])
loaded = [m for m in ("torch", "sentence_transformers") if m in sys.modules]
print(json.dumps({"runs": setup.runs, "loaded": loaded}))
"""


def test_a_warm_cache_gives_the_same_runs_without_loading_torch(cold, cache_dir):
    before = cache_files(cache_dir)
    result = subprocess.run([sys.executable, "-c", WARM, str(cache_dir)], capture_output=True, text=True, cwd=h.ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    warm = json.loads(result.stdout)
    assert warm["loaded"] == []
    assert warm["runs"] == cold.runs
    assert cache_files(cache_dir) == before  # read, not computed or written again


def test_importing_helpers_does_not_import_torch():
    script = "import sys, helpers; print([m for m in ('torch', 'sentence_transformers') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=h.ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_the_fingerprint_changes_with_every_input(chunks, golden, model_copy):
    base = rankings_fingerprint(chunks, golden, None, 512)
    assert rankings_fingerprint(chunks, golden, None, 512) == base
    assert rankings_fingerprint(chunks, golden, str(model_copy), 512) == base  # the same model content elsewhere
    edited_chunks = [dict(c) for c in chunks]
    edited_chunks[5]["text"] += " One more sentence."
    edited_golden = golden.copy()
    edited_golden.loc[edited_golden.index[3], "question"] = edited_golden["question"].iloc[3] + " Please."
    keys = [
        base,
        rankings_fingerprint(edited_chunks, golden, None, 512),  # a chunk text
        rankings_fingerprint(chunks, edited_golden, None, 512),  # a question text
        rankings_fingerprint(chunks, golden, None, 256),  # the window
    ]
    with open(model_copy / "model.safetensors", "r+b") as f:  # one byte of the weights, size unchanged
        f.seek(-1, 2)
        last = f.read(1)[0]
        f.seek(-1, 2)
        f.write(bytes([last ^ 1]))
    keys.append(rankings_fingerprint(chunks, golden, str(model_copy), 512))
    (model_copy / "config.json").write_bytes((model_copy / "config.json").read_bytes() + b"\n")  # the configuration
    keys.append(rankings_fingerprint(chunks, golden, str(model_copy), 512))
    assert len(set(keys)) == len(keys), keys


@pytest.mark.parametrize("damage", ["cut in half", "not a run"])
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(cold, cache_dir, tmp_path, damage):
    cache = Path(shutil.copytree(cache_dir, tmp_path / "cache"))  # with the embeddings, so only the ranking reruns
    [path] = (cache / "rankings").glob("*.json")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2] if damage == "cut in half" else '{"BM25": {"q01": [1, 2]}}', encoding="utf-8")
    assert h.evaluation_setup(cache_dir=cache).runs == cold.runs
    assert json.loads(path.read_text(encoding="utf-8")) == cold.runs
    assert sorted(p.name for p in (cache / "rankings").iterdir()) == [path.name]


SCRIPT = """
import json, sys, helpers as h
setup = h.evaluation_setup(cache_dir=sys.argv[1])
print(json.dumps({"runs": setup.runs, "table": h.evaluate(setup.runs, setup.qrels).to_json()}))
"""


def test_two_processes_give_identical_rankings_and_tables(tmp_path):
    outputs = [
        subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / f"cache{i}")], capture_output=True, text=True, check=True).stdout
        for i in range(2)
    ]
    assert json.loads(outputs[0]) == json.loads(outputs[1])


# --- messy real-world input, end to end ---------------------------------------------------------

import codecs  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402

from hypothesis import HealthCheck, given  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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

    Returns:
        ``(files, golden_bytes, golden_name, culprit)``: ``files`` maps relative paths to bytes;
        ``culprit`` is what an error caused by ``fault`` must name (``None`` for no fault).
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
        rows.append([qid, source[len(source) // 2 :], source[: len(source) // 2 + 10], draw(st.sampled_from(["a", "b"]))])
    target = rows[-1]
    if fault in ("evidence in no document", "evidence too short", "blank question", "question too long"):
        column, value = {"evidence in no document": (2, "this sentence is in no document at all"),
                         "evidence too short": (2, "21 days"), "blank question": (1, " "),
                         "question too long": (1, "Please tell me " + "really " * 130 + "what it says?")}[fault]
        target[column], culprit = value, f"question {target[0]!r}"
    sep = draw(st.sampled_from([",", ";", "\t"]))
    columns = [c for c in h.GOLDEN_COLUMNS if not (fault == "golden misses a column" and c == "slice")]
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


@pytest.mark.parametrize("fault", FAULTS)
@hypothesis_settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
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
    WATCHING[:] = [base, h.OUTPUT_DIR, h.CACHE_DIR]
    try:
        setup = h.evaluation_setup(corpus, base / golden_name, chunk_size=128, cache_dir=cache)
    except (ValueError, OSError) as exc:  # GoldenSetError and the corpus errors are ValueErrors
        assert fault != "none", exc
        assert culprit in str(exc), (fault, culprit, str(exc))
    else:
        assert fault == "none", fault
        assert list(setup.runs) == ["BM25", "vector", "hybrid"]
        assert all(list(run) == list(setup.golden["id"]) for run in setup.runs.values())
        assert setup.unranked["vector"] == []
        listed = {path.rstrip("/") for path, _ in setup.skipped}
        for relative in files:  # every file is a document or is listed
            document = relative.rsplit(".", 1)[0] if "." in relative.split("/")[-1] else None
            assert document in setup.docs or relative in listed or relative.split("/")[0] in listed, (relative, listed)
        assert setup.unindexable == [c["id"] for c in setup.chunks if c["text"].strip() in ODD]
    finally:
        WATCHING.clear()
    assert WRITES == [], WRITES


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
    with pytest.warns(UserWarning, match="chunk 'faq/rule#00' has no word BM25 can index"):
        setup = h.evaluation_setup(corpus, golden, chunk_size=64, cache_dir=tmp_path / "cache")
    assert setup.skipped == [("notes.md", "empty or only whitespace"),
                             ("scan.pdf", "a .pdf file, not a document: only .md, .markdown, .txt files are read "
                                          "(convert it to one)")]
    assert list(setup.docs) == ["faq/hours", "faq/rule", "thai", "中文"]
    assert setup.unindexable == ["faq/rule#00"]
    assert setup.runs["BM25"]["h2"][0] == "中文#00"  # Chinese is ranked, not dropped
    assert setup.unranked == {"BM25": ["h3"], "vector": [], "hybrid": []}  # "???" has no word BM25 can match
    # all-MiniLM reads Thai as [UNK] only: vector search ranks that chunk, and for that question, by accident
    assert setup.unreadable == {"chunks": ["thai#00"], "questions": ["h4"]}
    assert setup.notes == [
        "not read: notes.md: empty or only whitespace",
        "not read: scan.pdf: a .pdf file, not a document: only .md, .markdown, .txt files are read (convert it to one)",
        "chunk 'faq/rule#00' has no word BM25 can index: it can never be found by BM25",
        "BM25 ranked no chunk for 1 question(s): h3",
        "the embedding model reads 1 chunk as unknown tokens only ([UNK]) (thai#00): their vectors say nothing about "
        "their text: vector search places them by accident (and orders equal scores by chunk id)",
        "the embedding model reads 1 question as unknown tokens only ([UNK]) (h4): vector search ranks chunks for them "
        "by accident, not by meaning",
    ]


def test_a_question_longer_than_the_window_stops_the_setup_before_any_model_loads(tmp_path, example_dir):
    golden = pd.read_csv(example_dir / "golden.csv", dtype=str, keep_default_na=False)
    golden.loc[1, "question"] = "Tell me " + "really " * 200 + "how long I may keep a film?"
    golden.to_csv(tmp_path / "golden.csv", index=False)
    script = f"""
import sys, helpers as h
try:
    h.evaluation_setup({str(example_dir / 'corpus')!r}, {str(tmp_path / 'golden.csv')!r}, chunk_size=128,
                       cache_dir={str(tmp_path / 'cache')!r})
except h.GoldenSetError as exc:
    print(exc)
print("sentence_transformers" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=h.ROOT)
    out = result.stdout.strip().splitlines()
    assert out[-1] == "False", result.stderr[-2000:]  # the model was never loaded
    assert re.fullmatch(r"- question 'lh02': the question is \d+ word pieces long, more than the model's window of 128; "
                        r"shorten it \(the window is CHUNK_SIZE\)", out[1]), out


def test_bad_arguments_are_refused_before_anything_is_read(tmp_path):
    with pytest.raises(h.ParameterError) as err:
        h.evaluation_setup(tmp_path / "nowhere", tmp_path, chunk_size=1024, cache_dir=tmp_path / "cache")
    assert [line.split()[0] for line in str(err.value).splitlines()[1:]] == ["-"] * 3
    assert "CHUNK_SIZE 1024 is larger than the model's window of 512" in str(err.value)
    assert not (tmp_path / "cache").exists()


def test_long_steps_show_progress_bars(tmp_path, capsys, example_dir):
    h.evaluation_setup(example_dir / "corpus", example_dir / "golden.csv", chunk_size=128, progress=True, cache_dir=tmp_path)
    shown = capsys.readouterr().err
    for step in ("chunking", "BM25 indexing", "embedding chunks", "ranking"):
        assert re.search(rf"{step}: +100%", shown), step
