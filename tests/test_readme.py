"""README.md: its computed parts equal what the code gives, its examples run, its figures are the code's."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import helpers as h
from retrieval_eval.course.teaching import course_map, markdown_table
from retrieval_eval.course.widgets.key import teacher_key

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def part(name: str) -> str:
    return README.split(f"<!-- {name}: start -->\n")[1].split(f"\n<!-- {name}: end -->")[0]


def test_the_course_map_is_the_notebooks_metadata():
    assert part("course map") == course_map(markdown=True, link="notebooks/")


def test_the_teachers_key_is_the_one_the_widgets_give(setup):
    """Regenerate with ``markdown_table(teacher_key(h.evaluation_setup()))`` when a widget or a toy changes."""
    assert part("teacher key") == markdown_table(teacher_key(setup))


def test_the_golden_set_figures(golden, chunks, qrels):
    single = sum(len(g) == 1 for g in qrels.values())
    assert f"{len(golden)} questions over \"Polder\"" in README and f"in {len(chunks)} chunks" in README
    assert f"{single} of the {len(golden)} questions have one relevant chunk" in README
    assert f"precision@3 can never pass about {h.precision_ceiling(qrels, 3):.2f} here" in README


@pytest.mark.parametrize("marker", ["h.register_metric", "h.evaluation_setup(retrievers="])
def test_each_extend_it_example_runs_in_a_fresh_process(marker, tmp_path):
    """The README's two worked examples, each as a user pastes it into a fresh Python: the new metric or
    retrievers appear beside the built-in ones."""
    [block] = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if marker in b]
    env = {**os.environ, "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = ["AP"] if "register_metric" in block else ["title match", "hybrid of three"]
    assert all(word in done.stdout for word in expected + ["recall", "nDCG", "BM25"]), done.stdout
