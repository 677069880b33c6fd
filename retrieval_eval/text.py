"""Reading text files as people save them, the one normalisation behind the relevance rule, and
where an evidence string sits in a chunk."""

from __future__ import annotations

import codecs
import html
import re
import unicodedata
from pathlib import Path

# Byte-order marks and the codec that reads past them (UTF-32's mark starts like UTF-16's: test it first).
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_text(path: str | Path, name: str | None = None) -> str:
    """Read a text file saved as UTF-8 (with or without a byte-order mark) or as UTF-16 or UTF-32 with one.

    Those are what editors and spreadsheets write when asked for Unicode (Excel's "Unicode text"
    is UTF-16 with a byte-order mark). Line endings become ``"\n"`` (Windows ``"\r\n"`` and old
    Mac ``"\r"`` too), as Python's text mode does. Any other encoding is refused rather than
    guessed: a wrong guess would change the text silently.

    Args:
        path: the file.
        name: how the messages name the file (default: its file name).

    Returns:
        The text, without the byte-order mark.

    Raises:
        ValueError: the file is not in one of those encodings (names the file, the first byte that
            does not decode, its line and byte position, and says "save it as UTF-8"), or holds NUL
            bytes (a binary file, or UTF-16 without a byte-order mark).
        OSError: the file cannot be read.

    Not taught; used by load_corpus and read_golden_csv (every notebook, through evaluation_setup).
    """
    path = Path(path)
    name = path.name if name is None else name
    raw = path.read_bytes()
    encoding = next((codec for bom, codec in _BYTE_ORDER_MARKS if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{name} is not {encoding.upper().removesuffix('-SIG')}: byte 0x{raw[exc.start]:02x} at line {line} "
            f"(byte {exc.start} of the file) does not decode; save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ValueError(
            f"{name} holds NUL bytes: it is not a text file, or UTF-16 without a byte-order mark; save it as UTF-8"
        )
    return text.replace("\r\n", "\n").replace("\r", "\n")


_TYPOGRAPHY = str.maketrans(
    {
        "\u200b": None, "\u200c": None, "\u200d": None, "\u00ad": None, "\ufeff": None,
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    }
)


def normalise(text: str) -> str:
    """Normalise text before the evidence-string test; one function serves both sides.

    Steps, in order: Unicode NFKC (ligatures such as "ﬁ" become "fi", non-breaking spaces become
    spaces), typographic quotes and dashes become ASCII ``'`` ``"`` ``-``, invisible characters
    (zero-width spaces and joiners, soft hyphens, byte-order marks) are removed, every run of whitespace
    (line breaks included) becomes one space, and leading/trailing whitespace is removed. Case is
    kept: the relevance rule is strict on purpose.

    Args:
        text: any string.

    Returns:
        The normalised string.

    Taught in: notebook 00_start_here.
    """
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    return re.sub(r"\s+", " ", text).strip()


def locate_evidence(text: str, evidence: str) -> tuple[int, int] | None:
    """Where the evidence string is in a chunk's raw text, matched as :func:`label_chunks` matches it.

    Each character of ``text`` goes through :func:`normalise`'s steps on its own while remembering
    where it came from, so the match is found in normalised text and mapped back to raw positions
    (a line break, a non-breaking space or a curly quote inside the evidence still matches).

    Args:
        text: a chunk's text as stored (str).
        evidence: the question's evidence string (str).

    Returns:
        ``(start, end)`` character offsets in ``text``, or ``None`` when the evidence is not there
        (or the text holds a character sequence that only normalises as a whole, such as a
        combining accent; the labels are unaffected, only the highlight is skipped).

    Taught in: notebook 00_start_here.
    """
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
