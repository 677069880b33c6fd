"""What the classroom widgets share: one look, the keyboard kept inside (:class:`KeyGuard`), predict-then-reveal (no
hidden value is sent while hidden), the change line, fast figures, and a static copy. A widget displays two outputs,
live widget and copy; a style rule shows one: the copy where no live widget renders (GitHub, nbviewer, a changed
kernel), as JupyterLab renders one MIME type per output (a copy inside the widget would never show)."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager

import anywidget
import ipywidgets as w
import numpy as np
import pandas as pd
from IPython.display import display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from ...inputs.text import escape
from ..plots import FONT_PT

MASK = "?"  # what a hidden number shows
PX_PER_INCH, FIGURE_DPI = 100, 150  # FONT_PT at 100 px per inch reads 16.7 px; drawn 1.5 × for big screens
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

STYLE = """
.rw-widget:not(.jupyter-widgets-disconnected) > .rw-kernel-note { display: none; }
.rw-widget { --rw-font: max(16px, min(1.15vw, 1.9vh)); --jp-widgets-font-size: var(--rw-font);
  --jp-widgets-inline-height: calc(2 * var(--rw-font)); --jp-widgets-inline-label-width: 7em;
  --jp-widgets-inline-width: 20em; font-size: var(--rw-font); max-width: 100%; box-sizing: border-box; }
.rw-widget .widget-html-content, .rw-widget .widget-label, .rw-widget .widget-readout, .rw-widget table,
.rw-widget select, .rw-widget button, .rw-widget input, .rw-widget code, .rw-widget mark { font-size: var(--rw-font); }
.rw-widget .widget-html-content { line-height: 1.35; }
.rw-widget table { border-collapse: collapse; }
.rw-widget th, .rw-widget td { padding: 2px 8px; }
.rw-widget .rw-table th { text-align: left; border-bottom: 1px solid #888; }
.rw-widget .rw-table td { text-align: right; white-space: nowrap; }
.rw-widget .rw-table td.rw-left { text-align: left; white-space: normal; overflow-wrap: anywhere; }
.rw-widget tr.rw-chosen td { background: #dbe9f7; }
.rw-widget .rw-changed, .rw-widget tr.rw-changed td { background: #ffe9a8; }
.rw-widget .rw-change { flex: 1 1 18em; min-width: 0; min-height: 2.8em; }
.rw-widget .rw-hint { color: #555; font-style: italic; }
.rw-widget .rw-busy-sign { opacity: 0; color: #a04000; font-weight: bold; }
.rw-widget.rw-busy .rw-busy-sign { opacity: 1; transition: opacity 0s 0.12s; }
.rw-widget .widget-toggle-buttons .widget-toggle-button { width: auto; min-width: 4.5em; padding: 0 10px; }
.rw-widget .widget-toggle-buttons > div { display: flex; flex-wrap: wrap; gap: 2px; }
.rw-widget .widget-toggle-button.mod-active, .rw-widget .jupyter-button.mod-active {
  background: #0b4f9c; color: #fff; font-weight: bold; box-shadow: none; }
.rw-widget .jupyter-button { flex: 0 0 auto; }
.rw-widget img.rw-picture { width: 100%; height: auto; object-fit: contain; object-position: left top;
  max-height: calc(100vh - 290px); }
.rw-widget .rw-clamp { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden;
  overflow-wrap: break-word; }
.rw-widget.rw-full .rw-clamp { display: block; }
.rw-widget .rw-more { display: none; }
.rw-widget.rw-full .rw-more { display: table-row; }
.rw-widget.rw-full .rw-fewer { display: none; }
.rw-widget .rw-relevant { background: #1b7837; color: #fff; padding: 0 4px; }
.rw-widget mark { background: #ffe066; }
.rw-widget .ranks-heatmap { container-type: inline-size; }
.rw-widget .rw-heatmap th, .rw-widget .rw-heatmap td { padding: 1px 1px; min-width: 1.9em; line-height: 1.2; }
.rw-widget .rw-heat-narrow { display: none; }
@container (max-width: 54em) { .rw-widget .rw-heat-wide { display: none; } .rw-widget .rw-heat-narrow { display: block; } }
"""

# Inside the static copy's own output: exactly one of the two outputs shows (see the module's docstring).
FALLBACK_STYLE = """<style>
.jp-OutputArea-child:has(.rw-live) + .jp-OutputArea-child:has(.rw-fallback) { display: none; }
.jp-OutputArea-child:not(:has(.rw-live)):has(+ .jp-OutputArea-child .rw-fallback) { display: none; }
</style>"""
KERNEL_NOTE = ("<div class='rw-kernel-note' style='border-left:4px solid #d9822b;padding:4px 8px;background:#fff4e5;"
               "color:#000'>&#9888; <b>Not live:</b> the {label} needs a running kernel. Run this cell; after a "
               "kernel restart use <i>Kernel &#9656; Restart Kernel and Run All Cells</i>.{more}</div>")
# The copy's note speaks to a reader who may run nothing (GitHub, nbviewer) and to a JupyterLab without the widgets.
STATIC_NOTE = ("<div class='rw-static-note' style='border-left:4px solid #d9822b;padding:4px 8px;background:#fff4e5;"
               "color:#000'>&#9888; <b>A static copy</b> of the {label}{more}: it is live only in JupyterLab with the "
               "notebook's kernel running and the widgets extension loaded (the course's <code>make lab</code>).</div>")

# JupyterLab's notebook shortcuts listen for keydown on the document and match the focused element, so
# the event is stopped at the widget's root. ToggleButtons get the arrow keys of a radio group.
GUARD_ESM = r"""
function guard(root) {
  if (!root || root.dataset.keyGuard) return;
  root.dataset.keyGuard = "1";
  root.addEventListener("keydown", (e) => {
    if (!e.key.startsWith("Arrow") || e.altKey || e.ctrlKey || e.metaKey) return;
    e.stopPropagation();
    const t = e.target, group = t.closest(".widget-toggle-buttons");
    if (group && t.tagName === "BUTTON") {
      const buttons = [...group.querySelectorAll("button")];
      const i = buttons.indexOf(t), j = /Left|Up/.test(e.key) ? i - 1 : i + 1;
      if (j >= 0 && j < buttons.length) { buttons[j].click(); buttons[j].focus(); }
      e.preventDefault();
      return;
    }
    if (!t.matches("select, input:not([type=checkbox]):not([type=button]), textarea, .noUi-handle, [contenteditable]"))
      e.preventDefault();
  });
}
export default {
  render({ el }) {
    let tries = 0;
    const attach = () => {
      const root = el.closest(".rw-widget");
      if (root) guard(root); else if (tries++ < 300) requestAnimationFrame(attach);
    };
    attach();
  }
};
"""


class KeyGuard(anywidget.AnyWidget):
    """An invisible child of every classroom widget: keeps arrow keys inside it and loads the style sheet."""

    _esm = GUARD_ESM
    _css = STYLE + ".rw-key-guard { display: none; }"


def check_start(value, name: str, allowed: range) -> int:
    """A control's starting value, refused (not moved into range, as ipywidgets would) when it cannot show it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in allowed:
        raise ValueError(f"{name} = {value!r} is outside the slider's range {allowed.start} to {allowed[-1]}")
    return int(value)


def changes(before: Mapping[str, float] | None, after: Mapping[str, float], digits: int = 3) -> dict[str, str]:
    """``{name: "0.500 → 1.000"}`` for the values whose shown value differs from ``before``'s."""
    def shown(value) -> str:
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    return {name: f"{shown(before[name])} → {shown(new)}" for name, new in after.items()
            if before and name in before and shown(before[name]) != shown(new)}


def shown_or_mask(text: str, shown: bool) -> str:
    return text if shown else MASK


def table_html(table: pd.DataFrame, shown: bool, formats: Mapping[str, Callable] | None = None,
               highlight: Collection = ()) -> str:
    """A small DataFrame as an HTML table, the index as the first column; cell values "?" until ``shown``."""
    formats = formats or {}
    head = "".join(f"<th>{escape(c)}</th>" for c in [table.index.name or "", *table.columns])
    rows = []
    for index, row in table.iterrows():
        cells = [f"<td class='rw-left'><b>{escape(index)}</b></td>"]
        for column, value in row.items():
            if pd.isna(value):
                text = ""
            else:
                text = formats[column](value) if column in formats else f"{value:.3f}" if isinstance(value, float) else escape(value)
            cells.append(f"<td>{shown_or_mask(text, shown) if text else ''}</td>")
        marker = " class='rw-chosen'" if index in highlight else ""
        rows.append(f"<tr{marker}>{''.join(cells)}</tr>")
    return f"<table class='rw-table'><tr>{head}</tr>{''.join(rows)}</table>"


def details(body: str, summary: str = "Predict first, then click to show the numbers") -> str:
    """Folded HTML: predict-then-reveal in a static copy."""
    return f"<details><summary>{escape(summary)}</summary>{body}</details>"


class FastFigure:
    """A matplotlib figure redrawn by blitting: all but ``values`` and ``moving`` is drawn once; :meth:`png` draws
    ``moving`` and either ``values`` (shown) or ``slots`` (hidden: where the class predicts) on top."""

    def __init__(self, fig, values, moving=(), slots=()):
        self.fig, self.values, self.moving, self.slots = fig, list(values), list(moving), list(slots)
        for artist in self.values + self.moving + self.slots:
            artist.set_animated(True)
        fig.set_dpi(FIGURE_DPI)
        self.canvas, self.background = FigureCanvasAgg(fig), None

    def png(self, shown: bool) -> bytes:
        if self.background is None:
            self.canvas.draw()
            self.background = self.canvas.copy_from_bbox(self.fig.bbox)
        self.canvas.restore_region(self.background)
        for artist in self.moving + (self.values if shown else self.slots):
            if artist.get_visible():
                self.fig.draw_artist(artist)
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(self.canvas.buffer_rgba())[..., :3]).save(buffer, format="png", compress_level=1,
                                                                     dpi=(FIGURE_DPI, FIGURE_DPI))
        return buffer.getvalue()

    @property
    def width_px(self) -> int:
        """The width the figure is drawn for, in CSS px (its text then reads 16.7 px)."""
        return round(self.fig.get_figwidth() * PX_PER_INCH)


def slot_marks(ax, xs, y: float = 0.5) -> list:
    """Prediction slots for a line chart: a "?" over each x, on a dotted guide."""
    marks = [ax.axvline(x, color="0.75", ls=":", lw=1.2) for x in xs]
    return marks + [ax.text(x, y, MASK, ha="center", va="center", color="0.45", fontsize=FONT_PT + 2) for x in xs]


def beside_a_figure(controls: list) -> tuple[w.HBox, w.Image]:
    """The controls in a column beside an Image for a :class:`FastFigure` PNG (as wide as its column, never taller
    than the window), wrapping under it on a narrow screen: (the row, the Image)."""
    image = w.Image(format="png", layout=w.Layout(width="100%", height="auto", margin="0"))
    image.add_class("rw-picture")
    column = w.VBox(controls, layout=w.Layout(flex="0 1 25em", min_width="19em"))
    return w.HBox([column, w.Box([image], layout=w.Layout(flex="1 1 24em", min_width="0"))],
                  layout=w.Layout(flex_flow="row wrap", width="100%", align_items="flex-start")), image


def png_html(png: bytes, width_px: int, alt: str) -> str:
    return (f"<img src='data:image/png;base64,{base64.b64encode(png).decode('ascii')}' width='{width_px}' "
            f"alt='{escape(alt)}'>")


class WidgetView:
    """Base of the classroom widgets. A subclass builds its controls and outputs, then calls :meth:`_build`; it
    defines :meth:`_compute` (the state, with ``values``: what the change line follows), :meth:`_draw` and
    :meth:`static_html`."""

    label = "widget"
    _quiet = False  # True while reset puts the controls back: their observers wait
    new_round: tuple = ()  # controls whose change starts a new round of predictions (another question, retriever)

    def _build(self, name: str, rows: list, controls: list) -> None:
        """The root box (``rows`` must hold :meth:`reveal_row`), the note and the key guard; observe ``controls``,
        remember their start, draw."""
        self.shown, self.baseline, self.since = False, None, "the start"
        self.start = {control: control.value for control in controls}
        self.reveal.observe(self._on_reveal, names="value")
        self.reset_control.on_click(lambda _button: self.reset())
        guard = KeyGuard()
        guard.add_class("rw-key-guard")
        note = w.HTML(KERNEL_NOTE.format(label=escape(self.label), more=""))
        note.add_class("rw-kernel-note")
        self.ui = w.VBox([*rows, note, guard], layout=w.Layout(width="100%"))
        for cls in ("rw-widget", "rw-live", name):
            self.ui.add_class(cls)
        for control in controls:
            control.observe(self._update, names="value")
        self._update()

    def reveal_row(self, *extra) -> w.HBox:
        """The row of "show the numbers", "reset", ``extra`` controls, the busy sign and the change line."""
        self.reveal = w.ToggleButton(value=False, description="show the numbers", icon="eye",
                                     layout=w.Layout(width="max-content"))
        self.reset_control = w.Button(description="reset", icon="undo", layout=w.Layout(width="max-content"))
        self.change = w.HTML()
        self._add_classes("rw", "reveal", "change", reset_control="rw-reset")
        busy = w.HTML("<span class='rw-busy-sign'>&#8987; updating…</span>", layout=w.Layout(width="max-content"))
        return w.HBox([self.reveal, self.reset_control, *extra, self.change, busy],
                      layout=w.Layout(flex_flow="row wrap", align_items="center", width="100%"))

    def _add_classes(self, prefix: str, *names: str, **classes: str) -> None:
        """The class ``prefix-name`` (``_`` as ``-``) on each control named, else the one given (tests find them so)."""
        for name, cls in ({name: f"{prefix}-{name.replace('_', '-')}" for name in names} | classes).items():
            getattr(self, name).add_class(cls)

    def _update(self, change=None) -> None:
        if self._quiet:
            return
        if change is not None and change["owner"] in self.new_round:
            self.baseline, self.since = None, f"the {change['owner'].description or 'question'} was changed"
        with self._busy():
            self.state = self._compute()
            self.baseline = self.state["values"] | (self.baseline or {})  # a value that appears counts from here
            self._draw(self.shown)
            self.change.value = self._change_html()

    def _on_reveal(self, change) -> None:
        self.shown = change["new"]
        self.reveal.description = "hide the numbers" if self.shown else "show the numbers"
        if not self._quiet:
            with self._busy():
                if not self.shown:  # the class predicts again, from what it has just seen
                    self.baseline, self.since = self.state["values"], "the numbers were hidden"
                self._draw(self.shown)
                self.change.value = self._change_html()

    @contextmanager
    def _busy(self) -> Iterator[None]:
        """The class ``rw-busy`` on the widget while the kernel redraws it: "updating…" shows after 0.12 s, and a
        browser test waits for the class to come and go before it reads a number."""
        self.ui.add_class("rw-busy")
        try:
            yield
        finally:
            self.ui.remove_class("rw-busy")

    def moved(self) -> dict[str, str]:
        """What moved since the start of this round of predictions, "old → new" (shown with the numbers)."""
        return changes(self.baseline, self.state["values"])

    def _change_html(self) -> str:
        if not self.state["values"]:
            return ""
        if not self.shown:
            return "<span class='rw-hint'>Predict first: what changed shows here with the numbers.</span>"
        moved = self.moved()
        if not moved:
            return f"<span class='rw-hint'>Nothing has moved since {self.since}.</span>"
        return (f"<span class='rw-changed'>Since {self.since}: "
                + ", ".join(f"<b>{escape(name)}</b> {change}" for name, change in moved.items()) + "</span>")

    def reset(self) -> None:
        """Every control back to its start, the numbers hidden, the change line counting from there."""
        self._quiet = True
        try:
            for control, value in self.start.items():
                control.value = value
            self.reveal.value = False
            self._restore()
        finally:
            self._quiet = False
        self.shown, self.baseline, self.since = False, None, "the start"
        self._update()

    def _restore(self) -> None:
        """Anything besides the controls that reset puts back (a widget's own state)."""

    def _ipython_display_(self):
        live = self.ui._repr_mimebundle_()
        display({WIDGET_MIME: live[WIDGET_MIME], "text/plain": ""}, raw=True)
        label = escape(self.label)
        display({"text/html": f"<style>{STYLE}</style>{FALLBACK_STYLE}<div class='rw-fallback'>"
                              f"{STATIC_NOTE.format(label=label, more=', at its starting values')}"
                              f"<div class='rw-widget rw-full'>{self.static_html()}</div></div>",
                 "text/plain": f"[{self.label}: a live widget when the notebook runs with a kernel]"}, raw=True)


class Debounce:
    """Call ``fn(value)`` once typing pauses for ``wait`` s (on the kernel's loop; at once without a loop)."""

    def __init__(self, fn: Callable, wait: float = 0.3):
        self.fn, self.wait, self.handle = fn, wait, None

    def __call__(self, change) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fn(change["new"])
            return
        self.handle = loop.call_later(self.wait, self.fn, change["new"])
