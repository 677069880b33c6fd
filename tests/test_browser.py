"""The classroom widgets in a real browser: JupyterLab 4 on localhost, headless Chromium via Playwright.

Notebooks 07 (playground, ceiling, ranks, RRF explainer) and 03 (the 1/rank slider) are copied to a
temporary folder and opened at 1366×768, a common projector, with the file browser folded (see
tests/lab.py). After Run All, each widget is checked as a class would meet it: it fits the visible
notebook area, its text is at least 16 px, it is the only copy of itself on screen, arrow keys act on
the focused control and never move the notebook, its numbers follow the controls (compared with
values computed here with helpers.py) and stay hidden until revealed without moving the layout; then
at 150% zoom, at 1920×1080, and after a kernel restart (the "Not live" note). Screenshots of every
widget go to output/screenshots/ (ignored by git).

Needs /usr/bin/chromium (``make test`` installs Debian's chromium when it is missing).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import helpers as h
from lab import (
    CHROMIUM, ROOT, chromium, jupyterlab, menu, new_page, notebook_area, notebook_state, open_and_run, open_notebook,
    run_all, show_at_top,
)

SCREENSHOTS = ROOT / "output" / "screenshots"
NOTEBOOKS = [ROOT / "notebooks" / "07_widgets.ipynb", ROOT / "notebooks" / "03_mrr.ipynb"]
WIDGETS_07 = ("playground-widget", "ceiling-widget", "ranks-widget", "rrf-widget")
MAX_HEIGHT = 600  # CSS px: the notebook area at 1366×768 is about 647 px tall
MIN_TEXT_PX = 16
FIGURE_PT, FIGURE_DPI = 12, 200  # as retrieval_eval/widgets/_view.py draws figures

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                "(make test installs it with apt-get)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """JupyterLab serving copies of notebooks 07 and 03, and Chromium: yields (browser, base URL, token)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    with jupyterlab(tmp_path_factory.mktemp("lab"), NOTEBOOKS) as (base, token), chromium() as chrome:
        yield chrome, base, token


STATIC_STATE = """() => ({
  copies: [...document.querySelectorAll('.rw-static')].filter(e => e.offsetHeight > 0).length,
  notes: [...document.querySelectorAll('.rw-kernel-note')].filter(e => e.offsetHeight > 0).length,
  live: document.querySelectorAll('.rw-live').length})"""


@pytest.fixture(scope="module")
def page(browser):
    """Notebook 07 at 1366×768, all cells run. Before that, ``page.committed`` records what the committed
    notebook shows when opened (untrusted, as from a fresh clone): static copies and notes."""
    chrome, base, token = browser
    page = new_page(chrome, 1366, 768)
    open_notebook(page, base, token, "07_widgets.ipynb")
    page.wait_for_timeout(1000)
    page.committed = page.evaluate(STATIC_STATE)
    show_at_top(page, ".rw-static")
    page.screenshot(path=SCREENSHOTS / "1366x768_committed_untrusted_static_copy.png")
    run_all(page, [f".{name}" for name in WIDGETS_07], SCREENSHOTS / "failed_run_all_07.png")
    page.wait_for_selector(".rw-widget[data-key-guard]", state="attached")  # the key guard is installed
    yield page
    page.close()


@pytest.fixture(scope="module")
def page03(browser):
    """Notebook 03 at 1366×768, all cells run."""
    chrome, base, token = browser
    page = new_page(chrome, 1366, 768)
    open_and_run(page, base, token, "03_mrr.ipynb", [".rank-slider-widget"], SCREENSHOTS / "failed_run_all_03.png")
    yield page
    page.close()


def widget_layout(page, name: str) -> dict:
    """Where the widget sits once scrolled to the top of the notebook, and what its cell shows."""
    show_at_top(page, f".{name}")
    return page.evaluate("""name => {
      const root = document.querySelector('.' + name);
      const cell = root.closest('.jp-Cell');
      const outputs = [...cell.querySelectorAll('.jp-OutputArea-child')].filter(o => o.offsetHeight > 0);
      const texts = [...root.querySelectorAll('*')].filter(e => e.offsetParent &&
          [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
      const small = texts.filter(e => parseFloat(getComputedStyle(e).fontSize) < 16)
          .map(e => e.tagName + ' ' + getComputedStyle(e).fontSize + ' ' + e.textContent.trim().slice(0, 40));
      const r = root.getBoundingClientRect(), area = cell.querySelector('.jp-OutputArea').getBoundingClientRect();
      return {top: r.top, height: r.height, right: r.right, area_right: area.right,
              overflow: root.scrollWidth - root.clientWidth, visible_outputs: outputs.length,
              static_copies: [...document.querySelectorAll('.rw-static')].filter(e => e.offsetHeight > 0).length,
              note_visible: [...cell.querySelectorAll('.rw-kernel-note')].some(e => e.offsetHeight > 0),
              n_texts: texts.length, small};
    }""", name)


def wait_for_text(page, selector: str, text: str) -> str:
    """Wait until the element shows ``text`` (the kernel answers asynchronously); return its text."""
    try:
        page.wait_for_function("([s, t]) => document.querySelector(s).innerText.includes(t)", arg=[selector, text])
    except Exception:
        raise AssertionError(f"{selector} never showed {text!r}; it shows {page.locator(selector).inner_text()!r}") from None
    return page.locator(selector).inner_text()


def question_id(page, select: str) -> str:
    """The question id picked in a question list (its options read "q13 · question text")."""
    return page.locator(select).input_value().split(" · ")[0]


def wait_until_idle(page, name: str) -> None:
    """Wait until the widget is no longer marked busy."""
    page.wait_for_function("n => !document.querySelector('.' + n).classList.contains('rw-busy')", arg=name)


def reveal(page, name: str) -> None:
    """Press "show the numbers" (if they are hidden) and wait for the numbers to show."""
    if "rw-concealed" in (page.locator(f".{name}").get_attribute("class") or ""):
        page.locator(f".{name} .rw-reveal").click()
        page.wait_for_function("n => !document.querySelector('.' + n).classList.contains('rw-concealed')", arg=name)


def press_on(page, selector: str, key: str, times: int = 1) -> dict:
    """Focus a control (which makes its cell the active one, as a click would), press a key, and return
    the notebook's state before and after the key."""
    page.locator(selector).first.focus()
    page.wait_for_timeout(200)
    before = notebook_state(page)
    for _ in range(times):
        page.keyboard.press(key)
    page.wait_for_timeout(400)
    return {"before": before, "after": notebook_state(page)}


def assert_notebook_did_not_move(moved: dict, what: str) -> None:
    before, after = moved["before"], moved["after"]
    assert (before["active"], before["scroll"]) == (after["active"], after["scroll"]), (what, before, after)


def test_without_a_kernel_the_committed_notebook_shows_the_static_copies(page, browser, tmp_path):
    """Opened from a fresh clone (untrusted) or exported with nbconvert (as GitHub renders notebooks):
    each widget shows its static copy, and the note says it is not live."""
    assert page.committed == {"copies": len(WIDGETS_07), "notes": len(WIDGETS_07), "live": 0}, page.committed
    jupyter = str(Path(sys.executable).parent / "jupyter")
    subprocess.run([jupyter, "nbconvert", "--to", "html", str(NOTEBOOKS[0]), "--output-dir", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    exported = new_page(browser[0], 1366, 768)
    try:
        exported.goto((tmp_path / "07_widgets.html").as_uri())
        assert exported.evaluate(STATIC_STATE) == {"copies": len(WIDGETS_07), "notes": len(WIDGETS_07), "live": 0}
        exported.evaluate("() => document.querySelectorAll('.rw-static')[1].scrollIntoView({block: 'start'})")
        exported.screenshot(path=SCREENSHOTS / "1366x768_nbconvert_html_static_copy.png")
        details = exported.locator(".rw-static details").first
        assert not details.locator("table").first.is_visible()  # folded: predict first
        details.locator("summary").click()
        assert details.locator("table").first.is_visible()
    finally:
        exported.close()


@pytest.mark.parametrize("name", WIDGETS_07)
def test_each_widget_fits_reads_big_and_shows_once(page, name):
    layout = widget_layout(page, name)
    area = notebook_area(page)
    page.screenshot(path=SCREENSHOTS / f"1366x768_{name}.png")
    assert layout["height"] <= MAX_HEIGHT and layout["top"] + layout["height"] <= area["bottom"], (name, layout, area)
    assert layout["overflow"] <= 1 and layout["right"] <= layout["area_right"] + 1, (name, layout)
    assert layout["n_texts"] > 5 and not layout["small"], (name, layout["small"])
    assert layout["visible_outputs"] == 1 and layout["static_copies"] == 0 and not layout["note_visible"], layout


def test_figures_show_their_text_at_16_px(page):
    show_at_top(page, ".ceiling-widget")
    natural, shown = page.evaluate("() => { const i = document.querySelector('.ceiling-plot');"
                                   " return [i.naturalWidth, i.getBoundingClientRect().width]; }")
    assert FIGURE_PT / 72 * FIGURE_DPI * shown / natural >= MIN_TEXT_PX, (natural, shown)


def test_arrow_keys_act_on_the_control_and_never_move_the_notebook(page, golden):
    show_at_top(page, ".ranks-widget")
    first = question_id(page, ".ranks-question select")
    moved = press_on(page, ".ranks-question select", "ArrowDown")
    assert_notebook_did_not_move(moved, "ArrowDown on the question list")
    following = list(golden["id"])[list(golden["id"]).index(first) + 1]
    wait_for_text(page, ".ranks-head", f"{following} (")

    show_at_top(page, ".ceiling-widget")
    moved = press_on(page, ".ceiling-retriever button.mod-active", "ArrowRight")
    assert_notebook_did_not_move(moved, "ArrowRight on the retriever buttons")
    assert page.locator(".ceiling-retriever button.mod-active").inner_text() == "vector"
    moved = press_on(page, ".ceiling-retriever button.mod-active", "ArrowLeft")
    assert page.locator(".ceiling-retriever button.mod-active").inner_text() == "BM25"
    assert_notebook_did_not_move(moved, "ArrowLeft on the retriever buttons")
    wait_for_text(page, ".ceiling-sentence", "BM25 reaches")

    show_at_top(page, ".playground-widget")
    moved = press_on(page, ".playground-widget .rw-reveal", "ArrowDown")  # a button: nothing may scroll
    assert_notebook_did_not_move(moved, "ArrowDown on a button")

    show_at_top(page, ".rrf-widget")
    moved = press_on(page, ".rrf-question select", "ArrowUp")
    assert_notebook_did_not_move(moved, "ArrowUp on the RRF question list")
    page.locator(".rrf-widget .rw-reset").click()
    wait_until_idle(page, "rrf-widget")


def test_numbers_stay_hidden_until_shown_and_the_layout_does_not_move(page, qrels):
    show_at_top(page, ".ceiling-widget")
    value = page.locator(".ceiling-numbers .rw-num").first
    assert value.text_content() == f"{h.precision_ceiling(qrels, 3):.3f}" and not value.is_visible()  # "?" shows
    height = page.locator(".ceiling-widget").bounding_box()["height"]
    page.screenshot(path=SCREENSHOTS / "1366x768_ceiling_hidden_numbers.png")
    reveal(page, "ceiling-widget")
    assert value.is_visible()
    assert page.locator(".ceiling-widget").bounding_box()["height"] == height


def test_ceiling_widget_follows_the_k_slider_and_the_what_if(page, qrels, runs):
    show_at_top(page, ".ceiling-widget")
    reveal(page, "ceiling-widget")
    sentence = ".ceiling-widget .ceiling-sentence"
    wait_for_text(page, sentence, f"At k = 3, no ranking can pass precision@3 = {h.precision_ceiling(qrels, 3):.3f}")
    plot = page.locator(".ceiling-plot").get_attribute("src")
    page.screenshot(path=SCREENSHOTS / "1366x768_ceiling_k3_shown.png")

    press_on(page, ".ceiling-k .noUi-handle", "ArrowRight", times=2)
    text = wait_for_text(page, sentence, f"At k = 5, no ranking can pass precision@5 = {h.precision_ceiling(qrels, 5):.3f}")
    assert f"Changed: ceiling {h.precision_ceiling(qrels, 4):.3f} → {h.precision_ceiling(qrels, 5):.3f}" in text
    assert f"{h.precision_ceiling(qrels, 5):.3f}" in page.locator(".ceiling-numbers").inner_text()
    page.wait_for_function("old => document.querySelector('.ceiling-plot').src !== old", arg=plot)

    press_on(page, ".ceiling-what-if .noUi-handle", "ArrowRight", times=3)  # "as labelled" → 1 → 2 → 3
    hypothetical = h.precision_ceiling(h.hypothetical_qrels(qrels, 3), 5)
    wait_for_text(page, sentence, f"every question had 3 relevant chunks? Then the ceiling at k = 5 would be {hypothetical:.3f}")
    wait_until_idle(page, "ceiling-widget")
    page.screenshot(path=SCREENSHOTS / "1366x768_ceiling_k5_what_if_3.png")


def test_ranks_widget_follows_the_picked_question_and_the_search(page, runs, qrels, golden):
    show_at_top(page, ".ranks-widget")
    before = page.evaluate("() => ['.ranks-heatmap', '.ranks-chunks'].map(s => document.querySelector(s).getBoundingClientRect().top)")
    label = f"q02 · {golden.set_index('id').loc['q02', 'question']}"
    page.locator(".ranks-question select").select_option(label=label)
    wait_for_text(page, ".ranks-head", "q02 (")
    after = page.evaluate("() => ['.ranks-heatmap', '.ranks-chunks'].map(s => document.querySelector(s).getBoundingClientRect().top)")
    assert after == before  # the heat map and the chunks stay where they were
    frame = page.evaluate("() => [...document.querySelectorAll('.ranks-widget style')].map(s => s.textContent).join('')")
    assert "[data-q='q02'] { outline" in frame
    outlined = page.evaluate("() => getComputedStyle(document.querySelector(\".ranks-heatmap td[data-q='q02']\")).outlineStyle")
    assert outlined == "solid"
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    shown = page.locator(".ranks-chunks").inner_text()
    for retriever in runs:
        rank = ranks.loc["q02", retriever]
        assert f"{retriever}: first relevant at rank {rank}" in shown or f"{retriever}: no relevant chunk ranked" in shown
    page.screenshot(path=SCREENSHOTS / "1366x768_ranks_q02.png")

    page.locator(".ranks-search input").press_sequentially("frost", delay=80)  # one search after the pause
    wait_for_text(page, ".ranks-head", "q13 (")
    assert page.locator(".ranks-matches").inner_text() == f"1 of {len(golden)} questions match"
    assert "<mark>" in page.locator(".ranks-chunks").inner_html()  # the evidence string is marked
    faded = page.evaluate("() => getComputedStyle(document.querySelector(\".ranks-heatmap td[data-q='q01']\")).opacity")
    assert float(faded) < 0.5
    page.screenshot(path=SCREENSHOTS / "1366x768_ranks_search_frost.png")
    page.locator(".ranks-widget .rw-reset").click()
    wait_for_text(page, ".ranks-matches", f"{len(golden)} of {len(golden)}")


def test_playground_follows_clicks_and_k_and_marks_the_change(page):
    show_at_top(page, ".playground-widget")
    gains = [0, 2, 0, 1, 0, 0, 1, 0, 0, 0]  # the notebook's starting ranking
    page.locator(".playground-rank-1").click()  # 0 → 1
    page.locator(".playground-rank-1").click()  # 1 → 2
    gains[0] = 2
    press_on(page, ".playground-k .noUi-handle", "ArrowLeft", times=2)  # k = 3
    reveal(page, "playground-widget")
    result = h.playground_scores(gains, 3)
    for line in result["arithmetic"].values():
        wait_for_text(page, ".playground-scores", line)
    before = h.playground_scores(gains, 4)["scores"]["precision"]
    assert f"{before:.3f} → {result['scores']['precision']:.3f}" in page.locator(".playground-scores").inner_text()
    page.screenshot(path=SCREENSHOTS / "1366x768_playground_rank1_fully_k3_shown.png")
    page.locator(".playground-widget .rw-reset").click()
    wait_for_text(page, ".playground-rank-1", "#1 · 0")


def test_rrf_explainer_follows_the_rrf_constant(page, runs, qrels):
    show_at_top(page, ".rrf-widget")
    reveal(page, "rrf-widget")
    qid = question_id(page, ".rrf-question select")
    inputs = {"BM25": runs["BM25"][qid], "vector": runs["vector"][qid]}
    expected = h.rrf_explanation(inputs, qrels[qid], 60, 10, 3)
    rows = page.locator(".rrf-fused tr").all_inner_texts()[1:]
    assert [re.split(r"\s+", r.strip())[1] for r in rows] == expected["fused"]
    page.screenshot(path=SCREENSHOTS / "1366x768_rrf_shown.png")
    press_on(page, ".rrf-k .noUi-handle", "Home")  # RRF constant 0: rank 1 weighs 1/1
    expected = h.rrf_explanation(inputs, qrels[qid], 0, 10, 3)
    wait_for_text(page, ".rrf-fused", "1/(0 + rank)")
    wait_until_idle(page, "rrf-widget")
    rows = page.locator(".rrf-fused tr").all_inner_texts()[1:]
    assert [re.split(r"\s+", r.strip())[1] for r in rows] == expected["fused"]
    page.screenshot(path=SCREENSHOTS / "1366x768_rrf_constant_0.png")
    page.locator(".rrf-widget .rw-reset").click()
    wait_for_text(page, ".rrf-fused", "1/(60 + rank)")


def test_rank_slider_in_notebook_03(page03):
    layout = widget_layout(page03, "rank-slider-widget")
    page03.screenshot(path=SCREENSHOTS / "1366x768_rank-slider-widget.png")
    assert layout["height"] <= MAX_HEIGHT and layout["overflow"] <= 1 and not layout["small"], layout
    assert layout["visible_outputs"] == 1 and layout["static_copies"] == 0, layout
    moved = press_on(page03, ".rank-slider-rank .noUi-handle", "ArrowRight")  # rank 3 → 4
    assert_notebook_did_not_move(moved, "ArrowRight on the rank slider")
    reveal(page03, "rank-slider-widget")
    text = wait_for_text(page03, ".rank-slider-readout", "1 / rank = 1 / 4 = 0.250")
    assert "RR 0.333 → 0.250" in text and "RR@3 0.333 → 0.000" in text
    page03.screenshot(path=SCREENSHOTS / "1366x768_rank-slider_rank4_shown.png")


def test_at_150_percent_zoom_the_plot_stays_beside_the_controls(page):
    """150% zoom on a 1366×768 screen lays the page out at 911×512 CSS px."""
    page.set_viewport_size({"width": 911, "height": 512})
    try:
        page.wait_for_timeout(1500)  # JupyterLab lays itself out again
        show_at_top(page, ".ceiling-widget")
        boxes = page.evaluate("""() => ['.ceiling-k', '.ceiling-plot', '.ceiling-widget'].map(s => {
            const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })""")
        (k_left, k_right, k_top, _), (plot_left, _, plot_top, _), _ = boxes
        area = notebook_area(page)
        page.screenshot(path=SCREENSHOTS / "911x512_zoom150_ceiling-widget.png")
        assert plot_left >= k_right and plot_top < area["bottom"] - 200, (boxes, area)  # beside, mostly in view
        for name in WIDGETS_07:
            layout = widget_layout(page, name)
            page.screenshot(path=SCREENSHOTS / f"911x512_zoom150_{name}.png")
            assert layout["overflow"] <= 1, (name, layout)
    finally:
        page.set_viewport_size({"width": 1366, "height": 768})


def test_screenshots_at_1920x1080(page):
    page.set_viewport_size({"width": 1920, "height": 1080})
    try:
        page.wait_for_timeout(1500)
        for name in WIDGETS_07:
            layout = widget_layout(page, name)
            page.screenshot(path=SCREENSHOTS / f"1920x1080_{name}.png")
            assert layout["height"] <= MAX_HEIGHT and layout["overflow"] <= 1, (name, layout)
    finally:
        page.set_viewport_size({"width": 1366, "height": 768})


def test_after_a_kernel_restart_each_widget_says_it_is_not_live(page):
    menu(page, "Kernel", "Restart Kernel…")
    page.locator(".jp-Dialog button", has_text=re.compile(r"^Restart$")).click()
    page.wait_for_selector(".rw-widget.jupyter-widgets-disconnected", state="attached")
    for name in WIDGETS_07:
        layout = widget_layout(page, name)
        assert layout["note_visible"], name
    show_at_top(page, ".ceiling-widget")
    page.evaluate("() => document.querySelector('.ceiling-widget').closest('.jp-Cell')"
                  ".querySelector('.rw-kernel-note').scrollIntoView({block: 'end'})")
    page.screenshot(path=SCREENSHOTS / "1366x768_after_restart_ceiling.png")
