"""helpers.py, the face: its module map names every exported name whole and every module of the package."""

import re
from pathlib import Path

import helpers as h

PACKAGE = Path(h.__file__).resolve().parent / "retrieval_eval"


def test_every_exported_name_is_in_the_module_map_whole():
    words = set(re.findall(r"\w+", h.__doc__))
    assert [name for name in h.__all__ if name not in words] == []


def test_every_exported_name_exists_and_nothing_else_is_public():
    assert all(hasattr(h, name) for name in h.__all__)
    public = {name for name in vars(h) if not name.startswith("_")}
    assert public == set(h.__all__)


def test_every_module_of_the_package_is_in_the_map():
    modules = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if not p.name.startswith("_")}
    missing = [m for m in modules if m not in h.__doc__ and f"({Path(m).name})" not in h.__doc__]
    assert missing == []
