"""The per-question ranks widget: every question's first relevant rank per run (a heat map), and one question's
top k chunks from each run side by side."""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Mapping, Sequence

import anywidget
import ipywidgets as w
import matplotlib as mpl
import pandas as pd
import traitlets

from ...core.checks import check_k, check_runs
from ...core.evaluation import disagree_at_k, first_relevant_ranks, run_columns
from ...core.metrics import relevant_ids
from ...inputs.chunks import check_chunks
from ...inputs.text import escape, locate_evidence
from ._view import MASK, Debounce, WidgetView, check_start, details

ALL_SLICES = "all slices"
HEATMAP_COLUMNS, NARROW_COLUMNS = 24, 16  # questions per block: 24 fit 1366 px, 16 fit 125% zoom
FRAME = "3px solid #d00000"  # the picked question
BELOW_K, NOT_FOUND, HIDDEN = "#f1e4c8", "#ffffff", "#eeeeee"
SNIPPET_CHARS = 600  # text sent per chunk: two lines show until "full texts"


def filter_questions(ranks: pd.DataFrame, text: str = "", slice_name: str | None = None,
                     disagree_k: int | None = None) -> list[str]:
    """The question ids whose id or text holds ``text``, in ``slice_name``, and (``disagree_k``) where the runs
    disagree about a relevant chunk in the top k."""
    keep = pd.Series(True, index=ranks.index)
    needle = text.strip().lower()
    if needle:
        keep &= ranks.index.str.lower().str.contains(needle, regex=False) | ranks["question"].str.lower().str.contains(
            needle, regex=False)
    if slice_name is not None:
        if slice_name not in set(ranks["slice"]):
            raise ValueError(f"slice {slice_name!r} is not in the golden set (it has {sorted(set(ranks['slice']))})")
        keep &= ranks["slice"] == slice_name
    if disagree_k is not None:
        keep &= disagree_at_k(ranks, disagree_k)
    return list(ranks.index[keep])


def question_view(question_id: str, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping],
                  k: int, ranks: pd.DataFrame) -> dict:
    """One question: text, evidence, slice, each run's first relevant rank (None: none ranked) and top k chunks."""
    k = check_k(k)
    if question_id not in ranks.index:
        raise ValueError(f"question {question_id!r} is not in the golden set")
    row = golden.set_index("id").loc[question_id]
    texts, relevant = {c["id"]: c["text"] for c in chunks}, relevant_ids(qrels[question_id])
    top = {name: [{"rank": rank, "chunk_id": c, "relevant": c in relevant, "text": texts[c]}
                  for rank, c in enumerate(run[question_id][:k], start=1)] for name, run in runs.items()}
    first = {name: None if pd.isna(r) else int(r) for name, r in ranks.loc[question_id, list(runs)].items()}
    return {"id": question_id, "question": row["question"], "evidence": row["evidence"], "slice": ranks.loc[question_id, "slice"],
            "n_relevant": len(relevant), "k": k, "ranks": first, "top": top}


def snippet_html(text: str, evidence: str | None = None) -> str:
    """A chunk's text as one paragraph, escaped; with ``evidence``, from the evidence on, marked."""
    span = locate_evidence(text, evidence) if evidence else None
    flat = lambda part: re.sub(r"\s+", " ", part)  # noqa: E731
    if span is None:
        return escape(flat(text)[:SNIPPET_CHARS])
    before, after = flat(text[:span[0]]), flat(text[span[1]:])
    before = "… " if before.strip() else ""
    return f"{before}<mark>{escape(flat(text[span[0]:span[1]]))}</mark>{escape(after[:SNIPPET_CHARS])}"


def _rank_phrase(rank: int | None, k: int, shown: bool) -> str:
    if not shown:
        return f"first relevant at rank {MASK}"
    if rank is None:
        return "no relevant chunk ranked"
    return f"first relevant at rank {rank}" + (" ✔" if rank <= k else f" (below k = {k})")


def question_html(view: Mapping, shown: bool) -> tuple[str, str]:
    """(the question's header, each run's top k chunks side by side). Hidden: no rank, no relevant mark, no
    evidence marked: the class judges the chunks first."""
    n = view["n_relevant"]
    head = (f"<b>{escape(view['id'])}</b> · evidence string “{escape(view['evidence'])}” · {n} relevant "
            f"chunk{'s' if n > 1 else ''} · slice {escape(view['slice'])}")
    columns = []
    for name, rows in view["top"].items():
        items = "".join(
            f"<div class='rw-clamp'><b>{r['rank']}. {escape(r['chunk_id']).replace('_', '_<wbr>')}</b>"
            f"{' <span class=rw-relevant>relevant</span>' if shown and r['relevant'] else ''} "
            f"{snippet_html(r['text'], view['evidence'] if shown and r['relevant'] else None)}</div>" for r in rows)
        columns.append(f"<div style='min-width:0'><b>{escape(name)}</b>: {_rank_phrase(view['ranks'][name], view['k'], shown)}"
                       f"{items}</div>")
    return head, ("<div class='question-chunks' style='display:grid;gap:2px 16px;"
                  f"grid-template-columns:repeat(auto-fit,minmax(260px,1fr))'>{''.join(columns)}</div>")


def _cell_colours(rank, k: int) -> tuple[str, str]:
    if pd.isna(rank):
        return NOT_FOUND, "#000"
    if rank <= k:
        return mpl.colors.to_hex(mpl.colormaps["Blues"](0.95 - 0.35 * (rank - 1) / max(k - 1, 1))), "#fff"
    return BELOW_K, "#000"


def rank_heatmap_html(ranks: pd.DataFrame, k: int, shown: bool, selected: str | None = None,
                      matches: Collection[str] | None = None, columns: int = HEATMAP_COLUMNS) -> str:
    """The first relevant rank, runs × questions, as HTML tables of ``columns`` questions: blue in the top k
    (darker = higher), sand below k, white "–" none ranked; hidden, every cell "?". Cells carry ``data-q``."""
    k, columns = check_k(k), check_k(columns, "columns")
    ids, runs = list(ranks.index), run_columns(ranks)
    faded = set() if matches is None else set(ids) - set(matches)
    blocks = []
    for start in range(0, len(ids), columns):
        block = ids[start:start + columns]

        def cell(tag: str, qid: str, style: str, text: str) -> str:
            extra = (f"outline:{FRAME};outline-offset:-3px;" if qid == selected else "") + ("opacity:0.25;" if qid in faded else "")
            return f"<{tag} data-q='{escape(qid)}' style='text-align:center;{style}{extra}'>{text}</{tag}>"

        rows = ["<tr><th></th>" + "".join(cell("th", q, "font-weight:normal;", escape(q)) for q in block) + "</tr>"]
        for name in runs:
            cells = []
            for qid in block:
                rank = ranks.loc[qid, name]
                background, colour = _cell_colours(rank, k) if shown else (HIDDEN, "#555")
                text = MASK if not shown else "–" if pd.isna(rank) else str(int(rank))
                cells.append(cell("td", qid, f"background:{background};color:{colour};", text))
            rows.append(f"<tr><th style='text-align:right'>{escape(name)}</th>{''.join(cells)}</tr>")
        blocks.append(f"<table class='rw-heatmap' style='margin-bottom:4px'>{''.join(rows)}</table>")
    return "".join(blocks)


def heatmap_legend(k: int, shown: bool) -> str:
    swatch = "padding:0 6px;border:1px solid #999"
    picked = f"<span style='outline:{FRAME};padding:0 6px'>picked</span> · faded = filtered out"
    if not shown:
        return f"Rank of the first relevant chunk: {MASK} until you show the numbers · {picked}"
    return (f"Rank of the first relevant chunk: <span style='background:{_cell_colours(1, k)[0]};color:#fff;{swatch}'>"
            f"in the top {k}</span> (darker = higher) · <span style='background:{BELOW_K};{swatch}'>below k</span> · "
            f"<span style='{swatch}'>–</span> none ranked · {picked}")


def heatmap_frame_css(scope: str, selected: str | None, faded: Collection[str] = ()) -> str:
    """A small ``<style>`` that frames the picked question and fades the filtered ones in the heat map under ``.scope``."""
    rules = [f".{scope} [data-q='{escape(selected)}'] {{ outline: {FRAME}; outline-offset: -3px; }}"] if selected else []
    if faded:
        rules.append(", ".join(f".{scope} [data-q='{escape(q)}']" for q in sorted(faded)) + " { opacity: 0.25; }")
    return "<style>" + "\n".join(rules) + "</style>"


class Picker(anywidget.AnyWidget):
    """An invisible child that sends the question id of a heat-map cell clicked in its widget (``picked``)."""

    _esm = """
export default {
  render({ model, el }) {
    let tries = 0;
    const attach = () => {
      const root = el.closest(".rw-widget");
      if (!root) { if (tries++ < 300) requestAnimationFrame(attach); return; }
      root.addEventListener("click", (e) => {
        const cell = e.target.closest(".ranks-heatmap [data-q]");
        if (!cell) return;
        model.set("picked", ""); model.set("picked", cell.dataset.q); model.save_changes();
      });
    };
    attach();
  }
};"""
    _css = ".ranks-heatmap [data-q] { cursor: pointer; } .ranks-picker { display: none; }"
    picked = traitlets.Unicode("").tag(sync=True)


class RanksWidget(WidgetView):
    """The per-question ranks widget: filter the questions, see each run's first relevant rank (all questions)
    and top k chunks (the picked one: from the list, or a click on its column); starts where the runs disagree at k,
    unless ``question`` is given."""

    label = "per-question ranks widget"

    def __init__(self, runs: Mapping, qrels: Mapping, golden: pd.DataFrame, chunks: Sequence[Mapping], k: int = 3,
                 question: str | None = None):
        check_start(k, "k", range(1, 11))
        self.runs, self.qrels = check_runs(runs, qrels, {c["id"] for c in check_chunks(chunks)})
        self.golden, self.chunks = golden, chunks
        self.ranks = first_relevant_ranks(self.runs, self.qrels, golden)
        if question is not None and question not in self.ranks.index:
            raise ValueError(f"question {question!r} is not in the golden set (e.g. {self.ranks.index[0]!r})")
        question = question or (filter_questions(self.ranks, disagree_k=k) or list(self.ranks.index))[0]
        self._heatmaps = {}
        self.search = w.Text(description="search", placeholder="id or words", style={"description_width": "3.5em"},
                             layout=w.Layout(width="13em"))
        self.slice = w.Dropdown(options=[ALL_SLICES, *sorted(set(self.ranks["slice"]))], description="slice",
                                style={"description_width": "2.5em"}, layout=w.Layout(width="12.5em"))
        self.k = w.IntSlider(value=k, min=1, max=10, description="cut-off k", continuous_update=False,
                             style={"description_width": "4.5em"}, layout=w.Layout(width="16em"))
        self.disagree = w.Checkbox(description="disagree at k", indent=False, layout=w.Layout(width="max-content"))
        self.question = w.Dropdown(layout=w.Layout(flex="1 1 18em", width="auto", min_width="0"))
        self.full = w.ToggleButton(description="full texts", layout=w.Layout(width="max-content"))
        self.matches, self.heatmap, self.frame, self.head, self.top_chunks = (w.HTML() for _ in range(5))
        self._add_classes("ranks", "search", "slice", "k", "disagree", "question", "full", "heatmap", "head", "matches",
                          top_chunks="ranks-chunks")
        self.frame.layout.display = "none"
        self.full.observe(lambda change: (self.ui.add_class if change["new"] else self.ui.remove_class)("rw-full"), "value")
        self._refilter(select=question, quiet=True)
        self.picker = Picker()
        self.picker.add_class("ranks-picker")
        self.picker.observe(lambda change: self.pick(change["new"]), names="picked")
        rows = [w.HBox([self.search, self.slice, self.disagree, self.k, self.matches],
                       layout=w.Layout(flex_flow="row wrap", align_items="center")),
                self.reveal_row(self.full, self.question), self.heatmap, self.frame, self.head, self.top_chunks, self.picker]
        self.new_round, self.first_question = (self.question,), question
        self.scope = f"rw-heat-{secrets.token_hex(6)}"
        self.heatmap.add_class(self.scope)
        self._build("ranks-widget", rows, [self.k, self.question])
        self.change.layout.display = "none"  # nothing to follow: the ranks do not move
        del self.start[self.question]  # put back by _restore, once the filters are
        self.search.observe(Debounce(lambda _text: self._refilter()), names="value")
        for control in (self.slice, self.disagree):
            control.observe(self._refilter, names="value")

    def pick(self, qid: str) -> None:
        """Show question ``qid``, as a click on its column does; the filters are cleared when they hide it."""
        if qid not in self.ranks.index:
            return
        if qid in self._found():
            self.question.value = qid
            return
        was, self._quiet = self._quiet, True
        try:
            self.search.value, self.slice.value, self.disagree.value = "", ALL_SLICES, False
        finally:
            self._quiet = was
        self._refilter(select=qid)

    def _found(self) -> list[str]:
        return filter_questions(self.ranks, self.search.value, None if self.slice.value == ALL_SLICES else self.slice.value,
                                self.k.value if self.disagree.value else None)

    def _refilter(self, change=None, select: str | None = None, quiet: bool = False) -> None:
        """Refill the question list from the filters, keeping the picked question when it still matches."""
        found, select = self._found(), select or self.question.value
        was, self._quiet = self._quiet, True
        try:
            self.question.options = [(f"{qid} · {self.ranks.loc[qid, 'question']}", qid) for qid in found]
            self.question.value = select if select in found else (found[0] if found else None)
        finally:
            self._quiet = was
        self.matches.value = f"{len(found)} of {len(self.ranks)} match"
        if not quiet:
            self._update()

    def _restore(self) -> None:
        self.search.value, self.slice.value, self.disagree.value, self.full.value = "", ALL_SLICES, False, False
        self._refilter(select=self.first_question, quiet=True)

    def _compute(self) -> dict:
        if self.disagree.value:
            self._refilter(quiet=True)  # disagreement at k depends on k
        qid = self.question.value
        view = None if qid is None else question_view(qid, self.runs, self.qrels, self.golden, self.chunks, self.k.value,
                                                      self.ranks)
        return {"view": view, "found": self._found(), "values": {}}

    def _draw(self, shown: bool) -> None:
        key = (self.k.value if shown else None)
        if key not in self._heatmaps:
            self._heatmaps[key] = (
                f"<div class='rw-heat-wide'>{rank_heatmap_html(self.ranks, self.k.value, shown)}</div>"
                f"<div class='rw-heat-narrow'>{rank_heatmap_html(self.ranks, self.k.value, shown, columns=NARROW_COLUMNS)}</div>"
                f"<div>{heatmap_legend(self.k.value, shown)}</div>")
        self.heatmap.value = self._heatmaps[key]
        self.frame.value = heatmap_frame_css(self.scope, self.question.value, set(self.ranks.index) - set(self.state["found"]))
        view = self.state["view"]
        self.head.value, self.top_chunks.value = ("<b>No question matches.</b>", "") if view is None else question_html(view, shown)

    def static_html(self) -> str:
        view, found = self.state["view"], self.state["found"]
        shown = rank_heatmap_html(self.ranks, self.k.value, True, self.question.value, found)
        head = f"<p>{question_html(view, False)[0]}</p>" if view is not None else ""
        return (head + "<p><b>Predict:</b> where does each run put the first relevant chunk, question by question?</p>"
                + details(shown + f"<p>{heatmap_legend(self.k.value, True)}</p>"))


ranks_widget = RanksWidget
