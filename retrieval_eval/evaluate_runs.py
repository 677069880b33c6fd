"""Bring your engine's runs: score TREC run files against TREC qrels or against a golden set.

``make evaluate-runs QRELS=qrels.txt RUNS="run1.trec run2.trec"`` runs this module
(``python -m retrieval_eval.evaluate_runs``). The Makefile hands every variable over through the
environment, unchanged, so paths with spaces or non-ASCII letters arrive as typed:

* ``QRELS``: a TREC qrels file; or ``GOLDEN`` and ``CORPUS`` instead: a golden-set CSV and its
  corpus folder, labelled with the evidence strings (the runs' document ids must then be the chunk
  ids, chunked with ``CHUNK_SIZE`` and the tokenizer of ``MODEL_NAME``).
* ``RUNS``: the run files, separated by spaces and quoted like a shell command line, so a path
  with a space is written in quotes: ``RUNS='"my runs/bm25.trec" dense.trec'``.
* ``KS``: the cut-offs, e.g. ``"1 3 5 10"`` (the default); ``K``: the cut-off of the intervals
  and paired tests (3 by default); ``REPORT``: the report's folder name under ``output/``.

Relative paths are read from the folder make was started in. The report goes to
``output/<REPORT>/``: ``scores.csv`` (:func:`scores_table`), ``report.ipynb`` (the template
``templates/runs_report.ipynb`` executed with papermill) and ``report.html``.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .checks import check_ks, check_list, check_k, check_question_ids, naming_question
from .corpus import CHUNK_SIZE, load_corpus, stored_or_split_chunks
from .evaluation import KS
from .golden import load_golden
from .metrics import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevant_ids
from .more_metrics import average_precision, r_precision, success_at_k
from .parameters import ParameterError, k_problem, model_problems, parse_number, path_problem, raise_problems
from .paths import OUTPUT_DIR, typed_path
from .trec import Run, TrecFormatError, _check_trec_id, align_run, find_line, read_qrels, read_run

TEMPLATE = Path(__file__).parent / "templates" / "runs_report.ipynb"
K = 3  # the cut-off of the report's intervals and paired tests unless K is given
SCORES_COLUMNS = ["run", "question", "metric", "k", "value"]
# Metrics read at each cut-off k, and those without one (k empty in scores.csv).
METRICS_AT_K = {
    "recall": lambda ranked, gains, k: recall_at_k(ranked, relevant_ids(gains), k),
    "precision": lambda ranked, gains, k: precision_at_k(ranked, relevant_ids(gains), k),
    "reciprocal_rank": lambda ranked, gains, k: reciprocal_rank(ranked, relevant_ids(gains), k),
    "ndcg": ndcg_at_k,
    "success": lambda ranked, gains, k: success_at_k(ranked, relevant_ids(gains), k),
}
METRICS_NO_CUTOFF = {
    "reciprocal_rank": lambda ranked, gains: reciprocal_rank(ranked, relevant_ids(gains)),
    "r_precision": lambda ranked, gains: r_precision(ranked, relevant_ids(gains)),
    "average_precision": lambda ranked, gains: average_precision(ranked, relevant_ids(gains)),
}


class RunsEvaluation(NamedTuple):
    """Run files read and matched to the judgements, ready to score (returned by :func:`load_runs`).

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """

    runs: dict  #: ``{run name: Run}`` as read (:class:`~retrieval_eval.trec.Run`); the name is the file name
    rankings: dict  #: ``{run name: {question_id: ranking}}`` for the scored questions (``[]`` when missing)
    qrels: dict  #: ``{question_id: {docid: gain}}`` of the scored questions, in judgement order
    coverage: dict  #: ``{run name: Coverage}``: questions scored, ignored, missing, without a relevant document
    judgements: str  #: where the judgements come from, one phrase (a qrels file, or a golden set and corpus)


def load_runs(
    run_paths: Sequence[str | os.PathLike],
    qrels: str | os.PathLike | None = None,
    golden: str | os.PathLike | None = None,
    corpus: str | os.PathLike | None = None,
    chunk_size: int = CHUNK_SIZE,
    model_name: str | None = None,
    progress: bool = False,
) -> RunsEvaluation:
    """Read TREC run files and the judgements (a qrels file, or a golden set and its corpus), and match them.

    Runs are read as trec_eval reads them (:func:`~retrieval_eval.trec.read_run`: score descending,
    ties by document id descending, the rank column ignored). Questions are matched as
    ``trec_eval -c`` matches them (:func:`~retrieval_eval.trec.align_run`): a question in a run but
    not judged is ignored, a judged question missing from a run is scored 0, and a judged question
    with no relevant document is left out (it cannot be scored). With a golden set, the relevance
    labels are computed from the chunks (:func:`~retrieval_eval.golden.load_golden`) and
    every document id in a run must be a chunk id.

    Args:
        run_paths: one or more run files (str or path); each run is named by its file name.
        qrels: a TREC qrels file; or None and both ``golden`` and ``corpus``.
        golden: a golden-set CSV (``id, question, evidence, slice``).
        corpus: the corpus folder of the golden set.
        chunk_size: the chunk size the runs were made with, in word pieces (golden set only).
        model_name: the model whose tokenizer sized the chunks (``None``: the bundled all-MiniLM-L6-v2).
        progress: show a progress bar while chunking (golden set only).

    Returns:
        A :class:`RunsEvaluation`.

    Raises:
        ValueError: ``run_paths`` is not a list (one path alone is refused: give ``[path]``), no run file, the same file or file name twice, both or neither of ``qrels`` and
            ``golden``/``corpus``, no judged question with a relevant document, or (golden set) a
            question or chunk id with whitespace, which a TREC file cannot hold.
        TrecFormatError: a file cannot be read or holds a bad line, or (golden set) a run names a
            document that is not a chunk id; the message starts with ``file:line:``.
        GoldenSetError, FileNotFoundError: as the golden-set and corpus loaders.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    paths = [Path(p) for p in check_list(run_paths, "run_paths", "run files")]
    if not paths:
        raise ValueError("no run file given: pass at least one, e.g. RUNS=run.trec")
    names = [p.name for p in paths]
    if _same_names(paths):
        raise ValueError(_same_names(paths))
    if (qrels is None) == (golden is None and corpus is None) or (golden is None) != (corpus is None):
        raise ValueError("give either a qrels file (QRELS=...) or a golden set and its corpus (GOLDEN=... CORPUS=...)")
    chunk_ids = None
    if qrels is not None:
        judged = read_qrels(qrels)
        judgements = f"the qrels file {qrels}"
    else:
        docs = load_corpus(corpus)
        chunks = stored_or_split_chunks(docs, corpus, model_name, check_k(chunk_size, "chunk_size"), progress)
        judged = load_golden(golden, chunks, docs).qrels
        chunk_ids = {c["id"] for c in chunks}
        for kind, ids in (("question", judged), ("chunk", [c["id"] for c in chunks])):  # in order: the first is named
            for name in ids:
                try:
                    _check_trec_id(name)
                except ValueError:
                    raise ValueError(f"{kind} id {name!r} contains whitespace, so no TREC run can name it (fields are "
                                     "separated by whitespace): rename the question or document") from None
        judgements = (f"the golden set {golden} over the corpus {corpus}, {len(chunks)} chunks of at most {chunk_size} "
                      "word pieces, a chunk relevant when it contains the evidence string")
    runs, rankings, coverage = {}, {}, {}
    for name, path in zip(names, paths):
        run = read_run(path)
        if chunk_ids is not None:
            _check_chunk_ids(run, chunk_ids)
        runs[name] = run
        rankings[name], coverage[name] = align_run(run, judged)
    scored = next(iter(coverage.values())).scored
    if not scored:
        raise ValueError(f"no question of {judgements} has a relevant document: nothing can be scored")
    return RunsEvaluation(runs, rankings, {q: judged[q] for q in scored}, coverage, judgements)


def _same_names(paths: Sequence[Path]) -> str | None:
    """The problem of two run files with one file name (runs are named by it), or ``None``."""
    for name in dict.fromkeys(p.name for p in paths):
        twice = [str(p) for p in paths if p.name == name]
        if len(twice) > 1:
            return f"two runs are named {name!r} ({', '.join(twice)}): runs are named by their file name, so rename one"
    return None


def _check_chunk_ids(run: Run, chunk_ids: set) -> None:
    """Raise TrecFormatError at the first line of ``run`` whose document is not a chunk id."""
    for qid, ranking in run.rankings.items():
        for doc_id in ranking:
            if doc_id not in chunk_ids:
                example = min(chunk_ids)
                raise TrecFormatError(
                    run.path, find_line(run.path, qid, doc_id),
                    f"document {doc_id!r} (question {qid!r}) is not a chunk id of this corpus (they look like "
                    f"{example!r}); with GOLDEN and CORPUS a run must rank the chunks made with the same CHUNK_SIZE "
                    "and MODEL_NAME, or give QRELS instead",
                )


def scores_table(rankings: Mapping[str, Mapping[str, Sequence[str]]], qrels: Mapping[str, Mapping[str, int]],
                 ks: Sequence[int] = KS) -> pd.DataFrame:
    """Every metric for every run and question, in long form: what ``scores.csv`` holds.

    recall, precision, reciprocal_rank, ndcg and success at each cut-off k; reciprocal_rank (trec_eval's
    ``recip_rank``), r_precision and average_precision with no cut-off (k empty). Each value comes
    from the definition in :mod:`retrieval_eval.metrics`.

    Args:
        rankings: ``{run name: {question_id: ranking}}`` with a ranking (maybe empty) for every question
            of ``qrels``, e.g. :attr:`RunsEvaluation.rankings`.
        qrels: ``{question_id: {docid: gain}}``, every question with a gain > 0.
        ks: the cut-offs, integers >= 1.

    Returns:
        A DataFrame with columns ``run, question, metric, k, value``; ``k`` is a nullable integer
        (``<NA>`` = no cut-off). Rows by run, then question (qrels order), then metric.

    Raises:
        ValueError: ``ks`` is not a list of distinct integers >= 1 (:func:`~retrieval_eval.checks.check_ks`),
            an id is not a str (:func:`~retrieval_eval.checks.check_ids`), or a question has no
            ranking or no relevant document (names the run and question).

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    ks = check_ks(ks)
    check_question_ids(None, qrels)
    depth = max(ks)
    rows = []
    for name, run in rankings.items():
        check_question_ids(run, None, name)
        for qid, gains in qrels.items():
            if qid not in run:
                raise ValueError(f"{name} has no ranking for question {qid!r}")
            ranked = run[qid]
            with naming_question(qid, f"{name}, "):
                for metric, fn in METRICS_AT_K.items():
                    rows.extend((name, qid, metric, k, fn(ranked[:depth], gains, k)) for k in ks)
                for metric, fn in METRICS_NO_CUTOFF.items():
                    rows.append((name, qid, metric, None, fn(ranked, gains)))
    table = pd.DataFrame(rows, columns=SCORES_COLUMNS)
    table["k"] = table["k"].astype("Int64")
    return table


# --- the runner behind `make evaluate-runs` -------------------------------------------------------


def parse_runs(text: str) -> list[str]:
    """The run paths of ``RUNS``: split at spaces, quoted like a shell command line (``shlex.split``).

    ``'a.trec "my runs/b.trec"'`` → ``['a.trec', 'my runs/b.trec']``; a backslash escapes one character.

    Args:
        text: the value of ``RUNS`` (str).

    Returns:
        The paths as typed, in order (list of str).

    Raises:
        ValueError: an unclosed quote, or no path at all.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    try:
        paths = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"RUNS={text!r} cannot be split into paths ({exc}): close every quote") from None
    if not paths:
        raise ValueError('RUNS is empty: give one or more run files, e.g. RUNS="run1.trec run2.trec"')
    return paths


def parse_ks(text: str, name: str = "KS") -> list[int]:
    """The cut-offs of ``KS``: integers >= 1 separated by spaces or commas, e.g. ``"1 3 5 10"``.

    Args:
        text: the variable's value.
        name: the variable's name, for the error message.

    Raises:
        ValueError: a value that is not an integer >= 1, a value given twice, or none at all (names the variable).

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    values = text.replace(",", " ").split()
    if not values:
        raise ValueError(f'{name} is empty: give one or more cut-offs, e.g. {name}="1 3 5 10"')
    ks = []
    for value in values:
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            raise ValueError(f"{name}={text!r}: {value!r} is not an integer >= 1")
        if int(value) in ks:
            raise ValueError(f"{name}={text!r}: {value} is given twice")
        ks.append(int(value))
    return ks


def read_variables(environ: Mapping[str, str], output_dir: str | os.PathLike = OUTPUT_DIR) -> dict:
    """The variables of ``make evaluate-runs``, read and checked all at once with the checks of ``make evaluate``.

    Every problem (a path that does not exist, both or neither of ``QRELS`` and ``GOLDEN``/``CORPUS``,
    ``KS``, ``K``, ``CHUNK_SIZE``, ``MODEL_NAME``, the report's folder) is collected and raised
    together, by the checks :func:`~retrieval_eval.parameters.check_parameters` uses (paths read from
    ``START_DIR``, numbers in plain digits, the model's files, :func:`~retrieval_eval.reports.check_report_folder`).

    Args:
        environ: the variables (see :func:`main`); a variable that is empty counts as not given.
        output_dir: the folder that holds report folders.

    Returns:
        ``{"parameters": {name: value}`` (the report notebook's parameters: ``RUNS``, ``KS``, ``K``, and
        ``QRELS`` or ``GOLDEN``, ``CORPUS``, ``CHUNK_SIZE``, ``MODEL_NAME``; paths absolute), ``"inputs":
        {name: text}`` (kept in ``inputs.json``), ``"report": str}``.

    Raises:
        ParameterError: one line per problem, each naming the variable.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    from .reports import ReportNameError, check_report_folder, default_report_name

    given = {key: value for key, value in environ.items() if value.strip()}
    start = given.get("START_DIR")
    problems, runs, ks = [], [], list(KS)
    try:
        runs = parse_runs(given.get("RUNS", ""))
    except ValueError as exc:
        problems.append(str(exc))
    problems += [path_problem("RUNS", path, "file", start) for path in runs] + [_same_names([Path(p) for p in runs])]
    kinds = {"QRELS": "file", "GOLDEN": "file", "CORPUS": "folder"}
    problems += [path_problem(key, given[key], kind, start) for key, kind in kinds.items() if key in given]
    if ("QRELS" in given) == ("GOLDEN" in given or "CORPUS" in given) or ("GOLDEN" in given) != ("CORPUS" in given):
        problems.append("give either a qrels file (QRELS=...) or a golden set and its corpus (GOLDEN=... CORPUS=...)")
    if "KS" in given:
        try:
            ks = parse_ks(given["KS"])
        except ValueError as exc:
            problems.append(str(exc))
    k = parse_number(given.get("K", ""), K)
    problems.append(k_problem(k, "the cut-off of the intervals and paired tests"))
    chunk_size, model_name = parse_number(given.get("CHUNK_SIZE", ""), CHUNK_SIZE), given.get("MODEL_NAME")
    if "GOLDEN" in given:  # the chunks are made with this model's tokenizer and this size
        problems += model_problems(model_name, chunk_size)
    elif "QRELS" in given:  # nothing is chunked: a value given would be ignored silently
        problems += [f"{key} applies to GOLDEN and CORPUS only; with QRELS leave it out"
                     for key in ("CHUNK_SIZE", "MODEL_NAME") if key in given]
    paths = {key: str(typed_path(given[key], start)) for key in kinds if key in given}
    parameters = {"RUNS": [str(typed_path(p, start)) for p in runs], "KS": ks, "K": k}
    if "QRELS" in paths:
        parameters["QRELS"] = paths["QRELS"]
    else:
        parameters |= {"GOLDEN": paths.get("GOLDEN"), "CORPUS": paths.get("CORPUS"), "CHUNK_SIZE": chunk_size,
                       "MODEL_NAME": model_name}
    inputs = {key: _as_text(value) for key, value in parameters.items()}
    report = given.get("REPORT") or default_report_name(paths.get("QRELS") or paths.get("GOLDEN") or "", "runs-")
    try:
        check_report_folder(report, inputs, output_dir)
    except ReportNameError as exc:
        problems.append(str(exc))
    raise_problems(problems)
    return {"parameters": parameters, "inputs": inputs, "report": report}


def main(environ: Mapping[str, str] = os.environ, output_dir: str | os.PathLike = OUTPUT_DIR, progress: bool = False) -> Path:
    """Read the runs and judgements named in ``environ``, write ``scores.csv`` and the report; return its folder.

    Args:
        environ: the variables of ``make evaluate-runs`` (``QRELS`` or ``GOLDEN`` and ``CORPUS``,
            ``RUNS``, and optionally ``KS``, ``K``, ``CHUNK_SIZE``, ``MODEL_NAME``, ``REPORT``,
            ``START_DIR``); a variable that is empty counts as not given. Relative paths are taken
            from ``START_DIR``, else from the current folder.
        output_dir: the folder that holds report folders (``output/``).
        progress: print each step and show progress bars (chunking, the report notebook's cells),
            as ``make evaluate`` does.

    Returns:
        The report folder ``output_dir/<REPORT>``; ``REPORT`` defaults to ``runs-`` + the name of the
        folder holding the qrels or golden file (made a valid name:
        :func:`~retrieval_eval.reports.default_report_name`).

    Raises:
        ParameterError: the variables, every problem at once (:func:`read_variables`); nothing is read.
        ValueError (and its kinds TrecFormatError, GoldenSetError), OSError: a bad file, with a
            message naming it; nothing is written then.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    from .reports import finish_report, report_folder

    variables = read_variables(environ, output_dir)
    p, inputs = variables["parameters"], variables["inputs"]
    say = print if progress else (lambda *args, **kwargs: None)
    say(f"Runs {', '.join(p['RUNS'])}\nJudgements {p.get('QRELS') or p['GOLDEN']}", flush=True)
    evaluation = load_runs(p["RUNS"], p.get("QRELS"), p.get("GOLDEN"), p.get("CORPUS"), p.get("CHUNK_SIZE", CHUNK_SIZE),
                           p.get("MODEL_NAME"), progress)
    folder = report_folder(variables["report"], inputs, output_dir)
    say(f"Report folder {folder}", flush=True)
    scores_table(evaluation.rankings, evaluation.qrels, p["KS"]).to_csv(folder / "scores.csv", index=False)
    say("Running the report notebook ...", flush=True)
    write_report(folder, p, progress)
    finish_report(folder, inputs)
    return folder


def _as_text(value) -> str:
    """A parameter as the text kept in the report's inputs.json (lists one item per line)."""
    return "\n".join(map(str, value)) if isinstance(value, list) else "" if value is None else str(value)


def write_report(folder: Path, parameters: Mapping, progress: bool = False) -> None:
    """Execute the report template with papermill into ``folder/report.ipynb`` and export ``report.html``.

    Args:
        folder: the report folder, holding ``scores.csv``.
        parameters: the template's parameters (see :func:`read_variables`).
        progress: show papermill's bar of the notebook's cells.

    Taught in: the README's "Bring your engine's runs" (``make evaluate-runs``).
    """
    import papermill as pm
    from nbconvert import HTMLExporter

    notebook = folder / "report.ipynb"
    pm.execute_notebook(TEMPLATE, notebook, parameters={"REPORT_DIR": str(folder), **parameters}, cwd=str(folder),
                        kernel_name="python3", progress_bar=progress)
    html, _ = HTMLExporter().from_filename(str(notebook))
    (folder / "report.html").write_text(html, encoding="utf-8")


if __name__ == "__main__":
    try:
        report = main(progress=True)
    except ParameterError as exc:
        print(f"make evaluate-runs: {exc}", file=sys.stderr)
        sys.exit(2)
    except (ValueError, OSError) as exc:
        sys.exit(f"make evaluate-runs: {exc}")
    print(f"Report: {report / 'report.html'}\nScores: {report / 'scores.csv'}")
