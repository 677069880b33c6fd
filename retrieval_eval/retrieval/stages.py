"""Stages: an entry of the registry of retrievers builds one run from the chunks or from earlier runs; :func:`run_registry`
runs them, each run checked once and kept to the top :data:`DEPTH`, committed (``data/runs/``), cached or computed."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

from tqdm import tqdm

from ..core.checks import Ranking, Run, check_run
from ..core.paths import CACHE_DIR, RUNS_DIR, write_atomically
from ..inputs import text
from ..inputs.models import fingerprint, scoring_versions
from ..inputs.trec import read_run

DEPTH = 100  # a run keeps the top 100 chunks of each ranking: more than any cut-off, depth or audit reads
# Scores are compared to 5 decimal places: a model's float32 scores move by about 1e-7 with the number of threads and
# the CPU's kernels, which would otherwise swap near-equal chunks between machines; what rounds equal is a tie.
SCORE_DECIMALS = 5


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
    shown = True  # every setup ranks with it (False: registered, ranked only where a setup names it)
    reads: tuple = ()  # the names of the earlier runs it reads (part of its cache key)

    def key(self) -> dict:
        """Everything that identifies its runs besides the chunks and questions (part of the cache key)."""
        return {"stage": type(self).__name__, **asdict(self)}

    def configured(self, model_name: str | None, chunk_size: int) -> Stage:
        """This stage for a setup's embedding model and chunk size (a stage that reads neither: itself)."""
        return self

    def run(self, context: Context) -> Run:
        raise NotImplementedError

    def served(self, context: Context) -> tuple[Callable[[str, str], Ranking], int | None] | None:
        """This stage as a server runs it: a function (question id, text) -> that one question's ranking, with any index
        built once, and the index's size in bytes (None: it keeps none). By default :meth:`run` on one question, the
        earlier runs it reads cut to that question (their own time is added by :func:`serving_cost`). None: not
        measurable one question at a time."""
        def one(qid: str, question: str) -> Ranking:
            runs = {name: {qid: run[qid]} for name, run in context.runs.items()}
            return self.run(context._replace(questions={qid: question}, runs=runs, progress=False))[qid]
        return one, None


COST_QUESTIONS = 50  # questions timed per retriever, one at a time


def serving_cost(registry: Mapping[str, Stage], context: Context, questions: int = COST_QUESTIONS):
    """What each retriever costs to serve, beside its metrics: the milliseconds to rank one question (the median and the
    95th percentile over the first ``questions`` questions, each ranked alone after one warm-up; a stage that reads
    earlier runs adds their time for the same question, as a server runs them in turn) and its index's size in MB.
    Measured on this machine, so it varies from run to run: kept out of the scores. NaN where not measurable."""
    import time

    import numpy as np
    import pandas as pd
    asked = list(context.questions.items())[:questions]
    seconds, rows = {}, {}
    for name, stage in progress_bar(registry, "timing one question at a time", context.progress):
        served = stage.served(context._replace(progress=False))
        if served is None or any(read not in seconds for read in stage.reads):
            rows[name] = {"ms per question, median": np.nan, "ms per question, p95": np.nan, "index, MB": np.nan}
            continue
        one, size = served
        one(*asked[0])  # warm-up: lazy loads and caches
        own = []
        for qid, question in asked:
            start = time.perf_counter()
            one(qid, question)
            own.append(time.perf_counter() - start)
        seconds[name] = np.array(own) + sum(seconds[read] for read in stage.reads)
        rows[name] = {"ms per question, median": 1000 * float(np.median(seconds[name])),
                      "ms per question, p95": 1000 * float(np.percentile(seconds[name], 95)),
                      "index, MB": np.nan if size is None else size / 1e6}
    table = pd.DataFrame.from_dict(rows, orient="index").rename_axis("retriever")
    table.attrs["questions"] = len(asked)
    return table


class Function(Stage):
    """Your own retriever: a function ``question text -> [chunk ids, best first]``, called per question."""

    cached = False

    def __init__(self, function: Callable[[str], Ranking], name: str = "your function"):
        self.function, self.name = function, name

    def key(self) -> dict:
        return {"stage": "Function"}  # never a committed run, never cached

    def run(self, context: Context) -> Run:
        run = {}
        for q, question in progress_bar(context.questions, f"ranking with {self.name}", context.progress):
            try:
                run[q] = self.function(question)
            except Exception as exc:
                raise ValueError(f"retriever {self.name!r}, question {q!r}: the function raised {type(exc).__name__}: {exc}") from exc
        return run


def progress_bar(questions: Mapping, what: str, show: bool):
    return tqdm(questions.items(), desc=what, unit="question", disable=not show)


def stage_fingerprint(stage: Stage, chunks: list, questions: Mapping, runs: Mapping) -> str:
    """The cache key of a stage's runs: chunks, questions, the stage's settings, the runs it reads, the code that
    ranks (this module, the text normalisation, the stage's own module) and the scoring libraries' versions."""
    sources = {Path(__file__), Path(text.__file__), Path(inspect.getsourcefile(type(stage)))}
    return fingerprint(
        chunks=[[c["id"], c["text"]] for c in chunks], questions=list(questions.items()), stage=stage.key(),
        reads={name: runs[name] for name in stage.reads if name in runs},
        code=hashlib.sha256(b"".join(p.read_bytes() for p in sorted(sources))).hexdigest(), versions=scoring_versions())


def run_file(name: str, folder: Path = RUNS_DIR) -> Path:
    """The committed run of a retriever: ``<folder>/<name>.trec``, the name made a file name."""
    return folder / (re.sub(r"[^\w.-]+", "_", name).strip("_") + ".trec")


def inputs_fingerprint(chunks: list, questions: Mapping) -> str:
    """What a committed folder's runs were ranked on: the chunks' ids and texts, the questions' ids and texts."""
    return fingerprint(chunks=[[c["id"], c["text"]] for c in chunks], questions=list(questions.items()))


def committed_folder(chunks: list, questions: Mapping) -> Path | None:
    """The folder under ``data/runs/`` whose ``settings.json`` says its runs were ranked on these inputs, or None."""
    mine = inputs_fingerprint(chunks, questions)
    return next((p.parent for p in sorted(RUNS_DIR.rglob("settings.json"))
                 if json.loads(p.read_text(encoding="utf-8"))["inputs"] == mine), None)


def portable(key):
    """A stage's key without the model's fingerprint (a test checks the bundled model's files)."""
    if isinstance(key, dict):
        return {k: portable(v) for k, v in key.items() if k != "model"}
    return json.loads(json.dumps(key))


def committed_run(name: str, stage: Stage, folder: Path | None) -> Run | None:
    """The run of ``name`` committed in ``folder`` when it was made with this stage's settings, else None."""
    path = run_file(name, folder) if folder is not None else None
    if path is None or not path.exists():
        return None
    stored = json.loads((folder / "settings.json").read_text(encoding="utf-8"))["runs"]
    return read_run(path).rankings if stored.get(path.name) == portable(stage.key()) else None


def _cached(path: Path, name: str, questions: Mapping, chunk_ids: set) -> Run | None:
    """The run stored at ``path``; None when missing, or failing the checks (then set aside as ``.bad``, warned)."""
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(run, dict) or list(run) != list(questions):
            raise ValueError("is not JSON holding one ranking per question of this golden set")
        return check_run(run, questions, f"retriever {name!r}", chunk_ids)
    except OSError:
        return None
    except ValueError as exc:
        path.replace(path.with_suffix(".bad"))
        warnings.warn(f"the rankings cache file {path} {exc}: set aside as {path.with_suffix('.bad').name}, ranked again",
                      stacklevel=3)
        return None


def run_registry(registry: Mapping[str, Stage | Callable], chunks: list, questions: Mapping, cache_dir: str | Path = CACHE_DIR,
                 progress: bool = False, committed: bool = True, earlier: Mapping[str, Run] = {}) -> dict[str, Run]:
    """Every retriever's run, in the registry's order: committed (a folder under ``data/runs/`` made from exactly these
    chunks and questions, unless ``committed`` is False), cached in ``.cache/rankings/`` by all that changes it, or
    computed (and cached). ``earlier``: runs made already, which later entries may read (returned first)."""
    chunk_ids, folder = {c["id"] for c in chunks}, committed_folder(chunks, questions) if committed else None
    runs = dict(earlier)
    committed = {name for name, run in runs.items() if folder is not None and (run_file(name, folder).exists()
                                                                              and read_run(run_file(name, folder)).rankings == run)}
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
        run = committed_run(name, stage, folder if committed.issuperset(stage.reads) else None)
        if run is not None:
            committed.add(name)
        path = (Path(cache_dir) / "rankings" / f"{stage_fingerprint(stage, chunks, questions, runs)}.json"
                if stage.cached and run is None else None)
        if path is not None:
            run = _cached(path, name, questions, chunk_ids)
        fresh = run is None
        if fresh:
            run = stage.run(Context(chunks, dict(questions), runs, Path(cache_dir), progress))
            if not isinstance(run, Mapping):
                raise ValueError(f"retriever {name!r} returned {type(run).__name__}, not {{question id: ranking}}")
            run = {q: ranked[:DEPTH] if isinstance(ranked, (list, tuple)) else ranked for q, ranked in run.items()}
        runs[name] = check_run(run, questions, f"retriever {name!r}", chunk_ids)
        if fresh and path is not None:
            write_atomically(path, json.dumps(runs[name], ensure_ascii=False).encode("utf-8"))
    return runs
