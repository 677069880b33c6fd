"""Test set-up shared by every test module: offline, the Polder data loaded once, the second example set.

One test file per module of ``retrieval_eval/`` (``test_<module>.py``), each with its bad-input
tests beside the rest; the notebook, browser and README tests are whole files of their own.
Markers: ``slow`` (over about 5 s: a model load, a fresh ranking, a subprocess), ``notebook``,
``browser``; ``pytest -m "not notebook and not browser and not slow"`` is the fast suite.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
if os.environ.get("PYTEST_XDIST_WORKER"):  # one thread per worker (and its kernels): two workers on two cores
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# The same random cases on every run, so a CI failure is always reproducible; `make test-fast` draws fewer of them
# (HYPOTHESIS_PROFILE=fast; tests that name their number of cases take cases.examples(n)).
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("fast", derandomize=True, database=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

import helpers as h  # noqa: E402
from retrieval_eval.core import registry as metrics  # noqa: E402
from retrieval_eval.core.paths import ROOT  # noqa: E402
from retrieval_eval.inputs.chunks import stored_or_split_chunks  # noqa: E402
from retrieval_eval.inputs.models import model_path  # noqa: E402
from retrieval_eval.retrieval.retrievers import VectorRetriever  # noqa: E402

EXAMPLE = ROOT / "examples" / "library_hours"  # the second example set: bring your own data
EXAMPLE_CHUNK_SIZE = 128  # small documents: 128 word pieces give 11 chunks


def pytest_addoption(parser):
    parser.addoption(
        "--update-notebooks", action="store_true",
        help="execute every notebook and save it with its outputs (what `make notebooks` does)",
    )


def pytest_collection_modifyitems(items):
    """The slow kinds first, so that two workers finish together rather than one waiting on the last long test."""
    items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in ("browser", "notebook", "slow")))


def pytest_configure(config):
    for marker, meaning in [("slow", "takes over about 5 s (a model load, a fresh ranking, a subprocess)"),
                            ("notebook", "executes a notebook"), ("browser", "drives a browser")]:
        config.addinivalue_line("markers", f"{marker}: {meaning}")


# The Polder corpus, its golden set and the teaching runs -----------------------------------------


@pytest.fixture(scope="session")
def docs():
    return h.load_corpus()


@pytest.fixture(scope="session")
def chunks():
    return h.load_chunks()


@pytest.fixture(scope="session")
def golden():
    return h.read_golden_csv()


@pytest.fixture(scope="session")
def qrels(golden, chunks, docs):
    return h.label_chunks(golden, chunks, docs)


@pytest.fixture(scope="session")
def setup(tmp_path_factory):
    """``evaluation_setup()`` of the teaching set: the committed runs of data/runs/, no embedding model."""
    return h.evaluation_setup(cache_dir=tmp_path_factory.mktemp("setup-cache"))


@pytest.fixture(scope="session")
def runs(setup):
    """The built-in retrievers' runs (``RETRIEVERS``: BM25, vector, hybrid; equal to a fresh ranking: test_pipeline)."""
    return setup.runs


@pytest.fixture(scope="session")
def bm25(chunks):
    return h.BM25Retriever(chunks)


@pytest.fixture(scope="session")
def vector(chunks, tmp_path_factory):
    """The vector retriever with the bundled embedding model (loads torch: use it in slow tests only)."""
    return VectorRetriever(chunks, cache_dir=tmp_path_factory.mktemp("embeddings"))


BUILT_IN_METRICS = dict(metrics.METRICS)  # the registry as the package makes it, before any test


@pytest.fixture
def built_in_metrics():
    return BUILT_IN_METRICS


@pytest.fixture
def restore_metrics():
    """The registry as it was before the test: a test may register a metric of its own."""
    before = dict(metrics.METRICS)
    yield metrics.METRICS
    metrics.METRICS.clear()
    metrics.METRICS.update(before)


# The second example set (examples/library_hours) ---------------------------------------------


@pytest.fixture(scope="session")
def example_dir():
    return EXAMPLE


@pytest.fixture(scope="session")
def example_chunk_size():
    return EXAMPLE_CHUNK_SIZE


@pytest.fixture(scope="session")
def example_docs():
    return h.load_corpus(EXAMPLE / "corpus")


@pytest.fixture(scope="session")
def example_chunks(example_docs):
    return stored_or_split_chunks(example_docs, EXAMPLE / "corpus", chunk_size=EXAMPLE_CHUNK_SIZE, progress=False)


@pytest.fixture
def broken_golden(tmp_path, example_chunks):
    """The example golden set with one problem of every kind, each on its own question.

    Returns ``(path of the CSV file in tmp_path, id of the first and of the second chunk the cut evidence spans)``.
    """
    chunks = example_chunks
    golden = pd.read_csv(EXAMPLE / "golden.csv", dtype=str, keep_default_na=False)
    first, second = chunks[3], chunks[4]  # two neighbours in 02_borrowing
    assert first["doc"] == second["doc"]
    golden.loc[1, "question"] = " "  # lh02: blank question
    golden.loc[2, "evidence"] = "lent for 21 days"  # lh03: too short
    golden.loc[3, "evidence"] = "the library lends bicycles for a week"  # lh04: in no chunk
    golden.loc[4, "evidence"] = " ".join(first["text"].split()[-4:] + second["text"].split()[:4])  # lh05: cut
    golden.loc[6, "id"] = "lh06"  # lh07 becomes a second lh06
    path = tmp_path / "golden.csv"
    golden.to_csv(path, index=False)
    return path, first["id"], second["id"]


# Widgets, figures and models -------------------------------------------------------------------


@pytest.fixture(scope="module")
def ceiling(qrels, runs):
    """The precision@k ceiling widget, one per test module (its tests set its controls in turn)."""
    return h.ceiling_widget(qrels, runs)


@pytest.fixture
def close_figures():
    """Close every matplotlib figure after the test (use with ``pytest.mark.usefixtures``)."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def smallest_displayed_px():
    """A function: the smallest font size of a figure's visible text, in CSS px as a notebook shows it (100 dpi).

    A notebook shrinks a figure wider than its column (its tight bounding box, as the inline backend
    saves it, against ``column_inches``: about 9 inches at 100 dpi in JupyterLab and nbviewer,
    ``DISPLAY_INCHES``) to that width, and its text with it: 12 pt (16.7 px) in an 11.4-inch figure shows as 13.2 px.
    """
    from matplotlib.text import Text

    from retrieval_eval.course.plots import DISPLAY_INCHES

    def measure(fig, column_inches: float = DISPLAY_INCHES) -> float:
        width = fig.get_tightbbox(fig.canvas.get_renderer()).width  # inches
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        return min(sizes) * min(1.0, column_inches / width) * 100 / 72

    return measure


@pytest.fixture
def model_copy(tmp_path) -> Path:
    """A copy of the bundled embedding model's folder (all-MiniLM-L6-v2), free to modify."""
    return Path(shutil.copytree(model_path(None), tmp_path / "model"))
