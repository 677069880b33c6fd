"""The course's shape, read from the committed notebooks: every notebook says its place, the core fits its
budget (at most 12,000 words as rendered, none above 2,000, at most 180 minutes), and the core's prose and
outputs carry no statistics jargon (the tests are named in the statistics deep dive only)."""

import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
JARGON = ["Holm", "McNemar", "permutation test", "Monte Carlo", "p =", "α", "family of tests", "trec_eval 9", "trec_eval 10"]


def rendered_text(nb: dict) -> str:
    """What a reader reads: Markdown cells, and outputs as shown (HTML without tags; a live widget's
    output is its view, not text)."""
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(out.get("text", "")) + "".join(data.get("text/markdown", ""))
            if "text/html" in data and "application/vnd.jupyter.widget-view+json" not in data:
                text += html.unescape(re.sub(r"<style.*?</style>|<script.*?</script>|<[^>]+>", " ",
                                             "".join(data["text/html"]), flags=re.S))
            elif "text/plain" in data and not text:
                text += "".join(data["text/plain"])
            parts.append(text)
    return "\n".join(parts)


def words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9][\w.@/%-]*", text))


def course(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["metadata"].get("course") or {}


def core() -> list[Path]:
    return [p for p in NOTEBOOKS if course(p).get("path") == "core"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_notebook_says_its_place(path):
    meta = course(path)
    assert meta.get("path") in ("core", "deep dive"), path.name
    assert isinstance(meta.get("minutes"), int) and meta["minutes"] > 0, path.name
    assert meta.get("answers", "").endswith("?"), path.name


def test_the_core_fits_three_hours_and_twelve_thousand_words():
    counts = {p.name: words(rendered_text(json.loads(p.read_text(encoding="utf-8")))) for p in core()}
    assert len(counts) >= 5, counts
    assert sum(counts.values()) <= 12_000, counts
    assert max(counts.values()) <= 2_000, counts
    assert sum(course(p)["minutes"] for p in core()) <= 180


@pytest.mark.parametrize("path", core(), ids=[p.name for p in core()])
def test_core_notebooks_speak_plainly(path):
    text = rendered_text(json.loads(path.read_text(encoding="utf-8")))
    assert not [term for term in JARGON if term in text], path.name


def test_every_deep_dive_is_marked_optional():
    for path in NOTEBOOKS:
        if course(path).get("path") == "deep dive":
            first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
            assert "Deep dive" in first and "Optional" in first, path.name
