"""The classroom widgets in a real browser: JupyterLab 4 on localhost, headless Chromium via Playwright,
real scrollbars shown.

The fixture notebook tests/data/widgets.ipynb (every widget on the teaching set, then the widgets that show
user text again on data whose run name, question, slice and chunk id are an HTML payload) is run with
nbclient, as ``make notebooks`` runs notebooks, and opened in JupyterLab. Before Run All it shows the static
copies; after, each widget is checked as a class meets it, at 1366×768, at 125% zoom and at 1920×1080: it fits
the visible notebook area without a horizontal scrollbar, its text reads at least 16 px, it is the one output
of its cell that shows, and before "show the numbers" its visible text holds none of its hidden values and its
figure is not the revealed one. Then the change line after a multi-click move, a kernel paused over a reveal
and a key press (the tests wait for its redraw), the keyboard, the payload (shown as typed, never run), a
second window after the kernel changed (the static copies, never "model not found"), and a kernel restart (the
"Not live" note). Screenshots of each widget hidden and revealed go to $WIDGET_SHOTS (default
output/screenshots/).

Needs /usr/bin/chromium (``make test`` installs Debian's chromium when it is missing).
"""

import os
import re
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

import helpers as h
from lab import (
    CHROMIUM,
    KERNEL_IDLE,
    ROOT,
    chromium,
    execute,
    jupyterlab,
    menu,
    new_page,
    notebook_area,
    notebook_state,
    open_notebook,
    press,
    redrawn,
    reset,
    run_all,
    set_shown,
    show_at_top,
    widget,
)
from retrieval_eval.core.paths import RUNS_DIR
from retrieval_eval.core.registry import METRICS, shown_metrics
from retrieval_eval.course.widgets.playground import PLAYGROUND_START
from retrieval_eval.course.widgets.rrf import FUSED, rrf_explanation
from retrieval_eval.inputs.trec import read_qrels, read_run
from retrieval_eval.retrieval.rerank import two_stage_table

SHOTS = Path(os.environ.get("WIDGET_SHOTS", ROOT / "output" / "screenshots"))
FIXTURE = ROOT / "tests" / "data" / "widgets.ipynb"
JUDGING = ROOT / "tests" / "data" / "judging.ipynb"  # the judging widget, served beside it (test at the end)
WIDGETS = ("playground-widget", "rank-slider-widget", "ceiling-widget", "ranks-widget", "rrf-widget", "depth-widget")
FIGURES = {"ceiling-widget": ".ceiling-plot", "depth-widget": ".depth-plot"}
N_WIDGETS = 10  # in the fixture: the six, then four on hostile text
PAYLOAD = "<img src=x onerror=alert(1)>"
VIEWS = {"1366x768": (1366, 768, 1.0), "zoom125": (1093, 614, 1.25), "1920x1080": (1920, 1080, 1.0)}
FIGURE_PX = 16.7 / 640  # figure text in CSS px per CSS px of figure width (12 pt drawn for 640 px)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("lab"),
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]

STATE = """() => { const shows = e => e.offsetHeight > 0;
  return {fallbacks: [...document.querySelectorAll('.rw-fallback')].filter(shows).length,
          live: [...document.querySelectorAll('.rw-live')].filter(shows).length,
          errors: document.querySelectorAll('.jp-OutputArea-output.jupyter-widgets').length,
          errors_shown: [...document.querySelectorAll('.jp-OutputArea-output')].filter(
            e => shows(e) && /Error displaying widget/.test(e.innerText)).length,
          payload_images: document.querySelectorAll('img[src="x"]').length}; }"""


@pytest.fixture(scope="module")
def s():
    return h.evaluation_setup()


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """JupyterLab serving the fixture notebook run by nbclient, and Chromium: (browser, base URL, token, path)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path_factory.mktemp("lab")
    executed = execute(FIXTURE, tmp)
    with jupyterlab(tmp / "lab", [executed, JUDGING]) as (base, token), chromium() as chrome:
        yield chrome, base, token, executed


def open_page(lab_server, width=1366, height=768):
    chrome, base, token, _ = lab_server
    page = new_page(chrome, width, height)
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    open_notebook(page, base, token, FIXTURE.name)
    return page


@pytest.fixture(scope="module")
def page(lab_server):
    """The fixture at 1366×768: ``page.untrusted`` is what it shows when opened (as from a fresh clone), then all cells run."""
    page = open_page(lab_server)
    page.wait_for_timeout(1500)
    page.untrusted = page.evaluate(STATE) | {"text": page.locator(".jp-Notebook").inner_text()}
    show_at_top(page, ".rw-fallback")
    page.screenshot(path=SHOTS / "1366x768_untrusted_static_copies.png")
    run_all(page, [".depth-widget"], SHOTS / "failed_run_all.png")
    page.wait_for_selector(".rw-widget[data-key-guard]", state="attached")
    yield page
    page.close()


def to_top(page, name: str, nth: int = 0) -> None:
    page.locator(f".{name}").nth(nth).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)


def visible_text(page, name: str, nth: int = 0) -> str:
    return page.locator(f".{name}").nth(nth).inner_text()


def wait_for_text(page, selector: str, text: str) -> str:
    try:
        page.wait_for_function("([s, t]) => document.querySelector(s).innerText.includes(t)", arg=[selector, text])
    except Exception:
        raise AssertionError(f"{selector} never showed {text!r}; it shows {page.locator(selector).first.inner_text()!r}") from None
    return page.locator(selector).first.inner_text()


def layout(page, name: str) -> dict:
    """Where the widget sits once at the top of the notebook area, what overflows, and its small text."""
    to_top(page, name)
    return page.evaluate("""name => {
      const root = document.querySelector('.' + name), cell = root.closest('.jp-Cell');
      const outer = root.closest('.jp-WindowedPanel-outer');
      const texts = [...root.querySelectorAll('*')].filter(e => e.offsetParent &&
          [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
      const small = texts.filter(e => parseFloat(getComputedStyle(e).fontSize) < 16)
          .map(e => e.tagName + ' ' + getComputedStyle(e).fontSize + ' ' + e.textContent.trim().slice(0, 30));
      const r = root.getBoundingClientRect();
      const scrolled = [root, ...root.querySelectorAll('*')].filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1
          && /auto|scroll/.test(getComputedStyle(e).overflowX));  // a horizontal scrollbar anywhere inside
      return {top: r.top, bottom: r.bottom, height: r.height,
              inner_overflow: scrolled.length ? scrolled[0].scrollWidth - scrolled[0].clientWidth : 0,
              page_overflow: outer.scrollWidth - outer.clientWidth,
              outputs: [...cell.querySelectorAll('.jp-OutputArea-child')].filter(o => o.offsetHeight > 0).length,
              n_texts: texts.length, small};
    }""", name)


def figure_text_px(page, selector: str) -> float:
    width = page.locator(selector).first.evaluate("i => i.getBoundingClientRect().width")
    return width * FIGURE_PX


def hidden_values(page, s, name: str) -> list[str]:
    """The numbers the widget hides at its start, computed here from the registry and the engine."""
    k = 3
    if name == "playground-widget":
        ranking = [f"r{i}" for i in range(1, 11)]
        gains = {d: g for d, g in zip(ranking, PLAYGROUND_START) if g}
        return [f"{METRICS[m].score(ranking, gains, 5):.3f}" for m in shown_metrics()]
    if name == "rank-slider-widget":
        return [f"{1 / 3:.3f}", "1/3"]
    if name == "ceiling-widget":
        table = h.evaluate(s.runs, s.qrels, ks=[k])
        return [f"{h.precision_ceiling(s.qrels, k):.3f}"] + [f"{v:.3f}" for v in table[[("precision", k), ("recall", k)]].values.ravel()]
    if name == "ranks-widget":
        return [f"first relevant at rank {r}" for r in range(1, 11)] + ["✔", "no relevant chunk ranked"]
    if name == "rrf-widget":
        qid = page.locator(".rrf-question select").first.input_value().split(" · ")[0]
        result = rrf_explanation({n: s.runs[n][qid] for n in ("BM25", "vector")}, s.qrels[qid], 60, 10, k)
        values = [f"{v:.3f}" for v in result["metrics"].drop(columns="first relevant rank").loc[FUSED]]
        return values + ["Fusion hurts", "Fusion helps", "Fusion keeps", f"{result['table'].iat[0, 2]:.4f}"]
    reranked = {("hybrid", 10): read_run(RUNS_DIR / "hybrid_rerank.trec").rankings}
    row = two_stage_table(s.runs, s.qrels, reranked, k=k).loc[("hybrid", 10)]
    return [f"{v:.3f}" for v in row.iloc[:-2]] + ["q18 q33"]


def test_without_a_kernel_each_widget_shows_its_static_copy(page, lab_server, tmp_path):
    """Opened from a fresh clone (untrusted), or exported as GitHub and nbviewer render it: the static copies,
    numbers folded, the payload shown as typed."""
    assert {key: page.untrusted[key] for key in ("fallbacks", "live", "errors_shown", "payload_images")} == {
        "fallbacks": N_WIDGETS, "live": 0, "errors_shown": 0, "payload_images": 0}
    assert page.untrusted["text"].count(PAYLOAD) >= 4 and page.dialogs == []
    jupyter = str(Path(sys.executable).parent / "jupyter")
    subprocess.run([jupyter, "nbconvert", "--to", "html", str(lab_server[3]), "--output-dir", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    exported = new_page(lab_server[0], 1366, 768)
    dialogs = []
    exported.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        exported.goto((tmp_path / "widgets.html").as_uri())
        state = exported.evaluate(STATE)
        assert (state["fallbacks"], state["payload_images"]) == (N_WIDGETS, 0) and dialogs == []
        assert exported.locator("body").inner_text().count(PAYLOAD) >= 4
        exported.locator(".rw-fallback").nth(2).scroll_into_view_if_needed()
        exported.screenshot(path=SHOTS / "1366x768_nbconvert_static_copy.png")
        details = exported.locator(".rw-fallback details").first
        assert not details.locator("table").first.is_visible()  # folded: predict first
        details.locator("summary").click()
        assert details.locator("table").first.is_visible()
    finally:
        exported.close()


def set_view(page, width: int, height: int, scale: float) -> None:
    """The page at ``width`` × ``height`` CSS px with ``scale`` device px per CSS px (125% zoom: 1093×614 at 1.25)."""
    page.set_viewport_size({"width": width, "height": height})
    page.context.new_cdp_session(page).send("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": scale, "mobile": False})
    page.wait_for_timeout(1500)  # JupyterLab lays itself out again


@pytest.mark.parametrize("view", list(VIEWS))
def test_each_widget_fits_reads_big_and_shows_once(page, view):
    width, height, scale = VIEWS[view]
    set_view(page, width, height, scale)
    try:
        area, problems = notebook_area(page), []
        for name in WIDGETS:
            where = layout(page, name)
            page.screenshot(path=SHOTS / f"{view}_{name}_hidden.png")
            if where["bottom"] > area["bottom"] + 1 or where["top"] < area["top"] - 1:
                problems.append((name, "does not fit", where["height"], area["height"]))
            if where["inner_overflow"] > 1 or where["page_overflow"] > 1:
                problems.append((name, "horizontal overflow", where["inner_overflow"], where["page_overflow"]))
            if where["outputs"] != 1 or where["n_texts"] < 5 or where["small"]:
                problems.append((name, "outputs / text", where["outputs"], where["small"][:3]))
            if name in FIGURES and figure_text_px(page, f".{name} {FIGURES[name]}") * scale < 16:
                problems.append((name, "figure text", figure_text_px(page, f".{name} {FIGURES[name]}") * scale))
        assert not problems, problems
    finally:
        set_view(page, 1366, 768, 1.0)


IMAGE_DIGEST = """async sel => { const img = document.querySelector(sel);
  const bytes = await (await fetch(img.src)).arrayBuffer();
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map(b => b.toString(16)).join(''); }"""


@contextmanager
def kernel_paused(seconds: float):
    """This worker's kernels stopped (SIGSTOP) for ``seconds`` from now, as a loaded machine delays them."""
    kernels = [p for p in psutil.Process().children(recursive=True) if "ipykernel_launcher" in " ".join(p.cmdline())]
    for kernel in kernels:
        kernel.suspend()
    timer = threading.Timer(seconds, lambda: [kernel.resume() for kernel in kernels])
    timer.start()
    try:
        yield
    finally:
        timer.join()


def test_hidden_numbers_stay_off_screen_until_shown(page, s):
    for name in WIDGETS:
        to_top(page, name)
        reset(widget(page, name))
        values, hidden_text = hidden_values(page, s, name), visible_text(page, name)
        figure = f".{name} {FIGURES[name]}" if name in FIGURES else None
        hidden_image = page.evaluate(IMAGE_DIGEST, figure) if figure else None
        page.screenshot(path=SHOTS / f"1366x768_{name}_hidden.png")
        assert not [v for v in values if v in hidden_text], (name, [v for v in values if v in hidden_text])
        if name == "ranks-widget":
            assert page.evaluate("() => [...document.querySelectorAll('.ranks-heatmap td')].filter(td => td.offsetParent)"
                                 ".every(td => td.innerText === '?')")
        with kernel_paused(1):  # as on a loaded machine: the reveal's redraw is waited for, whatever the widget shows
            start = time.monotonic()
            set_shown(widget(page, name), True)
            assert time.monotonic() - start >= 1, name
        page.screenshot(path=SHOTS / f"1366x768_{name}_shown.png")
        assert [v for v in values if v in visible_text(page, name)], (name, values)  # the right strings were checked
        if figure:  # the revealed figure is another image; hidden again, the same empty axes
            assert page.evaluate(IMAGE_DIGEST, figure) != hidden_image, name
            set_shown(widget(page, name), False)
            assert page.evaluate(IMAGE_DIGEST, figure) == hidden_image, name
        reset(widget(page, name))


def test_the_change_line_lists_every_metric_that_moved_after_a_multi_click_move(page):
    """07's first step, from the start: click rank 1 twice and rank 2 once, then show the numbers."""
    to_top(page, "playground-widget")
    root = widget(page, "playground-widget")
    reset(root)
    height = root.bounding_box()["height"]
    for rank in (1, 1, 2):
        redrawn(root, root.locator(f".playground-rank-{rank}").first.click)
    assert "→" not in visible_text(page, "playground-widget")  # no change shown before the numbers
    set_shown(root, True)
    ranking = [f"r{i}" for i in range(1, 11)]
    before, after = {"r2": 2, "r4": 1, "r7": 1}, {"r1": 2, "r4": 1, "r7": 1}
    line = page.locator(".playground-widget .rw-change").first.inner_text()
    for name, metric in ((m, METRICS[m]) for m in shown_metrics()):  # the widget shows the four
        old, new = f"{metric.score(ranking, before, 5):.3f}", f"{metric.score(ranking, after, 5):.3f}"
        label = "RR" if name == "MRR" else name
        assert (f"{label} {old} → {new}" in line) == (old != new), (name, line)
    assert "RR 0.500 → 1.000" in line and "nDCG 0.541 → 0.776" in line
    assert page.locator(".playground-widget").first.bounding_box()["height"] == height  # reserved: nothing jumps
    page.screenshot(path=SHOTS / "1366x768_playground-widget_after_three_clicks_shown.png")
    reset(widget(page, "playground-widget"))
    wait_for_text(page, ".playground-rank-1", "#1 · 0")


def test_controls_move_the_numbers(page, s):
    to_top(page, "ceiling-widget")
    set_shown(widget(page, "ceiling-widget"), True)
    press(widget(page, "ceiling-widget"), ".ceiling-k", "ArrowRight", 2)
    wait_for_text(page, ".ceiling-sentence", f"At k = 5 no ranking can pass precision@5 = {h.precision_ceiling(s.qrels, 5):.3f}")
    line = page.locator(".ceiling-widget .rw-change").first.inner_text()
    assert f"ceiling {h.precision_ceiling(s.qrels, 3):.3f} → {h.precision_ceiling(s.qrels, 5):.3f}" in line
    reset(widget(page, "ceiling-widget"))
    to_top(page, "depth-widget")
    set_shown(widget(page, "depth-widget"), True)
    press(widget(page, "depth-widget"), ".depth-n", "ArrowLeft")  # N = 10 → 5
    table = two_stage_table(s.runs, s.qrels, k=3)
    wait_for_text(page, ".depth-sentence", f"The top 5 of hybrid hold {table.loc[('hybrid', 5), 'recall@N (ceiling)']:.3f}")
    page.screenshot(path=SHOTS / "1366x768_depth-widget_N5_shown.png")
    reset(widget(page, "depth-widget"))
    to_top(page, "ranks-widget")
    page.locator(".ranks-search input").first.press_sequentially("frost", delay=80)
    wait_for_text(page, ".ranks-head", "q13 ·")
    reset(widget(page, "ranks-widget"))
    wait_for_text(page, ".ranks-matches", f"{len(s.golden)} of {len(s.golden)}")
    page.locator(".ranks-heatmap td[data-q='q20']:visible").first.click()  # "click a question" (05)
    wait_for_text(page, ".ranks-head", "q20 ·")
    reset(widget(page, "ranks-widget"))


def press_on(page, selector: str, key: str) -> dict:
    page.locator(selector).first.focus()
    page.wait_for_timeout(200)
    before = notebook_state(page)
    page.keyboard.press(key)
    page.wait_for_timeout(400)
    after = notebook_state(page)
    assert (before["active"], before["scroll"]) == (after["active"], after["scroll"]), (selector, key, before, after)
    return after


def test_a_slow_kernel_is_waited_for_before_a_number_is_read(page, s):
    """A key press with the kernel paused for 2 s: the helpers wait for its redraw, not for a time (a reveal:
    test_hidden_numbers_stay_off_screen_until_shown, every widget)."""
    root = widget(page, "ceiling-widget")
    to_top(page, "ceiling-widget")
    reset(root)
    set_shown(root, True)
    with kernel_paused(2):
        start = time.monotonic()
        press(root, ".ceiling-k", "ArrowRight")
        assert time.monotonic() - start >= 2
    assert f"precision@4 = {h.precision_ceiling(s.qrels, 4):.3f}" in root.locator(".ceiling-sentence").inner_text()
    reset(root)


def test_arrow_keys_act_on_the_control_and_never_move_the_notebook(page):
    to_top(page, "ranks-widget")
    first = page.locator(".ranks-question select").first.input_value()  # the option's label
    press_on(page, ".ranks-question select", "ArrowDown")
    assert page.locator(".ranks-question select").first.input_value() != first
    to_top(page, "ceiling-widget")
    press_on(page, ".ceiling-retriever button.mod-active", "ArrowRight")
    assert page.locator(".ceiling-retriever button.mod-active").first.inner_text() == "vector"
    to_top(page, "playground-widget")
    press_on(page, ".playground-widget .rw-reveal", "ArrowDown")
    to_top(page, "rrf-widget")
    press_on(page, ".rrf-question select", "ArrowUp")
    for name in ("ranks-widget", "ceiling-widget", "rrf-widget"):
        reset(widget(page, name))


def test_the_payload_shows_as_typed_and_never_runs(page):
    for name in ("ceiling-widget", "ranks-widget", "rrf-widget", "depth-widget"):
        to_top(page, name, 1)
        set_shown(widget(page, name, 1), True)
        assert PAYLOAD in visible_text(page, name, 1), name
        page.screenshot(path=SHOTS / f"1366x768_{name}_hostile_text_shown.png")
    assert page.evaluate(STATE)["payload_images"] == 0 and page.dialogs == []


def test_a_second_window_after_the_kernel_changed_shows_the_static_copies(page, lab_server):
    """The saved notebook names widgets of a kernel that is gone: "model not found" in JupyterLab, which
    renders one MIME type per output; the second output shows the static copy and the note instead."""
    menu(page, "File", "Save Notebook")
    page.wait_for_selector(".jp-mod-current.jp-mod-dirty", state="detached")
    second = open_page(lab_server)
    try:  # same kernel, saved ids: live in both windows
        second.wait_for_function(f"() => ({STATE})().live === {N_WIDGETS}")
    finally:
        second.close()
    menu(page, "Kernel", "Restart Kernel…")
    page.locator(".jp-Dialog button", has_text=re.compile(r"^Restart$")).click()
    page.wait_for_selector(".rw-widget.jupyter-widgets-disconnected", state="attached")
    for name in WIDGETS:  # the first window keeps its widgets, each saying it is not live
        to_top(page, name)
        assert page.locator(f".{name} .rw-kernel-note").first.is_visible(), name
    page.screenshot(path=SHOTS / "1366x768_after_restart_not_live.png")
    second = open_page(lab_server)
    try:
        second.wait_for_function(f"() => {{ const s = ({STATE})(); return s.fallbacks === {N_WIDGETS} && s.errors === {N_WIDGETS}; }}")
        state = second.evaluate(STATE)
        assert state["errors"] == N_WIDGETS and state["errors_shown"] == 0, state  # every model missing, none shown
        assert state["fallbacks"] == N_WIDGETS and state["live"] == 0, state
        second.locator(".rw-fallback").nth(2).scroll_into_view_if_needed()
        second.screenshot(path=SHOTS / "1366x768_second_window_model_not_found.png")
    finally:
        second.close()


def test_the_judging_widget_driven_by_keys_only_writes_qrels_that_score_as_pytrec_eval(lab_server, s):
    """Keys alone in the focused box: grades, a skip and a back; JupyterLab's own keys (0 0 restarts the kernel, b adds a
    cell) never reach the notebook; the box fits 1366×768 with the chunk's scrollbar; the file scores as pytrec_eval."""
    import pytrec_eval

    from retrieval_eval.analysis.judges import pool

    chrome, base, token, executed = lab_server
    page = new_page(chrome)
    open_notebook(page, base, token, JUDGING.name)
    run_all(page, [".rw-judging-box"], SHOTS / "failed_judging.png")
    box = page.locator(".rw-judging-box")
    box.click()
    cells = page.locator(".jp-Cell").count()
    before = notebook_state(page)
    pairs = [(q, c) for q, ids in pool(s, 3, ["q01", "q02"]).items() for c in ids]
    keys = ["2", "s", "0", "b", "1", "0", "0", "2", "1"]
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(150)
    wait_for_text(page, ".rw-judging-box", f"Pair 8 of {len(pairs)}")
    after = notebook_state(page)
    assert page.locator(".jp-Cell").count() == cells and (before["active"], before["scroll"]) == (after["active"], after["scroll"])
    assert page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE).count()  # no restart asked for
    area, fits = notebook_area(page), box.evaluate("b => { const r = b.getBoundingClientRect(); const t = b.querySelector('.rw-chunk');"
                                                   " return {right: r.right, overflow: getComputedStyle(t).overflowY}; }")
    assert fits["right"] <= area["right"] and fits["overflow"] == "scroll"
    page.screenshot(path=SHOTS / "1366x768_judging.png")
    page.close()
    expected = {pairs[0]: 2, pairs[2]: 1, pairs[3]: 0, pairs[4]: 0, pairs[5]: 2, pairs[6]: 1}
    written = read_qrels(executed.parent / "lab" / "notebooks" / "judgements" / "tester.qrels")
    assert written == {q: {c: g for (q2, c), g in expected.items() if q2 == q} for q in ("q01", "q02")}
    run = {q: {c: 100.0 - i for i, c in enumerate(s.runs["BM25"][q])} for q in written}
    measures = pytrec_eval.RelevanceEvaluator(written, {"ndcg_cut.3", "P.3", "recall.3"}).evaluate(run)
    ours = h.evaluate({"BM25": {q: s.runs["BM25"][q] for q in written}}, written, ks=[3]).loc["BM25"]
    for metric, name in (("nDCG", "ndcg_cut_3"), ("precision", "P_3"), ("recall", "recall_3")):
        assert ours[(metric, 3)] == pytest.approx(sum(m[name] for m in measures.values()) / len(measures), abs=1e-12)
