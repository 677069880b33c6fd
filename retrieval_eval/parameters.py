"""The parameters of an evaluation run (notebook 05, ``make evaluate``), checked before anything loads.

papermill hands parameters over as typed (``-p K 2.5`` is a float, ``-p K abc`` a str) and a
parameter used only late in a notebook fails only there, after minutes of work, with an error that
does not name it. :func:`check_parameters` checks them all at once, right after the parameters
cell, reading nothing but the model's tokenizer and configuration (not its weights).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .models import document_prefix, model_window, token_counter


class ParameterError(ValueError):
    """One or more parameters of an evaluation run are wrong; the message lists every one.

    Taught in: notebook 05_three_retrievers.
    """


def check_parameters(corpus, golden, model_name=None, chunk_size=512, k=None) -> None:
    """Check the parameters of notebook 05 and raise one error that lists every problem.

    Args:
        corpus: ``CORPUS``, the corpus folder (a str or path; it must exist and be a folder).
        golden: ``GOLDEN``, the golden-set file (it must exist and be a file).
        model_name: ``MODEL_NAME``, ``None`` for the bundled all-MiniLM-L6-v2, or the name or
            folder of a sentence-transformers model available locally (its tokenizer and
            configuration are read; the weights are not loaded).
        chunk_size: ``CHUNK_SIZE``, a whole number of word pieces, at most the model's window
            (:func:`~retrieval_eval.models.model_window`) and more than the special tokens and
            document prompt the model reads with each chunk.
        k: ``K``, the number of chunks the model reads: a whole number >= 1 (``None``: not checked,
            for :func:`~retrieval_eval.pipeline.evaluation_setup`, which has no k).

    Raises:
        ParameterError: one line per problem, each naming the parameter and the value given
            (with its type, e.g. ``2.5 (float)``), and what to write instead. A model that is not
            available locally is one line saying how to get it, not a long download traceback.

    Taught in: notebook 05_three_retrievers.
    """
    problems = []
    for name, path, kind in (("CORPUS", corpus, "folder"), ("GOLDEN", golden, "file")):
        if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
            problems.append(f"{name} must be the path of a {kind}, got {_shown(path)}")
        elif not Path(path).exists():
            problems.append(f"{name} {str(path)!r}: no such {kind} (relative paths start from {Path.cwd()})")
        elif kind == "folder" and not Path(path).is_dir():
            problems.append(f"{name} {str(path)!r} is a file; give the folder that holds the documents")
        elif kind == "file" and not Path(path).is_file():
            problems.append(f"{name} {str(path)!r} is a folder; give the golden-set CSV file")

    window = None
    if model_name is not None and (not isinstance(model_name, str) or not model_name.strip()):
        problems.append(f"MODEL_NAME must be None (the bundled model) or a model name or folder, got {_shown(model_name)}")
    else:
        try:
            window = model_window(model_name)
            reserved = token_counter(model_name)(document_prefix(model_name))
        except (OSError, ValueError) as exc:
            problems.append(_model_not_found(model_name, exc))

    if not _whole(chunk_size):
        problems.append(f"CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got {_shown(chunk_size)}")
    elif window is not None and chunk_size > window:
        problems.append(f"CHUNK_SIZE {chunk_size} is larger than the model's window of {window} word pieces: "
                        "the model could not read a whole chunk")
    elif window is not None and chunk_size <= reserved:
        problems.append(f"CHUNK_SIZE {chunk_size} leaves no room for text beside the {reserved} special and "
                        "prompt tokens the model reads with each chunk")
    if k is not None and (not _whole(k) or k < 1):
        problems.append(f"K must be a whole number >= 1 (how many chunks the model reads), e.g. 3, got {_shown(k)}")

    if problems:
        raise ParameterError(
            f"{len(problems)} problem(s) with the parameters; fix them all and run again:\n"
            + "\n".join(f"- {p}" for p in problems)
        )


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _shown(value) -> str:
    return f"{value!r} ({type(value).__name__})"


def _model_not_found(model_name: str, exc: Exception) -> str:
    """One line for a model that cannot be read: what was not found, and how to get it."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if Path(model_name).is_dir():
        return f"MODEL_NAME {model_name!r} is a folder but not a model folder: {first_line:.200}"
    if os.environ.get("HF_HUB_OFFLINE", "1") not in ("0", "false", "False", ""):
        return (f"MODEL_NAME {model_name!r} was not found locally (no such folder, and not in the Hugging Face "
                f"cache): give the folder of a local sentence-transformers model, or allow one download with "
                f"HF_HUB_OFFLINE=0 (e.g. HF_HUB_OFFLINE=0 make evaluate ... MODEL_NAME={model_name})")
    return f"MODEL_NAME {model_name!r} was not found locally and could not be downloaded: {first_line:.200}"
