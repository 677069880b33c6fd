"""Every public function and class of retrieval_eval/ has the docstring the developer guide asks for.

For each public name (functions, classes, methods; a leading underscore is private): a docstring; an
``Args:`` section when it takes parameters; a ``Raises:`` section when its body raises or calls a
``check_*`` function; and a last paragraph that says where it is taught and is true:
"Taught in: notebook NN_name" where that notebook's source calls ``h.<name>`` (the bare name for a
method), "NN_name (through f)" or "every notebook (through f)" when a notebook reaches it through
the public function f, "the README's "<section>"" for a section that exists, or "Not taught; used
by ...".
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = {path.stem[:2]: "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])
             for path in sorted((ROOT / "notebooks").glob("*.ipynb"))}
HEADINGS = re.findall(r"^#+\s*(.+)$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
THROUGH = re.compile(r"\b(?:\d\d_\w+(?:,\s*|\s+and\s+))*\d\d_\w+ \(through [^)]*\)|every notebook \(through [^)]*\)")


def public_definitions():
    """``(location, name, node, is_method)`` for every public function, class and method."""
    for path in sorted((ROOT / "retrieval_eval").rglob("*.py")):
        def visit(nodes, prefix=""):
            for node in nodes:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    yield f"{path.relative_to(ROOT)}:{node.lineno} {prefix}{node.name}", node.name, node, bool(prefix)
                    if isinstance(node, ast.ClassDef):
                        yield from visit(node.body, f"{node.name}.")
        yield from visit(ast.parse(path.read_text(encoding="utf-8")).body)


def problems_of(name: str, node, is_method: bool) -> list[str]:
    doc = ast.get_docstring(node)
    if not doc:
        return ["no docstring"]
    found = []
    last = doc.strip().split("\n\n")[-1]
    taught = re.search(r"Taught in:(.*)", last, re.S)
    if not taught and "Not taught" not in last:
        found.append("no 'Taught in' / 'Not taught' as its last paragraph")
    elif taught:
        where = THROUGH.sub("", " ".join(taught.group(1).split()))
        notebooks = set(re.findall(r"\b(\d\d)_", where)) | set(re.findall(r"notebooks? (\d\d)\b", where))
        for first, last_nb in re.findall(r"(\d\d)(?:_\w+)?\s*(?:to|-|–)\s*(\d\d)", where):
            notebooks |= {f"{i:02d}" for i in range(int(first), int(last_nb) + 1)}
        if "every notebook" in where and not notebooks:
            notebooks = set(NOTEBOOKS)
        pattern = rf"\b{re.escape(name)}\b" if is_method else rf"\bh\.{re.escape(name)}\b"
        absent = [nb for nb in sorted(notebooks) if not re.search(pattern, NOTEBOOKS.get(nb, ""))]
        if absent:
            found.append(f"'Taught in' names notebook(s) {absent}, which never use {pattern!r}")
        found += [f"no README section {section!r}" for section in re.findall(r"README's \"([^\"]+)\"", where)
                  if not any(section.lower() in heading.lower() for heading in HEADINGS)]
    if isinstance(node, ast.FunctionDef) and not name.startswith("__"):
        arguments = [a.arg for a in node.args.args + node.args.kwonlyargs if a.arg not in ("self", "cls")]
        arguments += [a.arg for a in (node.args.vararg, node.args.kwarg) if a]
        if arguments and "Args:" not in doc:
            found.append(f"parameters {arguments} but no 'Args:'")
        raises = any(isinstance(x, ast.Raise) or (isinstance(x, ast.Call) and isinstance(x.func, ast.Name)
                                                  and x.func.id.startswith("check_")) for x in ast.walk(node))
        if raises and "Raises:" not in doc:
            found.append("raises (or calls a check) but no 'Raises:'")
    return found


def test_the_checker_finds_each_kind_of_gap():
    source = '''
def bare(x): pass
def no_args(x):
    """One line.\n\n    Taught in: notebook 01_recall_at_k."""
def wrong_notebook():
    """Taught in: notebook 01_recall_at_k."""
def raises():
    """Not taught; used by nothing."""
    raise ValueError
'''
    nodes = {n.name: n for n in ast.parse(source).body}
    assert problems_of("bare", nodes["bare"], False) == ["no docstring"]
    assert problems_of("no_args", nodes["no_args"], False) == [
        "'Taught in' names notebook(s) ['01'], which never use '\\\\bh\\\\.no_args\\\\b'", "parameters ['x'] but no 'Args:'"]
    assert problems_of("recall_at_k", nodes["wrong_notebook"], False) == []  # 01 calls h.recall_at_k
    assert problems_of("raises", nodes["raises"], False) == ["raises (or calls a check) but no 'Raises:'"]


@pytest.mark.parametrize("module", sorted({loc.split(":")[0] for loc, *_ in public_definitions()}))
def test_every_public_definition_has_a_true_docstring(module):
    found = [f"{location}: {problem}" for location, name, node, is_method in public_definitions()
             if location.startswith(module + ":") for problem in problems_of(name, node, is_method)]
    assert found == []
