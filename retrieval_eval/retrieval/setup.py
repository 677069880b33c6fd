"""The one set-up call, :func:`evaluation_setup`: chunks, golden set, qrels and every retriever's run, whatever the
inputs' formats; and :data:`RETRIEVERS`, the built-in retrievers every setup ranks with (a fourth is one
:func:`register_retriever` call). A retriever is a stage (:mod:`.stages`) or a function ``question -> [chunk ids, best
first]``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..core.checks import Run, check_k, check_list, path_problem
from ..core.errors import ParameterError, raise_problems
from ..core.paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH
from ..inputs.chunks import CHUNK_SIZE, stored_or_split_chunks
from ..inputs.corpus import load_corpus
from ..inputs.formats import beir_file, load_chunks, own_corpus
from ..inputs.golden import LEVELS, document_run, load_golden
from ..inputs.models import (
    document_prefix,
    model_problems,
    query_prefix,
    token_counter,
    unknown_only,
)
from .fusion import Fusion
from .rerank import DEPTHS, Rerank, SentenceReranker, load_reranker
from .retrievers import BM25, ApproximateVector, Vector, unindexable_chunks
from .stages import DEPTH, Context, Stage, run_registry, serving_cost

# The built-in retrievers, in the order every setup ranks them (hybrid reads the two before it); a stage with
# shown=False (the HNSW index) only where a setup names it.
RETRIEVERS: dict[str, Stage] = {"BM25": BM25(), "vector": Vector(), "hybrid": Fusion(("BM25", "vector")),
                                "vector, HNSW M 16 ef 16": ApproximateVector(m=16, ef_search=16)}


def register_retriever(name: str, stage: Stage) -> Stage:
    """Add a built-in retriever to :data:`RETRIEVERS` (or replace the one of that name): every setup ranks with it
    from then on, and every table, widget, paired test and report shows it."""
    if not isinstance(name, str) or not name.strip() or not isinstance(stage, Stage):
        raise ValueError(f"register a stage under a non-empty name, got {name!r}: {stage!r:.60}")
    RETRIEVERS[name] = stage
    return stage


def default_retrievers(model_name: str | None = None, chunk_size: int = CHUNK_SIZE,
                       names: Sequence[str] = ()) -> dict[str, Stage]:
    """The registered retrievers every setup ranks with, for an embedding model and chunk size: BM25, vector search and
    hybrid search (RRF of the top 10 of each), and any registered since with ``shown``; ``names``: these instead."""
    names = check_list(names, "names", "retriever names")
    unknown = [name for name in names if name not in RETRIEVERS]
    if unknown:
        raise ValueError(f"no registered retriever is named {unknown} (registered: {list(RETRIEVERS)})")
    return {name: stage.configured(model_name, chunk_size) for name, stage in RETRIEVERS.items()
            if (name in names if names else stage.shown)}


def fusion_inputs(runs: Mapping) -> list[str]:
    """The runs the first registered fusion whose inputs are all in ``runs`` fuses (hybrid: BM25 and vector)."""
    return next((list(s.inputs) for s in RETRIEVERS.values() if isinstance(s, Fusion) and set(s.inputs) <= set(runs)),
                list(runs)[:2])


def load_inputs(corpus: str | Path | None = None, golden: str | Path | None = None, *, questions: str | Path | None = None,
                split: str = "test", level: str | None = None, model_name: str | None = None,
                chunk_size: int = CHUNK_SIZE, progress: bool = False, exclude: Sequence[str | Path] = (),
                cutoffs: Sequence[int] = ()) -> "Setup":
    """The chunks, the golden set and its qrels at the level scored, whatever their formats: a :class:`Setup` without
    runs (``make evaluate-runs``); every parameter is checked before anything is read. ``corpus``: a documents folder
    (chunked here), a chunks file or a BEIR folder; None: the golden set's own corpus, else Polder's. ``golden``:
    whatever :func:`~retrieval_eval.golden.load_golden` reads; None with no corpus: the Polder golden set."""
    if golden is None and corpus is not None:
        raise_problems(["GOLDEN: give the golden set of this CORPUS (evidence strings, relevant ids, a BEIR folder, "
                        "or a TREC qrels file with QUESTIONS)"])
    golden = GOLDEN_PATH if golden is None else golden
    # The teaching set reads its stored chunks and committed runs: no embedding model needed (make lab-lite).
    teaching = (all(isinstance(p, (str, Path)) for p in (corpus or CORPUS_DIR, golden)) and model_name is None
                and Path(corpus or CORPUS_DIR).resolve() == CORPUS_DIR.resolve() and questions is None
                and Path(golden).resolve() == GOLDEN_PATH.resolve() and chunk_size == CHUNK_SIZE)
    raise_problems([path_problem("GOLDEN", golden, "file or folder"),
                    corpus is not None and path_problem("CORPUS", corpus, "folder or file"),
                    questions is not None and path_problem("QUESTIONS", questions, "file"),
                    level not in (None, *LEVELS) and f"LEVEL must be chunk or document (or unset: detected), got {level!r}",
                    not (isinstance(split, str) and split.strip()) and f"SPLIT must be the name of a split, got {split!r}",
                    *([] if teaching else model_problems(model_name, chunk_size))])
    source = Path(corpus) if corpus is not None else own_corpus(golden) or CORPUS_DIR
    skipped: list = []
    if source.is_dir() and not beir_file(source, "corpus.jsonl").is_file():
        docs = load_corpus(source, skipped=skipped, exclude=[p for p in (golden, questions, *exclude) if p is not None])
        chunks = stored_or_split_chunks(docs, source, model_name, chunk_size, progress)
    else:
        docs, chunks = {}, load_chunks(beir_file(source, "corpus.jsonl") if source.is_dir() else source)
    too_deep = sorted({k for k in cutoffs if k > len(chunks)})
    if too_deep:
        raise ParameterError([f"the cut-off k = {k} is more than the {len(chunks)} chunks of the corpus: every ranking "
                              f"ends before rank {k}; use k <= {len(chunks)}" for k in too_deep])
    # The teaching set's questions fit the model's window and it reads them all (tests): no tokenizer needed.
    counter, prefix = (None, "") if teaching else (token_counter(model_name), query_prefix(model_name))
    labelled = load_golden(golden, chunks, docs or None, questions=questions, split=split, level=level, n_tokens=counter,
                           window=chunk_size, query_prefix=prefix, progress=progress)
    return Setup(docs, chunks, labelled.golden, labelled.qrels, {}, skipped + labelled.notes,
                 {"chunks": [], "questions": [], "cut": []}, labelled.level, teaching)


def left_out(setup: "Setup") -> list[tuple[str, list[tuple[str, str]], str]]:
    """What a setup cannot see, one line of :attr:`Setup.notes` each: (the kind, as report.left_out_table names it;
    its (item, detail) rows in that table; the line)."""
    unranked = {name: [q for q, r in run.items() if not r] for name, run in setup.runs.items()}
    effect = {"chunks": "vector search places them by accident",
              "questions": "vector search ranks for them by accident"}
    cut = setup.unreadable.get("cut", [])
    return ([("left out when reading", [(path, reason)], f"left out when reading {path}: {reason}")
             for path, reason in setup.skipped]
            + [("chunk BM25 cannot index (no word it keeps): BM25 never finds it", [(c, "")],
                f"chunk {c!r} has no word BM25 can index: BM25 can never find it")
               for c in unindexable_chunks(setup.chunks)]
            + [("question a run ranked no chunk for (it scores 0)", [(q, name) for q in qs],
                f"{name} ranked no chunk for {len(qs)} question(s): {', '.join(qs)} (they score 0)")
               for name, qs in unranked.items() if qs]
            + [(f"{kind[:-1]} the embedding model reads as unknown tokens only: vector search places it by accident",
                [(i, "") for i in ids],
                f"the embedding model reads {len(ids)} {kind} as unknown tokens only ({', '.join(ids)}): "
                f"{effect[kind]}")
               for kind, ids in setup.unreadable.items() if ids and kind != "cut"]
            + [("chunk longer than the embedding model's window: vector search reads only its start",
                [(c, "") for c in cut],
                f"{len(cut)} chunks are longer than the embedding model's window: vector search reads only their start "
                f"({', '.join(cut[:3])}{f' and {len(cut) - 3} more' if len(cut) > 3 else ''})")] * bool(cut))


class Setup(NamedTuple):
    """What every notebook starts from (returned by :func:`evaluation_setup`)."""

    docs: dict  #: ``{document id: text}``; empty when the corpus is a chunks file
    chunks: list  #: ``[{"id", "doc", "text"[, "n_tokens"]}]`` in corpus order ("doc" when known)
    golden: pd.DataFrame  #: the golden set, one row per question
    qrels: dict  #: ``{question id: {chunk or document id: gain}}`` at the level scored
    runs: dict  #: ``{retriever name: {question id: ranking}}`` at the level scored, in the registry's order
    skipped: list  #: ``[(file, reason)]``: what was not read (corpus files, questions left out)
    unreadable: dict  #: ``{"chunks", "questions"}`` the embedding model reads as unknown tokens only; ``"cut"``: chunks past its window
    level: str = "chunk"  #: "document": the labels name documents, and each run ranks documents (best chunk's rank)
    teaching: bool = False  #: the Polder teaching set with its stored settings: committed runs, no model needed
    cost: object = None  #: with ``cost=True``: :func:`~.stages.serving_cost`'s table, per retriever

    @property
    def chunk_ids(self) -> list[str]:
        """The ids the runs rank, in corpus order: the chunks', or at the document level the documents'."""
        return list(dict.fromkeys(c["doc"] if self.level == "document" else c["id"] for c in self.chunks))

    @property
    def notes(self) -> list[str]:
        """Everything the evaluation cannot see, one line each."""
        return ([line for _, _, line in left_out(self)]
                + ["scored at the document level: each retriever's ranking of chunks became a ranking of documents, "
                   "each document at the rank of its best chunk"] * (self.level == "document"))


def evaluation_setup(corpus: str | Path | None = None, golden: str | Path | None = None, *,
                     questions: str | Path | None = None, split: str = "test", level: str | None = None,
                     retrievers: Mapping[str, Stage | Callable] | Sequence[str] | None = None, reranker=None,
                     model_name: str | None = None, chunk_size: int = CHUNK_SIZE, progress: bool = False,
                     cache_dir: str | Path = CACHE_DIR, cutoffs: Sequence[int] = (), cost: bool = False) -> Setup:
    """Chunks, golden set and qrels (:func:`load_inputs`), and every retriever's run over every question. ``retrievers``
    adds entries to :func:`default_retrievers` (a name there is replaced), or names registered ones to add (as the HNSW
    index, ``shown=False``); ``reranker`` (as for
    :func:`.rerank.load_reranker`) adds "hybrid + rerank", hybrid's top 10 reranked. At the document level runs rank
    documents. ``cutoffs``: the k a caller will read, refused when more than the chunks or :data:`DEPTH`. ``cost``: also
    time each retriever one question at a time and size its index (:func:`~.stages.serving_cost`; loads the model)."""
    if isinstance(retrievers, (list, tuple)) and all(isinstance(name, str) for name in retrievers):
        retrievers = default_retrievers(model_name, chunk_size, retrievers)
    if retrievers is not None and not isinstance(retrievers, Mapping):
        raise ValueError(f"retrievers must be a mapping {{name: function or stage}} or a list of registered names, got "
                         f"{retrievers!r:.60}")
    cutoffs = [check_k(k) for k in check_list(cutoffs, "cutoffs", "cut-offs")]
    too_deep = sorted({k for k in cutoffs if k > DEPTH})
    if too_deep:
        raise ParameterError([f"the cut-off k = {k} is more than the {DEPTH} ranks each run keeps; use k <= {DEPTH}"
                              for k in too_deep])
    inputs = load_inputs(corpus, golden, questions=questions, split=split, level=level, model_name=model_name,
                         chunk_size=chunk_size, progress=progress, cutoffs=cutoffs)
    chunks, golden_set = inputs.chunks, inputs.golden
    registry = default_retrievers(model_name, chunk_size) | dict(retrievers or {})
    if reranker is not None:
        registry["hybrid + rerank"] = Rerank("hybrid", load_reranker(reranker))
    asked = dict(zip(golden_set["id"], golden_set["question"]))
    runs = run_registry(registry, chunks, asked, cache_dir, progress)
    if inputs.level == "document":
        runs = {name: document_run(run, chunks) for name, run in runs.items()}
    unreadable = inputs.unreadable
    if not inputs.teaching:
        count, prefix = token_counter(model_name), document_prefix(model_name)
        unreadable = {"chunks": unknown_only({c["id"]: c["text"] for c in chunks}, model_name),
                      "questions": unknown_only(asked, model_name),
                      "cut": [c["id"] for c in chunks if count(prefix + c["text"]) > chunk_size]}
    served = serving_cost(registry, Context(chunks, asked, runs, Path(cache_dir), progress)) if cost else None
    return inputs._replace(runs=runs, unreadable=unreadable, cost=served)


def reranked_runs(setup: Setup, reranker=None, depths: Sequence[int] = DEPTHS, cache_dir: str | Path = CACHE_DIR,
                  progress: bool = False) -> dict[tuple[str, int], Run]:
    """``{(first stage, N): run}``: each run of the setup with its top N reranked (the built-in sentence reranker unless
    another is given, as for :func:`~.rerank.load_reranker`); committed for the teaching set, else cached or ranked."""
    depths = [check_k(n, "every depth") for n in check_list(depths, "depths", "depths")]
    if setup.level != "chunk":
        raise ValueError("rerank chunks: this setup's runs rank documents")
    reranker = SentenceReranker() if reranker is None else load_reranker(reranker)
    stages = {(name, n): Rerank(name, reranker, n) for name in setup.runs for n in depths}
    runs = run_registry({rerank_name(*key): stage for key, stage in stages.items()}, setup.chunks,
                        dict(zip(setup.golden["id"], setup.golden["question"])), cache_dir, progress, earlier=setup.runs)
    return {key: runs[rerank_name(*key)] for key in stages}


def rerank_name(first_stage: str, depth: int) -> str:
    """The name of a first stage's top N reranked ("hybrid + rerank": hybrid's top 10, as the report calls it)."""
    return f"{first_stage} + rerank" if depth == 10 else f"{first_stage}, top {depth} reranked"
