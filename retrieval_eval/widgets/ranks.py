"""The per-question ranks widget: pure functions (filter, view, heat map), then the ipywidgets view."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

from ..checks import check_positive_int
from ..evaluation import disagree_at_k, first_relevant_ranks
from ..metrics import relevant_ids
from ..teaching import evidence_html
from ._view import WidgetView, check_start, redraw, table_html

ALL_SLICES = "all slices"  # the slice filter's "no filter" choice


def filter_questions(ranks: pd.DataFrame, retrievers: Sequence[str], text: str = "", slice_name: str | None = None,
                     disagree_k: int | None = None) -> list[str]:
    """The question ids that match a search, a slice and (optionally) disagreement at k.

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        retrievers: its retriever columns.
        text: matched case-insensitively against the question id and the question text ("" matches all).
        slice_name: a slice of the golden set, or ``None`` for every slice.
        disagree_k: a cut-off k to keep only the questions where :func:`disagree_at_k` holds, or ``None``.

    Returns:
        Matching question ids, in golden-set order.

    Raises:
        ValueError: ``slice_name`` is not a slice of the golden set.

    Taught in: notebook 07_widgets.
    """
    keep = pd.Series(True, index=ranks.index)
    needle = text.strip().lower()
    if needle:
        in_id = ranks.index.str.lower().str.contains(needle, regex=False)
        keep &= in_id | ranks["question"].str.lower().str.contains(needle, regex=False)
    if slice_name is not None:
        if slice_name not in set(ranks["slice"]):
            raise ValueError(f"slice {slice_name!r} is not in the golden set (it has {sorted(set(ranks['slice']))})")
        keep &= ranks["slice"] == slice_name
    if disagree_k is not None:
        keep &= disagree_at_k(ranks, retrievers, disagree_k)
    return list(ranks.index[keep])


def question_view(question_id: str, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping],
                  k: int, ranks: pd.DataFrame | None = None) -> dict:
    """Everything the per-question widget shows for one question.

    Args:
        question_id: a question of the golden set.
        runs: ``{retriever name: {question_id: ranking}}``.
        qrels: ``{question_id: {chunk_id: gain}}``.
        golden: the golden set.
        chunks: the chunks (for their text).
        k: the cut-off: how many chunks of each ranking to show, an integer >= 1.
        ranks: the output of :func:`first_relevant_ranks` (computed when ``None``).

    Returns:
        A dict: ``id``, ``question``, ``evidence``, ``slice``, ``n_relevant``, ``ranks``
        (``{retriever: rank of the first relevant chunk, or None}``), ``rank_table`` (a DataFrame
        indexed by retriever: first relevant rank, and whether it is in the top k) and ``top``
        (``{retriever: [{"rank", "chunk_id", "relevant", "html"}]}`` for the top k, the evidence
        string marked in relevant chunks with :func:`evidence_html`).

    Raises:
        ValueError: the question id is not in the golden set, or k is not an integer >= 1.

    Taught in: notebook 07_widgets.
    """

    k = check_positive_int(k)
    row = golden.loc[golden["id"] == question_id]
    if row.empty:
        raise ValueError(f"question {question_id!r} is not in the golden set")
    row = row.iloc[0]
    if ranks is None:
        ranks = first_relevant_ranks(runs, qrels, golden)
    texts = {c["id"]: c["text"] for c in chunks}
    relevant = relevant_ids(qrels[question_id])
    first = {name: None if pd.isna(r) else int(r) for name, r in ranks.loc[question_id, list(runs)].items()}
    rank_table = pd.DataFrame(
        {
            "rank of the first relevant chunk": [("not found" if r is None else r) for r in first.values()],
            f"in the top {k}?": ["yes" if r is not None and r <= k else "no" for r in first.values()],
        },
        index=pd.Index(list(runs), name=question_id),
    )
    top = {}
    for name, run in runs.items():
        top[name] = []
        for rank, chunk_id in enumerate(run[question_id][:k], start=1):
            hit = chunk_id in relevant
            text = texts[chunk_id]
            if hit:
                shown = evidence_html(text, row["evidence"], max_chars=320)
            else:
                shown = f"<pre style='white-space:pre-wrap'>{html.escape(text[:200])}{'…' * (len(text) > 200)}</pre>"
            top[name].append({"rank": rank, "chunk_id": chunk_id, "relevant": hit, "html": shown})
    return {
        "id": question_id, "question": row["question"], "evidence": row["evidence"], "slice": row["slice"],
        "n_relevant": len(relevant), "ranks": first, "rank_table": rank_table, "top": top,
    }


def question_html(view: Mapping) -> tuple[str, str]:
    """HTML of a :func:`question_view`: (the question with its rank table, the top-k chunks side by side).

    Taught in: notebook 07_widgets.
    """

    head = (
        f"<p><b>{html.escape(view['id'])}</b> ({html.escape(view['slice'])}): "
        f"<i>{html.escape(view['question'])}</i><br>"
        f"Evidence string: <code>{html.escape(view['evidence'])}</code> — {view['n_relevant']} relevant "
        f"chunk{'s' if view['n_relevant'] > 1 else ''}</p>" + table_html(view["rank_table"])
    )
    cells = []
    for name, rows in view["top"].items():
        items = "".join(
            f"<p style='margin:4px 0 0 0'><b>{r['rank']}. {html.escape(r['chunk_id'])}</b>"
            f"{' ✔ relevant' if r['relevant'] else ''}</p>{r['html']}"
            for r in rows
        )
        cells.append(f"<td style='vertical-align:top;text-align:left;width:33%;font-size:12px'>"
                     f"<b>{html.escape(name)}</b>{items}</td>")
    style = "<style>.question-chunks pre {word-break: normal; overflow-wrap: anywhere}</style>"
    return head, (f"{style}<table class='question-chunks' style='width:100%;table-layout:fixed'><tr>"
                  + "".join(cells) + "</tr></table>")


def plot_rank_overview(ranks: pd.DataFrame, retrievers: Sequence[str], selected: str | None = None, k: int = 3):
    """Heat map of the first relevant rank, retrievers × questions, with one question marked.

    Each cell shows the rank. Blue cells are in the top k (darker = higher up), sand cells are
    below k, white cells ("–") have no relevant chunk in the ranking. The selected question's
    column is framed in red.

    Returns:
        The matplotlib Figure.

    Taught in: notebook 07_widgets.
    """

    k = check_positive_int(k)
    values = ranks[list(retrievers)].astype("float").to_numpy().T  # retrievers × questions, NaN = not found
    colours = np.empty(values.shape + (4,))
    for (i, j), v in np.ndenumerate(values):
        if np.isnan(v):
            colours[i, j] = to_rgba("white")
        elif v <= k:
            colours[i, j] = plt.get_cmap("Blues")(0.95 - 0.35 * (v - 1) / max(k - 1, 1))
        else:
            colours[i, j] = to_rgba("#f1e4c8")
    fig, ax = plt.subplots(figsize=(14, 2.3), constrained_layout=True)
    ax.imshow(colours, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, "–" if np.isnan(v) else str(int(v)), ha="center", va="center", fontsize=7,
                color="white" if not np.isnan(v) and v <= k else "black")
    ax.set_yticks(range(len(retrievers)), list(retrievers))
    ax.set_xticks(range(len(ranks)), list(ranks.index), rotation=90, fontsize=7)
    ax.set_xticks(np.arange(len(ranks) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(retrievers) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1)
    ax.tick_params(which="minor", length=0)
    if selected is not None:
        j = list(ranks.index).index(selected)
        ax.add_patch(Rectangle((j - 0.5, -0.5), 1, len(retrievers), fill=False, edgecolor="red", lw=2.5))
        ax.get_xticklabels()[j].set(color="red", fontweight="bold")
    ax.set_title(f"rank of the first relevant chunk, every question: blue = in the top {k} (darker = higher), "
                 "sand = below, – = not found" + (f"; framed: {selected}" if selected is not None else ""),
                 fontsize=9)
    return fig


class RanksWidget(WidgetView):
    """The per-question ranks widget; build it with :func:`ranks_widget`.

    Controls: ``search`` (Text), ``slice`` (Dropdown), ``disagree`` (Checkbox), ``question``
    (Dropdown of the matching questions), ``k`` (IntSlider). Shown: ``matches``, ``rank_table``
    and ``top_chunks`` (HTML) and ``overview`` (Output, the heat map). ``view`` holds the current
    :func:`question_view`.

    Taught in: notebook 07_widgets.
    """

    label = "per-question ranks widget"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None):

        check_start(k, "k", range(1, 11))
        self.runs, self.qrels, self.golden, self.chunks = runs, qrels, golden, chunks
        self.retrievers = list(runs)
        self.ranks = first_relevant_ranks(runs, qrels, golden)
        if question is not None and question not in self.ranks.index:
            raise ValueError(f"question {question!r} is not in the golden set (e.g. {self.ranks.index[0]!r})")
        if question is None:
            disagreeing = filter_questions(self.ranks, self.retrievers, disagree_k=k)
            question = (disagreeing or list(self.ranks.index))[0]
        self.search = w.Text(description="search", placeholder="id or words, e.g. q13 or battery")
        self.slice = w.Dropdown(options=[ALL_SLICES, *sorted(set(self.ranks["slice"]))], description="slice")
        self.disagree = w.Checkbox(description="only where the retrievers disagree at k", indent=False)
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False)
        self.question = w.Dropdown(description="question", layout=w.Layout(width="95%"))
        self.matches, self.rank_table, self.top_chunks, self.overview = w.HTML(), w.HTML(), w.HTML(), w.Output()
        for widget, name in ((self.search, "ranks-search"), (self.slice, "ranks-slice"), (self.k, "ranks-k"),
                             (self.question, "ranks-question"), (self.rank_table, "ranks-table"),
                             (self.top_chunks, "ranks-chunks"), (self.overview, "ranks-overview")):
            widget.add_class(name)  # CSS classes: handles for the browser test
        self._busy = False
        self._refilter(select=question)
        for control in (self.search, self.slice, self.disagree):
            control.observe(self._refilter, names="value")
        self.k.observe(self._on_k, names="value")
        self.question.observe(self._on_question, names="value")
        self.ui = w.VBox([w.HBox([self.search, self.slice, self.k]), w.HBox([self.disagree, self.matches]),
                          self.question, self.rank_table, self.overview, self.top_chunks])
        self.ui.add_class("ranks-widget")

    def _refilter(self, change=None, select: str | None = None) -> None:
        found = filter_questions(self.ranks, self.retrievers, self.search.value,
                                 None if self.slice.value == ALL_SLICES else self.slice.value,
                                 self.k.value if self.disagree.value else None)
        select = select or self.question.value
        self._busy = True
        try:
            self.question.options = [(f"{qid} · {self.ranks.loc[qid, 'question']}", qid) for qid in found]
            self.question.value = select if select in found else (found[0] if found else None)
        finally:
            self._busy = False
        self.matches.value = f"{len(found)} of {len(self.ranks)} questions match"
        self._show()

    def _on_k(self, change) -> None:
        if self.disagree.value:
            self._refilter()
        else:
            self._show()

    def _on_question(self, change) -> None:
        if not self._busy:
            self._show()

    def _show(self) -> None:
        qid = self.question.value
        # The figure first: once the table shows the new question, the heat map already does.
        redraw(self.overview, plot_rank_overview(self.ranks, self.retrievers, qid, self.k.value))
        if qid is None:
            self.view = None
            self.rank_table.value, self.top_chunks.value = "<p><b>No question matches.</b></p>", ""
        else:
            self.view = question_view(qid, self.runs, self.qrels, self.golden, self.chunks, self.k.value, self.ranks)
            self.rank_table.value, self.top_chunks.value = question_html(self.view)

    def static_fallback(self) -> list:

        items = [plot_rank_overview(self.ranks, self.retrievers, self.question.value, self.k.value)]
        if self.view is not None:
            head, top = question_html(self.view)
            items += [HTML(head), HTML(top)]
        return items


def ranks_widget(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None) -> RanksWidget:
    """The per-question ranks widget: search and filter questions, see each retriever's top k.

    Ranks come from :func:`first_relevant_ranks`; the overview is :func:`plot_rank_overview`.

    Args:
        runs, qrels, golden, chunks: as for :func:`question_view`.
        k: the starting cut-off, 1–10.
        question: the question shown first; ``None`` for the first one where the retrievers disagree at k.

    Raises:
        ValueError: k is not an integer from 1 to 10 (the slider's range) or ``question`` is not in
            the golden set: a starting value the controls cannot show is refused, never replaced.

    Returns:
        A :class:`RanksWidget`; display it to show the widget and its static fallback (the heat
        map and the starting question's ranks and top-k chunks).

    Taught in: notebook 07_widgets.
    """
    return RanksWidget(runs, qrels, golden, chunks, k, question)
