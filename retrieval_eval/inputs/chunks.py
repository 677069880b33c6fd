"""Chunks: documents split in the embedding model's word pieces, stored, and checked where they enter."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm import tqdm

from ..core.checks import check_ids, check_k, check_list
from ..core.paths import CHUNKS_PATH, CORPUS_DIR
from .formats import load_chunks
from .models import document_prefix, fast_tokenizer, load_tokenizer, model_window
from .text import normalise

CHUNK_SIZE = 512  # word pieces of the embedding model's tokenizer
SECTION_CHARS = 1_000_000  # a longer document is chunked in sections of at most this many characters


def split_into_chunks(docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = 0,
                      prefix: str = "") -> list[dict]:
    """Each document split by LangChain's ``RecursiveCharacterTextSplitter`` in ``tokenizer``'s word pieces (a fast
    tokenizer or a ``tokenizers.Tokenizer``): ``[{"id": "<doc>#<nn>", "doc", "text", "n_tokens"}]`` in document order.
    Each document is tokenized once (one of over ``SECTION_CHARS`` characters a section at a time, with progress), each
    piece charged where it starts; the special tokens and ``prefix`` aside, a chunk as the embedding model reads it is at most ``chunk_size`` pieces (``n_tokens`` counts them all)."""
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
            for doc, text in docs.items() for i, piece in enumerate(
                piece for section in tqdm(_sections(text), desc=f"chunking {doc}", unit="section", leave=False,
                                          disable=len(text) <= SECTION_CHARS)
                for piece in _split_text(section, fast, room, chunk_overlap))]


def _sections(text: str) -> list[str]:
    """A document in sections of at most ``SECTION_CHARS`` characters, each cut at its last paragraph break (else line
    break, else space): a long document is tokenized a section at a time, in bounded memory; no chunk spans two."""
    sections, start = [], 0
    while len(text) - start > SECTION_CHARS:
        cut = next((i for sep in ("\n\n", "\n", " ") if (i := text.rfind(sep, start + 1, start + SECTION_CHARS)) > start),
                   start + SECTION_CHARS)
        sections.append(text[start:cut])
        start = cut
    return [*sections, text[start:]]


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
