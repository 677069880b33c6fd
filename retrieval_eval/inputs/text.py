"""Reading text files as people save them, the one normalisation behind the relevance rule, where an evidence
string sits in a chunk, and the one escape of user text for HTML and Markdown."""

from __future__ import annotations

import codecs
import gzip
import html
import re
import unicodedata
from pathlib import Path

# Byte-order marks and the codec that reads past them (UTF-32's mark starts like UTF-16's: test it first).
_BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def plain_integer(raw: str) -> int | None:
    """``raw`` as an int when it is a plain ASCII integer (int() also takes "1_0" and other scripts' digits)."""
    try:
        return int(raw) if raw.isascii() and "_" not in raw else None
    except ValueError:
        return None


def read_text(path: str | Path, name: str | None = None) -> str:
    """A text file (gzipped or not) saved as UTF-8 (with or without a byte-order mark) or UTF-16/UTF-32 with one, as editors and
    spreadsheets write Unicode; line endings become ``"\n"``. Any other encoding, or NUL bytes, is refused with the
    file (``name``), line and byte, rather than guessed: a wrong guess would change the text silently."""
    path = Path(path)
    name = path.name if name is None else name
    raw = path.read_bytes()
    if raw.startswith(b"\x1f\x8b"):  # gzip, as BEIR and Hugging Face ship corpus.jsonl.gz
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{name} is a gzip file that does not decompress ({exc}): download it again") from None
    encoding = next((codec for bom, codec in _BYTE_ORDER_MARKS if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{name} is not {encoding.upper().removesuffix('-SIG')}: byte 0x{raw[exc.start]:02x} at line "
                         f"{line} (byte {exc.start} of the file) does not decode; save it as UTF-8") from None
    if "\x00" in text:
        raise ValueError(f"{name} holds NUL bytes: it is not a text file, or UTF-16 without a byte-order mark; "
                         "save it as UTF-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


_TYPOGRAPHY = str.maketrans({
    "\u200b": None, "\u200c": None, "\u200d": None, "\u00ad": None, "\ufeff": None,
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
})


def normalise(text: str) -> str:
    """The text the evidence-string test compares, both sides: NFKC ("ﬁ" → "fi", non-breaking spaces), typographic
    quotes and dashes as ASCII, invisible characters removed, whitespace runs as one space, ends stripped. Case is
    kept: the relevance rule is strict on purpose."""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    return re.sub(r"\s+", " ", text).strip()


def locate_evidence(text: str, evidence: str) -> tuple[int, int] | None:
    """``(start, end)`` of the evidence string in a chunk's raw text, matched as the labels match it (each
    character normalised on its own, remembering where it came from), or None. A text with a sequence that only
    normalises as a whole (a combining accent) gives None: only the highlight is skipped, not the label."""
    chars, origin = [], []
    for i, ch in enumerate(text):
        piece = unicodedata.normalize("NFKC", ch).translate(_TYPOGRAPHY)
        if piece.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            continue
        for c in piece:
            chars.append(c)
            origin.append(i)
    flat = "".join(chars)
    needle = normalise(evidence)
    if flat.strip() != normalise(text) or not needle:
        return None
    start = flat.find(needle)
    if start < 0:
        return None
    return origin[start], origin[start + len(needle) - 1] + 1


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:$])")  # < > & go through html.escape


def escape(text, markdown: bool = False) -> str:
    """User text (a question, a slice, an id, a file or run name) made literal for HTML output, and with
    ``markdown`` for Markdown output too: every character that could start markup or a link is shown as
    typed, so "<details>" reads "<details>" and "[x](javascript:...)" is no link. The one place that escapes."""
    text = str(text)
    if markdown:
        text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.splitlines()))
    return html.escape(text, quote=not markdown)
