"""What the classroom widgets share: one display, big type, a keyboard that stays inside, and the cues.

- **One output per widget.** :class:`WidgetView` displays the live widget and its static copy in one
  display bundle: JupyterLab with a kernel shows only the live widget; GitHub, nbviewer, an untrusted
  notebook and nbconvert show the static copy (``text/html``). A small note after it, hidden by CSS
  while the widget is live, tells the class what to do when the kernel is gone.
- **Big type.** The root box carries the class ``rw-widget``, whose CSS variables bring every control
  and table to 16 px; figures are drawn at their display width (1 inch = 100 CSS px) with 12-pt text,
  saved at 200 dpi and shown at that width, so 12 pt reads as 16.7 px.
- **Keyboard.** :class:`KeyGuard`, an invisible anywidget child, stops arrow keys at the widget's root,
  so JupyterLab's command-mode shortcuts (ArrowDown = next cell) never fire from a focused control.
- **Cues.** A busy class while the kernel updates, numbers hidden until "show the numbers"
  (predict, then reveal), changes marked "old → new", a reset button, scrolling panels that do not
  scroll the notebook, and search that waits for a pause in typing (:class:`Debounce`).

Measured in JupyterLab 4.6 and headless Chromium at 1366×768: see ``python benchmarks/bench.py widgets``
and ``tests/test_browser.py``.
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
from collections.abc import Callable, Collection, Mapping
from contextlib import contextmanager

import anywidget
import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

PX_PER_INCH = 100  # figures are drawn at figsize = display width in CSS px / 100
FIGURE_DPI = 200  # saved at 2 × the display resolution: crisp on projectors and 2× screens
FONT_PT = 12  # figure text; at PX_PER_INCH it shows at 12 × 100 / 72 = 16.7 CSS px
CHANGE_MARK = "→"

STYLE = """
.rw-widget:not(.jupyter-widgets-disconnected) > .rw-kernel-note { display: none; }
.rw-widget {
  --jp-widgets-font-size: 16px;
  --jp-widgets-inline-height: 32px;
  --jp-widgets-inline-label-width: 120px;
  --jp-widgets-inline-width: 320px;
  font-size: 16px;
}
.rw-widget .widget-html-content, .rw-widget .widget-label, .rw-widget .widget-readout,
.rw-widget .widget-label-basic, .rw-widget .jp-RenderedHTMLCommon, .rw-widget table, .rw-widget select,
.rw-widget button, .rw-widget input { font-size: 16px; }
.rw-widget .widget-html-content { line-height: 1.35; }
.rw-widget table { border-collapse: collapse; }
.rw-widget .rw-heatmap th, .rw-widget .rw-heatmap td { padding: 1px 2px; line-height: 1.35; min-width: 2em; }
.rw-widget .rw-heat-box { container-type: inline-size; overflow-x: auto; }
.rw-widget .rw-heat-narrow { display: none; }
@container (max-width: 880px) {
  .rw-widget .rw-heat-wide { display: none; }
  .rw-widget .rw-heat-narrow { display: block; }
}
.rw-widget th, .rw-widget td { padding: 2px 8px; }
.rw-widget .rw-table th { text-align: left; border-bottom: 1px solid #888; }
.rw-widget .rw-table td { text-align: right; white-space: nowrap; }
.rw-widget .rw-table td.rw-left { text-align: left; white-space: normal; }
.rw-widget .rw-scroll th { position: sticky; top: 0; z-index: 1; background: var(--jp-layout-color0, #fff); }
.rw-widget .rw-scroll { overscroll-behavior: contain; border: 1px solid #bbb; }
.rw-widget .rw-num { display: inline-block; min-width: 3ch; position: relative; }
.rw-widget.rw-concealed .rw-num { visibility: hidden; }
.rw-widget.rw-concealed .rw-num::before { content: "?"; visibility: visible; position: absolute; left: 0; }
.rw-widget .rw-changed { background: #ffe9a8; }
.rw-widget tr.rw-chosen td { background: #dbe9f7; }
.rw-widget .rw-busy-sign { opacity: 0; color: #a04000; font-weight: bold; }
.rw-widget.rw-busy .rw-busy-sign { opacity: 1; transition: opacity 0s 0.12s; }
.rw-widget .widget-toggle-button.mod-active, .rw-widget .jupyter-button.mod-active {
  background: #0b4f9c; color: #fff; font-weight: bold; box-shadow: none; }
.rw-widget .rw-sentence { min-height: 2.7em; }
.rw-widget .widget-image { max-width: 100%; height: auto; }
.rw-widget mark { background: #ffe066; }
.rw-widget .widget-html-content pre, .rw-widget .widget-html-content code, .rw-widget .widget-html-content mark {
  font-size: 16px; }
.rw-widget pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0 6px 0; line-height: 1.3; }
.rw-widget .jupyter-button { flex: 0 0 auto; }
"""

# The key guard: JupyterLab's notebook shortcuts listen for keydown on the document (bubbling) and match
# the focused element itself, so an attribute on the root does not stop them; stopping the event at the
# root does. ToggleButtons get the arrow keys of a radio group; buttons and checkboxes do not scroll.
GUARD_ESM = r"""
function guard(root) {
  if (!root || root.dataset.keyGuard) return;
  root.dataset.keyGuard = "1";
  root.setAttribute("data-lm-suppress-shortcuts", "");
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
    """An invisible child of every classroom widget: keeps arrow keys inside the widget, loads its style sheet.

    Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
    ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
    """

    _esm = GUARD_ESM
    _css = STYLE + ".rw-key-guard { display: none; }"


# Inside every widget's static copy (what GitHub, nbconvert and a notebook opened without a kernel
# show), and at the foot of the live widget, where the style sheet hides it until the kernel is gone
# (ipywidgets marks the widget .jupyter-widgets-disconnected after a kernel restart).
KERNEL_NOTE_STYLE = "border-left:4px solid #d9822b;padding:4px 8px;background:#fff4e5;color:#000"
KERNEL_NOTE = ("&#9888; <b>Not live:</b> the {label} needs a running kernel. Run this cell; after a kernel "
               "restart use <i>Kernel &#9656; Restart Kernel and Run All Cells</i>. Without a kernel you see a "
               "static copy at the starting values.")


class WidgetView:
    """Base of the classroom widgets: ``ui`` is the root box; displaying shows it with its static copy.

    A subclass builds its controls, calls :meth:`_root` with its rows, and defines :meth:`static_html`
    (the copy shown where no kernel runs) and :meth:`reset` (the starting values).

    Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
    ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
    """

    label = "widget"
    ui = None

    def _root(self, children: list, name: str, concealed: bool = True) -> w.VBox:
        """The root box: ``children`` plus the key guard, with the shared classes (and hidden numbers)."""
        guard = KeyGuard()
        guard.add_class("rw-key-guard")
        note = w.HTML(f"<div style='{KERNEL_NOTE_STYLE}'>{KERNEL_NOTE.replace('{label}', html.escape(self.label))}</div>")
        note.add_class("rw-kernel-note")
        root = w.VBox([*children, note, guard])
        for cls in ("rw-widget", "rw-live", name, *(["rw-concealed"] if concealed else [])):
            root.add_class(cls)
        return root

    def reveal_toggle(self) -> w.ToggleButton:
        """A "show the numbers" toggle: numbers marked with :func:`num` show "?" until it is pressed.

        Not taught; used by every classroom widget but the ranks widget (notebooks 01 to 04 and 07).
        """
        toggle = w.ToggleButton(value=False, description="show the numbers", icon="eye",
                                layout=w.Layout(width="max-content"))
        toggle.add_class("rw-reveal")

        def flip(change):
            toggle.description = "hide the numbers" if change["new"] else "show the numbers"
            (self.ui.remove_class if change["new"] else self.ui.add_class)("rw-concealed")

        toggle.observe(flip, names="value")
        return toggle

    def reset_button(self) -> w.Button:
        """A button that puts every control back to its starting value (:meth:`reset`).

        Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
        ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
        """
        button = w.Button(description="reset", icon="undo", layout=w.Layout(width="max-content"))
        button.add_class("rw-reset")
        button.on_click(lambda _button: self.reset())
        return button

    _resetting = False  # True while reset() puts the controls back: their observers then do nothing

    def reset(self) -> None:
        """Put every control back to its starting value, hide the numbers, forget the last change and
        redraw once (the controls' observers wait while the values are put back).

        Raises:
            NotImplementedError: the widget does not say what its start is (``_restore_start``).

        Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
        ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
        """
        self._resetting = True
        try:
            self._restore_start()
        finally:
            self._resetting = False
        self.previous = None
        self._update()

    def _restore_start(self) -> None:
        """Set every control to its starting value and hide the numbers (each widget says how)."""
        raise NotImplementedError

    @contextmanager
    def busy(self):
        """Mark the widget busy (class ``rw-busy``: a sign shows after 0.12 s) while the block runs.

        Not taught; used by ceiling_widget, ranks_widget and rrf_widget (notebook 07_widgets).
        """
        self.ui.add_class("rw-busy")
        try:
            yield
        finally:
            self.ui.remove_class("rw-busy")

    def static_html(self) -> str:
        """The static copy: what the widget shows at its current values, as HTML (numbers in ``<details>``).

        Raises:
            NotImplementedError: always, in this base class; each widget defines its own.

        Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
        ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
        """
        raise NotImplementedError

    def _ipython_display_(self):
        bundle = self.ui._repr_mimebundle_()
        label = html.escape(self.label)
        bundle["text/html"] = (f"<div class='rw-kernel-note' style='{KERNEL_NOTE_STYLE}'>"
                               f"{KERNEL_NOTE.replace('{label}', label)}</div>"
                               f"<div class='rw-static'><p><i>Static copy of the {label} "
                               "(a live widget when the notebook runs):</i></p>" + self.static_html() + "</div>")
        bundle["text/plain"] = f"[{self.label}: not live; a live widget when the notebook runs with a kernel]"
        display(bundle, raw=True)


def check_start(value, name: str, allowed: range) -> int:
    """A slider's starting value, refused when the slider cannot show it.

    ipywidgets moves a value outside ``min``..``max`` into the range without a word; a widget
    would then show another k than the one asked for.

    Args:
        value: the starting value asked for (an int; a bool is refused).
        name: the argument's name, for the message (e.g. ``"k"``).
        allowed: the slider's values, a ``range``.

    Returns:
        ``value`` as a Python int.

    Raises:
        ValueError: ``value`` is not an integer in ``allowed`` (names it and the range).

    Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
    ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in allowed:
        raise ValueError(f"{name} = {value!r} is outside the slider's range {allowed.start} to {allowed[-1]}")
    return int(value)


def busy_sign() -> w.HTML:
    """The busy sign: invisible, shown by CSS when the widget has been busy for 0.12 s.

    Not taught; used by ceiling_widget, ranks_widget and rrf_widget (notebook 07_widgets).
    """
    return w.HTML("<span class='rw-busy-sign'>&#8987; updating…</span>", layout=w.Layout(width="max-content"))


def num(value: float, digits: int = 3) -> str:
    """A number as HTML that "show the numbers" reveals (``<span class='rw-num'>``).

    Args:
        value: the number (a float or int).
        digits: decimals shown.

    Not taught; used by ceiling_widget, rank_slider_widget and rrf_widget (notebooks 03_mrr and 07_widgets).
    """
    return f"<span class='rw-num'>{value:.{digits}f}</span>"


def hidden(text: str) -> str:
    """Any HTML that "show the numbers" reveals (e.g. arithmetic that gives the answer away).

    Args:
        text: HTML, inserted as it is (escape plain text first).

    Not taught; used by every classroom widget but the ranks widget (notebooks 01 to 04 and 07).
    """
    return f"<span class='rw-num'>{text}</span>"


def changes(before: Mapping[str, float] | None, after: Mapping[str, float], digits: int = 3) -> dict[str, str]:
    """The values that changed, written "old → new" at ``digits`` decimals (what the widgets mark).

    Args:
        before: ``{name: value}`` before the change, or ``None`` (nothing to compare: no changes).
        after: ``{name: value}`` after it; names missing from ``before`` are not marked.
        digits: decimals shown; values equal at this precision count as unchanged.

    Returns:
        ``{name: "0.500 → 1.000"}`` for each name whose shown value changed, in the order of ``after``.

    Not taught; used by every classroom widget (ceiling_widget, playground_widget, rank_slider_widget,
    ranks_widget and rrf_widget; notebooks 01 to 04 and 07).
    """
    if before is None:
        return {}
    marked = {}
    for name, new in after.items():
        if name in before:
            old_text, new_text = f"{before[name]:.{digits}f}", f"{new:.{digits}f}"
            if old_text != new_text:
                marked[name] = f"{old_text} {CHANGE_MARK} {new_text}"
    return marked


def figure_png(fig, close: bool = True) -> bytes:
    """A matplotlib figure as PNG bytes at :data:`FIGURE_DPI`, compressed fast.

    No tight bounding box: the pixel size is the figure size × the dpi. zlib level 1 takes a tenth of
    the time of the default.

    Args:
        fig: a matplotlib Figure.
        close: close it with pyplot afterwards; False for a figure that is redrawn in place.

    Not taught; used by ceiling_widget (notebook 07_widgets).
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI, pil_kwargs={"compress_level": 1})
    if close:
        plt.close(fig)
    return buffer.getvalue()


def image_widget(width_px: int) -> w.Image:
    """An Image widget that shows a :func:`figure_png` at ``width_px`` CSS px (smaller when the column is narrower).

    Args:
        width_px: the largest display width, in CSS px (an int).

    Not taught; used by ceiling_widget (notebook 07_widgets).
    """
    return w.Image(format="png", layout=w.Layout(width="100%", max_width=f"{width_px}px", height="auto"))


def png_html(png: bytes, width_px: int, alt: str) -> str:
    """An ``<img>`` holding PNG bytes, shown at ``width_px`` (for static copies).

    Args:
        png: the PNG file's bytes (e.g. from :func:`figure_png`).
        width_px: the display width, in CSS px.
        alt: the image's text alternative (escaped here).

    Not taught; used by ceiling_widget (notebook 07_widgets).
    """
    data = base64.b64encode(png).decode("ascii")
    return f"<img src='data:image/png;base64,{data}' width='{width_px}' alt='{html.escape(alt)}'>"


def scroll_panel(child: w.Widget, height_px: int) -> w.Box:
    """A box of fixed height that scrolls its content and never the notebook behind it.

    Args:
        child: the widget to scroll.
        height_px: the box's height, in CSS px.

    Not taught; used by ranks_widget and rrf_widget (notebook 07_widgets).
    """
    panel = w.Box([child], layout=w.Layout(height=f"{height_px}px", overflow="auto", flex="0 0 auto"))
    panel.add_class("rw-scroll")
    return panel


def table_html(table: pd.DataFrame, formats: Mapping[str, Callable] | None = None, hide: bool = True,
               highlight: Collection = ()) -> str:
    """A small DataFrame as an HTML table in the widgets' style, numbers hidden until revealed.

    Args:
        table: rows and columns to show; the index is the first column.
        formats: ``{column: function(value) -> str}``; other floats get 3 decimals (NaN: empty), the rest is escaped.
        hide: wrap every cell value in :func:`hidden` (predict, then reveal).
        highlight: index values whose rows are marked (the chosen retriever, say).

    Not taught; used by ceiling_widget and rrf_widget (notebook 07_widgets).
    """
    formats = formats or {}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [table.index.name or "", *table.columns])
    rows = []
    for index, row in table.iterrows():
        cells = [f"<td class='rw-left'><b>{html.escape(str(index))}</b></td>"]
        for column, value in row.items():
            if column in formats:
                text = formats[column](value)
            elif isinstance(value, float):
                text = "" if pd.isna(value) else f"{value:.3f}"
            else:
                text = html.escape(str(value))
            cells.append(f"<td>{hidden(text) if hide and text else text}</td>")
        marker = " class='rw-chosen'" if index in highlight else ""
        rows.append(f"<tr{marker}>" + "".join(cells) + "</tr>")
    return f"<table class='rw-table'><tr>{head}</tr>{''.join(rows)}</table>"


def change_line(marked: Mapping[str, str]) -> str:
    """One line naming what the last change moved, e.g. "Changed: ceiling 0.340 → 0.255" (numbers
    hidden until revealed); empty when nothing moved.

    Args:
        marked: ``{name: "old → new"}``, as :func:`changes` returns.

    Not taught; used by ceiling_widget, rank_slider_widget and rrf_widget (notebooks 03_mrr and 07_widgets).
    """
    if not marked:
        return ""
    return ("<span class='rw-changed'>Changed: " + " · ".join(f"{html.escape(n)} {hidden(c)}" for n, c in marked.items())
            + "</span><br>")


def reveal_details(body: str, summary: str = "Predict first, then click to show the numbers") -> str:
    """HTML that stays folded until clicked (``<details>``): predict-then-reveal in static copies.

    Args:
        body: the folded HTML.
        summary: the line shown folded (plain text, escaped here).

    Not taught; used by every classroom widget but the ranks widget (notebooks 01 to 04 and 07).
    """
    return f"<details><summary>{html.escape(summary)}</summary>{body}</details>"


class Debounce:
    """Call ``fn(value)`` once typing pauses: each call restarts a ``wait``-second timer on the running
    asyncio loop (the kernel's); with no running loop (a test, a script) the call happens at once.

    Not taught; used by ranks_widget (its search box; notebook 07_widgets).
    """

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
