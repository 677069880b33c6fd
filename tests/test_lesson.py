"""The lesson plan walked in one tab: each core notebook opened in JupyterLab at 1366×768 (scrollbars shown), Run All
(the run's one execution of it, saved and checked as tests/test_notebooks.py checks the others: no error, nothing
written under data/, the committed key outputs, with an empty cache), View ▸ Appearance ▸ Presentation Mode
(lab/custom.css loaded, as ``make lab`` does), then every prompt to predict (each ask of the lesson plan:
tests/test_course.py counts them) scrolled to the top of the notebook as a lecturer would show it. Before its step no line the step reveals is on the screen; the step (opening the fold under
the prompt) reveals it. Tables and the interview lines read at 16 px or more, the interview lines left-aligned, and
every figure's text at 16 px or more as shown (a live widget's figure: tests/test_browser.py). Slides are
tests/test_slides.py's.

Then every guided step of the widgets, as the lesson plan's teacher's key lists them: each widget driven in the page as
the class drives it (clicks, slider keys, from *reset*) with its numbers hidden; with the step's instruction and then
the widget at the top and at the bottom of the screen (the notebook's reveals still folded), none of the step's answer is on screen; after *show the numbers* the widget shows
the key's expected value (read off the page, not from the kernel).

With LESSON_SHOTS set to a folder, a screenshot of each step before and after goes there
(``LESSON_SHOTS=output/screenshots/lesson``).
"""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from test_course import prompt_cells
from test_notebooks import check_execution, data_fingerprint
from test_slides import CORE

import helpers as h
from lab import (
    CHROMIUM,
    FIGURE_TEXT_PX,
    ROOT,
    SCREEN_TEXT,
    chromium,
    jupyterlab,
    menu,
    new_page,
    open_and_run,
    open_notebook,
    press,
    redrawn,
    reset,
    save_notebook,
    set_shown,
    shut_down_kernels,
    widget,
)
from retrieval_eval.course.widgets.key import teacher_key

DEEP = [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) if p not in CORE
        and any("image/png" in o.get("data", {}) or "data:image/png" in "".join(o.get("data", {}).get("text/html", ""))
                for c in json.loads(p.read_text(encoding="utf-8"))["cells"] for o in c.get("outputs", []))]
SHOTS = Path(os.environ["LESSON_SHOTS"]).absolute() if os.environ.get("LESSON_SHOTS") else None

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("lesson"),
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]

# The Markdown cells that ask a class to predict ("predict", any case), and for each the cells up to the next Markdown cell (its reveal).
PROMPTS = """() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
  return cells.flatMap((c, i) => c.classList.contains('jp-MarkdownCell') && /\\bpredict\\b/i.test(c.innerText) ? [i] : []);
}"""
# The lines with a value (a decimal, a percentage, True or False) on screen (inside the notebook's visible area), or in
# the reveal cells of prompt ``i`` (``open``: with their folds opened).
SCREEN = """([i, which]) => {
  const area = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer').getBoundingClientRect();
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
  let parts;
  if (which === 'screen') {
    parts = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook :is(.jp-RenderedHTMLCommon, .jp-OutputArea-output)')]
      .filter(e => { const r = e.getBoundingClientRect(); return r.height > 0 && r.bottom > area.top && r.top < area.bottom; });
  } else {
    const end = cells.findIndex((c, j) => j > i && c.classList.contains('jp-MarkdownCell'));
    parts = cells.slice(i + 1, end < 0 ? undefined : end).map(c => c.querySelector('.jp-Cell-outputWrapper')).filter(Boolean);
    if (which === 'open') parts.forEach(p => p.querySelectorAll('details:not(.rw-widget details)').forEach(d => { d.open = true; }));
  }
  return [...new Set(parts.flatMap(e => e.innerText.split('\\n')).map(t => t.trim())
                              .filter(t => /\\d\\.\\d|\\d%|\\bTrue\\b|\\bFalse\\b/.test(t)))];
}"""
TYPE = """() => {
  const shown = e => e.getBoundingClientRect().height > 0;
  const nb = '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook';
  const size = e => parseFloat(getComputedStyle(e).fontSize);
  return {
    presenting: document.querySelector('.jp-LabShell').classList.contains('jp-mod-presentationMode'),
    tables: [...document.querySelectorAll(`${nb} .jp-OutputArea-output table`)].filter(shown).map(size),
    figures: [...document.querySelectorAll(`${nb} .jp-OutputArea-output img[src^="data:"]`)].filter(shown)
               .map(img => (FIGURE_TEXT_PX)(img)),
    lines: [...document.querySelectorAll(`${nb} .jp-OutputArea-output p`)].filter(p => /^\\S.*\\?/.test(p.innerText))
             .filter(p => p.querySelector('strong')).map(p => [size(p), getComputedStyle(p).textAlign]),
    cut_code: [...document.querySelectorAll(`${nb} .jp-Cell`)].flatMap((c, i) => {
      const s = c.querySelector('.jp-InputArea-editor .cm-scroller');
      return s && shown(s) && s.scrollWidth > s.clientWidth + 1 ? [[i, s.scrollWidth, s.clientWidth]] : [];
    }),
  };
}""".replace("FIGURE_TEXT_PX", FIGURE_TEXT_PX)


def number(root, pattern: str) -> str | None:
    """The first group of ``pattern`` in the widget's text as shown, or None (hidden numbers show "?")."""
    found = re.search(pattern, root.inner_text())
    return found.group(1) if found else None


def clicks(*selectors: str):
    return lambda root: [redrawn(root, root.locator(s).first.click) for s in selectors]


def keys(control: str, key: str, times: int = 1):
    return lambda root: press(root, control, key, times)


def ceiling_falls(root) -> str:
    falls = []
    for key, times, k in (("ArrowLeft", 2, 1), ("ArrowRight", 1, 2), ("ArrowRight", 1, 3), ("ArrowRight", 2, 5),
                          ("ArrowRight", 5, 10)):
        press(root, ".ceiling-k", key, times)
        ceiling = number(root.locator(".ceiling-numbers"), r"ceiling\s+(\d\.\d{3})")
        falls.append(f"k = {k}: {ceiling}")
    return "; ".join(falls)


def best_share(root) -> str:
    rows = re.findall(r"\n(\S+)\s+(\d\.\d{3})\s+\d\.\d{3}\s+\d+%", root.locator(".ceiling-numbers").inner_text())
    best = max(rows, key=lambda row: float(row[1]))[0]  # the highest precision@3 in the widget's table
    button = root.locator(".ceiling-retriever button", has_text=re.compile(rf"^{re.escape(best)}$"))
    if "mod-active" not in (button.get_attribute("class") or ""):  # a click on the chosen one draws nothing
        redrawn(root, button.click)
    share = number(root, rf"{re.escape(best)} reaches precision@3 = [\d.]+, (\d+%)")
    return f"{best}: {share}"


def rank_costs(root) -> str:
    rr = {}
    for key, times, rank in (("ArrowLeft", 2, 1), ("ArrowRight", 1, 2), ("ArrowRight", 7, 9), ("ArrowRight", 1, 10)):
        press(root, ".rank-slider-rank", key, times)
        rr[rank] = float(number(root, r"RR\s*=\s*(\d\.\d{3})"))
    return f"1 → 2 costs {rr[1] - rr[2]:.3f}; 9 → 10 costs {rr[9] - rr[10]:.3f}"


def misses(root) -> str:
    cells = root.evaluate("""r => [...r.querySelectorAll('.rw-heat-wide tr')].flatMap(tr =>
        [...tr.querySelectorAll('td')].map(td => [tr.querySelector('th').innerText, td.dataset.q, td.innerText]))""")
    if not cells or any(text == "?" for *_, text in cells):
        return None
    missed = {run: {q for name, q, text in cells if name == run and (not text.isdigit() or int(text) > 3)}
              for run in ("BM25", "vector")}
    return f"BM25 misses {len(missed['BM25'])}, vector {len(missed['vector'])}, both {len(missed['BM25'] & missed['vector'])}"


def fusion(root) -> str:
    first = number(root.locator(".rrf-fused"), r"\n1\s+(\S+#\d+)")
    ranks = re.search(r"1st relevant\s+(\S+)\s+(\S+)\s+(\S+)", root.locator(".rrf-metrics").inner_text())
    verdict = number(root, r"Fusion (\w+)")
    return (f"{first} first; first relevant at rank {ranks[3]} (BM25 {ranks[1]}, vector {ranks[2]}): fusion {verdict}"
            if first and ranks and verdict else None)


# The teacher's key's steps, in order: (widget, reset first, what the class does before the reveal, what the widget
# shows after it, in the key's words). A step without reset goes on from the one before.
STEPS = {
    ("01", 1): ("playground-widget", True, clicks(".playground-rank-6", ".playground-rank-2"),
                lambda r: number(r, r"recall@3\s+(\d\.\d{3})")),
    ("01", 2): ("playground-widget", True, clicks(".playground-rank-5"), lambda r: number(r, r"recall@3\s+(\d\.\d{3})")),
    ("02", 1): ("playground-widget", True, lambda r: (clicks(".playground-rank-4")(r), keys(".playground-k", "ArrowRight", 2)(r)),
                lambda r: number(r, r"precision@5\s+(\d\.\d{3})")),
    ("02", 2): ("playground-widget", False, clicks(".playground-rank-1", ".playground-rank-2"),
                lambda r: number(r, r"precision@5\s+(\d\.\d{3})")),
    ("02", 3): ("playground-widget", False, lambda r: None, lambda r: number(r, r"precision@5\s+(\d\.\d{3})")),
    ("02", 4): ("ceiling-widget", True, lambda r: None, ceiling_falls),
    ("02", 5): ("ceiling-widget", True, lambda r: None, best_share),
    ("03", 1): ("rank-slider-widget", True, keys(".rank-slider-rank", "ArrowRight"),
                lambda r: "RR {}, RR@3 {}".format(*found) if len(found := re.findall(r"RR(?:@3)?\s*=\s*(\d\.\d{3})",
                                                                                     r.inner_text())) >= 2 else None),
    ("03", 2): ("rank-slider-widget", True, lambda r: None, rank_costs),
    ("04", 1): ("playground-widget", True, clicks(".playground-rank-1", ".playground-rank-3", ".playground-rank-3"),
                lambda r: number(r, r"nDCG@3\s+(\d\.\d{3})")),
    ("04", 2): ("playground-widget", False, keys(".playground-missed", "ArrowRight"),
                lambda r: number(r, r"nDCG@3\s+(\d\.\d{3})")),
    ("05", 1): ("ranks-widget", True, lambda r: None, misses),
    ("05", 2): ("rrf-widget", True, lambda r: None, fusion),
    ("06", 1): ("depth-widget", True, lambda r: None,
                lambda r: "{}; could fix {}, cannot fix {}".format(*found) if None not in (found := (
                    number(r, r"ceiling \(recall@10\)\s+(\d\.\d{3})"), number(r, r"could fix \([^)]*\): (\d+)"),
                    number(r, r"cannot fix \([^)]*\): (\d+)"))) else None),
}
DRIVES = {ceiling_falls, best_share, rank_costs}  # these read while they move a control: read once, shown
DECIMAL = re.compile(r"\d+\.\d+%?|\d+%")  # a value as a key or a screen writes it: 0.5, 0.500, 50%


def values(text: str) -> dict[float, float]:
    """Each value in ``text`` and half its last digit: 0.500 ± 0.0005, 79% ± 0.005."""
    return {float(v.rstrip("%")) / (100 if v.endswith("%") else 1):
            0.5 * 10 ** -(len(v.rstrip("%").split(".")[1]) if "." in v else 0) / (100 if v.endswith("%") else 1)
            for v in DECIMAL.findall(text)}


def early(expected: str, screen: str) -> list:
    """The key's values (but 0) that the screen shows within the key's rounding: 1.0 for 1.000, 0.794 for 79%."""
    shown = values(screen)
    return [v for v, half in values(expected).items() if v and any(abs(v - x) <= half + 1e-9 for x in shown)]


@pytest.fixture(scope="module")
def key():
    return teacher_key(h.evaluation_setup())


def screens(page, root) -> str:
    """What is on screen with the step's instruction (the Markdown cell above the widget) at the top, then the widget
    at the top, then at the bottom (with what leads to it above)."""
    texts = []
    for target, block in (("e => { let c = e.closest('.jp-Cell').previousElementSibling; while (c && !c.classList"
                           ".contains('jp-MarkdownCell')) c = c.previousElementSibling; return c; }", "start"),
                          ("e => e", "start"), ("e => e", "end")):
        root.evaluate(f"e => ({target})(e).scrollIntoView({{block: '{block}'}})")
        page.wait_for_timeout(300)
        texts.append(page.evaluate(SCREEN_TEXT))
    return "\n".join(texts)


def walk_widget_steps(page, notebook: str, key) -> list:
    """Every key step of this notebook driven in the page: the problems found (an answer early, a wrong value)."""
    problems = []
    for row in key[key["notebook"] == notebook].itertuples():
        name, from_start, act, read = STEPS[(row.notebook, row.step)]
        root = widget(page, name)
        root.scroll_into_view_if_needed()
        set_shown(root, False)
        if from_start:
            reset(root)
        act(root)
        found = early(row.expected, screens(page, root))
        if read not in DRIVES and read(root):  # hidden, the widget shows none of what the step reads
            found.append(read(root))
        if SHOTS:
            page.screenshot(path=SHOTS / f"{notebook}_widget_step{row.step}_asked.png")
        set_shown(root, True)
        root.scroll_into_view_if_needed()
        shown = read(root)
        if SHOTS:
            page.screenshot(path=SHOTS / f"{notebook}_widget_step{row.step}_revealed.png")
        if found:
            problems.append((row.step, "on screen before the step", found))
        if shown != row.expected.split(" (unchanged")[0]:
            problems.append((row.step, "shows", shown, "the key says", row.expected))
        set_shown(root, False)
    return problems


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving the core notebooks (with lab/custom.css) from ``served``, and Chromium; every kernel starts
    with RETRIEVAL_EVAL_CACHE pointing at one new, empty folder: (browser, base URL, token, served)."""
    tmp = tmp_path_factory.mktemp("lesson")
    (tmp / "benchmarks").mkdir()  # 06 reads ../benchmarks/rerank.json beside its folder
    shutil.copy(ROOT / "benchmarks" / "rerank.json", tmp / "benchmarks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp / "cache"))
        with jupyterlab(tmp, CORE + DEEP) as (base, token), chromium() as chrome:
            yield chrome, base, token, tmp / "notebooks"


def top(page, index: int) -> None:
    page.evaluate("""i => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[i]
                          .scrollIntoView({block: 'start'})""", index)
    page.wait_for_timeout(400)


@pytest.mark.parametrize("notebook", CORE, ids=[p.stem for p in CORE])
def test_the_lesson_in_one_tab_hides_each_answer_until_its_step_and_reads_big(lab, key, notebook, tmp_path):
    chrome, base, token, served = lab
    page, data_before = new_page(chrome, 1366, 768), data_fingerprint()
    try:
        open_and_run(page, base, token, notebook.name, screenshot=tmp_path / "run_all.png")
        save_notebook(page, served / notebook.name)
        errors = page.locator(".jp-OutputArea-output[data-mime-type*='error']").all_inner_texts()
        menu(page, "View", "Appearance")
        page.locator(".lm-Menu-itemLabel", has_text="Presentation Mode").first.click()
        page.wait_for_timeout(500)
        widget_problems = walk_widget_steps(page, notebook.stem[:2], key)  # every fold still closed
        prompts, leaks = page.evaluate(PROMPTS), []
        for step, index in enumerate(prompts, start=1):
            top(page, index)
            screen = set(page.evaluate(SCREEN, [index, "screen"]))
            before = set(page.evaluate(SCREEN, [index, "reveal"]))
            if SHOTS:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=SHOTS / f"{notebook.stem}_step{step}_asked.png")
            revealed = set(page.evaluate(SCREEN, [index, "open"])) - before
            page.wait_for_timeout(300)
            if SHOTS:
                page.screenshot(path=SHOTS / f"{notebook.stem}_step{step}_revealed.png")
            if screen & revealed:
                leaks.append((step, sorted(screen & revealed)[:3]))
        kinds = page.evaluate(TYPE)
    finally:
        page.close()
        shut_down_kernels(base, token)
    assert not errors, errors[0][-300:]  # Run All as the class sees it
    import nbformat  # imported here: 2 s (jsonschema's format checkers) make test-fast, which collects this file, need not pay

    check_execution(notebook.name, nbformat.read(served / notebook.name, as_version=4),
                    nbformat.read(notebook, as_version=4), data_before)
    assert kinds["presenting"]
    assert len(prompts) == len(prompt_cells(notebook))
    assert not leaks, leaks  # an answer on screen before its step
    assert not widget_problems, widget_problems
    assert not kinds["cut_code"], kinds["cut_code"]  # a code line cut off, with a scrollbar, in Presentation Mode
    assert all(px >= 16 for px in kinds["tables"]), kinds["tables"]
    assert all(px >= 16 for px in kinds["figures"]), kinds["figures"]
    assert all(px >= 16 and align in ("start", "left") for px, align in kinds["lines"]), kinds["lines"]
    if notebook.stem.startswith("07"):
        assert len(kinds["lines"]) >= 5  # the interview lines, one paragraph each
    assert ROOT.joinpath("lab", "custom.css").exists()


@pytest.mark.parametrize("notebook", DEEP, ids=[p.stem for p in DEEP])
def test_deep_dive_figures_read_at_16_px_as_shown(lab, notebook):
    """A deep dive's committed figures as the notebook shows them at 1366×768 (no run): each drawn in the course's
    style (course/plots.py: 100 dpi, its smallest text FONT_PT) and that text at 16 px or more."""
    chrome, base, token, _ = lab
    page = new_page(chrome, 1366, 768)
    try:
        open_notebook(page, base, token, notebook.name)
        page.wait_for_timeout(1000)
        figures = page.evaluate(f"""() => [...document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img[src^="data:image/png"]')].map(img => {{
          img.scrollIntoView({{block: 'start'}});
          const data = atob(img.src.slice(22, 22 + 4096)), at = data.indexOf('pHYs');
          return [at < 0 ? 0 : [0, 1, 2, 3].reduce((v, j) => v * 256 + data.charCodeAt(at + 4 + j), 0) * 0.0254,
                  ({FIGURE_TEXT_PX})(img)];
        }})""")
        if SHOTS:
            page.screenshot(path=SHOTS / f"{notebook.stem}_last_figure.png")
    finally:
        page.close()
        shut_down_kernels(base, token)
    assert figures
    assert [(round(dpi), round(px, 1)) for dpi, px in figures if round(dpi) != 100 or not px >= 16] == []
