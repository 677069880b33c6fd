"""Teaching aids for the notebooks: the versions line, the course map, the interview lines, the evidence highlight,
the fold that hides a prediction's answer and random cases for a reader's own metric code. The checker is
:mod:`.checker`, the pictures :mod:`.plots`, the teacher's key :mod:`.widgets.key`."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import mistune
import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown

from ..analysis.agreement import agreement
from ..analysis.answers import COOKBOOK_BASIC, answer_by_retrieval
from ..analysis.comparisons import against_chance, paired_comparisons
from ..core.checks import check_k
from ..core.evaluation import evaluate, first_relevant_ranks, per_question_scores, precision_ceiling
from ..core.metrics import relevant_ids
from ..core.paths import ROOT
from ..inputs.golden import graded_labels, with_known_false_negatives
from ..inputs.models import SCORING_PACKAGES, scoring_versions
from ..inputs.text import locate_evidence
from ..retrieval.setup import reranked_runs

# The packages behind the numbers besides those that score (models.SCORING_PACKAGES): the tables
# (pandas), the chunks (langchain-text-splitters) and the statistics (scipy, statsmodels).
TABLE_PACKAGES = ("pandas", "langchain-text-splitters", "scipy", "statsmodels")


def machine() -> str:
    """This machine in a few words, for a timing beside it: its processors and whether torch (when loaded) sees a GPU."""
    torch = sys.modules.get("torch")
    gpu = torch is not None and torch.cuda.is_available()
    return f"{os.cpu_count()} processors ({platform.machine()}), {'a GPU' if gpu else 'no GPU'}"


def print_versions() -> None:
    """One line: Python and the versions of the packages the numbers depend on ("-" where one is not installed)."""
    versions = scoring_versions((*SCORING_PACKAGES, *TABLE_PACKAGES), missing="-")
    print(f"Python {platform.python_version()}; " + ", ".join(f"{p} {v}" for p, v in versions.items()))


# The reading model behind the course map's minutes, for a reader who does what a notebook asks: the words as
# rendered (prose, computed sentences, tables) at 200 a minute, and minutes for each thing to do.
READING = {"words a minute": 200, "prediction": 1, "widget": 3, "question": 2, "figure": 0.5}


def rendered_text(nb: dict) -> str:
    """What a reader reads of a notebook (its JSON): Markdown cells, and outputs as shown (HTML without tags; a live
    widget's output is its view, not text)."""
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(out.get("text", "")) + "".join(data.get("text/markdown", ""))
            if "text/html" in data and "application/vnd.jupyter.widget-view+json" not in data:
                text += html.unescape(re.sub(r"<style.*?</style>|<script.*?</script>|<[^>]+>", " ",
                                             "".join(data["text/html"]), flags=re.S))
            elif "text/plain" in data and not text:
                text += "".join(data["text/plain"])
            parts.append(text)
    return "\n".join(parts)


def words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9][\w.@/%-]*", text))


def reading_minutes(nb: dict) -> int:
    """A notebook's minutes by :data:`READING`: its words as rendered, the Markdown cells that ask to predict, the
    widgets, the check-yourself questions and the figures."""
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    outputs = [json.dumps(c.get("outputs", [])) for c in nb["cells"]]
    check = "".join(markdown).partition("## Check yourself")[2].partition("## Solutions")[0]
    counts = {"prediction": sum(bool(re.search(r"\bpredict\b", m, re.I)) for m in markdown),
              "widget": sum("widget-view+json" in o for o in outputs), "question": len(re.findall(r"^\d+\. ", check, re.M)),
              "figure": sum('"image/png"' in o for o in outputs)}
    return round(words(rendered_text(nb)) / READING["words a minute"] + sum(READING[k] * n for k, n in counts.items()))


def course_map(folder=None, markdown: bool = False, link: str = ""):
    """One row per notebook from its ``"course"`` metadata (path, minutes, answers), core first; the notebook as a
    Markdown link with ``link`` before its file name. ``markdown``: the text of a Markdown table, with the reading model
    the minutes follow (a test keeps each within 2 of :func:`reading_minutes`)."""
    rows = []
    for path in sorted(Path(folder or ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        course = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("course")
        if not course:
            raise ValueError(f"{path.name} has no course metadata (path, minutes, answers)")
        rows.append({"notebook": f"[{path.stem}]({link}{path.name})", "path": course["path"], "minutes": course["minutes"],
                     "answers": course["answers"]})
    table = pd.DataFrame(rows).sort_values("path", key=lambda p: p != "core", kind="stable").reset_index(drop=True)
    model = (f"Minutes for a reader who does what each notebook asks: its words as rendered at {READING['words a minute']}"
             f" a minute, and {READING['prediction']} per prediction, {READING['widget']} per widget, {READING['question']}"
             f" per check-yourself question, {READING['figure']} per figure.")
    return markdown_table(table) + "\n\n" + model if markdown else table


WIDGET_EXTENSIONS = ("@jupyter-widgets/jupyterlab-manager", "anywidget")  # what draws the course's widgets in JupyterLab


def widget_front_end_problem() -> str | None:
    """What keeps the widgets from drawing in the JupyterLab this environment starts (``make lab``'s config folder,
    ``JUPYTER_CONFIG_DIR``): an extension missing or disabled, in one plain line; None when both are there."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab.commands import get_app_dir
    from jupyterlab_server.config import get_federated_extensions, get_page_config

    paths = jupyter_path("labextensions")
    installed = get_federated_extensions(paths)
    disabled = get_page_config(paths, os.path.join(get_app_dir(), "settings")).get("disabledExtensions") or []
    disabled = [name for name, off in disabled.items() if off] if isinstance(disabled, dict) else disabled
    for name in WIDGET_EXTENSIONS:
        if name not in installed:
            return (f"the JupyterLab extension {name} is not installed, so every widget shows only its static copy: "
                    "reinstall the venv (make clean, then make lab)")
        if any(d == name or d.startswith(f"{name}:") for d in disabled):
            return (f"the JupyterLab extension {name} is disabled, so every widget shows only its static copy: "
                    f"jupyter labextension enable {name}")
    return None


def run_for_class(folder=None, timeout: int = 1800, saved=None) -> dict[str, float]:
    """``make class``: the room checked first (:func:`widget_front_end_problem`), then every core notebook run
    as *Run All* runs it (nbclient, in its folder), its time printed as it ends, with the machine, and the run copy
    saved under ``saved`` (``output/class/``; the committed notebooks stay as they are). Returns ``{notebook: seconds}``."""
    import nbclient
    import nbformat

    problem = widget_front_end_problem()
    if problem:
        raise SystemExit(f"make class: {problem}")  # one line, no traceback, exit status 1
    folder, saved = Path(folder or ROOT / "notebooks"), Path(saved or ROOT / "output" / "class")
    saved.mkdir(parents=True, exist_ok=True)
    print(f"Run All of each core notebook on this machine, {machine()}:", flush=True)
    seconds = {}
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        nb, start = nbformat.read(path, as_version=4), time.perf_counter()
        if nb.metadata.get("course", {}).get("path") == "core":
            nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                                    resources={"metadata": {"path": str(folder)}}).execute()
            nbformat.write(nb, saved / path.name)
            seconds[path.name] = time.perf_counter() - start
            print(f"  {path.name}: {seconds[path.name]:.0f} s", flush=True)
    print(f"In all {sum(seconds.values()) / 60:.1f} minutes; the widgets' front-end is installed and enabled. The run "
          f"copies are in {saved}; in class open each notebook and Run All again (its widgets need the running kernel).")
    return seconds


def markdown_table(table) -> str:
    """The text of a Markdown table of a DataFrame's columns (its index left out; "|" in a cell escaped)."""
    def cell(value) -> str:
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in table.itertuples(index=False)])


def _label_line(setup, runs, k: int = 3) -> str:
    """The labelling answer for the teaching set: the rule's kappa against the expert (the rule plus the review's
    additions) over the pairs the review read, every run's top k with every label (notebook 17)."""
    expert, known = with_known_false_negatives(setup.qrels, setup.chunks)
    read = {q: {*expert[q], *(c for run in runs.values() for c in run[q][:k])} for q in setup.qrels}
    rule = agreement(setup.qrels, expert, pool=read)
    return (f"By evidence string, automatic and strict. An expert's review of its top-{k} pool ({rule.pairs} pairs) "
            f"added {len(known)} paraphrases: kappa {rule.kappa:.2f} ({rule.interval[0]:.2f}–{rule.interval[1]:.2f}), "
            "not an independent judge.")


def _answer_line() -> str:
    """The cookbook's basic RAG, per question: correct answers with and without evidence in its top 3."""
    shares = answer_by_retrieval(COOKBOOK_BASIC)
    right, wrong = (shares.loc[g] for g in ("evidence in the top k", "no evidence in the top k"))
    verdict = "not chance (Fisher p < 0.001)" if right["p"] < 0.001 else f"Fisher p = {right['p']:.2f}"
    return (f"In the Anthropic cookbook's basic RAG, {right['correct']:.0f} of {right['questions']:.0f} answers "
            f"({right['share']:.2f}) were right with evidence in the top 3, {wrong['correct']:.0f} of "
            f"{wrong['questions']:.0f} ({wrong['share']:.2f}) without: {verdict}.")


def interview_lines(setup, k: int = 3) -> dict[str, str]:
    """The interview answers (notebook 07, the sheet): at most 30 words each, every figure from ``setup``,
    whose runs must hold BM25, vector and hybrid. The reranker's figures come from the run "hybrid + rerank"
    when there is one, else from hybrid's top 10 reranked by the SentenceReranker (:func:`.reranked_runs`)."""
    runs, qrels, golden, chunks = setup.runs, setup.qrels, setup.golden, setup.chunks
    missing = [name for name in ("BM25", "vector", "hybrid") if name not in runs]
    if missing:
        raise ValueError(f"interview_lines needs the runs BM25, vector and hybrid; the setup has no {missing}")
    k = check_k(k)
    three = {name: runs[name] for name in ("BM25", "vector", "hybrid")}
    reranked = runs.get("hybrid + rerank") or reranked_runs(setup._replace(runs={"hybrid": runs["hybrid"]}), depths=[10])[
        ("hybrid", 10)]
    table = evaluate(three, qrels, ks=[1, k, 10]).loc["hybrid"]
    after = evaluate({"hybrid + rerank": reranked}, qrels, ks=[1, k]).iloc[0]
    found = int((first_relevant_ranks({"hybrid": runs["hybrid"]}, qrels)["hybrid"].fillna(k + 1) <= k).sum())
    recall = per_question_scores({"hybrid": runs["hybrid"]}, qrels, ks=[k], metrics=["recall"])["value"]
    part = int(((recall > 0) & (recall < 1)).sum())  # questions with several relevant chunks, some in the top k
    graded = evaluate({"hybrid": runs["hybrid"]}, graded_labels(golden, chunks), ks=[k]).iloc[0]
    single, n = sum(len(relevant_ids(g)) == 1 for g in qrels.values()), len(qrels)
    family = paired_comparisons(three, qrels, k=k)
    pair = family.loc[("BM25 − hybrid", "recall")]
    chance = against_chance(three, qrels, len(setup.chunk_ids), k)
    lines = {
        "Which metric do you read first?": f"Recall at the k my LLM reads: hybrid's recall@{k} is "
            f"{table[('recall', k)]:.2f}; {found} of {n} questions get a relevant chunk in the top {k}"
            + (f", {part} of them only part of theirs." if part else "."),
        "Why is your precision so low?": f"{single} of {n} questions have one relevant chunk, so precision@{k} "
            f"cannot pass {precision_ceiling(qrels, k):.2f}. Ours is {table[('precision', k)]:.2f}.",
        "MRR or recall?": f"Recall says the evidence arrived; MRR says how high. Hybrid's MRR@{k} is "
            f"{table[('MRR', k)]:.2f}, its recall@{k} {table[('recall', k)]:.2f}.",
        "When do you use nDCG?": f"When some chunks answer better than others. With graded labels, hybrid's nDCG@{k} is "
            f"{graded[('nDCG', k)]:.2f}; the ideal holds every judged chunk.",
        "How did you label relevance?": f"A chunk is relevant if it contains the question's evidence string, copied "
            f"from the corpus: automatic and strict. {single} of {n} questions have one relevant chunk."
            if not setup.teaching else _label_line(setup, three, k),
        "How would you evaluate a reranker?": f"Same candidates before and after, beside an oracle. Our stand-in "
            f"moved recall@{k} {table[('recall', k)]:.2f} to {after[('recall', k)]:.2f}, recall@1 "
            f"{table[('recall', 1)]:.2f} to {after[('recall', 1)]:.2f}; recall@10, {table[('recall', 10)]:.2f}, caps it.",
        "Is your improvement real?": f"I compare question by question. Hybrid beats BM25 on {pair['losses']} "
            f"questions and loses {pair['wins']} of {n}: {pair['verdict']} ({len(family)} tests judged together). "
            + ("Both beat random clearly." if (chance.loc[["BM25", "hybrid"], "p"] < 0.001).all() else ""),
        "Does recall predict the answer?": _answer_line(),
    }
    too_long = {q: len(a.split()) for q, a in lines.items() if len(a.split()) > 30}
    if too_long:
        raise ValueError(f"interview lines over 30 words: {too_long}")
    return lines


def evidence_html(text: str, evidence: str, max_chars: int | None = None) -> str:
    """A chunk's text as escaped HTML with the evidence string in ``<mark>``; ``max_chars`` keeps about
    that many characters around the evidence."""
    span = locate_evidence(text, evidence)
    if span is None:
        return f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"
    start, end = span
    before, after = text[:start], text[end:]
    if max_chars is not None:
        room = max(0, (max_chars - (end - start)) // 2)
        if len(before) > room:
            before = "…" + before[len(before) - room :]
        if len(after) > room:
            after = after[:room] + "…"
    marked = f"{html.escape(before)}<mark>{html.escape(text[start:end])}</mark>{html.escape(after)}"
    return f"<pre style='white-space:pre-wrap'>{marked}</pre>"


def fold(*shown, summary: str = "Show the answer") -> HTML:
    """``shown`` (tables, Markdown, text, figures) in one click-to-open ``<details>`` block: the answer to a "Predict"
    prompt stays folded until the reader opens it, live in JupyterLab, on GitHub and in nbconvert's HTML."""
    def part(item) -> str:
        if isinstance(item, Markdown):
            return mistune.html(item.data)
        if isinstance(item, str):
            return f"<pre>{html.escape(item)}</pre>"
        if hasattr(item, "savefig"):  # a matplotlib figure: shown here as a PNG, not again below the cell
            png = io.BytesIO()
            item.savefig(png, format="png", bbox_inches="tight")
            sys.modules["matplotlib.pyplot"].close(item)
            return f"<img src='data:image/png;base64,{base64.b64encode(png.getvalue()).decode()}' alt='the figure'>"
        return item._repr_html_()

    return HTML(f"<details><summary>{html.escape(summary)}</summary>{''.join(map(part, shown))}</details>")


def random_cases(n: int = 1000, seed: int = 0, n_ids: int = 12, max_gain: int = 1) -> list[tuple[list[str], dict, int]]:
    """``n`` random ``(ranking, gains, k)`` cases to compare a reader's metric with this package's: rankings
    of 0 to ``n_ids`` ids (empty or shorter than k sometimes), 1 to 4 judged ids with gains 1 to ``max_gain``
    (some never retrieved), k from 1 to ``n_ids + 3``. The same seed gives the same cases."""
    n, max_gain = check_k(n, "n"), check_k(max_gain, "max_gain")
    if check_k(n_ids, "n_ids") < 4:
        raise ValueError(f"n_ids must be >= 4, got {n_ids}")
    rng = np.random.default_rng(seed)
    ids = [f"d{i:02d}" for i in range(n_ids)]
    cases = []
    for _ in range(n):
        ranking = [str(d) for d in rng.permutation(ids)[: rng.integers(0, n_ids + 1)]]
        judged = rng.choice(ids, size=rng.integers(1, 5), replace=False)
        gains = {str(d): int(rng.integers(1, max_gain + 1)) for d in judged}
        cases.append((ranking, gains, int(rng.integers(1, n_ids + 4))))
    return cases
