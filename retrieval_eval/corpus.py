"""The corpus and its chunks: reading documents, splitting them, storing and checking chunks."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from .checks import check_ids, check_positive_int
from .models import document_prefix, load_tokenizer, model_window
from .paths import CHUNKS_PATH, CORPUS_DIR
from .text import normalise, read_text

CHUNK_SIZE = 512  # word pieces of the embedding model's tokenizer


DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")  # the document types read, matched without regard to case
# Files and folders that operating systems, editors and version control put beside documents.
SYSTEM_NAMES = {"thumbs.db", "desktop.ini", "__macosx", "$recycle.bin", "system volume information"}


def load_corpus(folder: str | Path = CORPUS_DIR, skipped: list | None = None) -> dict[str, str]:
    """Read every document of a corpus folder and its subfolders: one file, one document.

    What is read: files ending in ``.md``, ``.markdown`` or ``.txt`` (in any case: ``Hours.MD``
    too), at any depth, saved as UTF-8 (with or without a byte-order mark) or UTF-16/UTF-32 with
    one (see :func:`~retrieval_eval.text.read_text`). A document's id is its path relative to the
    folder without the extension, with ``/`` between folders (``faq/returns.md`` → ``faq/returns``).

    What is not read, and listed with the reason: hidden and system files and folders (names
    starting with ``.`` or ``~$``, e.g. ``.DS_Store``, ``.git/``, Office lock files, ``Thumbs.db``;
    a folder is one line with its number of files), files of other types (``.pdf``, ``.docx``,
    ``.html``, images ...), empty or whitespace-only documents, and links to folders. Nothing is
    skipped silently: the list goes to ``skipped`` when given, else into one warning.

    Args:
        folder: the corpus folder.
        skipped: a list that receives ``(relative path, reason)`` for each file or folder not
            read (also when an error is raised); when ``None``, a ``UserWarning`` lists them instead.

    Returns:
        ``{document id: text}`` in path order; line endings are ``"\n"``.

    Raises:
        FileNotFoundError: the folder does not exist, or holds no document (the message lists
            what was skipped).
        NotADirectoryError: ``folder`` is a file.
        ValueError: documents that cannot be read as text (names each file, the byte and its
            line, and says "save it as UTF-8"), or two files that give one document id
            (``a.md`` and ``a.txt``; names both). Every such problem is listed in one error.

    Taught in: notebook 00_start_here.
    """
    folder = Path(folder)
    if not folder.exists():
        raise FileNotFoundError(f"the corpus folder {folder} does not exist")
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file, not a folder: the corpus is a folder of .md, .markdown or .txt documents")
    not_read, problems, docs, origin = [], [], {}, {}
    for path, reason in _corpus_files(folder):
        relative = path.relative_to(folder).as_posix()
        if reason:
            not_read.append((relative + ("/" if path.is_dir() else ""), reason))
            continue
        try:
            text = read_text(path, name=relative)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if not normalise(text):
            not_read.append((relative, "empty or only whitespace"))
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


def _corpus_files(folder: Path) -> list[tuple[Path, str]]:
    """Every file under ``folder`` in path order, with ``""`` when it is a document to read, else the
    reason it is not; a hidden or system folder, or a link to a folder, is one entry."""
    entries = []
    for root, dirs, files in os.walk(folder):
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
                reason = ""
            entries.append((path, reason))
    return sorted(entries, key=lambda entry: entry[0].relative_to(folder).as_posix())


def _hidden(name: str) -> bool:
    return name.startswith((".", "~$")) or name.lower() in SYSTEM_NAMES


def split_into_chunks(
    docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = 0, prefix: str = ""
) -> list[dict]:
    """Split each document into chunks with LangChain's ``RecursiveCharacterTextSplitter``.

    Sizes are counted in the tokenizer's word pieces. The model reads a chunk with its special
    tokens (``[CLS]`` and ``[SEP]`` for BERT-style models) added once, so the splitter measures
    pieces without them and is given ``chunk_size`` minus their number: a finished chunk, read as
    the model reads it, is at most ``chunk_size`` word pieces. (Charging the special tokens to every
    piece the splitter measures, each word and separator, would make chunks far smaller than
    asked.) A model that wants a prompt before each chunk (``prefix``, see
    :func:`~retrieval_eval.models.document_prefix`) reads its word pieces too; they are set aside
    the same way. The splitter's default separators: paragraph, line, word, character. Documents
    are split one at a time, so a chunk never spans two documents.

    Args:
        docs: ``{document id: text}``, e.g. from :func:`load_corpus`.
        tokenizer: a Hugging Face tokenizer, e.g. from :func:`load_tokenizer`.
        chunk_size: the largest chunk in word pieces, special tokens included (an integer larger
            than the number of special tokens).
        chunk_overlap: how many word pieces neighbouring chunks of a document may share (an
            integer >= 0, smaller than ``chunk_size`` minus the special tokens); 0 by default.
        prefix: the model's document prompt ("" for the bundled all-MiniLM-L6-v2).

    Returns:
        A list of ``{"id": "<doc>#<nn>", "doc": str, "text": str, "n_tokens": int}``, in document
        order; ``n_tokens`` is what the model reads: the special tokens and the prefix too.

    Raises:
        ValueError: ``chunk_size`` leaves no room beside the special tokens and the prefix, or
            ``chunk_overlap`` is negative, not an integer or not smaller than that room.

    Taught in: notebook 05_three_retrievers.
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from transformers.utils import logging as hf_logging

    chunk_size = check_positive_int(chunk_size, "chunk_size")
    # What the model reads besides the chunk: 2 special tokens for BERT-style models ([CLS], [SEP]), and the prefix.
    n_extra = len(tokenizer.encode(prefix))
    room = chunk_size - n_extra
    if room < 1:
        raise ValueError(f"chunk_size {chunk_size} leaves no room beside the model's {n_extra} special and prefix tokens")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int) or not 0 <= chunk_overlap < room:
        raise ValueError(f"chunk_overlap must be an integer from 0 to {room - 1} (word pieces), got {chunk_overlap!r}")

    def n_tokens(text: str) -> int:  # without the special tokens: they are added once per chunk
        return len(tokenizer.encode(text, add_special_tokens=False))

    # The splitter measures whole documents before it splits them; silence the tokenizer's
    # "longer than the maximum sequence length" warning, which does not apply to measuring.
    hf_logging.set_verbosity_error()

    splitter = RecursiveCharacterTextSplitter(chunk_size=room, chunk_overlap=chunk_overlap, length_function=n_tokens)
    return [
        {"id": f"{doc}#{i:02d}", "doc": doc, "text": piece, "n_tokens": len(tokenizer.encode(prefix + piece))}
        for doc, text in docs.items()
        for i, piece in enumerate(splitter.split_text(text))
    ]


def chunk_spans(text: str, chunks: Sequence[Mapping]) -> dict[str, tuple[int, int]]:
    """Where each chunk of one document lies in that document, as offsets in normalised text.

    Document and chunks go through :func:`~retrieval_eval.text.normalise` (the splitter strips the
    whitespace around each chunk). The chunks are placed in order, each searched from one character
    after the start of the chunk before it, so chunks that share text (``chunk_overlap`` > 0 in
    :func:`split_into_chunks`) are placed where they are: the next chunk may start before the
    previous one ends, and the shared text is ``normalise(text)[start of the next : end of the previous]``.

    Args:
        text: the document's text.
        chunks: that document's chunks in document order, each with ``id`` and ``text``.

    Returns:
        ``{chunk id: (start, end)}``, character offsets into ``normalise(text)``, end exclusive.

    Raises:
        ValueError: a chunk's text is not in the document after the chunk before it (names the
            chunk): the chunks are not this document's, or not in its order.

    Taught in: notebook 09_chunking.
    """
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


def write_chunks(chunks: Sequence[Mapping], path: str | Path = CHUNKS_PATH) -> None:
    """Write chunks as JSON Lines (one chunk per line, keys id, doc, text, n_tokens).

    Only the ``make chunks`` step calls this; notebooks never write under ``data/``.

    Taught in: notebook 05_three_retrievers.
    """
    with open(path, "w", encoding="utf-8") as f:
        for chunk in chunks:
            f.write(json.dumps(dict(chunk), ensure_ascii=False) + "\n")


def load_chunks(path: str | Path = CHUNKS_PATH) -> list[dict]:
    """Read and validate chunks written by :func:`write_chunks`.

    Raises:
        ValueError: the file is not UTF-8 JSON Lines (names the line), a chunk misses a key, or
            :func:`check_chunks` fails (names the chunk).

    Taught in: notebook 00_start_here.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8: {exc}") from None
    chunks = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            chunk = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name}, line {number}: not valid JSON ({exc.msg})") from None
        missing = {"id", "doc", "text", "n_tokens"} - (chunk.keys() if isinstance(chunk, dict) else set())
        if missing:
            raise ValueError(f"{path.name}, line {number}: a chunk needs the keys id, doc, text, n_tokens; misses {sorted(missing)}")
        chunks.append(chunk)
    return check_chunks(chunks)


def check_chunks(chunks: Sequence[Mapping]) -> list:
    """Check chunks before they are indexed or labelled.

    Args:
        chunks: a non-empty list of mappings with at least ``id`` (str) and ``text`` (str).

    Returns:
        The chunks, as a list.

    Raises:
        ValueError: no chunk, an id that is not a str (:func:`~retrieval_eval.checks.check_ids`),
            is empty or repeats, or a text that is not a string or is empty/whitespace-only (the
            message names the chunk). A text without any word (a Markdown rule ``---``, emoji,
            punctuation) is valid: BM25 indexes it, though it can never match a query.

    Taught in: notebook 05_three_retrievers.
    """
    chunks = list(chunks)
    if not chunks:
        raise ValueError("there is no chunk")
    check_ids([chunk.get("id") for chunk in chunks], "the chunks hold id", "chunk")
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


def stored_or_split_chunks(
    docs: Mapping[str, str],
    corpus: str | Path = CORPUS_DIR,
    model_name: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: bool = True,
    chunk_overlap: int = 0,
) -> list[dict]:
    """The chunks an evaluation run uses: the stored Polder chunks when they apply, else chunked now.

    ``data/chunks.jsonl`` is used when ``corpus`` is the Polder corpus folder and ``model_name``,
    ``chunk_size`` and ``chunk_overlap`` are the defaults (a test checks that file equals a rebuild). Any other
    corpus, model or size is split with :func:`split_into_chunks`, one document at a time under a
    progress bar (the output is the same as one call: documents are split independently).

    Args:
        docs: ``{document id: text}`` from :func:`load_corpus` of ``corpus``.
        corpus: the folder ``docs`` was read from.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or path;
            its tokenizer sizes the chunks.
        chunk_size: the largest chunk, in word pieces of that tokenizer.
        progress: show a progress bar while chunking.
        chunk_overlap: the most word pieces neighbouring chunks may share (0 by default; see
            :func:`split_into_chunks`).

    Returns:
        Chunks as :func:`split_into_chunks` returns them.

    Raises:
        ValueError: ``chunk_size`` is not an integer >= 1, or is larger than the model's window
            (:func:`~retrieval_eval.models.model_window`: the model could not read a whole chunk),
            or ``chunk_overlap`` is invalid (as :func:`split_into_chunks`).

    Taught in: notebooks 05_three_retrievers and 09_chunking.
    """
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    stored = (Path(corpus).resolve() == CORPUS_DIR.resolve() and model_name is None and chunk_size == CHUNK_SIZE
              and chunk_overlap == 0)
    if stored:
        return load_chunks()
    window = model_window(model_name)
    if chunk_size > window:
        raise ValueError(f"chunk_size {chunk_size} is larger than the model's window of {window} word pieces")
    tokenizer, prefix = load_tokenizer(model_name), document_prefix(model_name)
    return [
        chunk
        for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress)
        for chunk in split_into_chunks({doc: docs[doc]}, tokenizer, chunk_size, chunk_overlap, prefix)
    ]
