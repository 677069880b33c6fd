"""The corpus: every document under a folder, read as people save them, with what was not read and why."""

from __future__ import annotations

import errno
import os
import re
import stat
import warnings
from collections.abc import Sequence
from pathlib import Path

from ..core.paths import CORPUS_DIR
from .text import normalise, read_text

DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")  # the document types read, matched without regard to case
MARKDOWN_SUFFIXES = (".md", ".markdown")
# Files and folders that operating systems, editors and version control put beside documents.
SYSTEM_NAMES = {"thumbs.db", "desktop.ini", "__macosx", "$recycle.bin", "system volume information"}


def load_corpus(folder: str | Path = CORPUS_DIR, skipped: list | None = None, exclude: Sequence[str | Path] = ()) -> dict[str, str]:
    """Every document under a corpus folder, at any depth, as ``{id: text}``, the id its path without extension
    (``faq/a.md`` → ``faq/a``): ``.md``, ``.markdown``, ``.txt`` in any case, by :func:`.text.read_text`. Not read,
    and listed with why (into ``skipped``, else one warning): hidden, system, other, empty or front-matter-only files,
    folder links, a file twice, broken links, pipes, sockets, devices, ``exclude``. Undecodable, clashes: ValueError."""
    folder = Path(folder)
    if not folder.exists():
        raise FileNotFoundError(f"the corpus folder {folder} does not exist")
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file, not a folder: the corpus is a folder of .md, .markdown or .txt documents")
    not_read, problems, docs, origin = [], [], {}, {}
    inputs = {_identity(Path(p)) for p in exclude if Path(p).is_file()}
    for path, reason in _corpus_files(folder):
        relative = path.relative_to(folder).as_posix()
        if not reason and inputs and _identity(path) in inputs:
            reason = "an input of this evaluation (the golden set, qrels or a run), not a document: left out of the corpus"
        if reason:
            not_read.append((relative + ("/" if path.is_dir() else ""), reason))
            continue
        try:
            text = read_text(path, name=relative)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        except OSError as exc:  # e.g. no permission to read it
            not_read.append((relative, f"cannot be read ({exc.strerror or exc})"))
            continue
        if not normalise(text):
            not_read.append((relative, "empty or only whitespace"))
            continue
        front_matter = _FRONT_MATTER.match(text) if path.suffix.lower() in MARKDOWN_SUFFIXES else None
        if front_matter and not text[front_matter.end():].strip():
            not_read.append((relative, "only front matter (a block of metadata at the top) and no text"))
            continue
        doc_id = relative[: -len(path.suffix)]
        if doc_id in docs:
            problems.append(f"{origin[doc_id]} and {relative} both give the document id {doc_id!r}; rename one")
            continue
        docs[doc_id], origin[doc_id] = text, relative
    if skipped is not None:
        skipped.extend(not_read)
    if problems:
        raise ValueError(f"the corpus folder {folder} has {len(problems)} problem(s):\n" + "\n".join(f"- {p}" for p in problems))
    listing = "".join(f"\n- {path}: {reason}" for path, reason in not_read)
    if not docs:
        raise FileNotFoundError(f"no document ({', '.join(DOCUMENT_SUFFIXES)}) in the corpus folder {folder}" + (
            f"; not read:{listing}" if not_read else ""))
    if skipped is None and not_read:
        warnings.warn(f"{len(not_read)} file(s) or folder(s) of {folder} were not read:{listing}", stacklevel=2)
    return docs


# Front matter: a YAML block between "---" lines (closed by "---" or "...") or a TOML block between "+++" lines, at the start.
_FRONT_MATTER = re.compile(r"\A(?:---[ \t]*\n(?:.*?\n)??(?:---|\.\.\.)|\+\+\+[ \t]*\n(?:.*?\n)??\+\+\+)[ \t]*(?:\n|\Z)", re.S)


def _corpus_files(folder: Path) -> list[tuple[Path, str]]:
    """Every file under ``folder`` in path order with ``""`` or the reason it is not read; a skipped folder is
    one entry. Of several paths to one file, one is read: a path that is not a link if there is one, else the first."""
    entries = []

    def cannot_open(error: OSError) -> None:
        entries.append((Path(error.filename), f"a folder that cannot be opened ({error.strerror})"))

    for root, dirs, files in os.walk(folder, onerror=cannot_open):
        root = Path(root)
        for name in list(dirs):
            path = root / name
            if path.is_symlink():
                entries.append((path, "a link to a folder; links are not followed"))
            elif _hidden(name):
                n = sum(len(f) for _, _, f in os.walk(path))
                entries.append((path, f"hidden or system folder ({n} file{'s' * (n != 1)} not read)"))
            else:
                continue
            dirs.remove(name)
        for name in files:
            path = root / name
            if _hidden(name):
                reason = "hidden or system file"
            elif path.suffix.lower() not in DOCUMENT_SUFFIXES:
                kind = f"a {path.suffix} file" if path.suffix else "a file without an extension"
                reason = f"{kind}, not a document: only {', '.join(DOCUMENT_SUFFIXES)} files are read (convert it to one)"
            else:
                reason = _not_a_file(path)
            entries.append((path, reason))
    entries.sort(key=lambda entry: entry[0].relative_to(folder).as_posix())
    # One file reached by several paths: keep one path, list the others.
    kept: dict[tuple[int, int], Path] = {}
    candidates = [path for path, reason in entries if not reason]
    for path in sorted(candidates, key=lambda p: p.is_symlink()):  # stable: paths that are not links first
        kept.setdefault(_identity(path), path)
    reasons = {}
    for path in candidates:
        first = kept[_identity(path)]
        if first != path:
            same = first.relative_to(folder).as_posix()
            reasons[path] = (f"a link to {'the same file as ' * first.is_symlink()}{same}, which is read once"
                             if path.is_symlink() else f"the same file as {same} (a hard link), which is read once")
    return [(path, reasons.get(path, reason)) for path, reason in entries]


def _not_a_file(path: Path) -> str:
    """Why ``path`` (followed if it is a link) cannot be read as a document, or ``""`` when it can."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"a link to {os.readlink(path)}, which does not exist" if path.is_symlink() else "vanished while reading"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a link in a loop (it leads back to itself)"
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return ""
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return f"{kind}, not a file: only files are read"


def _hidden(name: str) -> bool:
    return name.startswith((".", "~$")) or name.lower() in SYSTEM_NAMES


def _identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino
