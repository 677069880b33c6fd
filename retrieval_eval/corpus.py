"""The corpus and its chunks: reading documents, splitting them, storing and checking chunks."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from .checks import check_ids, check_list, check_k
from .formats import load_chunks
from .models import document_prefix, fast_tokenizer, load_tokenizer, model_window
from .paths import CHUNKS_PATH, CORPUS_DIR
from .text import normalise, read_text

CHUNK_SIZE = 512  # word pieces of the embedding model's tokenizer


DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")  # the document types read, matched without regard to case
MARKDOWN_SUFFIXES = (".md", ".markdown")
# Files and folders that operating systems, editors and version control put beside documents.
SYSTEM_NAMES = {"thumbs.db", "desktop.ini", "__macosx", "$recycle.bin", "system volume information"}


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


def path_problem(name: str, path, kind: str) -> str | None:
    """What is wrong with a path parameter (``kind``: "folder", "file", "file or folder"...), or None."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        return f"{name} must be the path of a {kind}, got {path!r}"
    path = Path(path)
    if not path.exists():
        return f"{name} {str(path)!r}: no such {kind} (from {Path.cwd()})"
    if kind == "folder" and not path.is_dir():
        return f"{name} {str(path)!r} is a file; give the folder that holds the documents"
    if kind == "file" and not path.is_file():
        return f"{name} {str(path)!r} is a folder; give the file"
    return None


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
    """The file a path reaches (its device and inode, links followed)."""
    info = path.stat()
    return info.st_dev, info.st_ino


def split_into_chunks(docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = 0,
                      prefix: str = "") -> list[dict]:
    """Each document split by LangChain's ``RecursiveCharacterTextSplitter`` in ``tokenizer``'s word pieces (a fast
    tokenizer or a ``tokenizers.Tokenizer``): ``[{"id": "<doc>#<nn>", "doc", "text", "n_tokens"}]`` in document order.
    Each document is tokenized once, each piece charged where it starts; the special tokens and ``prefix`` aside, a
    chunk as the embedding model reads it is at most ``chunk_size`` pieces (``n_tokens`` counts them all)."""
    chunk_size = check_k(chunk_size, "chunk_size")
    fast = _own_fast_tokenizer(tokenizer)
    # What the model reads besides the chunk: 2 special tokens for BERT-style models ([CLS], [SEP]), and the prefix.
    n_extra = len(fast.encode(prefix).ids)
    room = chunk_size - n_extra
    if room < 1:
        raise ValueError(f"chunk_size {chunk_size} leaves no room beside the model's {n_extra} special and prefix tokens")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int) or not 0 <= chunk_overlap < room:
        raise ValueError(f"chunk_overlap must be an integer from 0 to {room - 1} (word pieces), got {chunk_overlap!r}")
    if not isinstance(docs, Mapping):
        raise ValueError(f"docs must be a mapping {{document id: text}}, got {docs!r:.60}")
    check_ids(docs, "the documents hold id")
    for doc, text in docs.items():
        if not isinstance(text, str):
            raise ValueError(f"document {doc!r}: the text must be a str, got {type(text).__name__}")
    return [{"id": f"{doc}#{i:02d}", "doc": doc, "text": piece, "n_tokens": len(fast.encode(prefix + piece).ids)}
            for doc, text in docs.items() for i, piece in enumerate(_split_text(text, fast, room, chunk_overlap))]


def _own_fast_tokenizer(tokenizer):
    """The ``tokenizers.Tokenizer`` behind ``tokenizer``, without truncation or padding (far faster than
    through transformers); ValueError for a slow tokenizer."""
    from tokenizers import Tokenizer
    if isinstance(tokenizer, Tokenizer) and tokenizer.truncation is None and tokenizer.padding is None:
        return tokenizer  # nothing to switch off: no copy (a copy of all-MiniLM's costs ~50 ms, once per document)
    if isinstance(tokenizer, Tokenizer):
        fast = Tokenizer.from_str(tokenizer.to_str())
    elif getattr(tokenizer, "is_fast", False):
        fast = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
    else:
        raise ValueError("split_into_chunks needs a fast tokenizer (one that gives character offsets), e.g. load_tokenizer()")
    fast.no_truncation()
    fast.no_padding()
    return fast


def chunk_spans(text: str, chunks: Sequence[Mapping]) -> dict[str, tuple[int, int]]:
    """``{chunk id: (start, end)}`` of one document's chunks in ``normalise(text)``; a chunk not found after the
    one before it is refused (another document's, or out of order)."""
    chunks = check_chunks(chunks)
    full = normalise(text)
    spans, cursor = {}, 0
    for chunk in chunks:
        piece = normalise(chunk["text"])
        start = full.find(piece, cursor)
        if start < 0:
            raise ValueError(f"chunk {chunk['id']!r} is not in its document after the chunk before it")
        spans[chunk["id"]] = (start, start + len(piece))
        cursor = start + 1
    return spans


def _split_text(text: str, tokenizer, room: int, overlap: int) -> list[str]:
    """One document in pieces of at most ``room`` word pieces, each word piece charged to where it starts."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    # Two private-use characters the text does not hold mark the document's word pieces: ``cut``
    # where one starts and the text may be cut (the splitter's last separator), ``piece`` before
    # each other word piece. The length of a part is the number of marks in it.
    cut, piece = [c for c in map(chr, range(0xE000, 0xF900)) if c not in text][:2]
    marks = {}
    for start, may_cut in _word_piece_starts(text, tokenizer):
        marks[start] = marks.get(start, "") + (cut if may_cut and start not in marks else piece)
    marked, last = [], 0
    for start in sorted(marks):
        marked += [text[last:start], marks[start]]
        last = start
    marked.append(text[last:])
    splitter = RecursiveCharacterTextSplitter(separators=["\n\n", "\n", " ", cut], chunk_size=room,
                                              chunk_overlap=overlap,
                                              length_function=lambda part: part.count(cut) + part.count(piece))
    pieces = []
    for part in splitter.split_text("".join(marked)):
        part = part.replace(cut, "").replace(piece, "").strip()
        if part:
            pieces += _fit(part, tokenizer, room)
    return pieces


def _word_piece_starts(text: str, tokenizer) -> list[tuple[int, bool]]:
    """``(character offset, may cut there)`` for each word piece of ``text``. A cut may fall before a word's first
    piece, and inside a word where both halves read alone keep their number of pieces ("##ab" alone becomes "ab"). Words
    of over 200 pieces may be cut anywhere; :func:`_fit` catches what that changes."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    offsets, word_ids = encoding.offsets, encoding.word_ids
    words: dict = {}
    for i, word_id in enumerate(word_ids):
        words.setdefault(i if word_id is None else word_id, []).append(i)
    may_cut = [True] * len(offsets)
    checks = []  # (token index, left half, right half, pieces on the left)
    for indices in words.values():
        if not 1 < len(indices) <= 200:
            continue
        begin, end = offsets[indices[0]][0], offsets[indices[-1]][1]
        for n, i in enumerate(indices[1:], start=1):
            checks.append((i, text[begin : offsets[i][0]], text[offsets[i][0] : end], n, len(indices) - n))
    if checks:
        lefts = tokenizer.encode_batch([c[1] for c in checks], add_special_tokens=False)
        rights = tokenizer.encode_batch([c[2] for c in checks], add_special_tokens=False)
        for (i, _, _, n_left, n_right), left, right in zip(checks, lefts, rights):
            may_cut[i] = len(left.ids) == n_left and len(right.ids) == n_right
    return [(start, ok) for (start, _), ok in zip(offsets, may_cut)]


def _fit(part: str, tokenizer, room: int) -> list[str]:
    """``part`` if its word pieces fit in ``room``, else cut into the longest prefixes that do (only a cut inside
    a long word of an unusual tokenizer needs this)."""
    pieces = []
    while len(tokenizer.encode(part, add_special_tokens=False).ids) > room:
        low, high = 1, len(part)  # the longest prefix that fits is part[:low]
        while low < high:
            middle = (low + high + 1) // 2
            if len(tokenizer.encode(part[:middle], add_special_tokens=False).ids) <= room:
                low = middle
            else:
                high = middle - 1
        if len(tokenizer.encode(part[:low], add_special_tokens=False).ids) > room:
            raise ValueError(f"the text {part[:20]!r} cannot be cut into chunks of {room} word pieces: raise chunk_size")
        pieces.append(part[:low].strip())
        part = part[low:].strip()
    return pieces + ([part] if part else [])


def write_chunks(chunks: Sequence[Mapping], path: str | Path = CHUNKS_PATH) -> None:
    """Write chunks as JSON Lines, one chunk per line (``make chunks``; notebooks never write under ``data/``)."""
    chunks = check_chunks(chunks)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(dict(chunk), ensure_ascii=False) + "\n" for chunk in chunks)


def check_chunks(chunks: Sequence[Mapping]) -> list:
    """The chunks as a list, checked: mappings with a non-empty str ``id`` (none twice) and non-blank ``text``;
    the message names the chunk. A text without a word (a Markdown rule, emoji) is valid."""
    chunks = check_list(chunks, "chunks", "chunks (mappings with id and text)")
    if not chunks:
        raise ValueError("there is no chunk")
    for position, chunk in enumerate(chunks, start=1):
        if not isinstance(chunk, Mapping) or "id" not in chunk or "text" not in chunk:
            raise ValueError(f"chunk {position} must be a mapping with id and text, got {chunk!r:.60}")
    check_ids([chunk["id"] for chunk in chunks], "the chunks hold id", "chunk")
    seen = set()
    for chunk in chunks:
        chunk_id = chunk["id"]
        if not chunk_id:
            raise ValueError("a chunk id is empty")
        if chunk_id in seen:
            raise ValueError(f"duplicate chunk id {chunk_id!r}")
        if not isinstance(chunk.get("text"), str) or not chunk["text"].strip():
            raise ValueError(f"chunk {chunk_id!r} has empty, whitespace-only or missing text")
        seen.add(chunk_id)
    return chunks


def stored_or_split_chunks(docs: Mapping[str, str], corpus: str | Path = CORPUS_DIR, model_name: str | None = None,
                           chunk_size: int = CHUNK_SIZE, progress: bool = True, chunk_overlap: int = 0) -> list[dict]:
    """The stored ``data/chunks.jsonl`` for the Polder folder with the default model, size and overlap when
    made from exactly these documents; else (with a warning for Polder) chunked now, one document at a time."""
    chunk_size = check_k(chunk_size, "chunk_size")
    if not isinstance(docs, Mapping):
        raise ValueError(f"docs must be a mapping {{document id: text}}, got {docs!r:.60}")
    check_ids(docs, "the documents hold id")
    if (Path(corpus).resolve() == CORPUS_DIR.resolve() and model_name is None and chunk_size == CHUNK_SIZE
            and chunk_overlap == 0):
        stored = load_chunks()
        changed = stored_chunks_differ(docs, stored)
        if changed is None:
            return stored
        warnings.warn(f"{CHUNKS_PATH.name} was not made from the documents of {corpus} ({changed}): they are chunked "
                      f"now; `make chunks` stores their chunks", stacklevel=2)
    window = model_window(model_name)
    if chunk_size > window:
        raise ValueError(f"chunk_size {chunk_size} is larger than the model's window of {window} word pieces")
    # The model's tokenizer.json read by the tokenizers library when there is one: the same word
    # pieces as load_tokenizer's, without importing transformers and torch (seconds).
    tokenizer, prefix = fast_tokenizer(model_name) or load_tokenizer(model_name), document_prefix(model_name)
    return [chunk for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress)
            for chunk in split_into_chunks({doc: docs[doc]}, tokenizer, chunk_size, chunk_overlap, prefix)]


def stored_chunks_differ(docs: Mapping[str, str], chunks: Sequence[Mapping]) -> str | None:
    """None when ``chunks`` were made from exactly ``docs`` (each document's chunks in order, only whitespace
    around them), else what differs, in a few words."""
    check_ids(docs, "the documents hold id")
    by_doc: dict = {}
    for chunk in check_chunks(chunks):
        by_doc.setdefault(chunk.get("doc"), []).append(chunk["text"])
    added, removed = sorted(set(docs) - set(by_doc)), sorted(set(by_doc) - set(docs))
    if added or removed:
        return "; ".join([f"{len(docs)} documents, the stored chunks name {len(by_doc)}"]
                         + [f"new: {', '.join(added[:5])}"] * bool(added) + [f"gone: {', '.join(removed[:5])}"] * bool(removed))
    for doc, text in docs.items():
        cursor = 0
        for piece in by_doc[doc]:
            start = text.find(piece, cursor)
            if start < 0 or text[cursor:start].strip():
                return f"document {doc!r} changed"
            cursor = start + len(piece)
        if text[cursor:].strip():
            return f"document {doc!r} changed"
    return None
