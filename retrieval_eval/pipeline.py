"""The one set-up call, :func:`evaluation_setup`, and its registry of retrievers: a function ``question -> [chunk ids,
best first]`` or a stage (:class:`BM25`, :class:`Vector`, :class:`Fusion`, :class:`~retrieval_eval.rerank.Rerank`). Each
run is checked once, naming retriever and question, and keeps the top :data:`DEPTH`. The teaching set's runs are data
(``data/runs/``: no embedding model needed); others are cached in ``.cache/rankings/`` by all that changes them."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from tqdm import tqdm

from . import fusion, retrievers, text
from .checks import Chunk, Qrels, Ranking, Run, check_ids, check_k, check_list
from .corpus import CHUNK_SIZE, ParameterError, load_corpus, path_problem, raise_problems, stored_or_split_chunks
from .formats import load_chunks, own_corpus
from .fusion import fuse_runs
from .golden import LEVELS, document_run, load_golden
from .models import (
    document_prefix, fingerprint, model_fingerprint, model_problems, query_prefix, scoring_versions, token_counter, unknown_only,
)
from .paths import CACHE_DIR, CORPUS_DIR, GOLDEN_PATH, RUNS_DIR, write_atomically
from .retrievers import LUCENE_ENGLISH, BM25Retriever, VectorRetriever, unindexable_chunks
from .trec import read_run, write_trec_run

DEPTH = 100  # a run keeps the top 100 chunks of each ranking: more than any cut-off, depth or audit reads


class Context(NamedTuple):
    """What a stage of the registry runs on."""

    chunks: list
    questions: dict  #: ``{question id: question text}``
    runs: dict  #: the runs of the entries before it, by name
    cache_dir: Path
    progress: bool


class Stage:
    """An entry of the registry that is built from the chunks or from earlier runs."""

    cached = True  # its runs are kept in the rankings cache (a stage that only reorders stored runs is not)
    reads: tuple = ()  # the names of the earlier runs it reads (part of its cache key)

    def key(self) -> dict:
        """Everything that identifies its runs besides the chunks and questions (part of the cache key)."""
        return {"stage": type(self).__name__, **asdict(self)}

    def run(self, context: Context) -> Run:
        raise NotImplementedError


@dataclass(frozen=True)
class BM25(Stage):
    """BM25 over the chunks (:class:`~retrieval_eval.retrievers.BM25Retriever` and its settings)."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.0
    stop_words: str | None = retrievers.STOP_WORDS
    stemmer: str | None = retrievers.STEMMER
    idf: str = "robertson"

    def run(self, context: Context) -> Run:
        """``BM25Retriever.rank`` cut at DEPTH (the chunks scoring > 0, ties by id), with NumPy."""
        bm25 = BM25Retriever(context.chunks, **asdict(self), progress=context.progress)
        ids, by_id = _id_order(bm25.ids)
        run = {}
        for q, text in _progress(context.questions, "ranking with BM25", context.progress):
            scores = bm25.scores(text)
            top = np.lexsort((by_id, -scores))[:DEPTH]
            run[q] = list(ids[top[scores[top] > 0]])
        return run


@dataclass(frozen=True)
class Vector(Stage):
    """Vector search (:class:`~retrieval_eval.retrievers.VectorRetriever`): questions encoded in batches."""

    model_name: str | None = None
    window: int = CHUNK_SIZE

    def key(self) -> dict:
        return {**super().key(), "model": model_fingerprint(self.model_name)}

    def run(self, context: Context) -> Run:
        vector = VectorRetriever(context.chunks, self.model_name, self.window, context.cache_dir / "embeddings",
                                 context.progress)
        queries = vector.encode_queries(list(context.questions.values()), context.progress)
        ids, by_id = _id_order(vector.ids)
        return {q: list(ids[np.lexsort((by_id, -(vector.embeddings @ v)))[:DEPTH]])
                for q, v in zip(context.questions, queries)}


@dataclass(frozen=True)
class Fusion(Stage):
    """Reciprocal rank fusion of named runs; hybrid search is ``Fusion(("BM25", "vector"))``, RRF of each top 10."""

    inputs: tuple = ("BM25", "vector")
    depth: int = 10
    rrf_k: float = 60
    cached = False

    @property
    def reads(self) -> tuple:
        return tuple(self.inputs)

    def run(self, context: Context) -> Run:
        return fuse_runs([context.runs[name] for name in self.inputs], k=self.rrf_k, depth=self.depth)


class Function(Stage):
    """Your own retriever: a function ``question text -> [chunk ids, best first]``, called per question."""

    cached = False

    def __init__(self, function: Callable[[str], Ranking], name: str = "your function"):
        self.function, self.name = function, name

    def key(self) -> dict:
        return {"stage": "Function"}  # never a committed run, never cached

    def run(self, context: Context) -> Run:
        run = {}
        for q, question in _progress(context.questions, f"ranking with {self.name}", context.progress):
            try:
                run[q] = self.function(question)
            except Exception as exc:
                raise ValueError(f"retriever {self.name!r}, question {q!r}: the function raised {type(exc).__name__}: {exc}") from exc
        return run


def _id_order(chunk_ids: list) -> tuple[np.ndarray, np.ndarray]:
    """The ids as an array, and each chunk's place in id order (the tie rule: equal scores by id)."""
    return np.asarray(chunk_ids, dtype=object), np.argsort(np.argsort(chunk_ids, kind="stable"))


def default_retrievers(model_name: str | None = None, chunk_size: int = CHUNK_SIZE) -> dict[str, Stage]:
    """The series' three: BM25, vector search and hybrid search (RRF of the top 10 of each)."""
    return {"BM25": BM25(), "vector": Vector(model_name, chunk_size), "hybrid": Fusion(("BM25", "vector"))}


def _progress(questions: Mapping, what: str, show: bool):
    return tqdm(questions.items(), desc=what, unit="question", disable=not show)


def check_stage_run(run, name: str, questions: Mapping, chunk_ids: set) -> Run:
    """A retriever's run at the door: every question ranked with distinct str ids the chunks have (the
    messages name the retriever and the question); the top DEPTH of each."""
    if not isinstance(run, Mapping):
        raise ValueError(f"retriever {name!r} returned {type(run).__name__}, not {{question id: ranking}}")
    checked = {}
    for q in questions:
        ranked = run.get(q)
        where = f"retriever {name!r}, question {q!r}"
        if q not in run:
            raise ValueError(f"{where}: no ranking (give a question with no result an empty list)")
        if isinstance(ranked, str) or not isinstance(ranked, (list, tuple)):
            raise ValueError(f"{where}: returned {type(ranked).__name__} {ranked!r:.60}, not a list of chunk ids, best first")
        check_ids(ranked, f"{where}: returned", "rank")
        unknown = [d for d in ranked if d not in chunk_ids]
        if unknown:
            raise ValueError(f"{where}: returned chunk ids no chunk has: {unknown[:5]}")
        if len(set(ranked)) < len(ranked):
            raise ValueError(f"{where}: returned {next(d for d in ranked if ranked.count(d) > 1)!r} twice")
        checked[q] = list(ranked[:DEPTH])
    return checked


def stage_fingerprint(stage: Stage, chunks: list, questions: Mapping, runs: Mapping) -> str:
    """The cache key of a stage's runs: chunks, questions, the stage's settings, the runs it reads, the
    retrieval code and the scoring libraries' versions."""
    sources = [Path(m.__file__) for m in (retrievers, fusion, text)] + [Path(__file__)]
    return fingerprint(
        chunks=[[c["id"], c["text"]] for c in chunks], questions=list(questions.items()), stage=stage.key(),
        reads={name: runs[name] for name in stage.reads if name in runs},
        code=hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest(), versions=scoring_versions())


def run_file(name: str) -> Path:
    """The committed run of a teaching-set retriever: ``data/runs/<name>.trec``, the name made a file name."""
    return RUNS_DIR / (re.sub(r"[^\w.-]+", "_", name).strip("_") + ".trec")


def _portable(key):
    """A stage's key without the model's fingerprint (a test checks the bundled model's files)."""
    if isinstance(key, dict):
        return {k: _portable(v) for k, v in key.items() if k != "model"}
    return json.loads(json.dumps(key))


def committed_run(name: str, stage: Stage, teaching: bool) -> Run | None:
    """The committed run of ``name`` when the inputs are the teaching set and its settings are the stored ones."""
    path = run_file(name)
    if not teaching or not path.exists():
        return None
    stored = json.loads((RUNS_DIR / "settings.json").read_text(encoding="utf-8"))
    return read_run(path).rankings if stored.get(path.name) == _portable(stage.key()) else None


def _cached(path: Path, questions: Mapping, chunk_ids: set) -> Run | None:
    """The run stored at ``path``, or None: missing, or failing its checks (then set aside as ``.bad`` with a
    warning, and ranked again)."""
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    except ValueError:
        run = None
    problem = _cache_problem(run, questions, chunk_ids)
    if problem is None:
        return run
    path.replace(path.with_suffix(".bad"))
    warnings.warn(f"the rankings cache file {path} {problem}: set aside as {path.with_suffix('.bad').name}, ranked again",
                  stacklevel=3)
    return None


def _cache_problem(run, questions: Mapping, chunk_ids: set) -> str | None:
    if not isinstance(run, dict) or list(run) != list(questions):
        return "is not JSON holding one ranking per question of this golden set"
    for q, ranked in run.items():
        if not isinstance(ranked, list) or not all(isinstance(d, str) for d in ranked) or len(set(ranked)) < len(ranked):
            return f"holds a ranking of question {q!r} that is not a list of distinct chunk ids"
        unknown = set(ranked) - chunk_ids
        if unknown:
            return f"names chunk(s) this corpus does not have, for question {q!r}: {sorted(unknown)[:3]}"
    return None


def run_registry(registry: Mapping[str, Stage | Callable], chunks: list, questions: Mapping, teaching: bool = False,
                 cache_dir: str | Path = CACHE_DIR, progress: bool = False) -> dict[str, Run]:
    """Every retriever's run, in the registry's order: committed, cached, or computed (and cached)."""
    chunk_ids, runs, committed = {c["id"] for c in chunks}, {}, set()
    for name, entry in registry.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a retriever's name must be non-empty text, got {name!r}")
        stage = entry if isinstance(entry, Stage) else Function(entry, name) if callable(entry) else None
        if stage is None:
            raise ValueError(f"retriever {name!r} must be a function question -> [chunk ids] or a stage, got {entry!r:.60}")
        missing = [read for read in stage.reads if read not in runs]
        if missing:
            raise ValueError(f"retriever {name!r} reads the runs {list(stage.reads)}, but {missing} come later or not at all")
        # a committed run holds only when every run it was made from is the committed one too
        run = committed_run(name, stage, teaching and committed.issuperset(stage.reads))
        if run is not None:
            committed.add(name)
        path = (Path(cache_dir) / "rankings" / f"{stage_fingerprint(stage, chunks, questions, runs)}.json"
                if stage.cached and run is None else None)
        if path is not None:
            run = _cached(path, questions, chunk_ids)
        if run is None:
            run = check_stage_run(stage.run(Context(chunks, dict(questions), runs, Path(cache_dir), progress)), name,
                                  questions, chunk_ids)
            if path is not None:
                write_atomically(path, json.dumps(run, ensure_ascii=False).encode("utf-8"))
        runs[name] = check_stage_run(run, name, questions, chunk_ids)
    return runs


def teaching_registry() -> dict[str, Stage]:
    """The runs committed under ``data/runs/``: the three retrievers, an engine's BM25 untouched, and hybrid's
    top 10 reranked by the built-in sentence re-scorer."""
    from .rerank import Rerank, SentenceReranker
    return default_retrievers() | {"BM25, Lucene English": BM25(**LUCENE_ENGLISH),
                                   "hybrid + rerank": Rerank("hybrid", SentenceReranker())}


def store_teaching_runs(progress: bool = True) -> list[Path]:
    """Rank the teaching set afresh with :func:`teaching_registry` and write ``data/runs/`` (``make runs``)."""
    registry = teaching_registry()
    runs = fresh_teaching_runs(registry, progress)
    RUNS_DIR.mkdir(exist_ok=True)
    paths = [write_trec_run(runs[name], run_file(name), run_file(name).stem) for name in registry]
    settings = {path.name: _portable(stage.key()) for path, stage in zip(paths, registry.values())}
    (RUNS_DIR / "settings.json").write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    return paths


def fresh_teaching_runs(registry: Mapping[str, Stage], progress: bool = False) -> dict[str, Run]:
    """The teaching set ranked now, with no committed run and an empty cache (what ``data/runs/`` must equal)."""
    docs = load_corpus()
    chunks = stored_or_split_chunks(docs)
    golden = load_golden(GOLDEN_PATH, chunks, docs).golden
    questions = dict(zip(golden["id"], golden["question"]))
    with tempfile.TemporaryDirectory() as cache:
        return run_registry(registry, chunks, questions, cache_dir=cache, progress=progress)


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
    if source.is_dir() and not (source / "corpus.jsonl").is_file():
        docs = load_corpus(source, skipped=skipped, exclude=[p for p in (golden, questions, *exclude) if p is not None])
        chunks = stored_or_split_chunks(docs, source, model_name, chunk_size, progress)
    else:
        docs, chunks = {}, load_chunks(source / "corpus.jsonl" if source.is_dir() else source)
    too_deep = sorted({k for k in cutoffs if k > len(chunks)})
    if too_deep:
        raise ParameterError([f"the cut-off k = {k} is more than the {len(chunks)} chunks of the corpus: every ranking "
                              f"ends before rank {k}; use k <= {len(chunks)}" for k in too_deep])
    # The teaching set's questions fit the model's window and it reads them all (tests): no tokenizer needed.
    counter, prefix = (None, "") if teaching else (token_counter(model_name), query_prefix(model_name))
    labelled = load_golden(golden, chunks, docs or None, questions=questions, split=split, level=level, n_tokens=counter,
                           window=chunk_size, query_prefix=prefix)
    return Setup(docs, chunks, labelled.golden, labelled.qrels, {}, skipped + labelled.notes,
                 {"chunks": [], "questions": [], "cut": []}, labelled.level, teaching)


def _left_out(setup: "Setup") -> list[tuple[str, list[tuple[str, str]], str]]:
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

    @property
    def chunk_ids(self) -> list[str]:
        """The ids the runs rank, in corpus order: the chunks', or at the document level the documents'."""
        return list(dict.fromkeys(c["doc"] if self.level == "document" else c["id"] for c in self.chunks))

    @property
    def notes(self) -> list[str]:
        """Everything the evaluation cannot see, one line each."""
        return ([line for _, _, line in _left_out(self)]
                + ["scored at the document level: each retriever's ranking of chunks became a ranking of documents, "
                   "each document at the rank of its best chunk"] * (self.level == "document"))


def evaluation_setup(corpus: str | Path | None = None, golden: str | Path | None = None, *,
                     questions: str | Path | None = None, split: str = "test", level: str | None = None,
                     retrievers: Mapping[str, Stage | Callable] | None = None, reranker=None,
                     model_name: str | None = None, chunk_size: int = CHUNK_SIZE, progress: bool = False,
                     cache_dir: str | Path = CACHE_DIR, cutoffs: Sequence[int] = ()) -> Setup:
    """Chunks, golden set and qrels (:func:`load_inputs`), and every retriever's run over every question. ``retrievers``
    adds entries to :func:`default_retrievers` (a name there is replaced); ``reranker`` (as for
    :func:`.rerank.load_reranker`) adds "hybrid + rerank", hybrid's top 10 reranked. At the document level runs rank
    documents. ``cutoffs``: the k a caller will read, refused when more than the chunks or :data:`DEPTH`."""
    from .rerank import Rerank, load_reranker
    if retrievers is not None and not isinstance(retrievers, Mapping):
        raise ValueError(f"retrievers must be a mapping {{name: function or stage}}, got {retrievers!r:.60}")
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
    runs = run_registry(registry, chunks, asked, inputs.teaching, cache_dir, progress)
    if inputs.level == "document":
        runs = {name: document_run(run, chunks) for name, run in runs.items()}
    unreadable = inputs.unreadable
    if not inputs.teaching:
        count, prefix = token_counter(model_name), document_prefix(model_name)
        unreadable = {"chunks": unknown_only({c["id"]: c["text"] for c in chunks}, model_name),
                      "questions": unknown_only(asked, model_name),
                      "cut": [c["id"] for c in chunks if count(prefix + c["text"]) > chunk_size]}
    return inputs._replace(runs=runs, unreadable=unreadable)
