"""The course's shape, read from the committed notebooks: every notebook says its place, the core fits its
budget (at most 12,000 words as rendered, none above 2,000, at most 180 minutes), and the core's prose and
outputs carry no statistics jargon (the tests are named in the statistics deep dive only)."""

import json
import re
from pathlib import Path

import pytest

from retrieval_eval.course.teaching import READING, reading_minutes, rendered_text, words

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
JARGON = ["Holm", "McNemar", "permutation test", "Monte Carlo", "p =", "α", "family of tests", "trec_eval 9", "trec_eval 10"]


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
    assert sum(reading_minutes(json.loads(p.read_text(encoding="utf-8"))) for p in core()) <= 180, READING


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_minutes_in_the_metadata_follow_the_reading_model(path):
    """The metadata's minutes (what the before-stop check reads) stay within 2 of the reading model's."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert abs(nb["metadata"]["course"]["minutes"] - reading_minutes(nb)) <= 2, (path.name, reading_minutes(nb))


@pytest.mark.parametrize("path", core(), ids=[p.name for p in core()])
def test_core_notebooks_speak_plainly(path):
    text = rendered_text(json.loads(path.read_text(encoding="utf-8")))
    assert not [term for term in JARGON if term in text], path.name


def test_every_deep_dive_is_marked_optional():
    for path in NOTEBOOKS:
        if course(path).get("path") == "deep dive":
            first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
            assert "Deep dive" in first and "Optional" in first, path.name


def prompts(cells: list) -> list[int]:
    """The Markdown cells that ask the reader to predict (the word, any case): the lesson walk's prompts."""
    return [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and re.search(r"\bpredict\b", "".join(c["source"]), re.I)]


def prompt_cells(path: Path) -> list[int]:
    return prompts(json.loads(path.read_text(encoding="utf-8"))["cells"])


def answers_shown_unfolded(nb: dict) -> list[int]:
    """The markdown cells that ask the reader to predict and whose answer is shown unfolded: neither inside a
    ``<details>`` block nor a live widget. The answer is the first code output below the prompt that is more than a
    picture of the toy, and every table or text display after it up to the next markdown cell (a table below a widget
    answers too; a printed status line, such as "no cross-encoder installed", does not)."""
    def shown(cell, printed: bool = True) -> bool:
        return cell["cell_type"] == "code" and any(set(o.get("data", {})) - {"image/png", "text/plain"}
                                                   or printed and o.get("output_type") == "stream" for o in cell.get("outputs", []))

    cells, unfolded = nb["cells"], []
    for i in prompts(cells):
        first = next((j for j in range(i + 1, len(cells)) if shown(cells[j])), len(cells))
        end = next((j for j in range(first, len(cells)) if cells[j]["cell_type"] == "markdown"), len(cells))
        if any(shown(c, printed=j == first) and not any(m in json.dumps(c["outputs"]) for m in ("<details", "widget-view+json"))
               for j, c in enumerate(cells[first:end], start=first)):
            unfolded.append(i)
    return unfolded


@pytest.mark.parametrize("path", core(), ids=[p.name for p in core()])
def test_every_predictions_answer_is_folded_in_the_committed_notebook(path):
    assert answers_shown_unfolded(json.loads(path.read_text(encoding="utf-8"))) == [], path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_committed_static_copy_asks_a_reader_to_run_a_cell(path):
    """A committed output is read where nothing runs (GitHub, nbviewer): a widget's copy says where it is live."""
    outputs = json.dumps([c.get("outputs", []) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]])
    assert "Run this cell" not in outputs, path.name




def test_every_ask_of_the_lesson_plan_is_a_prompt_the_lesson_walk_checks():
    """Each ask in the README's 90-minute plan (its last column, split at ";", the teacher's key steps aside) has a
    prompt to predict in its notebook, which tests/test_lesson.py puts at the top of the screen with its reveal folded."""
    plan = re.findall(r"^\| [12] \| \d+ \| (\d\d): [^|]*\| ([^|]*) \|$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
    assert len(plan) == 8
    for number, asks in plan:
        asked = [a for a in asks.split(";") if not re.fullmatch(r"\s*key \d\d\s*", a)]
        path = next(p for p in NOTEBOOKS if p.name.startswith(number))
        assert len(prompt_cells(path)) >= (5 if number == "07" else len(asked)), (path.name, asked)  # 07: one per mistake
