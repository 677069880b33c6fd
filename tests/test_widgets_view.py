"""retrieval_eval/widgets/_view.py: one display per widget with its static copy inside, and the shared cues.

Every widget is displayed as ONE output whose bundle holds the live widget and its static copy, followed
by the "not live" note; numbers are hidden until revealed; changes are marked; the busy class is
cleared after an update; search waits for a pause in typing. The committed notebook 07 keeps no
widget state and shows the static copies.
"""

import asyncio
import json
import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

import helpers as h
from retrieval_eval.widgets._view import STYLE, Debounce, KeyGuard, WidgetView, changes, table_html

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "07_widgets.ipynb"


@pytest.fixture(scope="module")
def widgets(ceiling, runs, qrels, golden, chunks):
    return [h.playground_widget(), h.rank_slider_widget(), ceiling, h.ranks_widget(runs, qrels, golden, chunks),
            h.rrf_widget(runs, qrels, golden)]


def displayed(widget) -> list:
    """What displaying the widget sends to the front end: the list of (data, metadata) bundles."""
    shell = InteractiveShell.instance()
    sent = []
    original = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: sent.append(data)
    try:
        widget._ipython_display_()
    finally:
        shell.display_pub.publish = original
    return sent


def test_each_widget_is_one_output_with_the_note_and_its_static_copy(widgets):
    for widget in widgets:
        (bundle,) = displayed(widget)
        assert set(bundle) == {WIDGET_MIME, "text/html", "text/plain"}, widget.label
        assert bundle[WIDGET_MIME]["model_id"] == widget.ui.model_id
        assert "Static copy of the" in bundle["text/html"] and "rw-live" not in bundle["text/html"]
        assert "rw-kernel-note" in bundle["text/html"] and "Not live" in bundle["text/html"]
        assert widget.label in bundle["text/plain"] and "not live" in bundle["text/plain"]


def test_static_copy_shows_the_numbers_folded(widgets):
    for widget in widgets[:3] + widgets[4:]:  # the ranks widget has no numbers to predict
        assert "<details><summary>" in widget.static_html(), widget.label


def test_every_widget_has_the_shared_root(widgets):
    for widget in widgets:
        classes = widget.ui._dom_classes
        assert "rw-widget" in classes and "rw-live" in classes and "rw-busy" not in classes, widget.label
        assert any(isinstance(child, KeyGuard) for child in widget.ui.children)


def test_reveal_toggle_shows_and_hides_the_numbers():
    widget = h.playground_widget()
    assert "rw-concealed" in widget.ui._dom_classes
    widget.reveal.value = True
    assert "rw-concealed" not in widget.ui._dom_classes and widget.reveal.description == "hide the numbers"
    widget.reveal.value = False
    assert "rw-concealed" in widget.ui._dom_classes


def test_changes_marks_only_what_moved_at_the_shown_precision():
    assert changes(None, {"RR": 1.0}) == {}
    assert changes({"RR": 0.5, "nDCG": 0.6309, "P": 0.2}, {"RR": 1.0, "nDCG": 0.63091, "P": 0.2, "new": 1}) == {
        "RR": "0.500 → 1.000"}
    assert changes({"x": 0.12344}, {"x": 0.12351}, digits=4) == {"x": "0.1234 → 0.1235"}


def test_table_html_hides_values_and_marks_the_chosen_row():
    import pandas as pd

    table = pd.DataFrame({"recall@3": [0.5, float("nan")], "name": ["a<b", "c"]}, index=["BM25", "vector"])
    shown = table_html(table, highlight=["vector"])
    assert "<span class='rw-num'>0.500</span>" in shown and "a&lt;b" in shown
    assert shown.count("rw-chosen") == 1 and re.search(r"<tr class='rw-chosen'><td class='rw-left'><b>vector", shown)
    assert "rw-num" not in table_html(table, hide=False)


def test_debounce_calls_once_after_a_pause_and_at_once_without_a_loop():
    calls = []
    debounced = Debounce(calls.append, wait=0.05)
    debounced({"new": "fro"})  # no running loop (a test, a script): at once
    assert calls == ["fro"]

    async def typing():
        for text in ("b", "ba", "bat", "batt"):
            debounced({"new": text})
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)

    asyncio.run(typing())
    assert calls == ["fro", "batt"]


def test_the_live_widget_holds_the_note_hidden_while_connected(widgets):
    assert ".rw-widget:not(.jupyter-widgets-disconnected) > .rw-kernel-note { display: none; }" in STYLE
    for widget in widgets:
        notes = [c for c in widget.ui.children if "rw-kernel-note" in c._dom_classes]
        assert len(notes) == 1 and "Not live" in notes[0].value and widget.label in notes[0].value


def test_widget_view_subclasses_define_their_copy_and_reset(widgets):
    for widget in widgets:
        assert type(widget).static_html is not WidgetView.static_html
        # each says what its start is (WidgetView.reset puts it back), or resets its own way (ranks)
        assert type(widget)._restore_start is not WidgetView._restore_start or type(widget).reset is not WidgetView.reset


def test_committed_widget_notebook_has_no_widget_state_and_shows_static_copies():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], "saved widget state breaks rendering on GitHub: run `make notebooks`"
    widget_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "_widget(" in "".join(c["source"])]
    assert len(widget_cells) == 4
    for cell in widget_cells:
        bundles = [o.get("data", {}) for o in cell["outputs"]]
        assert len(bundles) == 1, "".join(cell["source"])  # the widget, its note and static copy in one bundle
        assert set(bundles[0]) == {WIDGET_MIME, "text/html", "text/plain"}
        assert "Static copy of the" in "".join(bundles[0]["text/html"])
        assert "rw-kernel-note" in "".join(bundles[0]["text/html"])
