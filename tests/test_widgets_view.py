"""retrieval_eval/widgets/_view.py: what every widget shares, checked on every widget.

Predict-then-reveal holds in the kernel: while hidden, no output widget holds a value the change line
follows; the change line lists everything that moved since the start (or since the numbers were last
hidden); reset puts the start back. Each widget is two outputs: the live widget, and its static copy
with the note. User text (run names, questions, slices, chunk ids) reaches HTML only escaped.
"""

import asyncio
import re

import ipywidgets as w
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import helpers as h
from retrieval_eval.core.registry import METRICS, shown_metrics
from retrieval_eval.course.widgets._view import WIDGET_MIME, Debounce, KeyGuard, changes, table_html
from retrieval_eval.course.widgets.depth import depth_widget

PAYLOAD = "<img src=x onerror=alert(1)>"


def build_all(s, runs=None, qrels=None, golden=None, chunks=None):
    runs, qrels = runs or s.runs, qrels or s.qrels
    golden, chunks = s.golden if golden is None else golden, chunks or s.chunks
    first, second = list(runs)[:2]
    return [h.playground_widget(), h.rank_slider_widget(rank=3), h.ceiling_widget(qrels, runs),
            h.ranks_widget(runs, qrels, golden, chunks), h.rrf_widget(runs, qrels, golden, inputs=[first, second]),
            depth_widget(runs, qrels, first_stage=first)]


@pytest.fixture(scope="module")
def widgets(setup):
    return build_all(setup)


def html_shown(widget) -> str:
    """Every HTML value under the widget's root (what the front end receives), joined."""
    found, stack = [], [widget.ui]
    while stack:
        node = stack.pop()
        if isinstance(node, w.HTML):
            found.append(node.value)
        stack.extend(getattr(node, "children", ()))
    return "\n".join(found)


def displayed(widget) -> list[dict]:
    shell, sent = InteractiveShell.instance(), []
    original = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: sent.append(data)
    try:
        widget._ipython_display_()
    finally:
        shell.display_pub.publish = original
    return sent


def numbers_of(widget) -> list[str]:
    """The values the change line follows, as the widget writes them."""
    return [f"{v:.3f}" if isinstance(v, float) else str(v) for v in widget.state["values"].values()]


def test_each_widget_is_the_live_widget_then_its_static_copy_with_the_note(widgets):
    for widget in widgets:
        live, static = displayed(widget)
        assert live == {WIDGET_MIME: widget.ui._repr_mimebundle_()[WIDGET_MIME], "text/plain": ""}, widget.label
        html = static["text/html"]
        assert "rw-fallback" in html and f"A static copy</b> of the {widget.label}" in html and "Run this cell" not in html
        assert ".jp-OutputArea-child:has(.rw-live) + .jp-OutputArea-child:has(.rw-fallback)" in html
        assert "rw-live" not in html.replace(".rw-live", "")  # the copy is never taken for the live widget


def test_every_widget_has_the_shared_root_and_keeps_arrow_keys_inside(widgets):
    for widget in widgets:
        assert {"rw-widget", "rw-live"} <= set(widget.ui._dom_classes) and "rw-busy" not in widget.ui._dom_classes
        assert any(isinstance(child, KeyGuard) for child in widget.ui.children)
        notes = [c for c in widget.ui.children if "rw-kernel-note" in c._dom_classes]
        assert len(notes) == 1 and widget.label in notes[0].value


def test_every_redraw_marks_the_widget_busy_until_it_is_drawn(widgets):
    """``rw-busy`` comes and goes with each redraw, a reveal's too: the browser tests wait on it (tests/lab.py)."""
    for widget in widgets:
        seen = []
        record = lambda change, seen=seen: seen.append("rw-busy" in change["new"])  # noqa: E731
        widget.ui.observe(record, names="_dom_classes")
        widget.reveal.value = not widget.reveal.value
        widget.reset()
        widget.ui.unobserve(record, names="_dom_classes")
        assert seen == [True, False, True, False], widget.label


def test_while_hidden_no_value_reaches_the_screen_and_the_static_copy_folds_them(widgets):
    for widget in widgets:
        widget.reset()
        values = [v for v in numbers_of(widget) if "." in v]  # decimals: a count such as 7 is in any id
        assert values or widget.label == "per-question ranks widget"
        hidden = html_shown(widget)
        assert not [v for v in values if v in hidden], widget.label
        static = widget.static_html()
        before, _, folded = static.partition("<details>")
        assert folded and not [v for v in values if v in before], widget.label
        widget.reveal.value = True
        assert all(v in html_shown(widget) or v in widget.change.value for v in values[:2]), widget.label
        widget.reset()


def test_the_change_line_lists_everything_that_moved_since_the_start():
    """The 07 notebook's first step: click rank 1 twice and rank 2 once, then show the numbers."""
    playground = h.playground_widget()
    before = {m: METRICS[m].score([f"r{i}" for i in range(1, 11)], {"r2": 2, "r4": 1, "r7": 1}, 5) for m in shown_metrics()}
    for rank in (1, 1, 2):
        playground.rank_buttons[rank - 1].click()
        assert "→" not in playground.change.value and "rw-changed" not in playground.scores.value  # hidden: no hint
    after = {m: METRICS[m].score([f"r{i}" for i in range(1, 11)], {"r1": 2, "r4": 1, "r7": 1}, 5) for m in shown_metrics()}
    playground.reveal.value = True
    moved = {("RR" if m == "MRR" else m): f"{before[m]:.3f} → {after[m]:.3f}" for m in shown_metrics()
             if f"{before[m]:.3f}" != f"{after[m]:.3f}"}
    assert moved == {"RR": "0.500 → 1.000", "nDCG": "0.541 → 0.776"}
    assert playground.moved() == moved and "Since the start: <b>RR</b> 0.500 → 1.000, <b>nDCG</b> 0.541 → 0.776" in playground.change.value
    assert playground.scores.value.count("rw-changed") == 2
    playground.reveal.value = False  # a new round starts from what the class saw
    playground.rank_buttons[1].click()  # rank 2: 0 → 1
    playground.reveal.value = True
    assert "Since the numbers were hidden" in playground.change.value and "RR" not in playground.moved()
    playground.reset()
    assert playground.gains == list(h.playground_widget().gains) and not playground.shown and not playground.moved()


def test_reset_puts_every_control_back(widgets):
    for widget in widgets:
        start = {control: control.value for control in widget.start}
        for control in widget.start:
            if hasattr(control, "index"):
                control.index = len(control.options) - 1
            else:
                control.value = control.max
        widget.reveal.value = True
        widget.reset()
        assert {control: control.value for control in widget.start} == start and not widget.reveal.value, widget.label
        assert "rw-changed" not in widget.change.value


def test_user_text_reaches_html_only_escaped(setup):
    """A run name, a question, a slice and a chunk id that are HTML show as typed, in the live and static views."""
    s = setup
    target = next(iter(h.relevant_ids(s.qrels["q02"])))
    rename = {target: PAYLOAD}
    chunks = [dict(c, id=rename.get(c["id"], c["id"])) for c in s.chunks]
    qrels = {q: {rename.get(c, c): g for c, g in gains.items()} for q, gains in s.qrels.items()}
    runs = {(PAYLOAD if name == "BM25" else name): {q: [rename.get(c, c) for c in r] for q, r in run.items()}
            for name, run in s.runs.items()}
    golden = s.golden.copy()
    golden.loc[golden["id"] == "q02", ["question", "slice"]] = [PAYLOAD, PAYLOAD]
    for widget in build_all(s, runs, qrels, golden, chunks)[2:]:
        widget.reveal.value = True
        for html in (html_shown(widget), widget.static_html()):
            assert PAYLOAD not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", ""), widget.label
        assert "&lt;img src=x onerror=alert(1)&gt;" in html_shown(widget) + widget.static_html(), widget.label


def test_changes_marks_what_moved_at_the_shown_precision():
    assert changes(None, {"RR": 1.0}) == {}
    assert changes({"RR": 0.5, "nDCG": 0.6309, "P": 0.2}, {"RR": 1.0, "nDCG": 0.63091, "P": 0.2, "new": 1.0}) == {
        "RR": "0.500 → 1.000"}
    assert changes({"could fix": 7}, {"could fix": 5}) == {"could fix": "7 → 5"}


def test_table_html_shows_question_marks_until_shown_and_escapes():
    table = pd.DataFrame({"recall@3": [0.5, float("nan")], "name": ["a<b", "c"]}, index=["BM25", "vector"])
    hidden, shown = table_html(table, False, highlight=["vector"]), table_html(table, True)
    assert "0.500" not in hidden and "a&lt;b" not in hidden and hidden.count(">?<") == 3
    assert "0.500" in shown and "a&lt;b" in shown and "a<b" not in shown
    assert re.search(r"<tr class='rw-chosen'><td class='rw-left'><b>vector", hidden)


def test_debounce_calls_once_after_a_pause_and_at_once_without_a_loop():
    calls = []
    debounced = Debounce(calls.append, wait=0.05)
    debounced({"new": "fro"})
    assert calls == ["fro"]

    async def typing():
        for text in ("b", "ba", "bat", "batt"):
            debounced({"new": text})
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)

    asyncio.run(typing())
    assert calls == ["fro", "batt"]
