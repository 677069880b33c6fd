"""The check-yourself checker: reads answers the way a learner types them and always answers with one friendly line
per question, never the solution."""

from __future__ import annotations

import ast
import math
import numbers
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..retrieval.setup import default_retrievers

_TRUE_WORDS, _FALSE_WORDS = {"true", "yes", "y", "t", "1"}, {"false", "no", "n", "f", "0"}
_EXPECTED = {
    "number": "a number (like 0.25, 1/4 or 25%)",
    "bool": "True or False (yes / no also work)",
    "text": "a word or short text in quotes",
}
_ARTICLES = {"the", "a", "an"}  # "the vector retriever" is "vector retriever"
_RETRIEVER_ALIASES = {"rrf": "hybrid"}  # the series names hybrid search "hybrid search (RRF)" (notebooks 05, 06)
_NEGATIONS = {"not", "no", "never", "neither", "nor", "none", "nothing"}  # "not hybrid" names no option
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow}
_MAX_BITS = 4000  # a calculation's numbers stay below 2**4000, so no typed power takes ages
_CALCULATION_NOTE = " (type the result, not the calculation: only numbers and + - * / ** are worked out)"


@dataclass(frozen=True)
class Answer:
    """What a check-yourself question expects when a plain solution value is not enough. ``value`` may be a set of
    texts, any one right (tied leaders from ``rank_groups``); ``kind`` defaults from its type; a number is right within
    half a unit of ``decimals`` unless ``tolerance`` is given; ``hint`` must not give it away. ``options``: a text
    question's choices (the solution is one; naming exactly one counts); a retriever name gets the retrievers."""

    value: object
    kind: str | None = None
    decimals: int = 2
    tolerance: float | None = None
    hint: str = ""
    accept: tuple[str, ...] = ()
    options: tuple[str, ...] = ()

    def __post_init__(self):
        if isinstance(self.value, (set, frozenset)):  # any one of these texts is right (e.g. tied leaders)
            first, *others = sorted(self.value)
            object.__setattr__(self, "value", first)
            object.__setattr__(self, "accept", (*others, *self.accept))
            object.__setattr__(self, "kind", self.kind or "text")
        if self.kind is None:
            value = _unwrap(self.value)
            kind = "bool" if isinstance(value, bool) else "text" if isinstance(value, str) else "number"
            object.__setattr__(self, "kind", kind)
        if self.kind not in _EXPECTED:
            raise ValueError(f"kind must be 'number', 'bool' or 'text', not {self.kind!r}")
        if self.kind == "number" and _as_number(self.value) is None:
            raise ValueError(f"the solution {self.value!r} is not a number")
        if self.kind != "text":
            return
        retrievers = {_as_text(name) for name in tuple(default_retrievers())}
        if not self.options and {_as_text(t) for t in (self.value, *self.accept)} <= retrievers:
            object.__setattr__(self, "options", tuple(default_retrievers()))
        if self.options and _as_text(self.value) not in {_as_text(o) for o in self.options}:
            raise ValueError(f"the solution {self.value!r} is not one of the options {list(self.options)}")


@dataclass(frozen=True)
class Verdict:
    """One question's result: ``status`` is right, wrong, unreadable (not the kind of answer asked for),
    unanswered or unknown (no such question); ``message`` is the line printed."""

    question: str
    status: str
    message: str


@dataclass(frozen=True, repr=False)
class Report:
    """One :class:`Verdict` per question, in the solutions' order; shown as "1 of 3 right, 2 not answered yet"."""

    verdicts: dict[str, Verdict]

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.verdicts.values())

    def __repr__(self) -> str:
        asked = len(self.verdicts) - self.count("unknown")
        blank = self.count("unanswered")
        return f"{self.count('right')} of {asked} right" + (f", {blank} not answered yet" if blank else "")


def check_answers(answers: Mapping[object, object], solutions: Mapping[object, object], *,
                  show: Callable[[str], object] = print) -> Report:
    """Check a reader's "check yourself" answers, one line each via ``show``: a wrong one gets "not yet", a note and
    the hint, never the solution; nothing typed raises. Numbers (``0.33``, ``"1/3"``, ``"33%"``, arithmetic, ``^`` as
    ``**``) are right within half a unit of the decimals asked; ``"yes"`` is True; text ignores case, spaces, quotes,
    ``_``, ``-``, a final stop, articles. None, ``...``, blank: unanswered. A bad :class:`Answer` raises ValueError."""
    specs = {str(q): s if isinstance(s, Answer) else Answer(s) for q, s in solutions.items()}
    if not isinstance(answers, Mapping):
        what = "None" if answers is None else f"a {type(answers).__name__}"
        line = ("the answers must be a dict with one entry per question, like {\"1\": 0.25, \"2\": \"yes\"}, "
                f"not {what}: fill in the answers cell and run it again")
        show(line)
        return Report({q: Verdict(q, "unanswered", line) for q in specs})
    given = {str(q): a for q, a in answers.items()}
    verdicts = {q: _verdict(q, given.get(q), spec) for q, spec in specs.items()}
    for q in given.keys() - specs.keys():
        verdicts[q] = Verdict(q, "unknown", f"question {q}: there is no question {q} (the questions are: {', '.join(specs)})")
    for verdict in verdicts.values():
        show(verdict.message)
    return Report(verdicts)


def _verdict(q: str, given, spec: Answer) -> Verdict:
    line = f"question {q}: "
    if given is None or given is Ellipsis or (isinstance(given, str) and not given.strip()):
        return Verdict(q, "unanswered", line + "not answered yet")
    try:
        status, note = _judge(given, spec)
    except Exception:  # noqa: BLE001 - whatever was typed, the reader gets a line, not a traceback
        status, note = "unreadable", ""
    if status == "right":
        return Verdict(q, status, line + "right")
    if status == "unreadable":
        return Verdict(q, status, line + f"expected {_expected(spec)}, got {_shown(given)}{note}")
    hint = f" Hint: {spec.hint}" if spec.hint else ""
    return Verdict(q, status, line + f"not yet: {_shown(given)} is not it{note}.{hint}")


def _expected(spec: Answer) -> str:
    if spec.kind == "text" and spec.options:
        *first, last = [repr(o) for o in spec.options]
        return f"one of {', '.join(first)} or {last}" if first else repr(last)
    return _EXPECTED[spec.kind]


def _judge(given, spec: Answer) -> tuple[str, str]:
    if spec.kind == "bool":
        answer = _as_bool(given)
        return ("unreadable", "") if answer is None else ("right" if answer == _as_bool(spec.value) else "wrong", "")
    if spec.kind == "text":
        return _judge_text(given, spec), ""
    answer = _as_number(given)
    if answer is None:
        if isinstance(given, str) and re.fullmatch(r"\s*[-+]?\d+,\d+\s*", given):
            return "unreadable", " (use a dot for decimals: 0.25, not 0,25)"
        return "unreadable", _CALCULATION_NOTE if isinstance(given, str) and _is_calculation(given) else ""
    expected = _as_number(spec.value)
    allowed = _as_number(spec.tolerance) if spec.tolerance is not None else Fraction(1, 2 * 10**spec.decimals)
    if abs(answer - expected) <= allowed:
        return "right", ""
    places = next((p for p in range(13) if (answer * 10**p).denominator == 1), 13)
    if spec.tolerance is None and 1 <= places < spec.decimals and round(expected, places) == answer:  # 1 for 0.631: not it
        return "wrong", f" exactly (give {spec.decimals} decimals)"
    if abs(answer - expected) <= 2 * allowed:
        return "wrong", " (close: check the rounding)"
    if expected and abs(answer / 100 - expected) <= allowed:
        return "wrong", f" (it looks like a percentage: write {_shown(given)}% as {float(answer / 100):g})"
    return "wrong", ""


def _judge_text(given, spec: Answer) -> str:
    """right, wrong or unreadable. With options, an answer that names exactly one of them is that option."""
    answer = _as_text(given)
    if answer is None:
        return "unreadable"
    if {_as_text(o) for o in spec.options} == {_as_text(name) for name in tuple(default_retrievers())}:  # "RRF" names hybrid
        for alias, name in _RETRIEVER_ALIASES.items():
            answer = re.sub(rf"(?<!\w){alias}(?!\w)", name, answer)
    right = {_as_text(t) for t in (spec.value, *spec.accept)}
    if answer in right:
        return "right"
    if not spec.options:
        return "wrong"
    others = {_as_text(o) for o in spec.options} - right
    if answer in others:
        return "wrong"
    if _NEGATIONS & set(answer.split()) or "n't" in answer:
        return "unreadable"

    def names(spelling: str) -> bool:  # "vector search" names "vector", "returned" names "precision of returned"
        return bool(re.search(rf"(?<!\w){re.escape(spelling)}", answer)
                    or len(answer) >= 3 and re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", spelling))

    named_right, named_others = any(map(names, right)), [o for o in others if names(o)]
    if named_right + len(named_others) != 1:
        return "unreadable"
    return "right" if named_right else "wrong"


def _unwrap(value):
    """NumPy scalars and 0-d arrays as Python values; anything else as it is."""
    try:
        return value.item() if getattr(value, "shape", None) == () and hasattr(value, "item") else value
    except Exception:  # noqa: BLE001 - an odd object: read it as it is
        return value


def _as_number(value) -> Fraction | None:
    """An exact number, or None. A float is read as the decimal it prints as (0.335 is 335/1000)."""
    value = _unwrap(value)
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, float):
            return Fraction(repr(value)) if math.isfinite(value) else None
        if isinstance(value, numbers.Rational):
            return Fraction(value)
        if isinstance(value, Decimal):
            return _as_number(str(value))
        if isinstance(value, numbers.Real):
            return _as_number(float(value))
        if isinstance(value, str):
            text = _as_formula(value)
            if text.endswith("%"):
                inner = _as_number(text[:-1])
                return None if inner is None else inner / 100
            return _calculate(ast.parse(text, mode="eval").body)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError, SyntaxError, RecursionError):
        return None
    return None


def _as_formula(text: str) -> str:
    """Typed text as Python arithmetic: the minus sign, × ÷ ^ as - * / **, no leading zeros ("007")."""
    text = text.strip().replace("\u2212", "-").replace("×", "*").replace("÷", "/").replace("^", "**")
    return re.sub(r"(?<![\d.eE])0+(?=\d)", "", text)


def _calculate(node: ast.AST) -> Fraction | None:
    """The exact value of a parsed calculation of numbers, brackets and + - * / **; None for anything else."""
    if isinstance(node, ast.Constant):
        return _as_number(node.value) if isinstance(node.value, (int, float)) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _calculate(node.operand)
        return None if inner is None else inner if isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _calculate(node.left), _calculate(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow) and (right.denominator != 1 or abs(right) > 64):
            return None  # whole powers up to 64 only: 9**9**9 would take ages
        value = _OPERATORS[type(node.op)](left, right)
        return value if max(value.numerator.bit_length(), value.denominator.bit_length()) <= _MAX_BITS else None
    return None


def _is_calculation(text: str) -> bool:
    """True for text that parses as arithmetic with something besides numbers in it, e.g. "1/log2(3)"."""
    try:
        tree = ast.parse(_as_formula(text), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False
    return any(isinstance(n, (ast.BinOp, ast.Call)) for n in ast.walk(tree))


def _as_bool(value) -> bool | None:
    value = _unwrap(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else None
    return None


def _as_text(value) -> str | None:
    value = _unwrap(value)
    if not isinstance(value, str):
        return None
    text = value.strip().strip("\"'").rstrip(".!?").replace("_", " ").replace("-", " ").casefold()
    return " ".join(word for word in text.split() if word not in _ARTICLES)


def _shown(value) -> str:
    try:
        text = repr(_unwrap(value))
    except Exception:  # noqa: BLE001
        text = f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."
