"""The lesson plan walked in one tab: each core notebook opened in JupyterLab at 1366×768 (scrollbars shown), Run All,
View ▸ Appearance ▸ Presentation Mode (lab/custom.css loaded, as ``make lab`` does), then every "Predict" prompt
scrolled to the top of the notebook as a lecturer would show it. Before its step no line the step reveals is on the
screen; the step (opening the fold under the prompt) reveals it. Tables and the interview lines read at 16 px or more,
the interview lines left-aligned, and every figure's text at 16 px or more as shown (a live widget's figure:
tests/test_browser.py). Slides are tests/test_slides.py's.

With LESSON_SHOTS set to a folder, a screenshot of each step before and after goes there
(``LESSON_SHOTS=output/screenshots/lesson``).
"""

import json
import os
from pathlib import Path

import pytest
from test_slides import CORE

from lab import CHROMIUM, FIGURE_TEXT_PX, ROOT, chromium, jupyterlab, menu, new_page, open_and_run

SHOTS = Path(os.environ["LESSON_SHOTS"]).absolute() if os.environ.get("LESSON_SHOTS") else None

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("lesson"),
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]

# The Markdown cells that ask a class to predict, and for each the cells up to the next Markdown cell (its reveal).
PROMPTS = """() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
  return cells.flatMap((c, i) => c.classList.contains('jp-MarkdownCell') && /Predict/.test(c.innerText) ? [i] : []);
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
  };
}""".replace("FIGURE_TEXT_PX", FIGURE_TEXT_PX)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving the core notebooks (with lab/custom.css), and Chromium."""
    with jupyterlab(tmp_path_factory.mktemp("lesson"), CORE) as (base, token), chromium() as chrome:
        yield chrome, base, token


def top(page, index: int) -> None:
    page.evaluate("""i => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[i]
                          .scrollIntoView({block: 'start'})""", index)
    page.wait_for_timeout(400)


@pytest.mark.parametrize("notebook", CORE, ids=[p.stem for p in CORE])
def test_the_lesson_in_one_tab_hides_each_answer_until_its_step_and_reads_big(lab, notebook, tmp_path):
    chrome, base, token = lab
    page = new_page(chrome, 1366, 768)
    try:
        open_and_run(page, base, token, notebook.name, screenshot=tmp_path / "run_all.png")
        menu(page, "View", "Appearance")
        page.locator(".lm-Menu-itemLabel", has_text="Presentation Mode").first.click()
        page.wait_for_timeout(500)
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
    assert kinds["presenting"]
    assert len(prompts) == sum("Predict" in "".join(c["source"]) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                               if c["cell_type"] == "markdown")
    assert not leaks, leaks  # an answer on screen before its step
    assert all(px >= 16 for px in kinds["tables"]), kinds["tables"]
    assert all(px >= 16 for px in kinds["figures"]), kinds["figures"]
    assert all(px >= 16 and align in ("start", "left") for px, align in kinds["lines"]), kinds["lines"]
    if notebook.stem.startswith("07"):
        assert len(kinds["lines"]) >= 5  # the interview lines, one paragraph each
    assert ROOT.joinpath("lab", "custom.css").exists()
