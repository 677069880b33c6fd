"""``make evaluate`` and ``make evaluate-runs``: ``python -m retrieval_eval.cli evaluate|evaluate-runs``. The
environment's parameters are read by :data:`PARAMETERS` and all checked before anything is read (exit 2, one line per
problem). A new report folder is claimed (a default name gets ``-2``, ``-3``…; an existing ``REPORT`` is refused), the
bundle and the report written in this process; a problem with data or report is one message (exit 1)."""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import sys
import tempfile
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from ..analysis.regression import MODES
from ..core.errors import ParameterError, ReportError, TrecFormatError, raise_problems
from ..core.evaluation import KS, RANK_COLUMNS
from ..core.paths import CORPUS_DIR, GOLDEN_PATH, ROOT
from ..core.registry import METRICS
from ..inputs.chunks import CHUNK_SIZE
from ..inputs.formats import beir_file, own_corpus
from ..inputs.golden import LEVELS, document_run
from ..inputs.models import installed_model_problem, model_problems
from ..inputs.trec import align_run, find_line, read_qrels, read_run
from ..retrieval.rerank import SentenceReranker
from ..retrieval.setup import evaluation_setup, load_inputs
from ..retrieval.stages import DEPTH
from .history import append_history, history_rows, read_history
from .report import (
    LEFT_OUT_COLUMNS,
    UNFINISHED,
    Evaluation,
    from_setup,
    left_out_table,
    mark_unfinished,
    plain_id,
    write_bundle,
    write_report,
)

TARGETS = ("evaluate", "evaluate-runs", "gate")
EVALUATE, RUNS, GATE = TARGETS[:1], TARGETS[1:2], TARGETS[2:]
K = 3  # the cut-off the LLM reads, unless K is given


# --- reading one parameter: text in, value out, or a ValueError saying what is wrong ---------------


def _resolve(text: str, start: str | None) -> Path:
    """A path as typed, a relative one read from the folder make runs in (refused when PWD disagrees)."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return path
    here = Path.cwd()
    try:
        same = not start or os.path.samefile(start, here)
    except OSError:
        same = False
    if not same:
        raise ValueError(f"a relative path, and PWD ({start}) is not the folder make runs in ({here}): make -C, or a "
                         "program that changed folder without updating PWD; give an absolute path")
    return here / path


def _existing(kind: str) -> Callable[[str, str | None], Path]:
    def read(text: str, start: str | None) -> Path:
        path = _resolve(text, start)
        if not (path.exists() if " or " in kind else path.is_dir() if kind == "folder" else path.is_file()):
            raise ValueError(f"no such {kind}: {path}" + (f" (it is a {'file' if kind == 'folder' else 'folder'})"
                                                            if path.exists() else ""))
        return path
    return read


def _whole(text: str, start=None) -> int:
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) < 1:
        raise ValueError("must be a whole number >= 1 in plain digits, e.g. 3")
    return int(text)


def _cutoffs(text: str, start=None) -> list[int]:
    ks = [_whole(part) for part in text.replace(",", " ").split()]
    if len(set(ks)) < len(ks):
        raise ValueError("holds a cut-off twice; give each once, e.g. KS=\"1 3 5 10\"")
    return ks


def _metrics(text: str, start=None) -> list[str]:
    names = text.replace(",", " ").split()
    if any(name not in METRICS for name in names) or len(set(names)) < len(names):
        raise ValueError(f"names each metric once, of {' '.join(METRICS)} (e.g. METRICS=\"recall MAP F1\")")
    return names


def _run_files(text: str, start: str | None) -> list[Path]:
    try:
        paths = [_existing("file")(part, start) for part in shlex.split(text)]
    except ValueError as exc:  # an unclosed quote, or a file that is not there
        raise ValueError(f"{exc} (RUNS is split like a shell command line: quote a path with spaces)") from None
    names = [p.name for p in paths]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"runs are named by their file name, and {twice} is given twice; rename one")
    if set(names) & set(RANK_COLUMNS):
        raise ValueError(f"a run named {sorted(set(names) & set(RANK_COLUMNS))} (its file name) would take the place of "
                         "a column of the report; rename the file")
    return paths


def _model(text: str, start: str | None) -> str:
    """A model name, or a folder (made absolute when it is one); whether it works is checked with the others."""
    try:
        path = _resolve(text, start)
    except ValueError:
        return text
    return str(path) if path.is_dir() else text


def _reranker(text: str, start: str | None) -> str:
    if text == SentenceReranker.name:
        return text
    model = _model(text, start)
    problem = installed_model_problem(model)
    if problem:
        raise ValueError(f"{problem}; or RERANKER={SentenceReranker.name}, the built-in re-scorer")
    return model


def _labels_path(text: str, start: str | None) -> Path:
    path = _existing("file or folder")(text, start)
    if path.is_dir() and not beir_file(path, "queries.jsonl").is_file():
        raise ValueError(f"{path} is a folder and not a BEIR folder: it has no queries.jsonl (a BEIR folder holds "
                         "corpus.jsonl, queries.jsonl and qrels/<split>.tsv)")
    return path


def _metric(text: str, start=None) -> str:
    if text.strip() not in METRICS:
        raise ValueError(f"must be a registered metric, one of {list(METRICS)}")
    return text.strip()


def _margin(text: str, start=None) -> float:
    if not re.fullmatch(r"[0-9]*\.?[0-9]+", text.strip()) or float(text) >= 1:
        raise ValueError("must be a number from 0 up to 1 in plain digits, e.g. 0.02 (how far the mean may fall)")
    return float(text)


def _history(text: str, start: str | None) -> Path:
    path = _resolve(text, start)
    if not path.parent.is_dir() or path.is_dir():
        raise ValueError(f"{path} is a folder, or its folder does not exist: name a history file, e.g. output/history.jsonl")
    if path.exists():
        read_history(path)  # a damaged row is named here, before anything runs
    return path


def _new_file(text: str, start: str | None) -> Path:
    path = _resolve(text, start)
    if path.is_dir() or not path.parent.is_dir():
        raise ValueError(f"{path} is a folder, or its folder does not exist: name a file to write, e.g. output/gate.xml")
    return path


def _label(text: str, start=None) -> str:
    if len(text) > 100 or len(text.splitlines()) > 1:
        raise ValueError("must be one line of at most 100 characters, e.g. LABEL=\"index build 42\"")
    return text.strip()


def _level(text: str, start=None) -> str:
    if text.strip() not in LEVELS:
        raise ValueError(f"must be one of {list(LEVELS)} (or unset: detected from the labels)")
    return text.strip()


def _report_name(text: str, start=None) -> str:
    name = unicodedata.normalize("NFC", text)
    if not re.fullmatch(r"[^\W][\w .-]{0,99}", name) or name != name.strip():
        raise ValueError("must be a plain folder name: letters, digits, spaces, '.', '_' or '-', not starting with a "
                         "dot or a space, at most 100 characters (e.g. REPORT=library_hours)")
    return name


def _mode(text: str, start=None) -> str:
    if text.strip() not in MODES:
        raise ValueError(f"must be one of {list(MODES)}")
    return text.strip()


def _split(text: str, start=None) -> str:
    """A BEIR split: the name of a file under qrels/, never a path (``../x`` would read outside the folder)."""
    if not re.fullmatch(r"\w[\w-]*(\.\w[\w-]*)*", text.strip()):
        raise ValueError("must be a plain split name such as test, dev or train (letters, digits, '_', '-', '.'), "
                         "not a path: it names qrels/<split>.tsv inside the BEIR folder")
    return text.strip()


@dataclass(frozen=True)
class Parameter:
    """One parameter (a make variable, a flag of ``retrieval-eval``): how its text is read, what it is (the flag's
    help), which targets take it, and its value when not given."""

    read: Callable[[str, str | None], object]
    help: str
    targets: tuple = TARGETS
    default: object = None


# Adding a parameter is one line here (and its name in the Makefile's PARAMETERS), then using it below.
PARAMETERS = {
    "CORPUS": Parameter(_existing("folder or file"), "documents to chunk, or a chunks file used as it is"),
    "GOLDEN": Parameter(_labels_path, "the labels: evidence strings, relevant ids, a Ragas testset, LlamaIndex JSON or a BEIR folder"),
    "BEIR": Parameter(_labels_path, "a BEIR folder: its corpus, queries and qrels"),
    "SPLIT": Parameter(_split, "the BEIR split (qrels/<split>.tsv)", default="test"),
    "QRELS": Parameter(_existing("file"), "TREC qrels: with QUESTIONS for evaluate, alone for runs"),
    "QUESTIONS": Parameter(_existing("file"), "the questions of QRELS: id and question"),
    "LEVEL": Parameter(_level, "chunk or document (unset: detected from the labels)"),
    "RUNS": Parameter(_run_files, "TREC run files, each named by its file name", RUNS),
    "MODEL_NAME": Parameter(_model, "a sentence-transformers model installed locally (default: the bundled all-MiniLM-L6-v2)"),
    "CHUNK_SIZE": Parameter(_whole, "chunk size in the model's word pieces", default=CHUNK_SIZE),
    "K": Parameter(_whole, "the cut-off the LLM reads: intervals, tests and the gate are at it", default=K),
    "KS": Parameter(_cutoffs, "the table's cut-offs, e.g. 1 3 5 10"),
    "METRICS": Parameter(_metrics, "registered metrics scored beside the four, e.g. MAP R-precision F1 context-precision"),
    "RERANKER": Parameter(_reranker, "sentence (the built-in reranker) or a local CrossEncoder: adds hybrid + rerank", EVALUATE),
    "REPORT": Parameter(_report_name, "the report folder's name under output/"),
    "BASELINE": Parameter(_existing("file"), "the TREC run the candidate must not fall behind", GATE),
    "CANDIDATE": Parameter(_existing("file"), "the TREC run under test", GATE),
    "METRIC": Parameter(_metric, "the registered metric gated", GATE, "recall"),
    "MARGIN": Parameter(_margin, "how far the candidate's mean may fall, e.g. 0.02", GATE, 0.0),
    "MODE": Parameter(_mode, "worse: fail what is shown worse beyond MARGIN; non-inferiority: fail unless shown within it",
                      GATE, "worse"),
    "HISTORY": Parameter(_history, "a history file (JSONL) to append one row per run to"),
    "LABEL": Parameter(_label, "this build's name in the history", default=""),
    "JUNIT": Parameter(_new_file, "a JUnit XML file to write the verdict to, for CI test reports", GATE),
    "MAX_AGE": Parameter(_whole, "warn when the baseline's row in HISTORY is older than this many days", GATE, 7),
}
DEFAULTS = {"evaluate": {"CORPUS": CORPUS_DIR, "GOLDEN": GOLDEN_PATH}, "evaluate-runs": {}, "gate": {}}


def read_parameters(target: str, environ: Mapping[str, str], output_dir: Path, cache_dir: Path) -> dict:
    """Every parameter of ``target`` from ``environ`` (empty is not given), checked with the combinations,
    the model's files, the report name and the folders; ``"given"`` holds the names given. Raises
    :class:`~retrieval_eval.core.errors.ParameterError` listing every problem."""
    start = environ.get("START_DIR") or environ.get("PWD") or None
    given = {name: environ[name] for name in PARAMETERS if environ.get(name, "").strip()}
    values, problems = {**{n: p.default for n, p in PARAMETERS.items()}, **DEFAULTS[target]}, []
    for name, text in given.items():
        if target not in PARAMETERS[name].targets:
            problems.append(f"{name} is a parameter of make {' and '.join(PARAMETERS[name].targets)} only; leave it out")
            continue
        try:
            values[name] = PARAMETERS[name].read(text, start)
        except ValueError as exc:
            problems.append(f"{name}={text!r}: {exc}")
    problems += _label_problems(target, given, values)
    if not _trec_only(target, given):  # chunked with this model's tokenizer (CHUNK_SIZE as read, else its default)
        problems += model_problems(values["MODEL_NAME"], values["CHUNK_SIZE"])
    if target == "evaluate":
        problems += [f"the cut-off {k} is more than the {DEPTH} ranks each run keeps; use K and KS <= {DEPTH}"
                     for k in sorted({values["K"], *(values["KS"] or [])}) if isinstance(k, int) and k > DEPTH]
    if "REPORT" in given and isinstance(values["REPORT"], str) and os.path.lexists(output_dir / values["REPORT"]):
        name, mark = values["REPORT"], output_dir / values["REPORT"] / UNFINISHED
        found = (f"an unfinished report ({' '.join(mark.read_text(encoding='utf-8', errors='replace').split())[:300]})"
                 if mark.is_file() else "a finished report" if (output_dir / name / "report.html").is_file() else "not a report folder")
        free = next(f"{name}-{i}" for i in range(2, 10**6) if not os.path.lexists(output_dir / f"{name}-{i}"))
        problems.append(f"REPORT={given['REPORT']!r}: {output_dir / name} exists ({found}); a report never "
                        f"replaces another: REPORT={free!r} is free, or delete that folder")
    problems += [_unwritable(folder, variable) for folder, variable in
                 ((output_dir, "RETRIEVAL_EVAL_OUTPUT"), (cache_dir, "RETRIEVAL_EVAL_CACHE"))]
    if problems[-1] and cache_dir.is_dir():  # a read-only cache that holds what is needed (a CI or classroom image)
        warnings.warn(f"{problems.pop()}; what it holds is read, and what it lacks stops the run, naming the file",
                      stacklevel=2)
    raise_problems(problems)
    return {**values, "given": set(given)}


def _trec_only(target: str, given) -> bool:
    """``make evaluate-runs QRELS=…`` alone: runs against qrels, no corpus read."""
    return target != "evaluate" and "QRELS" in given and not {"QUESTIONS", "CORPUS"} & set(given)


def _label_problems(target: str, given, values: dict) -> list[str]:
    labels = [name for name in ("GOLDEN", "BEIR", "QRELS") if name in given]
    problems = [f"give the labels once: {' and '.join(labels)} were all given"] * (len(labels) > 1)
    if target != "evaluate" and not labels:
        problems.append("the labels are missing: QRELS=qrels.txt, GOLDEN=golden.csv with CORPUS, or BEIR=folder")
    if target == "evaluate-runs" and "RUNS" not in given:
        problems.append('RUNS is missing: give one or more TREC run files, e.g. RUNS="bm25.trec dense.trec"')
    problems += [f"{name} is missing: the TREC run file of the {name.lower()}, e.g. {name}=output/{name.lower()}.trec"
                 for name in ("BASELINE", "CANDIDATE") if target == "gate" and name not in given]
    if target == "gate" and values["MODE"] == "non-inferiority" and not values["MARGIN"]:
        problems.append("MODE=non-inferiority needs MARGIN above 0: the drop you accept, e.g. MARGIN=0.02")
    if _trec_only(target, given):
        return problems + [f"{name} applies to a corpus only; with QRELS alone leave it out"
                           for name in ("CHUNK_SIZE", "MODEL_NAME", "LEVEL") if name in given]
    if ("QRELS" in given) != ("QUESTIONS" in given):
        problems.append("QRELS and QUESTIONS go together (with CORPUS): the qrels judge, the questions file holds the questions")
    if "BEIR" in given and "CORPUS" in given:
        problems.append("BEIR holds its own corpus (corpus.jsonl): leave CORPUS out")
    if target == "evaluate" and "CORPUS" in given and not labels:
        problems.append("the labels are missing: GOLDEN=golden.csv, or QRELS with QUESTIONS")
    if labels and not {"CORPUS", "BEIR"} & set(given) and own_corpus(values.get("GOLDEN")) is None:
        problems.append("CORPUS is missing: the chunks or documents these labels judge")
    return problems


def _sources(values: dict) -> tuple:
    """(corpus, labels) as the loaders take them: no corpus when the labels hold their own."""
    given = values["given"]
    own = values["BEIR"] or ("CORPUS" not in given and "GOLDEN" in given and own_corpus(values["GOLDEN"]) is not None)
    return (None if own else values["CORPUS"]), values["BEIR"] or values["QRELS"] or values["GOLDEN"]


def _unwritable(folder: Path, variable: str) -> str | None:
    """Why ``folder`` (or its nearest existing parent) cannot be written, tried with a temporary folder; or None."""
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p == p.parent)
    try:
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{existing} is a file")
        tempfile.TemporaryDirectory(dir=existing).cleanup()
    except OSError as exc:
        return (f"{folder} cannot be written ({exc.strerror or exc}): set {variable} to a folder you can write "
                "(RETRIEVAL_EVAL_OUTPUT moves the reports, RETRIEVAL_EVAL_CACHE the cache)")
    return None


# --- the two evaluations --------------------------------------------------------------------------


def _cutoffs_of(values: dict, n_items: int | None) -> tuple[list[int], list[int]]:
    """The table's cut-offs (``KS`` as given, or the defaults that fit ``n_items``) and those to check."""
    if values["KS"]:
        return sorted({*values["KS"], values["K"]}), [values["K"], *values["KS"]]
    return sorted({*(k for k in KS if n_items is None or k <= n_items), values["K"]}), [values["K"]]


def evaluate(values: dict, cache_dir: Path):
    """``make evaluate``: the registry's runs over the golden set, as an :class:`~retrieval_eval.report.Evaluation`."""
    corpus, labels = _sources(values)
    print(f"Corpus {corpus or labels}\nLabels {labels}", flush=True)
    _, check = _cutoffs_of(values, None)
    setup = evaluation_setup(corpus, labels, questions=values["QUESTIONS"], split=values["SPLIT"], level=values["LEVEL"],
                             reranker=values["RERANKER"], model_name=values["MODEL_NAME"], chunk_size=values["CHUNK_SIZE"],
                             progress=True, cache_dir=cache_dir, cutoffs=check, cost=True)
    ks, _ = _cutoffs_of(values, len(setup.chunks))
    return from_setup(setup, values["K"], ks, _about(values))


def evaluate_runs(values: dict, cache_dir: Path, names: list[str] | None = None):
    """``make evaluate-runs``: TREC runs against qrels, or against a golden set's labels of the chunks (each run
    named by its file name, or by ``names``)."""
    print("Runs " + ", ".join(map(str, values["RUNS"])), flush=True)
    runs = {name: read_run(path, progress=True) for name, path in zip(names or [p.name for p in values["RUNS"]], values["RUNS"])}
    if _trec_only("evaluate-runs", values["given"]):
        judged, setup, unit = read_qrels(values["QRELS"]), None, "document"
    else:
        _, check = _cutoffs_of(values, None)
        setup = load_inputs(*_sources(values), questions=values["QUESTIONS"], model_name=values["MODEL_NAME"],
                            split=values["SPLIT"], level=values["LEVEL"], chunk_size=values["CHUNK_SIZE"],
                            progress=True, exclude=values["RUNS"], cutoffs=check)
        judged, unit, chunk_ids = setup.qrels, setup.level, {c["id"] for c in setup.chunks}
        for path, run in zip(values["RUNS"], runs.values()):
            unknown = next(((q, d) for q, ranked in run.rankings.items() for d in ranked
                            if d not in chunk_ids and plain_id(d) not in chunk_ids), None)
            if unknown:
                raise TrecFormatError(path, find_line(path, *unknown), f"{unknown[1]!r} (question {unknown[0]!r}) is not a "
                                      "chunk id of this corpus: with GOLDEN and CORPUS a run ranks the chunks made with the "
                                      "same CHUNK_SIZE and MODEL_NAME; or give QRELS")
    rankings, rows = {}, []
    judged_ids = {d for gains in judged.values() for d in gains}
    for name, run in runs.items():
        ranked = run.rankings
        if setup:  # a report's TREC files percent-encode whitespace and "%" in ids: read them as the golden set's
            ranked = {q if q in judged else plain_id(q): [d if d in chunk_ids else plain_id(d) for d in r]
                      for q, r in ranked.items()}
        if setup and setup.level == "document":  # labels of documents, runs of chunks: each document at its best chunk
            ranked = document_run({q: [d for d in r if d in chunk_ids] for q, r in ranked.items()}, setup.chunks)
        if not any(d in judged_ids for r in ranked.values() for d in r) and not _shares_ids(ranked, runs, name):
            raise ValueError(f"run {name}: none of its ids is judged (the labels name ids like "
                             f"{sorted(judged_ids)[:2]}, the run {next((r[:2] for r in ranked.values() if r), [])}): "
                             "documents against chunks? With GOLDEN and CORPUS, LEVEL=document maps chunks to documents")
        rankings[name], coverage = align_run(run if ranked is run.rankings else ranked, judged)  # a Run: checked as read
        rows += [("question in the run but not judged: ignored", q, name) for q in coverage.run_only]
        rows += [("judged question the run does not answer: scored 0", q, name) for q in coverage.missing]
        rows += [("ranking re-sorted as trec_eval reads it (score, then id descending)", q, name) for q in run.reordered]
    rows += [("judged question with no relevant document: cannot be scored, left out", q, "") for q in coverage.no_relevant]
    if not coverage.scored:
        raise ValueError("no judged question has a relevant document: there is nothing to score")
    ks, _ = _cutoffs_of(values, len(setup.chunks) if setup else None)
    extra = pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)
    return Evaluation(rankings, {q: judged[q] for q in coverage.scored}, values["K"], ks, setup and setup.golden,
                      setup and setup.chunks, _about(values),
                      pd.concat([left_out_table(setup), extra], ignore_index=True) if setup else extra, unit=unit)


def _shares_ids(ranked: dict, runs: dict, name: str) -> bool:
    """Does a run none of whose ids is judged rank ids another run ranks? Then it is a total regression in the labels'
    id space (a candidate that lost every question), not a run of another id space."""
    others = {d for other, run in runs.items() if other != name for r in run.rankings.values() for d in r}
    return any(d in others for r in ranked.values() for d in r)


def _about(values: dict) -> dict:
    shown = {"CORPUS": "corpus", "GOLDEN": "golden set", "BEIR": "BEIR folder", "SPLIT": "split", "QRELS": "qrels",
             "QUESTIONS": "questions", "LEVEL": "level", "RUNS": "runs", "RERANKER": "reranker"}
    given = values.get("given", set())
    if values.get("BEIR") or ("CORPUS" not in given and ({"GOLDEN", "QRELS"} & given)):
        values = {**values, "CORPUS": None}  # the labels' own corpus
    if not values.get("BEIR"):
        values = {**values, "SPLIT": None}
    if values["CORPUS"] or values.get("BEIR"):
        shown |= {"MODEL_NAME": "embedding model", "CHUNK_SIZE": "chunk size (word pieces)"}
        values = {"MODEL_NAME": "all-MiniLM-L6-v2 (bundled)"} | {k: v for k, v in values.items() if v is not None}
    return {label: "\n".join(map(str, values[name])) if isinstance(values[name], list) else str(values[name])
            for name, label in shown.items() if values.get(name) is not None}


# --- the report folder and the report -------------------------------------------------------------


def default_name(values: dict, target: str) -> str:
    """``<folder>-<stem>`` of the golden or qrels file (``runs-`` first for evaluate-runs), as a plain name."""
    path = Path(values.get("BEIR") or values["QRELS"] or values["GOLDEN"])
    text = unicodedata.normalize("NFC", ("runs-" if target == "evaluate-runs" else "") + f"{path.parent.name}-{path.stem}")
    return re.sub(r"[^\w .-]", "_", text).strip(" .-")[:90].rstrip(" .-") or "report"


def claim(output_dir: Path, name: str, given: bool) -> Path:
    """A new, empty report folder, made atomically: ``name``, or for a default name the first free ``name-2``,
    ``name-3``…; a given ``REPORT`` that exists is refused."""
    output_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ["", *(f"-{i}" for i in range(2, 1000))]:
        try:
            (output_dir / f"{name}{suffix}").mkdir()
            return output_dir / f"{name}{suffix}"
        except FileExistsError:
            if given:
                break
    raise ReportError(f"{output_dir / name} exists{' (and 998 more)' * (not given)}: a report never replaces another; "
                      "choose another REPORT name, or delete old reports")


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run ``make evaluate`` or ``make evaluate-runs``; the exit status (0 done, 2 parameters, 1 data or report)."""
    argv, environ = sys.argv[1:] if argv is None else argv, os.environ if environ is None else environ
    if len(argv) != 1 or argv[0] not in EVALUATE + RUNS:
        print(f"usage: python -m retrieval_eval.cli {'|'.join(EVALUATE + RUNS)} (parameters from the environment)", file=sys.stderr)
        return 2
    target = argv[0]
    output_dir = Path(environ.get("RETRIEVAL_EVAL_OUTPUT") or ROOT / "output").absolute()
    cache_dir = Path(environ.get("RETRIEVAL_EVAL_CACHE") or ROOT / ".cache").absolute()
    folder = None
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *args, **kwargs: print(f"note: {message}", file=sys.stderr, flush=True)
        try:
            values = read_parameters(target, environ, output_dir, cache_dir)
            ev = (evaluate if target == "evaluate" else evaluate_runs)(values, cache_dir)
            ev = replace(ev, metrics=values["METRICS"], scores=None) if values["METRICS"] else ev
            for what, n in ev.left_out["what"].value_counts(sort=False).items():
                print(f"note: {n:,} × {what} (listed in the report)", file=sys.stderr)
            folder = claim(output_dir, values["REPORT"] or default_name(values, target), "REPORT" in values["given"])
            mark_unfinished(folder, f"being written by process {os.getpid()}; if none is running, it was stopped")
            print(f"Report folder {folder}", flush=True)
            ev.folder, ev.progress = folder, True
            write_bundle(folder, ev, output_dir)
            write_report(folder, ev, output_dir)
            (folder / UNFINISHED).unlink()
            folder, finished = None, folder
            if values["HISTORY"]:  # each run's hash is its TREC file's as given, or as written beside the report
                files = (dict(zip(ev.runs, values["RUNS"])) if target == "evaluate-runs" else
                         {name: finished / file for name, file in json.loads((finished / "bundle.json").read_text())["runs"]})
                print(f"History {append_history(values['HISTORY'], history_rows(ev, values['LABEL'], files=files))}")
        except (ValueError, OSError) as exc:  # a ParameterError (a ValueError) exits 2, a problem with data or report 1
            if folder is not None:
                mark_unfinished(folder, f"stopped by: {exc}")
            print(f"{target}: {exc}" + f" ({folder} is marked unfinished in {UNFINISHED})" * (folder is not None),
                  file=sys.stderr)
            return 2 if isinstance(exc, ParameterError) else 1
    print(f"Report: {finished / 'report.html'}\nScores: {finished / 'scores.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
