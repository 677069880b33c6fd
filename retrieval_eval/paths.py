"""Where the project's files are: the Polder data, the cache and the output folder."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
CORPUS_DIR = DATA_DIR / "corpus"
CHUNKS_PATH = DATA_DIR / "chunks.jsonl"
GOLDEN_PATH = DATA_DIR / "golden.csv"
# Embeddings and rankings, rebuilt when missing; RETRIEVAL_EVAL_CACHE moves it (the benchmark's cold runs).
CACHE_DIR = Path(os.environ.get("RETRIEVAL_EVAL_CACHE", ROOT / ".cache"))
# Everything the project writes besides the cache; RETRIEVAL_EVAL_OUTPUT moves it (the tests of the make targets).
OUTPUT_DIR = Path(os.environ.get("RETRIEVAL_EVAL_OUTPUT", ROOT / "output"))
