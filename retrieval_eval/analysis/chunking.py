"""How chunking moves the numbers: one corpus at several chunk sizes, with and without overlap, each chunked,
labelled and ranked anew. Settings are compared at an equal budget of word pieces (3 × 512 = 6 × 256 = 12 ×
128) on success: with overlap one piece of evidence can sit in two chunks, and recall would ask for both. A
question whose evidence a chunk boundary cuts counts as not found."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..core.checks import check_k, check_list, finite_number
from ..core.metrics import first_relevant_rank, relevant_ids
from ..core.paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH
from ..inputs.chunks import stored_or_split_chunks
from ..inputs.corpus import load_corpus
from ..inputs.golden import label_chunks, read_golden_csv
from ..inputs.models import model_window
from ..retrieval.setup import default_retrievers
from ..retrieval.stages import run_registry
from .comparisons import SUCCESS, TOO_CLOSE
from .statistics import ALPHA, holm, paired_test

CHUNK_SIZES = (128, 256, 512)  # word pieces of the embedding model's tokenizer, special tokens included
OVERLAP_SHARE = 0.15  # "about 15% overlap": chunk_overlap = round(0.15 × chunk size) word pieces
BUDGET = 1536  # word pieces the LLM reads: 3 × 512 = 6 × 256 = 12 × 128


class Chunking(NamedTuple):
    """One chunking of the corpus, with its labels and runs."""

    chunk_size: int
    chunk_overlap: int
    chunks: list
    qrels: dict  #: the questions that have a relevant chunk in this setting
    cut: list  #: the questions whose evidence a chunk boundary cuts: no relevant chunk
    runs: dict

    @property
    def label(self) -> str:
        return f"{self.chunk_size}, " + (f"overlap {self.chunk_overlap}" if self.chunk_overlap else "no overlap")

    def found(self, k: int) -> pd.DataFrame:
        """Per question (all of them, cut evidence counted 0) and run: 1 when a relevant chunk is in the top k."""
        return pd.DataFrame({name: [float(q in self.qrels and (first_relevant_rank(run[q][:k], relevant_ids(self.qrels[q])) or 0) > 0)
                                    for q in run] for name, run in self.runs.items()}, index=list(next(iter(self.runs.values()))))


class ChunkingExperiment(NamedTuple):
    settings: list  #: one :class:`Chunking` per setting
    sizes: pd.DataFrame  #: per setting: chunks, mean word pieces, evidence cut, questions with several relevant chunks
    budget: pd.DataFrame  #: per setting and run: k at the budget, success, and word pieces read
    comparisons: pd.DataFrame  #: each setting against the baseline at the budget, per run, one family (Holm)
    baseline: str
    budget_tokens: int


def chunking_experiment(corpus: str | Path = CORPUS_DIR, golden: str | Path = GOLDEN_PATH,
                        chunk_sizes: Sequence[int] = CHUNK_SIZES, overlap_share: float = OVERLAP_SHARE,
                        budget: int = BUDGET, model_name: str | None = None, progress: bool = False,
                        cache_dir: str | Path = CACHE_DIR) -> ChunkingExperiment:
    """Chunk at each size without and with ``overlap_share`` overlap, label, rank, and compare at ``budget``
    word pieces against the largest size without overlap (success, McNemar's test, Holm over the family)."""
    sizes = sorted(check_k(s, "every chunk size") for s in check_list(chunk_sizes, "chunk_sizes", "chunk sizes"))
    if len(set(sizes)) < 2 or any(check_k(budget, "budget") % s for s in sizes):
        raise ValueError(f"give two or more chunk sizes that each divide the budget {budget}, got {list(chunk_sizes)}")
    if not finite_number(overlap_share) or not 0 < overlap_share < 1:
        raise ValueError(f"overlap_share must be a number between 0 and 1 (e.g. 0.15), got {overlap_share!r}")
    if sizes[-1] > model_window(model_name):
        raise ValueError(f"chunk size {sizes[-1]} is larger than the model's window of {model_window(model_name)} word pieces")
    docs, golden_set = load_corpus(corpus), read_golden_csv(golden)
    questions = dict(zip(golden_set["id"], golden_set["question"]))
    settings = []
    for size in sizes:
        for overlap in (0, round(overlap_share * size)):
            chunks = stored_or_split_chunks(docs, corpus, model_name, size, False, overlap)
            qrels = label_chunks(golden_set, chunks, docs, problems=[])  # a cut evidence string: its question left out
            runs = run_registry(default_retrievers(model_name, size), chunks, questions, cache_dir=cache_dir, progress=progress)
            settings.append(Chunking(size, overlap, chunks, qrels, [q for q in questions if q not in qrels], runs))
    rows, budget_rows = {}, {}
    for s in settings:
        rows[s.label] = {"chunks": len(s.chunks), "mean word pieces": sum(c["n_tokens"] for c in s.chunks) / len(s.chunks),
                         "evidence cut": len(s.cut), "several relevant chunks": sum(len(g) > 1 for g in s.qrels.values())}
        k, size_of = budget // s.chunk_size, {c["id"]: c["n_tokens"] for c in s.chunks}
        found = s.found(k)
        for name, run in s.runs.items():
            budget_rows[(s.label, name)] = {"k": k, SUCCESS: found[name].mean(),
                                            "word pieces read": sum(sum(size_of[c] for c in r[:k]) for r in run.values()) / len(run)}
    baseline = next(s for s in settings if s.chunk_size == sizes[-1] and not s.chunk_overlap)
    base_found = baseline.found(budget // baseline.chunk_size)
    tests = {}
    for s in settings:
        if s is not baseline:
            found = s.found(budget // s.chunk_size)
            for name in s.runs:
                test = paired_test(found[name], base_found[name])
                tests[(name, s.label)] = {key: test[key] for key in ("difference", "wins", "ties", "losses", "p")}
    comparisons = pd.DataFrame.from_dict(tests, orient="index").rename_axis(["run", "setting"])
    comparisons["Holm p"] = holm(comparisons["p"].to_numpy())
    comparisons["verdict"] = [("higher" if d > 0 else "lower") if p < ALPHA else TOO_CLOSE
                              for d, p in zip(comparisons["difference"], comparisons["Holm p"])]
    return ChunkingExperiment(settings, pd.DataFrame.from_dict(rows, orient="index").rename_axis("setting"),
                              pd.DataFrame.from_dict(budget_rows, orient="index").rename_axis(["setting", "run"]),
                              comparisons, baseline.label, budget)
