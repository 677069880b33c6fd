"""Where the project's files are: the Polder data, the cache and the output folder."""

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: retrieval_eval/core/paths.py is two folders down
DATA_DIR = ROOT / "data"
CORPUS_DIR = DATA_DIR / "corpus"
CHUNKS_PATH = DATA_DIR / "chunks.jsonl"
GOLDEN_PATH = DATA_DIR / "golden.csv"
RUNS_DIR = DATA_DIR / "runs"  # the teaching set's runs, as TREC files (equal to a fresh ranking: a test)
KNOWN_FALSE_NEGATIVES_PATH = DATA_DIR / "known_false_negatives.csv"  # full answers the evidence-string rule misses
# Embeddings and rankings, rebuilt when missing; RETRIEVAL_EVAL_CACHE moves it (the benchmark's cold runs).
CACHE_DIR = Path(os.environ.get("RETRIEVAL_EVAL_CACHE", ROOT / ".cache"))
# Everything the project writes besides the cache; RETRIEVAL_EVAL_OUTPUT moves it (the tests of the make targets).
OUTPUT_DIR = Path(os.environ.get("RETRIEVAL_EVAL_OUTPUT", ROOT / "output"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file beside it, then renamed; its folder made):
    two processes filling one cache never clash, and a reader never sees half a file. The file gets the permissions
    a plain ``open(path, "w")`` gives (the temporary file's 0600 would keep a teacher from reading a student's file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
