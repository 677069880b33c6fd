"""The one normalisation behind the relevance rule, and where an evidence string sits in a chunk."""

from __future__ import annotations

import re
import unicodedata


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
