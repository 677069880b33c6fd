"""The parameters of an evaluation run (notebook 05, ``make evaluate``), checked before anything loads.

papermill hands parameters over as typed (``-p K 2.5`` is a float, ``-p K abc`` a str) and a
parameter used only late in a notebook fails only there, after minutes of work, with an error that
does not name it. :func:`check_parameters` checks them all at once, right after the parameters
cell, reading nothing but the model's tokenizer and configuration (not its weights).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from .models import ModelFileError, check_weights, document_prefix, model_window, token_counter
from .paths import typed_path


class ParameterError(ValueError):
    """One or more parameters of an evaluation run are wrong; the message lists every one
    (``problems`` holds them, one line each).

    Taught in: notebook 05_three_retrievers (through check_parameters), and the README's "Your own data"
    (``make evaluate`` and ``make evaluate-runs`` print it).
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(f"{len(self.problems)} problem(s) with the parameters; fix them all and run again:\n"
                         + "\n".join(f"- {p}" for p in self.problems))


def check_parameters(corpus, golden, model_name=None, chunk_size=512, k=None, start=None) -> None:
    """Check the parameters of notebook 05 and raise one error that lists every problem.

    Args:
        corpus: ``CORPUS``, the corpus folder (a str or path; it must exist and be a folder).
        golden: ``GOLDEN``, the golden-set file (it must exist and be a file).
        model_name: ``MODEL_NAME``, ``None`` for the bundled all-MiniLM-L6-v2, or the name or
            folder of a sentence-transformers model available locally (its tokenizer and
            configuration are read, and the header of its weights file; the weights are not loaded).
        chunk_size: ``CHUNK_SIZE``, a whole number of word pieces, at most the model's window
            (:func:`~retrieval_eval.models.model_window`) and more than the special tokens and
            document prompt the model reads with each chunk.
        k: ``K``, the number of chunks the model reads: a whole number >= 1 (``None``: not checked,
            for :func:`~retrieval_eval.pipeline.evaluation_setup`, which has no k).
        start: the folder relative paths are read from (``START_DIR``, the folder ``make`` was
            started from), named in the messages; ``None``: the current folder.

    Raises:
        ParameterError: one line per problem, each naming the parameter and the value given
            (with its type, e.g. ``2.5 (float)``), and what to write instead. A model that is not
            available locally, or whose files are damaged, is one line naming the file, not a
            long traceback.

    Taught in: notebook 05_three_retrievers.
    """
    problems = [path_problem("CORPUS", corpus, "folder", start), path_problem("GOLDEN", golden, "file", start),
                *model_problems(model_name, chunk_size)]
    if k is not None:
        problems.append(k_problem(k, "how many chunks the model reads"))
    raise_problems(problems)


def raise_problems(problems) -> None:
    """Raise one :class:`ParameterError` listing every problem (``None`` entries are no problem).

    Args:
        problems: a list of messages (str) and ``None`` entries; nothing is raised when all are ``None``.

    Raises:
        ParameterError: at least one entry is a message.

    Taught in: the README's "Your own data" (``make evaluate`` and ``make evaluate-runs``).
    """
    problems = [p for p in problems if p]
    if problems:
        raise ParameterError(problems)


def path_problem(name: str, path, kind: str, start=None) -> str | None:
    """What is wrong with a path parameter (``kind`` "folder" or "file"), or ``None``.

    A relative ``path`` is read from ``start`` (the folder ``make`` was started from; ``None``: the
    current folder). When it does not exist, the message names the folder it was read from and the
    current folder, so a wrong start (a stale ``PWD``) shows.

    Args:
        name: the parameter's name, for the message (e.g. ``"CORPUS"``).
        path: the value given (a str or path; anything else is a problem).
        kind: ``"folder"`` or ``"file"``: what it must be.
        start: the folder a relative path is read from, or ``None``.

    Taught in: the README's "Your own data" (``make evaluate`` and ``make evaluate-runs``).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        return f"{name} must be the path of a {kind}, got {_shown(path)}"
    resolved = typed_path(str(path), start)
    if not resolved.exists():
        where = ""
        if not Path(str(path)).expanduser().is_absolute():
            base = f"{Path(start)} (START_DIR, the folder make was started from)" if start else "the current folder"
            where = f" (a relative path is read from {base}; this process runs in {Path.cwd()}"
            if start and (Path.cwd() / str(path)).exists():
                where += f", where {str(path)!r} exists: is START_DIR or PWD out of date?"
            where += ")"
        return f"{name} {str(path)!r}: no such {kind} {resolved}{where}"
    if kind == "folder" and not resolved.is_dir():
        return f"{name} {str(path)!r} is a file; give the folder that holds the documents"
    if kind == "file" and not resolved.is_file():
        return f"{name} {str(path)!r} is a folder; give the golden-set CSV file"
    return None


def model_problems(model_name, chunk_size) -> list[str]:
    """What is wrong with ``MODEL_NAME`` and ``CHUNK_SIZE`` (see :func:`check_parameters`), or ``[]``.

    Args:
        model_name: ``None`` (the bundled model) or a model name or folder.
        chunk_size: the chunk size in word pieces, as given (any type; a non-int is a problem).

    Returns:
        A list of messages.

    Raises:
        Nothing: a model that cannot be read (``OSError`` or ``ValueError`` from its tokenizer,
            configuration or :func:`~retrieval_eval.models.check_weights`) becomes one message.

    Taught in: the README's "Your own data" (``make evaluate`` and ``make evaluate-runs``).
    """
    problems, window, reserved = [], None, None
    if model_name is not None and (not isinstance(model_name, str) or not model_name.strip()):
        problems.append(f"MODEL_NAME must be None (the bundled model) or a model name or folder, got {_shown(model_name)}")
    else:
        try:
            window = model_window(model_name)
            reserved = token_counter(model_name)(document_prefix(model_name))
            check_weights(model_name)
        except (OSError, ValueError) as exc:
            window = None
            problems.append(_model_problem(model_name, exc))
    if not _whole(chunk_size):
        problems.append(f"CHUNK_SIZE must be a whole number of word pieces, e.g. 512, got {_shown(chunk_size)}")
    elif window is not None and chunk_size > window:
        problems.append(f"CHUNK_SIZE {chunk_size} is larger than the model's window of {window} word pieces: "
                        "the model could not read a whole chunk")
    elif window is not None and chunk_size <= reserved:
        problems.append(f"CHUNK_SIZE {chunk_size} leaves no room for text beside the {reserved} special and "
                        "prompt tokens the model reads with each chunk")
    return problems


def k_problem(k, meaning: str) -> str | None:
    """What is wrong with ``K`` (a whole number >= 1; ``meaning`` says what it counts), or ``None``.

    Args:
        k: the value given (any type; a bool or float is a problem).
        meaning: what K counts, put in the message.

    Taught in: the README's "Your own data" (``make evaluate`` and ``make evaluate-runs``).
    """
    if not _whole(k) or k < 1:
        return f"K must be a whole number >= 1 ({meaning}), e.g. 3, got {_shown(k)}"
    return None


def parse_number(text: str, default=None):
    """A number typed in an environment variable (``K=3``), for the checks to judge.

    Plain ASCII digits (with an optional ``-``) give an int, plain decimals (``2.5``) a float, and
    anything else stays the text, so that the check names it: ``5_12``, ``+3``, ``1e3`` and other
    scripts' digits, which Python's ``int()`` and ``float()`` would read, are not numbers here.

    Args:
        text: the variable's value; spaces around it are ignored.
        default: the value of an empty ``text``.

    Taught in: the README's "Your own data" (``make evaluate``).
    """
    text = text.strip()
    if not text:
        return default
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]+\.[0-9]+", text):
        return float(text)
    return text


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _shown(value) -> str:
    return f"{value!r} ({type(value).__name__})"


def _model_problem(model_name: str | None, exc: Exception) -> str:
    """One line for a model that cannot be read: a damaged file (named), or what was not found and how to get it."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    shown = "the bundled model" if model_name is None else repr(model_name)
    if isinstance(exc, ModelFileError):  # a file of the model is there but damaged; the message names it
        return f"MODEL_NAME {shown}: {first_line:.300}"
    if model_name is None or Path(model_name).is_dir():
        return f"MODEL_NAME {shown} is a folder but not a model folder: {first_line:.200}"
    if os.environ.get("HF_HUB_OFFLINE", "1") not in ("0", "false", "False", ""):
        return (f"MODEL_NAME {model_name!r} was not found locally (no such folder, and not in the Hugging Face "
                f"cache): give the folder of a local sentence-transformers model, or allow one download with "
                f"HF_HUB_OFFLINE=0 (put it before the make command: HF_HUB_OFFLINE=0 make ... MODEL_NAME={model_name})")
    return f"MODEL_NAME {model_name!r} was not found locally and could not be downloaded: {first_line:.200}"
