"""The per-question ranks widget: pure functions (filter, view, heat map), then the ipywidgets view."""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping, Sequence

import ipywidgets as w
import matplotlib as mpl
import pandas as pd

from ..checks import check_ids, check_k
from ..corpus import check_chunks
from ..evaluation import disagree_at_k, first_relevant_ranks
from ..metrics import relevant_ids
from ..teaching import evidence_html
from ._view import Debounce, WidgetView, busy_sign, check_start, scroll_panel

ALL_SLICES = "all slices"  # the slice filter's "no filter" choice
HEATMAP_COLUMNS = 24  # questions per block of the heat map: 47 questions make two blocks that fit 930 px
NARROW_COLUMNS = 16  # per block where the widget is narrower than a 24-column block (e.g. at 150% zoom)
FRAME = "3px solid #d00000"  # the picked question's frame in the heat map
BELOW_K, NOT_FOUND = "#f1e4c8", "#ffffff"  # heat map cells: first relevant chunk below k, none ranked
RELEVANT_BADGE = " <span style='background:#1b7837;color:#fff;padding:0 4px'>relevant</span>"


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

    Taught in: notebook 07_widgets (through ranks_widget).
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
        keep &= disagree_at_k(ranks[[*ranks.columns[:3], *retrievers]], disagree_k)
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
        A dict: ``id``, ``question``, ``evidence``, ``slice``, ``n_relevant``, ``k``, ``ranks``
        (``{retriever: rank of the first relevant chunk, or None}``), ``rank_table`` (a DataFrame
        indexed by retriever: first relevant rank, and whether it is in the top k) and ``top``
        (``{retriever: [{"rank", "chunk_id", "relevant", "html"}]}`` for the top k, the evidence
        string marked in relevant chunks with :func:`evidence_html`).

    Raises:
        ValueError: the question id is not in the golden set, k is not an integer >= 1, the chunks
            fail :func:`~retrieval_eval.corpus.check_chunks`, or as :func:`first_relevant_ranks`.

    Taught in: notebook 07_widgets (through ranks_widget).
    """
    k = check_k(k)
    chunks = check_chunks(chunks)
    check_ids([question_id], "question_id is")
    if ranks is None:
        ranks = first_relevant_ranks(runs, qrels, golden)
    row = golden.loc[golden["id"] == question_id]
    if row.empty:
        raise ValueError(f"question {question_id!r} is not in the golden set")
    row = row.iloc[0]
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
                shown = f"<pre>{html.escape(text[:200])}{'…' * (len(text) > 200)}</pre>"
            top[name].append({"rank": rank, "chunk_id": chunk_id, "relevant": hit, "html": shown})
    return {
        "id": question_id, "question": row["question"], "evidence": row["evidence"], "slice": row["slice"],
        "n_relevant": len(relevant), "k": k, "ranks": first, "rank_table": rank_table, "top": top,
    }


def _rank_phrase(rank: int | None, k: int) -> str:
    if rank is None:
        return "no relevant chunk ranked"
    return f"first relevant at rank {rank}" + (" ✔" if rank <= k else f" (below k = {k})")


def question_html(view: Mapping) -> tuple[str, str]:
    """HTML of a :func:`question_view`: (the question and its evidence string, the top-k chunks side by side).

    Each retriever's column is headed by the rank of its first relevant chunk.

    Args:
        view: a :func:`question_view` result.

    Not taught; used by ranks_widget (notebook 07_widgets).
    """
    head = (
        f"<b>{html.escape(view['id'])}</b> ({html.escape(view['slice'])}): <i>{html.escape(view['question'])}</i><br>"
        f"Evidence string: “{html.escape(view['evidence'])}” · {view['n_relevant']} relevant "
        f"chunk{'s' if view['n_relevant'] > 1 else ''}"
    )
    cells = []
    for name, rows in view["top"].items():
        items = "".join(
            f"<div style='margin:4px 0 0 0'><b>{r['rank']}. {html.escape(r['chunk_id'])}</b>"
            f"{RELEVANT_BADGE if r['relevant'] else ''}"
            f"</div>{r['html']}"
            for r in rows
        )
        cells.append(f"<td style='vertical-align:top;text-align:left;width:33%'>"
                     f"<b>{html.escape(name)}</b>: {_rank_phrase(view['ranks'][name], view['k'])}{items}</td>")
    return head, ("<table class='question-chunks' style='width:100%;table-layout:fixed'><tr>"
                  + "".join(cells) + "</tr></table>")


def _cell_colours(rank: float, k: int) -> tuple[str, str]:
    """(background, text colour) of a heat-map cell: blue in the top k (darker = higher), sand below, white none."""
    if pd.isna(rank):
        return NOT_FOUND, "#000"
    if rank <= k:
        background = mpl.colors.to_hex(mpl.colormaps["Blues"](0.95 - 0.35 * (rank - 1) / max(k - 1, 1)))
        return background, "#fff"
    return BELOW_K, "#000"


def rank_heatmap_html(ranks: pd.DataFrame, retrievers: Sequence[str], k: int, selected: str | None = None,
                      matches: Collection[str] | None = None, columns: int = HEATMAP_COLUMNS) -> str:
    """Heat map of the first relevant rank, retrievers × questions, as an HTML table in blocks of ``columns`` questions.

    Each cell shows the rank and carries ``data-q="<question id>"``. Blue cells are in the top k
    (darker = higher up), sand cells below k, white cells ("–") have no relevant chunk in the
    ranking. Text is HTML, so it is as large as the page's text and crisp at any zoom.

    Args:
        ranks: the output of :func:`first_relevant_ranks`.
        retrievers: its retriever columns, one row each.
        k: the cut-off that colours the cells, an integer >= 1.
        selected: a question id to frame (the static copy; the live widget frames with :func:`heatmap_frame_css`).
        matches: question ids to show at full strength, the others faded; ``None`` for all.
        columns: questions per block, an integer >= 1.

    Raises:
        ValueError: k or columns is not an integer >= 1, or ``selected`` is not a question.

    Not taught; used by ranks_widget (notebook 07_widgets).
    """
    k, columns = check_k(k), check_k(columns, "columns")
    ids = list(ranks.index)
    if selected is not None and selected not in ids:
        raise ValueError(f"question {selected!r} is not in the ranks table")
    faded = set() if matches is None else set(ids) - set(matches)
    blocks = []
    for start in range(0, len(ids), columns):
        block = ids[start:start + columns]

        def style(qid: str, extra: str = "") -> str:
            frame = f"outline:{FRAME};outline-offset:-3px;" if qid == selected else ""
            fade = "opacity:0.25;" if qid in faded else ""
            return f" data-q='{html.escape(qid)}' style='{extra}{frame}{fade}'"

        head = "".join(f"<th{style(q, 'text-align:center;font-weight:normal;')}>{html.escape(q)}</th>" for q in block)
        rows = [f"<tr><th></th>{head}</tr>"]
        for name in retrievers:
            cells = []
            for qid in block:
                rank = ranks.loc[qid, name]
                background, colour = _cell_colours(rank, k)
                text = "–" if pd.isna(rank) else str(int(rank))
                cells.append(f"<td{style(qid, f'background:{background};color:{colour};text-align:center;')}>{text}</td>")
            rows.append(f"<tr><th style='text-align:right'>{html.escape(name)}</th>{''.join(cells)}</tr>")
        blocks.append("<table class='rw-heatmap' style='border-collapse:collapse;margin-bottom:4px'>" + "".join(rows) + "</table>")
    return "".join(blocks)


def heatmap_legend(k: int) -> str:
    """The heat map's legend line.

    Args:
        k: the cut-off that colours the cells, an integer >= 1.

    Not taught; used by ranks_widget (notebook 07_widgets).
    """
    top, _ = _cell_colours(1, k)
    swatch = "padding:0 6px;border:1px solid #999"
    return (f"Rank of the first relevant chunk: <span style='background:{top};color:#fff;{swatch}'>in the top {k}</span> "
            f"(darker = higher) · <span style='background:{BELOW_K};{swatch}'>below k</span> · "
            f"<span style='{swatch}'>–</span> none ranked · <span style='outline:{FRAME};padding:0 6px'>picked</span> · "
            "faded = filtered out")


def heatmap_frame_css(scope: str, selected: str | None, faded: Collection[str] = ()) -> str:
    """A ``<style>`` that frames one question's column and fades others in the heat map under ``.scope``:
    what moves in the live widget, a few hundred bytes, while the heat map itself stays.

    Args:
        scope: the CSS class of the heat map's container (without the dot).
        selected: the question id to frame, or ``None``.
        faded: question ids to fade.

    Not taught; used by ranks_widget (notebook 07_widgets).
    """
    rules = []
    if selected is not None:
        rules.append(f".{scope} [data-q='{html.escape(selected)}'] {{ outline: {FRAME}; outline-offset: -3px; }}")
    if faded:
        rules.append(", ".join(f".{scope} [data-q='{html.escape(q)}']" for q in sorted(faded)) + " { opacity: 0.25; }")
    return "<style>" + "\n".join(rules) + "</style>"


class RanksWidget(WidgetView):
    """The per-question ranks widget; build it with :func:`ranks_widget`.

    Controls: ``search`` (Text; updates on a pause in typing), ``slice`` (Dropdown), ``disagree``
    (Checkbox), ``question`` (Dropdown of the matching questions), ``k`` (IntSlider) and
    ``reset_control``. Shown: ``heatmap`` (HTML, redrawn only when k changes), ``frame`` (the
    picked question's frame, a small style), ``head`` and ``top_chunks`` (HTML). ``view`` holds the
    current :func:`question_view`.

    Taught in: notebook 07_widgets (through ranks_widget).
    """

    label = "per-question ranks widget"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None):
        check_start(k, "k", range(1, 11))
        self.runs, self.qrels, self.golden, self.chunks = runs, qrels, golden, check_chunks(chunks)
        self.retrievers = list(runs)
        self.ranks = first_relevant_ranks(runs, qrels, golden)
        if question is not None and question not in self.ranks.index:
            raise ValueError(f"question {question!r} is not in the golden set (e.g. {self.ranks.index[0]!r})")
        if question is None:
            disagreeing = filter_questions(self.ranks, self.retrievers, disagree_k=k)
            question = (disagreeing or list(self.ranks.index))[0]
        self.start = (k, question)
        self._heatmaps = {}
        self.search = w.Text(description="search", placeholder="id or words: q13, battery",
                             continuous_update=True, style={"description_width": "60px"},
                             layout=w.Layout(width="260px"))
        self.slice = w.Dropdown(options=[ALL_SLICES, *sorted(set(self.ranks["slice"]))], description="slice",
                                style={"description_width": "45px"}, layout=w.Layout(width="210px"))
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False,
                             style={"description_width": "75px"}, layout=w.Layout(width="270px"))
        self.disagree = w.Checkbox(description="disagree at k", indent=False, layout=w.Layout(width="max-content"),
                                   tooltip="only the questions where the retrievers disagree about a relevant chunk in the top k")
        self.question = w.Dropdown(description="question", style={"description_width": "75px"})
        self.matches, self.heatmap, self.frame, self.head, self.top_chunks = (w.HTML() for _ in range(5))
        self.reset_control = self.reset_button()
        for widget, name in ((self.search, "ranks-search"), (self.slice, "ranks-slice"), (self.k, "ranks-k"),
                             (self.disagree, "ranks-disagree"), (self.question, "ranks-question"),
                             (self.heatmap, "ranks-heatmap"), (self.head, "ranks-head"),
                             (self.top_chunks, "ranks-chunks"), (self.matches, "ranks-matches")):
            widget.add_class(name)  # CSS classes: handles for the browser test and the benchmark
        self.head.layout.min_height = "4.1em"  # three lines reserved: the chunks below do not jump between questions
        self.frame.layout.display = "none"
        self._quiet = False
        self.question.layout = w.Layout(flex="1 1 auto", width="auto", min_width="0")
        self.ui = self._root([
            w.HBox([self.search, self.slice, self.k, self.disagree, busy_sign()],
                   layout=w.Layout(flex_flow="row wrap", align_items="center")),
            w.HBox([self.question, self.reset_control], layout=w.Layout(width="100%")),
            self.heatmap, self.frame, w.HBox([self.matches]), self.head, scroll_panel(self.top_chunks, 180),
        ], "ranks-widget", concealed=False)
        self.scope = f"rw-heat-{self.ui.model_id[:12]}"
        self.heatmap.add_class(self.scope)
        self._refilter(select=question)
        self.search.observe(Debounce(lambda _text: self._refilter()), names="value")
        for control in (self.slice, self.disagree):
            control.observe(self._refilter, names="value")
        self.k.observe(self._on_k, names="value")
        self.question.observe(self._on_question, names="value")

    def _heatmap_html(self, k: int) -> str:
        """The heat map at cut-off k (drawn once per k), with its legend: blocks of HEATMAP_COLUMNS
        questions, or of NARROW_COLUMNS where the widget is narrower (150% zoom; a CSS container query)."""
        if k not in self._heatmaps:
            self._heatmaps[k] = (
                "<div class='rw-heat-box'>"
                f"<div class='rw-heat-wide'>{rank_heatmap_html(self.ranks, self.retrievers, k)}</div>"
                f"<div class='rw-heat-narrow'>{rank_heatmap_html(self.ranks, self.retrievers, k, columns=NARROW_COLUMNS)}</div>"
                f"</div><div>{heatmap_legend(k)}</div>"
            )
        return self._heatmaps[k]

    def _found(self) -> list[str]:
        return filter_questions(self.ranks, self.retrievers, self.search.value,
                                None if self.slice.value == ALL_SLICES else self.slice.value,
                                self.k.value if self.disagree.value else None)

    def _refilter(self, change=None, select: str | None = None) -> None:
        if self._quiet:
            return
        with self.busy():
            found = self._found()
            select = select or self.question.value
            self._quiet = True
            try:
                self.question.options = [(f"{qid} · {self.ranks.loc[qid, 'question']}", qid) for qid in found]
                self.question.value = select if select in found else (found[0] if found else None)
            finally:
                self._quiet = False
            self.matches.value = f"{len(found)} of {len(self.ranks)} questions match"
            self._show(found)

    def _on_k(self, change) -> None:
        if self.disagree.value:
            self._refilter()
        else:
            with self.busy():
                self._show(self._found())

    def _on_question(self, change) -> None:
        if not self._quiet:
            with self.busy():
                self._show(self._found())

    def _show(self, found: list[str]) -> None:
        qid = self.question.value
        self.heatmap.value = self._heatmap_html(self.k.value)
        self.frame.value = heatmap_frame_css(self.scope, qid, set(self.ranks.index) - set(found))
        if qid is None:
            self.view = None
            self.head.value, self.top_chunks.value = "<b>No question matches.</b>", ""
        else:
            self.view = question_view(qid, self.runs, self.qrels, self.golden, self.chunks, self.k.value, self.ranks)
            self.head.value, self.top_chunks.value = question_html(self.view)

    def reset(self) -> None:
        """Back to the starting question and k, no search, every slice, no disagreement filter.

        Taught in: notebook 07_widgets.
        """
        self._quiet = True
        try:
            self.search.value, self.slice.value, self.disagree.value = "", ALL_SLICES, False
            self.k.value = self.start[0]
        finally:
            self._quiet = False
        self._refilter(select=self.start[1])

    def static_html(self) -> str:
        """The static copy: the heat map (picked question framed, filtered ones faded), its legend, and
        the picked question with each retriever's top k.

        Not taught; used by ranks_widget (notebook 07_widgets).
        """
        found = self._found()
        picture = rank_heatmap_html(self.ranks, self.retrievers, self.k.value, self.question.value, found)
        if self.view is None:
            return picture + heatmap_legend(self.k.value)
        head, top = question_html(self.view)
        return picture + f"<p>{heatmap_legend(self.k.value)}</p><p>{head}</p>" + top


def ranks_widget(runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None) -> RanksWidget:
    """The per-question ranks widget: search and filter questions, see each retriever's top k.

    Ranks come from :func:`first_relevant_ranks`; the overview is :func:`rank_heatmap_html`.

    Args:
        runs, qrels, golden, chunks: as for :func:`question_view`.
        k: the starting cut-off, 1–10.
        question: the question shown first; ``None`` for the first one where the retrievers disagree at k.

    Raises:
        ValueError: k is not an integer from 1 to 10 (the slider's range) or ``question`` is not in
            the golden set: a starting value the controls cannot show is refused, never replaced.

    Returns:
        A :class:`RanksWidget`; display it to show the widget, with its static copy (the heat map
        and the starting question's top-k chunks) in the same output.

    Taught in: notebook 07_widgets.
    """
    return RanksWidget(runs, qrels, golden, chunks, k, question)
