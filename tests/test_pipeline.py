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
