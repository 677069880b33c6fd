"""JupyterLab in headless Chromium, for the browser test (tests/test_browser.py) and the widget benchmark
(``python benchmarks/bench.py widgets``).

:func:`jupyterlab` copies notebooks into a temporary folder (nothing is written into the repository) and
starts JupyterLab there on a free 127.0.0.1 port with a random token, its settings and state in that
folder; :func:`chromium` opens Debian's Chromium through Playwright (its own browser download does not
work here) with real scrollbars (Playwright hides them by default); :func:`open_and_run` opens a notebook
and runs all its cells; :func:`save_notebook` saves it with its outputs. Every wait has a timeout, and the
server, its kernels and the browser are stopped when the ``with`` blocks end.
"""

from __future__ import annotations

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil

from retrieval_eval.course.plots import FONT_PT

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
SERVER_START_S = 90
RUN_ALL_S = 300  # loading the embedding model and ranking 47 questions on a busy 2-core machine
STEP_MS = 60_000  # any single page step
KERNEL_IDLE = "Python 3 (ipykernel) | Idle"


def execute(notebook: Path, folder: Path) -> Path:
    """Run a notebook with nbclient as ``make notebooks`` does (no widget state saved); write it into ``folder``."""
    import nbclient
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    nbclient.NotebookClient(nb, timeout=RUN_ALL_S, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    path = folder / notebook.name
    nbformat.write(nb, path)
    return path


# A JavaScript function: the size in CSS px at which an <img> shows a figure's smallest text, FONT_PT (every figure's,
# tests/test_plots.py), from the dpi in its PNG's pHYs chunk and the size it is shown at; NaN without a pHYs chunk.
FIGURE_TEXT_PX = """img => {
  const data = img.src.startsWith('data:image/png;base64,') ? atob(img.src.slice(22, 22 + 4096)) : '';
  const at = data.indexOf('pHYs');
  const perMetre = at < 0 ? NaN : [0, 1, 2, 3].reduce((v, j) => v * 256 + data.charCodeAt(at + 4 + j), 0);
  return FONT_PT / 72 * perMetre * 0.0254 * img.getBoundingClientRect().height / img.naturalHeight;
}""".replace("FONT_PT", str(FONT_PT))


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


@contextmanager
def jupyterlab(tmp: Path, notebooks: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """JupyterLab serving copies of ``notebooks`` from ``tmp/notebooks``: yields (base URL, token)."""
    root, state = tmp / "notebooks", tmp / "state"
    root.mkdir(parents=True)
    for notebook in notebooks:
        shutil.copy(notebook, root)
    # `make lab`'s JupyterLab (the Makefile's LAB_ENV): its config (custom CSS, no news, no update checks), custom.css
    # and settings (no news toast, every cell rendered, no autosave: tests save explicitly) from lab/.
    shutil.copytree(ROOT / "lab" / "settings", state / "settings")
    (state / "config" / "custom").mkdir(parents=True)
    shutil.copy(ROOT / "lab" / "custom.css", state / "config" / "custom")
    shutil.copy(ROOT / "lab" / "jupyter_lab_config.json", state / "config")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
               JUPYTER_RUNTIME_DIR=str(state / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"), IPYTHONDIR=str(state / "ipython"),
               MPLCONFIGDIR=str(state / "matplotlib"))
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={root}"]
    with open(tmp / "jupyterlab.log", "w") as log:
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


@contextmanager
def chromium():
    """Debian's headless Chromium, driven by Playwright (its own browser download does not work here)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=STEP_MS,
                                             ignore_default_args=["--hide-scrollbars"])
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, width: int = 1366, height: int = 768, scale: float = 1.0):
    """A page of ``width`` × ``height`` CSS px; ``scale`` = device pixels per CSS px (125% browser zoom on
    a 1366×768 screen lays out as a 1093×614 page at scale 1.25)."""
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=scale)
    page.set_default_timeout(STEP_MS)
    return page


def open_notebook(page, base: str, token: str, name: str) -> None:
    """Open a notebook, wait for its kernel, fold the file browser (as a teacher presenting would)."""
    page.goto(f"{base}/lab/tree/{name}?token={token}&reset")
    page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE).wait_for()
    tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if tab.count():
        tab.click()


def menu(page, top: str, item: str) -> None:
    """Choose a menu item, e.g. ``menu(page, "Run", "Run All Cells")``."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(top)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}")).first.click()


def run_all(page, wait_for: Sequence[str] = (), screenshot: Path | None = None) -> None:
    """Run all cells; wait until the selectors in ``wait_for`` are on the page and the kernel is idle.

    On failure, saves ``screenshot`` and raises AssertionError with the errors shown on the page.
    """
    try:
        menu(page, "Run", "Run All Cells")
        for selector in wait_for:
            page.wait_for_selector(selector, state="attached", timeout=RUN_ALL_S * 1000)
        # The kernel is idle between two cells too: wait until no cell is queued or running ("[*]") as well.
        page.wait_for_function("""() => ![...document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')].some(p => p.innerText.includes('*'))""",
                               timeout=RUN_ALL_S * 1000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", state="attached",
                               timeout=RUN_ALL_S * 1000)
        page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE).wait_for(timeout=RUN_ALL_S * 1000)
    except Exception:
        if screenshot is not None:
            page.screenshot(path=screenshot)
        errors = page.locator(".jp-OutputArea-output[data-mime-type*='error'], "
                              ".jp-OutputArea-output[data-mime-type*='stderr']").all_inner_texts()
        raise AssertionError(f"running all cells failed; errors on the page: {errors}") from None


def open_and_run(page, base: str, token: str, name: str, wait_for: Sequence[str] = (),
                 screenshot: Path | None = None) -> None:
    """:func:`open_notebook`, then :func:`run_all`."""
    open_notebook(page, base, token, name)
    run_all(page, wait_for, screenshot)


def save_notebook(page, path: Path) -> None:
    """Save the notebook shown (Ctrl+S) and wait until JupyterLab has written it to ``path``, its served copy."""
    before, deadline = path.stat().st_mtime_ns, time.monotonic() + STEP_MS / 1000
    page.keyboard.press("Control+s")
    while path.stat().st_mtime_ns == before:
        if time.monotonic() > deadline:
            raise AssertionError(f"JupyterLab did not save {path.name}")
        time.sleep(0.1)


def show_at_top(page, selector: str) -> None:
    """Scroll the notebook so the element's top is at the top of the notebook area (as a teacher would)."""
    page.evaluate("s => document.querySelector(s).scrollIntoView({block: 'start'})", selector)
    page.wait_for_timeout(300)


def notebook_area(page) -> dict:
    """The visible notebook area's box in CSS px: ``{top, bottom, left, right, height}``."""
    return page.evaluate("""() => {
      const r = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
                .getBoundingClientRect();
      return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
    }""")


def notebook_state(page) -> dict:
    """The active cell's index, the notebook's scroll position and the focused element."""
    return page.evaluate("""() => {
      const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
      const cells = [...nb.querySelectorAll('.jp-Cell')];
      const outer = nb.closest('.jp-WindowedPanel-outer') || nb.querySelector('.jp-WindowedPanel-outer');
      const a = document.activeElement;
      return {active: cells.findIndex(c => c.classList.contains('jp-mod-active')),
              scroll: outer ? outer.scrollTop : null, focus: a ? a.tagName + '.' + a.className : null};
    }""")


def widget(page, name: str, nth: int = 0):
    """A widget of the notebook shown, by its class (``playground-widget``)."""
    return page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) .{name}").nth(nth)


def wait_idle(root) -> None:
    """Wait until the widget has drawn its last change (it is ``rw-busy`` while it computes)."""
    root.page.wait_for_timeout(250)
    root.page.wait_for_function("e => !e.classList.contains('rw-busy')", arg=root.element_handle())


# A JavaScript function: count on the widget's element each time its class ``rw-busy`` goes (the kernel has drawn).
WATCH_DRAWS = """e => { e._draws = 0; if (e._watch) e._watch.disconnect();
  e._watch = new MutationObserver(records => records.forEach(r => {
    if ((r.oldValue || '').includes('rw-busy') && !e.classList.contains('rw-busy')) e._draws++; }));
  e._watch.observe(e, {attributes: true, attributeFilter: ['class'], attributeOldValue: true}); }"""


def redrawn(root, action: Callable[[], object]) -> None:
    """Do ``action`` (a click, a key) and wait until the kernel has drawn the widget again for it: its ``rw-busy``
    came and went. A fixed wait lost that race on a loaded machine, where the kernel starts seconds later."""
    root.evaluate(WATCH_DRAWS)
    action()
    root.page.wait_for_function("e => e._draws > 0", arg=root.element_handle())
    wait_idle(root)


def set_shown(root, shown: bool) -> None:
    """Press the widget's *show the numbers* toggle if its numbers are not already shown (or hidden), and wait for the
    kernel's redraw (every redraw, a reveal too, marks the widget ``rw-busy``)."""
    button = root.locator(".rw-reveal")
    if ("mod-active" in (button.get_attribute("class") or "")) != shown:
        redrawn(root, button.click)


def reset(root) -> None:
    """Press the widget's *reset* and wait for its redraw."""
    redrawn(root, root.locator(".rw-reset").first.click)


def press(root, control: str, key: str, times: int = 1) -> None:
    """Press ``key`` on a slider's handle (``.playground-k``) ``times`` times, each change drawn before the next."""
    handle = root.locator(f"{control} .noUi-handle").first
    for _ in range(times):
        redrawn(root, lambda: (handle.focus(), root.page.keyboard.press(key)))


# A JavaScript function: the text of the visible notebook area, one text node a line (a node counts when its box
# is inside the area and shown: a folded <details>, a collapsed output or a cell scrolled away shows nothing).
SCREEN_TEXT = """() => {
  const area = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer').getBoundingClientRect();
  const walker = document.createTreeWalker(document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook'),
                                           NodeFilter.SHOW_TEXT);
  const range = document.createRange(), lines = [];
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement, fold = parent.closest('details:not([open])');
    if ((fold && !parent.closest('summary')) || !parent.checkVisibility({visibilityProperty: true})) continue;
    range.selectNodeContents(walker.currentNode);
    const r = range.getBoundingClientRect();
    if (r.height > 0 && r.bottom > area.top && r.top < area.bottom && walker.currentNode.textContent.trim())
      lines.push(walker.currentNode.textContent.trim());
  }
  return lines.join('\\n');
}"""


def shut_down_kernels(base: str, token: str) -> None:
    """Stop every kernel the server runs (a notebook page closed leaves its kernel running)."""
    headers = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=headers), timeout=30) as answer:
        kernels = json.load(answer)
    for kernel in kernels:
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", method="DELETE",
                                                      headers=headers), timeout=30).close()
