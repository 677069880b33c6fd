"""Retrieval: the stages of the registry (stages.py), BM25 and vector search (retrievers.py), RRF (fusion.py), a
second stage (rerank.py) and the one set-up call with the built-in retrievers (setup.py). Imports the core and the
inputs."""
