"""The three widgets in a real browser: JupyterLab 4 on localhost, headless Chromium via Playwright.

The test copies notebooks/07_widgets.ipynb to a temporary folder (nothing is written into the
repository), starts JupyterLab there on a free 127.0.0.1 port with a random token, opens the
notebook in Debian's Chromium, runs all cells, moves sliders, picks questions and clicks the
playground, and checks what the page shows against values computed here with helpers.py.
Screenshots go to output/screenshots/ (ignored by git). Every wait has a timeout, and the server,
its kernel and the browser are stopped in the fixtures' teardown.

Needs /usr/bin/chromium (``make test`` installs Debian's chromium when it is missing; Playwright's
own browser download is not used).
"""

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import psutil
import pytest

import helpers as h

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "07_widgets.ipynb"
SCREENSHOTS = ROOT / "output" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
SERVER_START_S = 90
RUN_ALL_S = 300  # loading the embedding model and ranking 47 questions on a busy 2-core machine
STEP_MS = 60_000  # any single page step

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                "(make test installs it with apt-get)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_server(process: subprocess.Popen, base: str, token: str) -> None:
    """Shut JupyterLab down with its kernels; kill whatever is left (kernels run in their own session)."""
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    try:
        request = urllib.request.Request(f"{base}/api/shutdown", method="POST",
                                         headers={"Authorization": f"token {token}"})
        urllib.request.urlopen(request, timeout=10).close()
    except OSError:
        pass
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    _, alive = psutil.wait_procs(children, timeout=10)
    for child in alive:
        child.kill()
    psutil.wait_procs(alive, timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a copy of the widgets notebook: yields (base URL, token)."""
    tmp = tmp_path_factory.mktemp("lab")
    root, state = tmp / "notebooks", tmp / "state"
    root.mkdir()
    shutil.copy(NOTEBOOK, root)
    # User settings: no news or update checks (they would try the internet and put a toast over the
    # page), and every cell kept rendered (JupyterLab skips rendering cells out of view by default).
    for plugin, values in {"apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
                           "notebook-extension/tracker": {"windowingMode": "none"}}.items():
        path = state / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
               JUPYTER_RUNTIME_DIR=str(state / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"), IPYTHONDIR=str(state / "ipython"),
               MPLCONFIGDIR=str(state / "matplotlib"))
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(tmp / "jupyterlab.log", "w")
    process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start; see {tmp / 'jupyterlab.log'}") from None
                time.sleep(0.5)
        yield base, token
    finally:
        stop_server(process, base, token)
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    """The widgets notebook open in headless Chromium, all cells run."""
    from playwright.sync_api import sync_playwright

    base, token = lab
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=STEP_MS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.set_default_timeout(STEP_MS)
            try:
                page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?token={token}")
                kernel_idle = page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")
                kernel_idle.wait_for()  # the kernel has started (Run All before that asks which kernel to use)
                page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()  # fold the file browser
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
                # The widgets appear once the retrievers have run; then wait for the kernel to finish.
                for selector in (".playground-widget", ".ceiling-widget", ".ranks-widget .ranks-table"):
                    page.wait_for_selector(selector, state="attached", timeout=RUN_ALL_S * 1000)
                page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=RUN_ALL_S * 1000)
                kernel_idle.wait_for(timeout=RUN_ALL_S * 1000)
            except Exception:
                page.screenshot(path=SCREENSHOTS / "failed_run_all.png")
                errors = page.locator(".jp-OutputArea-output[data-mime-type*='error'], "
                                      ".jp-OutputArea-output[data-mime-type*='stderr']").all_inner_texts()
                raise AssertionError(f"running all cells failed; errors on the page: {errors}") from None
            page.screenshot(path=SCREENSHOTS / "00_run_all_done.png")
            yield page
        finally:
            browser.close()


def move_slider(page, slider_class: str, steps: int) -> None:
    """Move an ipywidgets slider with the keyboard, as a reader would (arrow keys on its handle)."""
    handle = page.locator(f".{slider_class} .noUi-handle").first
    handle.click()
    for _ in range(abs(steps)):
        handle.press("ArrowRight" if steps > 0 else "ArrowLeft")


def wait_for_text(page, selector: str, text: str) -> str:
    """Wait until the element shows ``text`` (the kernel answers asynchronously); return its text."""
    try:
        page.wait_for_function("([selector, text]) => document.querySelector(selector).innerText.includes(text)",
                               arg=[selector, text])
    except Exception:
        raise AssertionError(f"{selector} never showed {text!r}; it shows {page.locator(selector).inner_text()!r}") from None
    return page.locator(selector).inner_text()


def image_src(page, selector: str) -> str:
    """The src (a data: URL) of the figure an Output widget shows, once it has loaded."""
    page.wait_for_function("selector => { const img = document.querySelector(selector + ' img');"
                           " return img !== null && img.complete && img.naturalWidth > 0; }", arg=selector)
    return page.locator(f"{selector} img").first.get_attribute("src")


def wait_for_new_image(page, selector: str, old_src: str) -> None:
    """Wait until the Output widget shows another figure than ``old_src``, loaded and unchanged for 1 s.

    The widgets send the figure before the text, so once the text is current this waits at most
    for the browser to decode the image; the quiet second guards against a figure still on its way.
    """
    page.wait_for_function("([selector, old]) => { const img = document.querySelector(selector + ' img');"
                           " return img !== null && img.src !== old && img.complete && img.naturalWidth > 0; }",
                           arg=[selector, old_src])
    src = image_src(page, selector)
    for _ in range(30):
        page.wait_for_timeout(1000)
        latest = image_src(page, selector)
        if latest == src:
            return
        src = latest
    raise AssertionError(f"the figure in {selector} kept changing for 30 s")


def test_ceiling_widget_follows_the_k_slider_and_the_what_if(page, qrels):
    sentence = page.locator(".ceiling-widget .ceiling-sentence")
    sentence.scroll_into_view_if_needed()
    assert f"At k = 3, no ranking can pass precision@3 = {h.precision_ceiling(qrels, 3):.3f}" in sentence.inner_text()
    plot = image_src(page, ".ceiling-widget .ceiling-plot")
    page.locator(".ceiling-widget").screenshot(path=SCREENSHOTS / "01_ceiling_k3.png")

    move_slider(page, "ceiling-k", 2)
    text = wait_for_text(page, ".ceiling-widget .ceiling-sentence",
                         f"At k = 5, no ranking can pass precision@5 = {h.precision_ceiling(qrels, 5):.3f}")
    assert "What if" not in text
    assert f"{h.precision_ceiling(qrels, 5):.3f}" in page.locator(".ceiling-widget .ceiling-numbers").inner_text()
    wait_for_new_image(page, ".ceiling-widget .ceiling-plot", plot)
    plot = image_src(page, ".ceiling-widget .ceiling-plot")

    move_slider(page, "ceiling-what-if", 3)  # "as labelled" → 1 → 2 → 3 relevant chunks per question
    hypothetical = h.precision_ceiling(h.hypothetical_qrels(qrels, 3), 5)
    wait_for_text(page, ".ceiling-widget .ceiling-sentence",
                  f"every question had 3 relevant chunks? Then the ceiling at k = 5 would be {hypothetical:.3f}")
    wait_for_new_image(page, ".ceiling-widget .ceiling-plot", plot)
    page.locator(".ceiling-widget").screenshot(path=SCREENSHOTS / "02_ceiling_k5_what_if_3.png")


def rank_cells(ranks, qid, retrievers):
    return [str(ranks.loc[qid, r]) if not pd.isna(ranks.loc[qid, r]) else "not found" for r in retrievers]


def test_ranks_widget_follows_the_picked_question(page, runs, qrels, golden):
    ranks = h.first_relevant_ranks(runs, qrels, golden)
    table = page.locator(".ranks-widget .ranks-table")
    table.scroll_into_view_if_needed()
    first = table.inner_text()
    overview = image_src(page, ".ranks-widget .ranks-overview")

    # Pick a question from the dropdown.
    target = "q02"
    label = f"{target} · {golden.set_index('id').loc[target, 'question']}"
    page.locator(".ranks-widget .ranks-question select").select_option(label=label)
    shown = wait_for_text(page, ".ranks-widget .ranks-table", f"{target} (")
    assert shown != first
    for retriever, cell in zip(runs, rank_cells(ranks, target, runs)):
        assert f"{retriever}\t{cell}\t" in shown, (retriever, cell, shown)
    wait_for_new_image(page, ".ranks-widget .ranks-overview", overview)  # the heat map frames q02 now
    overview = image_src(page, ".ranks-widget .ranks-overview")
    page.locator(".ranks-widget").screenshot(path=SCREENSHOTS / "03_ranks_q02.png")

    # Search by words: only q13 mentions frost, so it is picked.
    page.locator(".ranks-widget .ranks-search input").fill("frost")
    shown = wait_for_text(page, ".ranks-widget .ranks-table", "q13 (")
    for retriever, cell in zip(runs, rank_cells(ranks, "q13", runs)):
        assert f"{retriever}\t{cell}\t" in shown, (retriever, cell, shown)
    chunks_html = page.locator(".ranks-widget .ranks-chunks").inner_html()
    assert "<mark>" in chunks_html  # the evidence string is marked in a relevant chunk
    wait_for_new_image(page, ".ranks-widget .ranks-overview", overview)
    page.locator(".ranks-widget").screenshot(path=SCREENSHOTS / "04_ranks_search_frost.png")


def test_playground_follows_clicks_and_k(page):
    scores = page.locator(".playground-widget .playground-scores")
    scores.scroll_into_view_if_needed()
    gains = [0, 2, 0, 1, 0, 0, 1, 0, 0, 0]  # the notebook's starting ranking
    expected = h.playground_scores(gains, 5)["arithmetic"]["nDCG"]
    assert expected in scores.inner_text()

    page.locator(".playground-widget .playground-rank-1").click()  # 0 → 1
    page.locator(".playground-widget .playground-rank-1").click()  # 1 → 2
    gains[0] = 2
    move_slider(page, "playground-k", -2)  # k = 3
    result = h.playground_scores(gains, 3)
    for line in result["arithmetic"].values():
        wait_for_text(page, ".playground-widget .playground-scores", line)
    page.locator(".playground-widget").screenshot(path=SCREENSHOTS / "05_playground_rank1_fully_k3.png")
