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
from .models import document_prefix, fast_tokenizer, load_tokenizer, model_problems, model_window
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


def check_parameters(corpus, golden, model_name=None, chunk_size=CHUNK_SIZE) -> None:
    """Refuse, in one :class:`ParameterError` listing every problem, a corpus that is not a folder, a golden
    file that is not a file, and a model or chunk size that cannot work (:func:`~retrieval_eval.models.model_problems`)."""
    problems = []
    for name, value, kind, exists in (("CORPUS", corpus, "folder", os.path.isdir), ("GOLDEN", golden, "file", os.path.isfile)):
        if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
            problems.append(f"{name} must be the path of a {kind}, got {value!r}")
        elif not exists(value):
            problems.append(f"{name} {str(value)!r}: no such {kind}")
    problems += model_problems(model_name, chunk_size)
    if problems:
        raise ParameterError(problems)


def load_corpus(folder: str | Path = CORPUS_DIR, skipped: list | None = None, exclude: Sequence[str | Path] = ()) -> dict[str, str]:
    """Read every document of a corpus folder and its subfolders: one file, one document.

    What is read: files ending in ``.md``, ``.markdown`` or ``.txt`` (in any case: ``Hours.MD``
    too), at any depth, saved as UTF-8 (with or without a byte-order mark) or UTF-16/UTF-32 with
    one (see :func:`~retrieval_eval.text.read_text`). A document's id is its path relative to the
    folder without the extension, with ``/`` between folders (``faq/returns.md`` → ``faq/returns``).
    A link to a file is read as that file, under the link's name, unless the file is read anyway.

    What is not read, and listed with the reason: hidden and system files and folders (names
    starting with ``.`` or ``~$``, e.g. ``.DS_Store``, ``.git/``, Office lock files, ``Thumbs.db``;
    a folder is one line with its number of files), files of other types (``.pdf``, ``.docx``,
    ``.html``, images ...), empty or whitespace-only documents, Markdown files that hold only
    front matter (a ``---`` block of metadata and no text: a stub, whose metadata would be
    retrieved as if it were a document), links to folders (not followed), a file reached a
    second time (a link, or a hard link, to a file that is read: its evidence would count twice),
    links to nothing or in a loop, things that are not files (a named pipe, which would make the
    reading wait forever, a socket, a device), and files or folders that cannot be opened (no
    permission). Nothing is skipped silently: the list goes to ``skipped`` when given, else into one
    warning.

    Args:
        folder: the corpus folder.
        skipped: a list that receives ``(relative path, reason)`` for each file or folder not
            read (also when an error is raised); when ``None``, a ``UserWarning`` lists them instead.
        exclude: the other input files of the evaluation (the golden set, qrels, runs): one saved
            inside the corpus folder is left out of the corpus and listed, never read as a document.

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
        if path.suffix.lower() in MARKDOWN_SUFFIXES and _only_front_matter(text):
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


def _only_front_matter(text: str) -> bool:
    """Whether a Markdown text is a front matter block and nothing else."""
    match = _FRONT_MATTER.match(text)
    return bool(match) and not text[match.end():].strip()


def _corpus_files(folder: Path) -> list[tuple[Path, str]]:
    """Every file under ``folder`` in path order, with ``""`` when it is a document to read, else the
    reason it is not; a hidden or system folder, a link to a folder or a folder that cannot be
    opened is one entry. Of several paths that reach one file (links, hard links), one is read: a
    path that is not a link if there is one, else the first."""
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
            if not path.is_symlink():
                reasons[path] = f"the same file as {same} (a hard link), which is read once"
            else:
                reasons[path] = f"a link to {'the same file as ' * first.is_symlink()}{same}, which is read once"
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


def split_into_chunks(
    docs: Mapping[str, str], tokenizer, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = 0, prefix: str = ""
) -> list[dict]:
    """Split each document into chunks with LangChain's ``RecursiveCharacterTextSplitter``.

    Sizes are counted in the tokenizer's word pieces. The splitter prefers to cut between
    paragraphs, then lines, then words (its separators ``"\n\n"``, ``"\n"``, ``" "``); a run
    without spaces longer than a chunk (a hyphenated chain, a number, a URL, base64, a script
    without spaces) is cut between two word pieces. The splitter adds up the lengths of the pieces
    it measures, so the length must add up: each document is tokenized once, whole, and each
    word piece is charged to the piece of text where it starts (its character offset), so no piece
    is charged the special tokens (``[CLS]``, ``[SEP]``), and a word cut into letters is not charged
    once per letter. Measuring each piece on its own instead makes chunks far smaller than asked
    (a word piece per separator and per letter). The model reads a chunk with its special tokens
    added once, and a model that wants a prompt before each chunk (``prefix``, see
    :func:`~retrieval_eval.models.document_prefix`) reads its word pieces too: both are set aside,
    so a finished chunk, read as the model reads it, is at most ``chunk_size`` word pieces (each is
    measured again; one that a cut inside a word made longer is split again). Documents are split
    one at a time, so a chunk never spans two documents. A chunk ends early only where the next
    word (a run without spaces) would not fit; a chunk of ordinary words is within a few word
    pieces of the size asked.

    Args:
        docs: ``{document id: text}``, e.g. from :func:`load_corpus`; ids are str.
        tokenizer: a Hugging Face fast tokenizer (one that gives character offsets), e.g. from
            :func:`load_tokenizer`, or the ``tokenizers.Tokenizer`` of its ``tokenizer.json``.
        chunk_size: the largest chunk in word pieces, special tokens included (an integer larger
            than the number of special tokens).
        chunk_overlap: how many word pieces neighbouring chunks of a document may share (an
            integer >= 0, smaller than ``chunk_size`` minus the special tokens); 0 by default.
        prefix: the model's document prompt ("" for the bundled all-MiniLM-L6-v2).

    Returns:
        A list of ``{"id": "<doc>#<nn>", "doc": str, "text": str, "n_tokens": int}``, in document
        order; ``n_tokens`` is what the model reads: the special tokens and the prefix too. Each
        text is a part of its document, without the whitespace around it.

    Raises:
        ValueError: ``chunk_size`` leaves no room beside the special tokens and the prefix, or
            ``chunk_overlap`` is negative, not an integer or not smaller than that room; a document
            id is not a str (:func:`~retrieval_eval.checks.check_ids`) or a text is not a str (names
            the document); the tokenizer gives no character offsets (a "slow" tokenizer).

    Taught in: notebook 09_chunking.
    """
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
    return [
        {"id": f"{doc}#{i:02d}", "doc": doc, "text": piece, "n_tokens": len(fast.encode(prefix + piece).ids)}
        for doc, text in docs.items()
        for i, piece in enumerate(_split_text(text, fast, room, chunk_overlap))
    ]


def _own_fast_tokenizer(tokenizer):
    """A copy of the tokenizers library's tokenizer behind ``tokenizer`` (a Hugging Face fast tokenizer
    or a ``tokenizers.Tokenizer``), without truncation or padding: it measures whole documents and
    many short texts at once, much faster than through transformers; ValueError for a slow one."""
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
        ValueError: the chunks are malformed (:func:`check_chunks`), or a chunk's text is not in
            the document after the chunk before it (names the chunk): the chunks are not this
            document's, or not in its order.

    Not taught; used by shared_word_pieces (notebook 09_chunking) and by label_chunks to say why
    a question has no relevant chunk.
    """
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
    # ``tokenizer`` here and below is a ``tokenizers.Tokenizer`` (see split_into_chunks).
    """One document in pieces of at most ``room`` word pieces (without special tokens), by
    LangChain's recursive splitter, each word piece charged to where it starts (see
    :func:`split_into_chunks`)."""
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
    splitter = RecursiveCharacterTextSplitter(
        separators=["\n\n", "\n", " ", cut], chunk_size=room, chunk_overlap=overlap,
        length_function=lambda part: part.count(cut) + part.count(piece),
    )
    pieces = []
    for part in splitter.split_text("".join(marked)):
        part = part.replace(cut, "").replace(piece, "").strip()
        if part:
            pieces += _fit(part, tokenizer, room)
    return pieces


def _word_piece_starts(text: str, tokenizer) -> list[tuple[int, bool]]:
    """``(character offset, may cut there)`` for each word piece of ``text``, in order.

    A cut may fall before the first word piece of a word (as the tokenizer splits words: at spaces
    and punctuation), and before any other word piece of a word where both halves of the word,
    read alone, keep their number of word pieces (a half read alone can be split otherwise: a
    continuation piece "##ab" becomes the word "ab"); a chunk then holds exactly the word pieces
    charged to it. Words of more than 200 word pieces (tokenizers without a word length limit) may
    be cut anywhere; :func:`_fit` catches what that changes.
    """
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
    """``part`` if its own word pieces fit in ``room``, else cut into the longest prefixes that do.

    Only a cut inside a long word of an unusual tokenizer can make a part longer than the
    splitter counted; the split is then finished here, by characters.
    """
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
    """Write chunks as JSON Lines (one chunk per line, keys id, doc, text, n_tokens).

    Only the ``make chunks`` step calls this; notebooks never write under ``data/``.

    Args:
        chunks: ``[{"id": str, "doc": str, "text": str, "n_tokens": int}, ...]`` in corpus order.
        path: the JSON Lines file to write (str or Path; data/chunks.jsonl by default).

    Raises:
        ValueError: as :func:`check_chunks`, before anything is written.

    Not taught; used by ``make chunks`` (notebooks read the chunks through evaluation_setup).
    """
    chunks = check_chunks(chunks)
    with open(path, "w", encoding="utf-8") as f:
        for chunk in chunks:
            f.write(json.dumps(dict(chunk), ensure_ascii=False) + "\n")


def load_chunks(path: str | Path = CHUNKS_PATH) -> list[dict]:
    """Read and validate chunks written by :func:`write_chunks`.

    Args:
        path: the JSON Lines file (str or Path; data/chunks.jsonl by default).

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

    Every function that takes chunks (the retrievers, the labels, the audit) checks them here first.

    Args:
        chunks: a non-empty list of mappings with at least ``id`` (str) and ``text`` (str).

    Returns:
        The chunks, as a list.

    Raises:
        ValueError: ``chunks`` is not a list (:func:`~retrieval_eval.checks.check_list`) or is
            empty, a chunk is not a mapping with ``id`` and ``text`` ("chunk 1 must be a mapping
            with id and text", counted from 1), an id is not a str
            (:func:`~retrieval_eval.checks.check_ids`), is empty or repeats, or a text that is not
            a string or is empty/whitespace-only (the message names the chunk). A text without
            any word (a Markdown rule ``---``, emoji, punctuation) is valid: BM25 indexes it,
            though it can never match a query.

    Not taught; used wherever chunks come in (e.g. BM25Retriever, notebooks 00_start_here and
    05_three_retrievers).
    """
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


def stored_or_split_chunks(
    docs: Mapping[str, str],
    corpus: str | Path = CORPUS_DIR,
    model_name: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: bool = True,
    chunk_overlap: int = 0,
) -> list[dict]:
    """The chunks an evaluation run uses: the stored Polder chunks when they apply, else chunked now.

    ``data/chunks.jsonl`` is used when ``corpus`` is the Polder corpus folder, ``model_name``,
    ``chunk_size`` and ``chunk_overlap`` are the defaults, and the stored chunks were made from exactly these
    documents (:func:`stored_chunks_differ`: the same document ids, and each document is its stored
    chunks in order, with only whitespace between them; a test checks that the file equals a rebuild).
    When a document was added, removed or edited since, a warning says so and the corpus is chunked
    now (``make chunks`` stores the new chunks). Any other corpus, model or size is split with
    :func:`split_into_chunks`, one document at a time under a progress bar (the output is the same
    as one call: documents are split independently).

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
            ``chunk_overlap`` is invalid (as :func:`split_into_chunks`), or a document id is not a str.

    Not taught; used by evaluation_setup (every notebook) and chunk_and_rank (notebook 09_chunking).
    """
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
    return [
        chunk
        for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress)
        for chunk in split_into_chunks({doc: docs[doc]}, tokenizer, chunk_size, chunk_overlap, prefix)
    ]


def stored_chunks_differ(docs: Mapping[str, str], chunks: Sequence[Mapping]) -> str | None:
    """``None`` when ``chunks`` were made from exactly ``docs``, else what differs, in a few words.

    Made from exactly these documents means: the chunks name the same documents, and each document
    is its chunks (``text``, in order) with nothing but whitespace before, between and after them,
    as :func:`split_into_chunks` makes them. A document added, removed or edited since (outside
    whitespace) is named.

    Args:
        docs: ``{document id: text}``, as :func:`load_corpus` returns.
        chunks: ``[{"id": str, "doc": str, "text": str, "n_tokens": int}, ...]`` in corpus order.

    Raises:
        ValueError: a document id is not a str, or the chunks fail :func:`check_chunks`.

    Not taught; used by stored_or_split_chunks (through evaluation_setup, every notebook).
    """
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
