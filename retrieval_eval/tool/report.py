"""The report of ``make evaluate`` and ``make evaluate-runs``: a function of sections, each returning HTML
(:data:`SECTIONS`). The cli writes a *bundle* into a new report folder (:func:`write_bundle`) and the report beside it
(:func:`write_report`), in this process; ``report.ipynb`` there calls the same sections on the bundle
(:func:`load_bundle`) for a reader who wants to re-run them, and notebook 05 on its setup (:func:`from_setup`). User text
in HTML goes through :func:`~retrieval_eval.inputs.text.escape`; a long list is shown in part and written whole to a
CSV beside it (:func:`write_file`: never over a file or a link)."""

from __future__ import annotations

import base64
import io
import json
import os
import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from urllib.parse import quote, unquote

import pandas as pd
from tqdm import tqdm

from ..analysis.abstention import abstention, abstention_table
from ..analysis.audit import SHINGLE, golden_set_audit
from ..analysis.comparisons import interval_table, paired_comparisons, values_at_k
from ..analysis.statistics import ALPHA, fewest_discordant, paired_test
from ..core.errors import ReportError
from ..core.evaluation import (
    disagree_at_k,
    first_relevant_ranks,
    per_question_scores,
    precision_ceiling,
)
from ..core.metrics import relevant_ids
from ..core.registry import METRICS, shown_metrics, tested_metrics
from ..inputs.formats import load_chunks
from ..inputs.text import escape
from ..inputs.trec import qrels_text, read_qrels, read_run, run_text
from ..retrieval.setup import left_out

SHOWN = 10  # rows of a long list shown in the report; all of them go to a CSV file beside it
LEFT_OUT, LEFT_OUT_COLUMNS = "left_out.csv", ["what", "item", "detail"]
ABSTENTION = "abstention.csv"
COST = "cost.csv"
TEMPLATE = Path(__file__).parent / "templates" / "report.ipynb"  # the sections as a notebook, for a reader to re-run


def write_file(folder: str | Path, name: str, data: bytes, output_dir: str | Path | None = None) -> Path:
    """Write a new file ``name`` into ``folder``, which must be no link and directly inside ``output_dir``
    (default: its parent); nothing may be at ``folder/name`` yet, except a regular file holding exactly ``data``."""
    folder = Path(folder).absolute()
    if not re.fullmatch(r"\w[\w .+-]{0,150}", name):
        raise ReportError(f"{name!r} is not a plain file name for a report file")
    output_dir = Path(output_dir).absolute() if output_dir is not None else folder.parent
    if folder.is_symlink() or Path(os.path.realpath(folder)).parent != Path(os.path.realpath(output_dir)):
        raise ReportError(f"{folder} is a link or not a folder directly inside {output_dir}: no report file is written there")
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    partial = f".{name}.partial"  # written whole under this name, then linked to its own: never seen half-written
    try:
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=directory)
        with os.fdopen(handle, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.link(partial, name, src_dir_fd=directory, dst_dir_fd=directory)  # link, unlike rename, never replaces
    except FileExistsError:
        if not _holds(directory, name, data):
            raise ReportError(f"{folder / name} exists already: a report never writes over a file or a link") from None
    except OSError as exc:
        raise ReportError(f"{folder / name} could not be written: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(partial, dir_fd=directory)
        except OSError:
            pass
        os.close(directory)
    return folder / name


UNFINISHED = "UNFINISHED.txt"  # in a report folder until its last file is written: what stopped it, if anything


def mark_unfinished(folder: Path, reason: str) -> None:
    """Say in ``folder`` that its report is unfinished and why (replacing what the mark said), as far as the disk lets."""
    try:
        (folder / f".{UNFINISHED}.partial").write_text(reason + "\n", encoding="utf-8")
        os.replace(folder / f".{UNFINISHED}.partial", folder / UNFINISHED)
    except OSError:  # a full disk: the mark written when the folder was claimed stays
        pass


def _holds(directory: int, name: str, data: bytes) -> bool:
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory)
    except OSError:  # a link (ELOOP) or unreadable
        return False
    with os.fdopen(handle, "rb") as f:
        return f.read() == data


# --- what every section reads ---------------------------------------------------------------------


@dataclass
class Evaluation:
    """What the sections read: runs, qrels, the cut-off ``k`` the LLM reads and the table's ``ks``, the golden
    set and chunks when there are any, ``about`` (input label → text), ``left_out``, and the report ``folder``
    (None: no CSV file is written, as in a notebook)."""

    runs: dict
    qrels: dict
    k: int
    ks: list
    golden: pd.DataFrame | None = None
    chunks: list | None = None
    about: dict = field(default_factory=dict)
    left_out: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LEFT_OUT_COLUMNS))
    folder: Path | None = None
    scores: pd.DataFrame | None = None
    unit: str = "chunk"  # what the runs rank: "chunk", or "document" for qrels of an engine
    progress: bool = False  # a progress bar for the slow parts (the paired tests of thousands of questions)
    metrics: list = field(default_factory=list)  # registered metrics scored beside the shown ones (MAP, F1, ...)
    abstention: pd.DataFrame | None = None  # the abstention curve of the questions marked unanswerable, if any
    cost: pd.DataFrame | None = None  # what each retriever costs to serve (serving_cost), when the runs were made here

    def __post_init__(self):
        if self.scores is None:
            self.scores = per_question_scores(self.runs, self.qrels, self.ks, list(dict.fromkeys([*shown_metrics(), *self.metrics])))

    def save(self, name: str, table: pd.DataFrame) -> str:
        """Write ``table`` as CSV beside the report (when there is a folder); the sentence that says where."""
        if self.folder is None:
            return ""
        write_file(self.folder, name, csv_text(table, index=not isinstance(table.index, pd.RangeIndex)).encode("utf-8"))
        return f' All {len(table):,} in <a href="{escape(name)}">{escape(name)}</a>.'


def from_setup(setup, k: int = 3, ks=(1, 3, 5, 10), about: dict | None = None, folder: Path | None = None) -> Evaluation:
    """The report's input from :func:`~retrieval_eval.pipeline.evaluation_setup` (notebook 05, ``make evaluate``)."""
    unanswerable = "answerable" in setup.golden and not setup.golden["answerable"].all() and setup.level == "chunk"
    return Evaluation({name: {q: run[q] for q in setup.qrels} for name, run in setup.runs.items()}, setup.qrels, k,
                      sorted({*ks, k}), setup.golden, setup.chunks, dict(about or {}), left_out_table(setup), folder,
                      unit=setup.level, abstention=abstention(setup, k=k).curve if unanswerable else None, cost=setup.cost)


def left_out_table(setup) -> pd.DataFrame:
    """Everything a setup cannot see, one row each: the kinds of :attr:`~retrieval_eval.pipeline.Setup.notes`."""
    rows = [(what, item, detail) for what, pairs, _ in left_out(setup) for item, detail in pairs]
    return pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)


# --- the bundle -----------------------------------------------------------------------------------


def trec_id(text: str) -> str:
    """An id as a TREC file can hold it: whitespace and ``%`` percent-encoded (:func:`plain_id` undoes it)."""
    return re.sub(r"[\s%]", lambda m: quote(m[0]), text)


def plain_id(text: str) -> str:
    return unquote(text) if "%" in text else text


_FORMULA = re.compile(r"^'*[=+\-@\t\r]")  # a cell a spreadsheet would run as a formula (OWASP), or one so escaped


def _text_cells(table: pd.DataFrame, change, index: bool) -> pd.DataFrame:
    """``table`` with ``change`` applied to each cell of its text columns (and of its index, with ``index``)."""
    changed = table.copy()
    for column in changed.columns:
        if not pd.api.types.is_numeric_dtype(changed[column]):
            changed[column] = changed[column].map(change)
    if index and not pd.api.types.is_numeric_dtype(changed.index):
        changed.index = pd.Index(changed.index.map(change), name=changed.index.name)
    return changed


def csv_text(table: pd.DataFrame, index: bool = False) -> str:
    """``table`` as CSV with every text cell a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab or
    CR first: OWASP's CSV injection) behind a ``'``; numbers stay numbers. :func:`read_csv_text` undoes it."""
    escaped = _text_cells(table, lambda v: f"'{v}" if isinstance(v, str) and _FORMULA.match(v) else v, index)
    return escaped.to_csv(index=index)


def read_csv_text(path: Path, **options) -> pd.DataFrame:
    """A CSV file :func:`csv_text` wrote, its escaped cells as they were."""
    return _text_cells(pd.read_csv(path, **options),
                       lambda v: v[1:] if isinstance(v, str) and v.startswith("'") and _FORMULA.match(v) else v, True)


def write_bundle(folder: Path, ev: Evaluation, output_dir: Path | None = None) -> list[Path]:
    """Write what the template reads: ``bundle.json``, ``scores.csv``, ``qrels.txt``, a ``run.<name>.trec`` per
    run (ids percent-encoded), and ``chunks.jsonl``, ``questions.csv``, ``left_out.csv`` when there are any."""
    files = {}
    for name in ev.runs:  # a run named after its file keeps one extension: base.trec → run.base.trec
        stem = "run." + (re.sub(r"[^\w.+-]+", "_", re.sub(r"\.(trec|txt|run)$", "", name, flags=re.I)).strip("._") or "run")
        files[name] = next(f"{stem}{suffix}.trec" for suffix in ["", *(f"-{i}" for i in range(2, len(ev.runs) + 2))]
                           if f"{stem}{suffix}.trec" not in files.values())
    encoded = {trec_id(q): {trec_id(d): g for d, g in gains.items()} for q, gains in ev.qrels.items()}
    texts = {"scores.csv": lambda: csv_text(ev.scores), "qrels.txt": lambda: qrels_text(encoded)}
    for name, run in ev.runs.items():  # made when written, one at a time: a run of 100,000 questions is 300 MB of text
        texts[files[name]] = lambda run=run, tag=Path(files[name]).stem[4:]: run_text(
            {trec_id(q): [trec_id(d) for d in r] for q, r in run.items()}, tag)
    if ev.chunks is not None:
        texts["chunks.jsonl"] = lambda: "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in ev.chunks)
    if ev.golden is not None:
        texts["questions.csv"] = lambda: csv_text(ev.golden)
    if len(ev.left_out):
        texts[LEFT_OUT] = lambda: csv_text(ev.left_out)
    if ev.abstention is not None:
        texts[ABSTENTION] = lambda: csv_text(ev.abstention)
    if ev.cost is not None:
        texts[COST] = lambda: csv_text(ev.cost, index=True)
    texts["bundle.json"] = lambda: json.dumps({"k": ev.k, "ks": ev.ks, "unit": ev.unit, "runs": list(files.items()),
                                               "questions": list(ev.qrels), "about": list(ev.about.items()),
                                               "cost_questions": None if ev.cost is None else ev.cost.attrs.get("questions")},
                                              ensure_ascii=False, indent=1)
    return [write_file(folder, name, text().encode("utf-8"), output_dir) for name, text in texts.items()]


def load_bundle(folder: str | Path = ".") -> Evaluation:
    """The :class:`Evaluation` a bundle holds (what ``report.ipynb`` reads; it reads nothing else)."""
    folder = Path(folder).absolute()
    meta = json.loads((folder / "bundle.json").read_text(encoding="utf-8"))
    judged = read_qrels(folder / "qrels.txt")
    qrels = {q: {plain_id(d): g for d, g in judged[trec_id(q)].items()} for q in meta["questions"]}
    runs = {}
    for name, file in meta["runs"]:
        rankings = read_run(folder / file).rankings if (folder / file).stat().st_size > 1 else {}  # "\n": nothing ranked
        runs[name] = {q: [plain_id(d) for d in rankings.get(trec_id(q), [])] for q in qrels}
    golden = (read_csv_text(folder / "questions.csv", dtype=str, keep_default_na=False)
              if (folder / "questions.csv").exists() else None)
    left_out = (read_csv_text(folder / LEFT_OUT, dtype=str, keep_default_na=False) if (folder / LEFT_OUT).exists()
                else pd.DataFrame(columns=LEFT_OUT_COLUMNS))
    chunks = load_chunks(folder / "chunks.jsonl") if (folder / "chunks.jsonl").exists() else None
    scores = read_csv_text(folder / "scores.csv", dtype={"run": str, "question": str, "metric": str})
    abstained = read_csv_text(folder / ABSTENTION, dtype={"run": str}) if (folder / ABSTENTION).exists() else None
    cost = read_csv_text(folder / COST, index_col=0, dtype={"retriever": str}) if (folder / COST).exists() else None
    if cost is not None and meta.get("cost_questions"):
        cost.attrs["questions"] = meta["cost_questions"]
    return Evaluation(runs, qrels, meta["k"], meta["ks"], golden, chunks, dict(meta["about"]), left_out, folder, scores,
                      meta["unit"], abstention=abstained, cost=cost)


# --- how numbers, tables and figures are shown ------------------------------------------------------


def number(value, decimals: int = 3) -> str:
    """A value with ``decimals`` places, never a whole number by rounding alone (0.0004 is "< 0.001": a real
    difference never reads 0.000); NaN is "–"."""
    if value is None or pd.isna(value):
        return "–"
    text = f"{value:.{decimals}f}"
    shown = float(text)
    if value != round(value) and shown == round(shown):
        step = 10 ** -decimals
        return f"< {shown + step:.{decimals}f}" if value > shown else f"> {shown - step:.{decimals}f}"
    return text


def _table(table: pd.DataFrame, index: bool = True) -> str:
    return table.to_html(float_format=number, na_rep="–", index=index, border=0)


def _long(ev: Evaluation, table: pd.DataFrame, name: str, what: str, shown: pd.DataFrame | None = None) -> str:
    """A table (as ``shown``, when given), in part when longer than :data:`SHOWN` rows and then written whole."""
    shown, index = table if shown is None else shown, not isinstance(table.index, pd.RangeIndex)
    if len(table) <= SHOWN:
        return _table(shown, index)
    return f"<p>The first {SHOWN} of {len(table):,} {escape(what)}.{ev.save(name, table)}</p>" + _table(shown.head(SHOWN), index)


def _figure(name: str, *args, **kwargs) -> str:
    """The figure that course.plots' (or abstention's) function ``name`` draws, as an inline PNG. matplotlib loads
    here, not on import: the gate never draws."""
    import matplotlib.pyplot as plt

    from ..analysis import abstention as drawn_here
    from ..course import plots
    draw = getattr(plots, name, None) or getattr(drawn_here, name)
    fig = draw(*args, **kwargs)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


@dataclass
class Section:
    """One section of the report: a title, its HTML (user text escaped) and its tables by name."""

    title: str
    html: str
    tables: dict = field(default_factory=dict)

    def _repr_html_(self) -> str:
        # MathJax must not read "$...$" in a question as mathematics: these classes tell it to keep out.
        return f'<div class="report-section tex2jax_ignore mathjax_ignore"><h2>{escape(self.title)}</h2>\n{self.html}</div>'


# --- the sections ---------------------------------------------------------------------------------


def about_section(ev: Evaluation) -> Section:
    """What was evaluated: the inputs as given, how many questions and items, and the runs."""
    n = len(ev.qrels)
    counts = f"{n:,} question{'s' * (n != 1)} scored"
    if ev.chunks is not None:
        counts += f" over {len(ev.chunks):,} chunks"
        if ev.unit == "document":
            docs = len({c.get("doc", c["id"]) for c in ev.chunks})
            counts += (f" of {docs:,} documents, at the document level (the labels name documents): each run ranks "
                       "documents, each at its best chunk's rank")
    if ev.abstention is not None:
        counts += f" ({int(ev.abstention['unanswerable'].iloc[0]):,} more, marked answerable=no, by abstention: the last section)"
    table = pd.DataFrame({"value": list(ev.about.values())}, index=pd.Index(list(ev.about), name="input"))
    names = ", ".join(f"<b>{escape(n)}</b>" for n in ev.runs)
    return Section("What was evaluated", f"<p>{counts}; {len(ev.runs)} run{'s' * (len(ev.runs) != 1)}: {names}."
                   f" The cut-off the LLM reads is k = {ev.k}; the tables read k = {', '.join(map(str, ev.ks))}.</p>"
                   + _table(table), {"inputs": table})


def left_out_section(ev: Evaluation) -> Section:
    """What the evaluation left out or cannot see, counted by kind, a few of each, all in ``left_out.csv``."""
    if not len(ev.left_out):
        return Section("What was left out", "<p>Nothing: every file was read, and every question scored in every run.</p>")
    parts = []
    for what, rows in ev.left_out.groupby("what", sort=False):
        items = [escape(i) + (f" ({escape(d)})" if d else "") for i, d in zip(rows["item"], rows["detail"])]
        more = f" and {len(items) - SHOWN:,} more" if len(items) > SHOWN else ""
        parts.append(f"<li>{len(items):,} × {escape(what)}: {'; '.join(items[:SHOWN])}{more}</li>")
    where = (f' Every row is in <a href="{LEFT_OUT}">{LEFT_OUT}</a>.' if ev.folder is not None and (ev.folder / LEFT_OUT).exists()
             else "")
    return Section("What was left out", f"<ul>{''.join(parts)}</ul><p>{where}</p>", {"left out": ev.left_out})


def means_table(ev: Evaluation) -> pd.DataFrame:
    """Each registered metric's mean over the questions per run, columns ``(metric, k)``, from ``ev.scores``."""
    means = ev.scores.groupby(["run", "metric", "k"], sort=False)["value"].mean().unstack(["metric", "k"])
    metrics = [m for m in METRICS if m in means.columns.get_level_values("metric")]
    return means.reindex(index=list(ev.runs), columns=pd.MultiIndex.from_product([metrics, ev.ks], names=["metric", "k"]))


def scores_section(ev: Evaluation) -> Section:
    """The mean of every registered metric at every cut-off, per run, and its figure."""
    table = means_table(ev)
    shown = table.T.set_axis([METRICS[m].at(k) for m, k in table.columns]).rename_axis(index="mean of", columns="run")
    n = len(ev.qrels)
    deepest = max((len(r) for run in ev.runs.values() for r in run.values()), default=0)
    deep = [k for k in ev.ks if k > deepest]
    html = (f"<p>Each value is a mean over the {n:,} questions: one question moves a mean of a 0-or-1 value by "
            f"1/{n:,}. MRR@k is the mean reciprocal rank with the ranking cut at k.</p>")
    if deep:
        html += (f"<p>No run ranks more than {deepest:,} {ev.unit}s, so at k = {', '.join(map(str, deep))} every run is scored "
                 f"on what it returned: past its last rank nothing is added (precision@k still divides by k).</p>")
    if ev.folder is not None:
        html += '<p>Every value per run, question, metric and k is in <a href="scores.csv">scores.csv</a>.</p>'
    return Section("The scores", html + _table(shown) + _figure("plot_metrics", table, ev.qrels, ev.k), {"means": table})


def cost_section(ev: Evaluation) -> Section:
    """What each retriever costs to serve beside its scores: time per question and index size (``make evaluate``)."""
    title = "What each retriever costs"
    if ev.cost is None:
        return Section(title, "<p>Not measured: the runs were read from files, not made here (make evaluate measures it).</p>")
    html = (f"<p>Measured on this machine, so it varies from run to run (kept out of scores.csv): each retriever ranked "
            f"{ev.cost.attrs.get('questions', 'the first')} questions one at a time, as a server answers them, after one "
            "warm-up. A stage that reads earlier runs (hybrid reads BM25 and vector) adds their time for the same question. "
            "The index is BM25's index pickled, or vector search's chunk vectors; – where none is kept or the time "
            "cannot be taken one question at a time.</p>")
    return Section(title, html + _table(ev.cost.map(lambda v: number(v, 1))), {"cost": ev.cost})


def ceiling_section(ev: Evaluation) -> Section:
    """The highest mean precision@k any ranking reaches with these labels, beside each run's precision@k."""
    means = means_table(ev)
    table = pd.DataFrame({"ceiling": [precision_ceiling(ev.qrels, k) for k in ev.ks]}, index=pd.Index(ev.ks, name="k"))
    for name in ev.runs:
        table[f"precision@k, {name}"] = means.loc[name, "precision"].values
    counts = pd.Series([len(relevant_ids(g)) for g in ev.qrels.values()])
    ceiling = table.loc[ev.k, "ceiling"]
    html = (f"<p>The questions have from {counts.min():,} to {counts.max():,} relevant {ev.unit}s ({number(counts.mean(), 2)} on "
            f"average); {int((counts == 1).sum()):,} of {len(counts):,} have exactly one. So no ranking can reach a mean "
            f"precision@{ev.k} above <b>{number(ceiling)}</b> here: read each run's precision against that ceiling, not 1.</p>")
    return Section("The precision ceiling", html + _table(table) + _figure("plot_precision_ceiling", ev.qrels, ev.ks,
                                                                              means, k=ev.k), {"ceiling": table})


def ranks_section(ev: Evaluation) -> Section:
    """Where each run puts the first relevant item, and the questions the runs disagree on at k."""
    ranks = first_relevant_ranks(ev.runs, ev.qrels, ev.golden)
    k, n = ev.k, len(ranks)
    counts = pd.DataFrame({name: {"rank 1": int((ranks[name] == 1).sum()), f"in the top {k}": int((ranks[name] <= k).sum()),
                                  "none in its ranking": int(ranks[name].isna().sum())} for name in ev.runs}).T
    if len(ev.runs) > 1:
        picked, what = ranks[disagree_at_k(ranks, k)], f"questions the runs disagree on at k = {k}"
        said = f"{len(picked):,} of {n:,} questions: the runs disagree on whether a relevant {ev.unit} is in the top {k}."
    else:
        picked, what = ranks[ranks[list(ev.runs)[0]].fillna(k + 1) > k], f"questions with no relevant {ev.unit} in the top {k}"
        said = f"{len(picked):,} of {n:,} questions have no relevant {ev.unit} in the top {k}."
    shown = picked if ev.golden is not None else picked.drop(columns=["question", "slice"])
    html = (f"<p>Questions scored: {n:,}. Per run, the questions whose first relevant {ev.unit} is at rank 1, in the top {k}, "
            f"or nowhere in its ranking:</p>" + _table(counts) + _figure("plot_first_relevant_ranks", ranks, k=k)
            + f"<p>{said}{ev.save('ranks.csv', ranks)}</p>" + _long(ev, shown, "ranks_disagree.csv", what))
    return Section(f"Where each run puts the first relevant {ev.unit}", html, {"ranks": ranks, "counts": counts})


MIN_FOR_INTERVAL = 2  # a bootstrap needs two values


def intervals_section(ev: Evaluation) -> Section:
    """Each run's success@k and the registry's tested metrics at k with a 95% interval over the questions (left out
    below two questions)."""
    n = len(ev.qrels)
    if n < MIN_FOR_INTERVAL:
        return Section("How sure: intervals", f"<p>Left out: an interval needs at least {MIN_FOR_INTERVAL} questions, "
                                              f"and this evaluation has {n}.</p>")
    table = interval_table(ev.runs, ev.qrels, k=ev.k)
    others = ", ".join(METRICS[m].at(ev.k) for m in tested_metrics())
    html = (f"<p>Each run's mean at k = {ev.k} with a 95% interval over the {n:,} questions: <i>success</i> is the share of "
            f"questions with a relevant {ev.unit} in the top {ev.k}, then {escape(others)}; a Wilson score interval "
            "where every value is 0 or 1, else a percentile bootstrap. Overlapping intervals do not show that two runs "
            "are equal: the paired tests below compare them question by question.</p>")
    return Section("How sure: intervals", html + _table(table) + _figure("plot_intervals", table), {"intervals": table})


def tests_section(ev: Evaluation, alpha: float = ALPHA) -> Section:
    """Every pair of runs compared question by question on the registry's tested metrics at k, one Holm family; left
    out with one run, or too few questions for any test to reach ``alpha``."""
    n, title = len(ev.qrels), "Is a difference real? Paired tests"
    if len(ev.runs) < 2:
        return Section(title, "<p>One run only: there is no pair to compare.</p>")
    need = fewest_discordant(alpha)
    if n < need:
        return Section(title, f"<p>Left out: no paired test can reach p &lt; {alpha} unless at least {need} questions differ "
                              f"between two runs, and this evaluation has {n} question{'s' * (n != 1)}.</p>")
    metrics = tested_metrics()
    # Each test once with progress (a permutation test of 5,000 questions takes seconds); the table below
    # makes the same calls, whose null distributions paired_test's permutation test keeps (statistics._null).
    wide = {m: values_at_k(ev.runs, ev.qrels, ev.k, m) for m in metrics}
    for m, (a, b) in tqdm([(m, pair) for m in metrics for pair in combinations(ev.runs, 2)], desc="paired tests",
                          unit="test", disable=not ev.progress, leave=False):
        paired_test(wide[m][a], wide[m][b])
    table = paired_comparisons(ev.runs, ev.qrels, k=ev.k, metrics=metrics, alpha=alpha)
    ahead = table[table["verdict"] != "too close to call"]
    verdicts = "".join(f"<li>{escape(METRICS[metric].at(ev.k))}: <b>{escape(a)}</b> ahead of <b>{escape(b)}</b> "
                       f"({more} questions to {fewer})</li>"
                       for (_, metric), row in ahead.iterrows()
                       for a, b, more, fewer in [(row["A"], row["B"], row["wins"], row["losses"]) if row["difference"] > 0
                                                 else (row["B"], row["A"], row["losses"], row["wins"])])
    html = (f"<p>One family of {escape(table.attrs['family'])}, each verdict on Holm-adjusted p at "
            f"α = {alpha}: McNemar's exact test where every value is 0 or 1, else a paired permutation test. "
            + (f"{len(ahead)} verdict{'s' * (len(ahead) != 1)} say one run is ahead:</p><ul>{verdicts}</ul>" if len(ahead)
               else "Every difference is too close to call.</p>"))
    columns = ["mean A", "mean B", "difference", "wins", "ties", "losses", "test", "p", "Holm p", "verdict"]
    shown = table[columns].copy()
    for column in ("p", "Holm p"):  # a p-value is never 0, though a float may underflow to it
        shown[column] = ["< 0.001" if p < 5e-4 else number(p) for p in shown[column]]
    return Section(title, html + _long(ev, table[columns], "paired_tests.csv", "tests", shown), {"tests": table})


def audit_section(ev: Evaluation, alpha: float = ALPHA) -> Section:
    """The golden-set audit in counts, short tables and lists in part; left out without a golden set and chunks."""
    title = "Can this golden set tell the runs apart? An audit"
    if ev.golden is None or ev.chunks is None or "evidence" not in ev.golden:
        return Section(title, "<p>Left out: the audit reads the golden set's evidence strings and the chunks, "
                              "and this evaluation was given qrels.</p>")
    k = min(10, len(ev.chunks))
    audit = golden_set_audit(ev.golden[ev.golden["id"].isin(ev.qrels)], ev.chunks, ev.qrels, ev.runs, k=k, alpha=alpha)
    lists = [(audit.all_first, "audit_all_first.csv", "questions every run answers at rank 1 (they cannot separate runs)"),
             (audit.all_missed, "audit_all_missed.csv", f"questions every run misses in the top {k} (nor can they)"),
             (audit.repeated_evidence, "audit_repeated_evidence.csv", "evidence strings found in more than one chunk"),
             (audit.near_duplicates, "audit_near_duplicates.csv",
              f"pairs of near-duplicate chunks (word {SHINGLE}-shingle Jaccard >= {audit.threshold})"),
             (audit.review, "audit_review.csv", f"unlabelled chunks in some top {k} holding at least "
                                                f"{audit.min_shared:.0%} of the evidence's content words: review them, "
                                                "highest share first")]
    html = "".join(f"<p>{len(t):,} {escape(what)}.</p>" + (_long(ev, t, name, "rows") if len(t) else "")
                   for t, name, what in lists)
    html += (f"<p>Per slice: its questions, the smallest difference in success@{k} an exact McNemar test could call real "
             f"on them (at α = {alpha:.2g}), and the largest difference observed between two runs.</p>"
             + _long(ev, audit.slice_sizes, "audit_slices.csv", "slices")
             + "<p>Per slice, the share of a question's content words its evidence holds (an exact-term slice should "
               "share many, a paraphrase slice few):</p>" + _long(ev, audit.overlap_by_slice, "audit_overlap.csv", "slices"))
    return Section(title, html, audit._asdict())


def abstention_section(ev: Evaluation) -> Section:
    """The questions marked answerable=no, scored by abstention on the top chunk's score; left out without any."""
    title = "Questions the corpus cannot answer: abstention"
    if ev.abstention is None:
        return Section(title, "<p>Left out: no question of the golden set is marked answerable=no.</p>")
    table, first = abstention_table(ev.abstention), ev.abstention.iloc[0]
    html = (f"<p>{int(first['unanswerable']):,} questions are marked answerable=no: recall cannot score them (they have "
            "no relevant chunk), so they are scored by abstention. A system that says \"I don't know\" when its top "
            "chunk's score is below a threshold rightly abstains on some of them, and wrongly on some of the "
            f"{int(first['answerable']):,} answerable questions, losing their evidence when it is in the top {ev.k}. The score is the bundled embedding "
            "model's (all-MiniLM-L6-v2) cosine of the question and the top chunk, one scale for every run. Per run, the highest threshold "
            "that loses at most 10% of the answerable questions:</p>" + _table(table)
            + _figure("plot_abstention", ev.abstention)
            + (f'<p>Every threshold of the curve is in <a href="{ABSTENTION}">{ABSTENTION}</a>.</p>' if ev.folder else ""))
    return Section(title, html, {"abstention": table})


SECTIONS = (about_section, left_out_section, scores_section, cost_section, ceiling_section, ranks_section, intervals_section,
            tests_section, audit_section, abstention_section)

PAGE_STYLE = """body { font: 16px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #111; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 15px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #888; }
img { max-width: 100%; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }"""


def render(ev: Evaluation, progress: bool = False) -> str:
    """The whole report as one HTML page: every section of :data:`SECTIONS` in order; a section that fails is one
    ReportError naming it."""
    parts = []
    for section in tqdm(SECTIONS, desc="report", unit="section", disable=not progress):
        try:
            parts.append(section(ev)._repr_html_())
        except Exception as exc:  # a bug in a section: named, the bundle kept for report.ipynb
            raise ReportError(f"the report stopped in its section {section.__name__} with {type(exc).__name__}: {exc}") from exc
    title = "Evaluation report"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{PAGE_STYLE}</style></head><body><h1>{title}</h1>\n" + "\n".join(parts) + "\n</body></html>\n")


def write_report(folder: Path, ev: Evaluation, output_dir: Path | None = None) -> Path:
    """Render the report into ``folder`` as ``report.html``, beside ``report.ipynb``, the sections as a notebook that
    reads the bundle (unexecuted: open it and run it to see them again)."""
    write_file(folder, "report.ipynb", TEMPLATE.read_bytes(), output_dir)
    return write_file(folder, "report.html", render(ev, ev.progress).encode("utf-8"), output_dir)
