"""The corpus and its chunks: reading documents, splitting them, storing and checking chunks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from .checks import check_positive_int
from .models import load_tokenizer
from .paths import CHUNKS_PATH, CORPUS_DIR

CHUNK_SIZE = 512  # word pieces of the embedding model's tokenizer


def load_corpus(folder: str | Path = CORPUS_DIR) -> dict[str, str]:
    """Read every ``*.md`` and ``*.txt`` file of a folder as one document.

    Args:
        folder: the corpus folder.

    Returns:
        ``{document stem: text}`` in file-name order.

    Raises:
        FileNotFoundError: the folder does not exist or holds no document.
        ValueError: a document is not UTF-8 or is empty (the message names the file).

    Taught in: notebook 00_start_here.
    """
    folder = Path(folder)
    paths = sorted(p for p in folder.glob("*") if p.suffix in {".md", ".txt"})
    if not paths:
        raise FileNotFoundError(f"no .md or .txt documents in {folder}")
    docs = {}
    for path in paths:
        if path.stem in docs:
            raise ValueError(f"two documents are named {path.stem!r} ({path.stem}.md and {path.stem}.txt); rename one")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"document {path.name} is not UTF-8: {exc}") from None
        if not text.strip():
            raise ValueError(f"document {path.name} is empty")
        docs[path.stem] = text
    return docs


def split_into_chunks(docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE) -> list[dict]:
    """Split each document into chunks with LangChain's ``RecursiveCharacterTextSplitter``.

    Sizes are counted in the tokenizer's word pieces *as the model reads them*, that is with the
    ``[CLS]`` and ``[SEP]`` tokens it adds, so a chunk of ``chunk_size`` fits a model window of
    ``chunk_size`` exactly. No overlap; the splitter's default separators (paragraph, line, word,
    character). Documents are split one at a time, so a chunk never spans two documents.

    Args:
        docs: ``{document stem: text}``, e.g. from :func:`load_corpus`.
        tokenizer: a Hugging Face tokenizer, e.g. from :func:`load_tokenizer`.
        chunk_size: the largest chunk, in word pieces.

    Returns:
        A list of ``{"id": "<doc>#<nn>", "doc": str, "text": str, "n_tokens": int}``, in document
        order; ``n_tokens`` counts the special tokens too.

    Taught in: notebook 05_three_retrievers.
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from transformers.utils import logging as hf_logging

    def n_tokens(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=True))

    # The splitter measures whole documents before it splits them; silence the tokenizer's
    # "longer than the maximum sequence length" warning, which does not apply to measuring.
    hf_logging.set_verbosity_error()

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=0, length_function=n_tokens)
    return [
        {"id": f"{doc}#{i:02d}", "doc": doc, "text": piece, "n_tokens": n_tokens(piece)}
        for doc, text in docs.items()
        for i, piece in enumerate(splitter.split_text(text))
    ]


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
        ValueError: no chunk, an id that is not a non-empty string or repeats, or a text that is
            not a string or is empty/whitespace-only (the message names the chunk).

    Taught in: notebook 05_three_retrievers.
    """
    chunks = list(chunks)
    if not chunks:
        raise ValueError("there is no chunk")
    seen = set()
    for chunk in chunks:
        chunk_id = chunk.get("id")
        if not isinstance(chunk_id, str) or not chunk_id:
            raise ValueError(f"chunk id {chunk_id!r} must be a non-empty string")
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
) -> list[dict]:
    """The chunks an evaluation run uses: the stored Polder chunks when they apply, else chunked now.

    ``data/chunks.jsonl`` is used when ``corpus`` is the Polder corpus folder and ``model_name``
    and ``chunk_size`` are the defaults (a test checks that file equals a rebuild). Any other
    corpus, model or size is split with :func:`split_into_chunks`, one document at a time under a
    progress bar (the output is the same as one call: documents are split independently).

    Args:
        docs: ``{document stem: text}`` from :func:`load_corpus` of ``corpus``.
        corpus: the folder ``docs`` was read from.
        model_name: ``None`` for the bundled all-MiniLM-L6-v2, or a local model name or path;
            its tokenizer sizes the chunks.
        chunk_size: the largest chunk, in word pieces of that tokenizer.
        progress: show a progress bar while chunking.

    Returns:
        Chunks as :func:`split_into_chunks` returns them.

    Raises:
        ValueError: ``chunk_size`` is not an integer >= 1, or is larger than the tokenizer's
            ``model_max_length`` (the model could not read a whole chunk).

    Taught in: notebook 05_three_retrievers.
    """
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    stored = Path(corpus).resolve() == CORPUS_DIR.resolve() and model_name is None and chunk_size == CHUNK_SIZE
    if stored:
        return load_chunks()
    tokenizer = load_tokenizer(model_name)
    if chunk_size > tokenizer.model_max_length:
        raise ValueError(
            f"chunk_size {chunk_size} is larger than the model's window of {tokenizer.model_max_length} word pieces"
        )
    return [
        chunk
        for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress)
        for chunk in split_into_chunks({doc: docs[doc]}, tokenizer, chunk_size)
    ]
