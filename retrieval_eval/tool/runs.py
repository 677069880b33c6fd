"""``make runs``: the committed runs under ``data/runs/``, ranked afresh. Each folder holds the runs of one set of inputs
(chunks and questions) as TREC files, and a ``settings.json`` naming what it was made from, the inputs' fingerprint
(which :func:`~retrieval_eval.retrieval.stages.committed_folder` matches) and each run's stage. They let every notebook
and ``make evaluate`` of those inputs read rankings without the embedding model; a slow test checks each against a
fresh ranking."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..analysis.chunking import CHUNK_SIZES, OVERLAP_SHARE
from ..core.paths import CORPUS_DIR, DATA_DIR, GOLDEN_PATH, ROOT, RUNS_DIR
from ..inputs.chunks import CHUNK_SIZE, stored_or_split_chunks
from ..inputs.corpus import load_corpus
from ..inputs.golden import read_golden_csv
from ..inputs.trec import write_trec_run
from ..retrieval.fusion import Fusion
from ..retrieval.rerank import DEPTHS, Rerank, SentenceReranker
from ..retrieval.retrievers import BM25, LUCENE_ENGLISH, Vector
from ..retrieval.setup import load_inputs, rerank_name
from ..retrieval.stages import inputs_fingerprint, portable, run_file, run_registry

COOKBOOK = DATA_DIR / "cookbook"


def made_from() -> dict[str, dict]:
    """Each committed folder (under ``data/runs/``) and what it is made from: the teaching set, the teaching corpus at
    the other chunk sizes of deep dive 09, and the cookbook's set of deep dive 13 (paths from the checkout)."""
    folders = {".": {"corpus": CORPUS_DIR, "golden": GOLDEN_PATH}, "cookbook": {"corpus": COOKBOOK / "chunks.jsonl",
                                                                              "golden": COOKBOOK / "golden.csv"},
               "unanswerable": {"corpus": DATA_DIR / "chunks.jsonl", "golden": DATA_DIR / "unanswerable.csv"}}
    for size in CHUNK_SIZES:
        for overlap in (0, round(OVERLAP_SHARE * size)):
            if (size, overlap) != (CHUNK_SIZE, 0):  # the teaching set's own chunks
                folders[f"chunking/{size}-{overlap}"] = {"corpus": CORPUS_DIR, "golden": GOLDEN_PATH, "chunk_size": size,
                                                         "chunk_overlap": overlap}
    return {name: {k: v.relative_to(ROOT).as_posix() if isinstance(v, Path) else v for k, v in spec.items()}
            for name, spec in folders.items()}


def inputs_and_registry(spec: dict) -> tuple[list, dict, dict]:
    """The chunks, questions and registry a committed folder's ``made from`` describes."""
    size, overlap = spec.get("chunk_size", CHUNK_SIZE), spec.get("chunk_overlap", 0)
    registry = {"BM25": BM25(), "vector": Vector(None, size), "hybrid": Fusion(("BM25", "vector"))}
    if "chunk_size" in spec:
        golden = read_golden_csv(ROOT / spec["golden"])
        chunks = stored_or_split_chunks(load_corpus(ROOT / spec["corpus"]), ROOT / spec["corpus"], None, size, False, overlap)
    else:
        setup = load_inputs(ROOT / spec["corpus"], ROOT / spec["golden"])
        chunks, golden = setup.chunks, setup.golden
        if spec["corpus"] == CORPUS_DIR.relative_to(ROOT).as_posix():  # the lesson's own: an engine's BM25, and each
            reranker = SentenceReranker()                                # first stage's top N reranked (notebook 06)
            registry |= {"BM25, Lucene English": BM25(**LUCENE_ENGLISH)} | {
                rerank_name(name, n): Rerank(name, reranker, n) for name in ("BM25", "vector", "hybrid") for n in DEPTHS}
    return chunks, dict(zip(golden["id"], golden["question"])), registry


def fresh_runs(chunks: list, questions: dict, registry: dict, progress: bool = False) -> dict:
    """Runs ranked now, with an empty cache and no committed run (what a committed folder must hold)."""
    with tempfile.TemporaryDirectory() as cache:
        return run_registry(registry, chunks, questions, cache, progress, committed=False)


def store_committed_runs(progress: bool = True) -> list[Path]:
    """Rank every folder of :func:`made_from` afresh and write it under ``data/runs/``."""
    written = []
    for name, spec in made_from().items():
        folder = RUNS_DIR / name
        folder.mkdir(parents=True, exist_ok=True)
        chunks, questions, registry = inputs_and_registry(spec)
        runs = fresh_runs(chunks, questions, registry, progress)
        paths = [write_trec_run(runs[n], run_file(n, folder), run_file(n).stem) for n in registry]
        settings = {"made from": spec, "inputs": inputs_fingerprint(chunks, questions),
                    "runs": {path.name: portable(stage.key()) for path, stage in zip(paths, registry.values())}}
        (folder / "settings.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
        written += [*paths, folder / "settings.json"]
    return written


if __name__ == "__main__":
    print(*store_committed_runs(), sep="\n")
