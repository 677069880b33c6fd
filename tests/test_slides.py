"""The core notebooks as RISE slides (notebooks/rise.css loaded) at 1366×768 in headless Chromium, real scrollbars
shown: every subslide, all its fragments shown, fits the slide without a scrollbar anywhere (and with each widget's
static copy opened, its numbers shown, scrolling inside the copy), its text reads at
least 16 px, no figure is taller than the visible area, and each classroom widget shows its static copy (the
RISE page cannot load the widget manager of ipywidgets 8, so a live widget never renders in a slide).

The committed notebooks are opened as they are (their saved outputs are what a slide shows); with SLIDE_SHOTS set to
a folder, a screenshot of every subslide goes there (``SLIDE_SHOTS=output/screenshots/slides make test``).
"""

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from lab import CHROMIUM, FIGURE_TEXT_PX, ROOT, chromium, jupyterlab, new_page

SHOTS = Path(os.environ["SLIDE_SHOTS"]).absolute() if os.environ.get("SLIDE_SHOTS") else None
CORE = [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if json.loads(p.read_text(encoding="utf-8"))["metadata"].get("course", {}).get("path") == "core"]
WIDTH, HEIGHT = 1366, 768

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("slides"),
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]

MEASURE = """(figureTextPx) => {
  const box = document.querySelector('.reveal .slides').getBoundingClientRect();
  const slide = document.querySelector('.reveal .slides > section.present > section.present');
  const shown = [...slide.querySelectorAll('*')].filter(e => e.offsetParent !== null);
  const texts = shown.filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
  const scrolls = [document.scrollingElement, ...document.querySelectorAll('.jp-WindowedPanel-outer'), ...shown].filter(e =>
      (e.scrollHeight > e.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(e).overflowY)) ||
      (e.scrollWidth > e.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(e).overflowX)) ||
      (e === document.scrollingElement && (e.scrollHeight > innerHeight + 1 || e.scrollWidth > innerWidth + 1)));
  return {id: slide.id, height: slide.scrollHeight, width: slide.scrollWidth, box: [box.width, box.height],
          scrollbars: scrolls.map(e => e.tagName + '.' + [...e.classList].slice(0, 2).join('.')),
          small: texts.filter(e => parseFloat(getComputedStyle(e).fontSize) < 16)
                      .map(e => getComputedStyle(e).fontSize + ' ' + e.textContent.trim().slice(0, 30)),
          small_figures: shown.filter(e => e.tagName === 'IMG').map(e => [e.alt.slice(0, 30), figureTextPx(e)])
                              .filter(([, px]) => !(px >= 16)).map(([alt, px]) => `${px?.toFixed(1)} px ${alt}`),
          tall_images: shown.filter(e => e.tagName === 'IMG' && e.getBoundingClientRect().height > box.height).length,
          copies: slide.querySelectorAll('.rw-fallback').length,
          shown_copies: [...slide.querySelectorAll('.rw-fallback')].filter(e => e.offsetHeight > 0).length};
}"""


OPEN_COPIES = """open => {
  const shown = [...document.querySelectorAll('section.present > section.present .rw-fallback details')];
  shown.forEach(d => { d.open = open; });
  return shown.length;
}"""


@pytest.fixture(scope="module")
def rise(tmp_path_factory):
    """JupyterLab serving the core notebooks and notebooks/rise.css, and Chromium: a function that opens a notebook's
    slideshow as a page (no active cell given: it must open at its first slide)."""
    if SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
    with jupyterlab(tmp_path_factory.mktemp("rise"), [*CORE, ROOT / "notebooks" / "rise.css"]) as (base, token), \
            chromium() as chrome:
        def open_slides(name: str):
            page = new_page(chrome, WIDTH, HEIGHT)
            page.goto(f"{base}/rise/{name}?token={token}")
            return page

        yield open_slides


def slides(page, name: str) -> list[dict]:
    """Every subslide of the notebook's slideshow, measured with all its fragments shown; the first is where it opens."""
    page.wait_for_selector(".reveal .slides > section.present > section.present", state="attached")
    page.wait_for_timeout(1500)  # outputs, MathJax and RISE's own layout pass
    ids = page.evaluate("() => [...document.querySelectorAll('.reveal .slides > section > section')].map(s => s.id)")
    measured = [{"opens at": page.evaluate("() => document.querySelector('section.present > section.present').id")}]
    for sid in ids:
        _, h, v = sid.split("-")
        for attempt in range(3):  # under load RISE can miss a hash change: set a new one (another fragment number)
            page.evaluate(f"() => {{ location.hash = '#/{h}/{v}/{99 + attempt}'; }}")
            try:
                page.wait_for_function("id => document.querySelector('section.present > section.present')?.id === id",
                                       arg=sid, timeout=30_000)
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
        page.wait_for_timeout(250)  # a layout pass (the notebooks' slides have no transition: metadata "rise")
        measured.append(page.evaluate(f"({MEASURE})({FIGURE_TEXT_PX})"))
        opened = page.evaluate(OPEN_COPIES, True)  # the static copies' numbers shown: still inside the slide?
        if opened:
            page.wait_for_timeout(250)
            measured[-1]["opened height"] = page.evaluate("() => document.querySelector("
                                                          "'section.present > section.present').scrollHeight")
            if SHOTS:
                page.screenshot(path=SHOTS / f"{Path(name).stem}_{sid}_opened.png")
            page.evaluate(OPEN_COPIES, False)
        if SHOTS:
            page.screenshot(path=SHOTS / f"{Path(name).stem}_{sid}.png")
    measured.append({"all_copies": page.evaluate("() => document.querySelectorAll('.rw-fallback').length")})
    return measured


@pytest.mark.parametrize("notebook", CORE, ids=[p.stem for p in CORE])
def test_every_slide_fits_1366x768_and_reads_big(rise, notebook):
    page = rise(notebook.name)
    try:
        opens, *measured, total = slides(page, notebook.name)
    finally:
        page.close()
    assert opens == {"opens at": measured[0]["id"]}  # the first slide, wherever the notebook's active cell is
    assert len(measured) >= 5, measured
    problems = []
    for m in measured:
        width, height = m["box"]
        if m["height"] > height or m["width"] > width:
            problems.append((m["id"], "does not fit", m["width"], m["height"]))
        if m["scrollbars"] or m["tall_images"]:
            problems.append((m["id"], "scrollbar or figure taller than the slide", m["scrollbars"], m["tall_images"]))
        if m["small"]:
            problems.append((m["id"], "text under 16 px", m["small"][:3]))
        if m.get("opened height", 0) > height:
            problems.append((m["id"], "a static copy opened does not fit", m["opened height"]))
        if m["small_figures"]:
            problems.append((m["id"], "figure text under 16 px", m["small_figures"][:3]))
        if m["copies"] != m["shown_copies"]:
            problems.append((m["id"], "a widget's static copy is hidden", m["copies"], m["shown_copies"]))
    assert not problems, problems
    assert sum(m["copies"] for m in measured) == total["all_copies"]  # every widget is on a slide
