"""Test set-up shared by every test module: offline, and the Polder data loaded once."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# The same random cases on every run, so a CI failure is always reproducible.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")

import helpers as h  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--update-notebooks", action="store_true",
        help="execute every notebook and save it with its outputs (what `make notebooks` does)",
    )


@pytest.fixture(scope="session")
def docs():
    return h.load_corpus()


@pytest.fixture(scope="session")
def chunks():
    return h.load_chunks()


@pytest.fixture(scope="session")
def golden():
    return h.load_golden()


@pytest.fixture(scope="session")
def qrels(golden, chunks, docs):
    return h.label_chunks(golden, chunks, docs)


@pytest.fixture(scope="session")
def bm25(chunks):
    return h.BM25Retriever(chunks)


@pytest.fixture(scope="session")
def vector(chunks, tmp_path_factory):
    return h.VectorRetriever(chunks, cache_dir=tmp_path_factory.mktemp("embeddings"), show_progress=False)


@pytest.fixture(scope="session")
def runs(bm25, vector, golden):
    retrievers = [bm25, vector, h.HybridRetriever(bm25, vector)]
    return h.run_retrievers(retrievers, golden, progress=False)
