"""Every notebook executes headless without an error, and its committed key outputs are current.

A code cell tagged ``key-output`` (metric tables, computed prose) must print the same text in a
fresh execution as in the committed notebook, so what a reader sees on GitHub is never stale.
Each notebook is executed once per run: with Chromium present, the core notebooks are executed by
tests/test_lesson.py's Run All in JupyterLab, which saves them and applies the same checks
(:func:`check_execution`); here nbclient executes the rest (and every notebook without Chromium).

``make notebooks`` runs this same test with ``--update-notebooks``: it executes every notebook the
same way and saves it, with its outputs and without widget state (which GitHub may refuse to render).
The notebooks run against an empty cache (``RETRIEVAL_EVAL_CACHE`` set to a fresh folder for the
session), so committed outputs never come from a developer's cache.
"""

import hashlib
import re
from pathlib import Path

import pytest
from test_slides import CORE

from lab import CHROMIUM

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TEXT_TYPES = ("text/plain", "text/markdown", "text/html")
EMBEDDED_IMAGE = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)")  # a history row's time
IN_THE_LESSON = CORE if CHROMIUM.exists() else []  # executed by tests/test_lesson.py's Run All


def key_outputs(nb) -> dict:
    """``{cell id: [output texts]}`` for every cell tagged key-output (images left out, also those
    embedded in HTML, such as a widget's static copy; the time a history row was written too)."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "key-output" in cell.metadata.get("tags", []):
            texts = []
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    texts.append(TIMESTAMP.sub("…", output["text"]))
                for kind in TEXT_TYPES:
                    if kind in output.get("data", {}):
                        texts.append(TIMESTAMP.sub("…", EMBEDDED_IMAGE.sub("data:image/png;base64,…", output["data"][kind])))
            found[cell.id] = texts
    return found


@pytest.fixture(scope="module", autouse=True)
def fresh_cache(tmp_path_factory):
    """Every kernel of this module starts with RETRIEVAL_EVAL_CACHE pointing at one new, empty folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def data_fingerprint() -> dict:
    """``{path: SHA-256}`` of every file under data/."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((ROOT / "data").rglob("*")) if p.is_file()}


def check_execution(name: str, executed, committed, data_before: dict) -> None:
    """A fresh execution shows no error, wrote nothing under data/ and printed the committed key outputs (unless
    ``committed`` is None: ``make notebooks`` saves what it printed)."""
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert data_fingerprint() == data_before, f"{name} wrote under data/"
    assert committed is None or key_outputs(executed) == key_outputs(committed), \
        f"{name} has stale outputs: run `make notebooks`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_and_committed_outputs_are_current(path, request):
    import nbformat  # imported here, as nbclient below: 2 s (jsonschema's format checkers) make test-fast need not pay

    update = request.config.getoption("--update-notebooks")
    committed = nbformat.read(path, as_version=4)
    assert update or all(
        c.get("execution_count") is not None for c in committed.cells if c.cell_type == "code"
    ), f"{path.name} is not committed executed: run `make notebooks`"
    assert update or "widgets" not in committed.metadata, f"{path.name} holds saved widget state: run `make notebooks`"
    if not update and path in IN_THE_LESSON:
        pytest.skip("executed once per run, by tests/test_lesson.py's Run All in JupyterLab, with these checks")
    nb = nbformat.read(path, as_version=4)
    before = data_fingerprint()
    from nbclient import NotebookClient

    NotebookClient(
        nb, timeout=900, kernel_name="python3", store_widget_state=False, coalesce_streams=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    check_execution(path.name, nb, None if update else committed, before)
    if update:
        nb.metadata.pop("widgets", None)
        for cell in nb.cells:  # execution timestamps: noise in every diff
            cell.metadata.pop("execution", None)
        nbformat.write(nb, path)
