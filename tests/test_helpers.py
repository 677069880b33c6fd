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


def test_a_wheel_holds_the_face_every_module_and_the_report_template(tmp_path):
    """`pip install .` (not editable) must work: the wheel holds helpers.py and every file of the package.

    Built from a copy in tmp_path: a build writes build/ and *.egg-info beside the sources.
    """
    import shutil
    import subprocess
    import sys
    import zipfile

    root, source = PACKAGE.parent, tmp_path / "source"
    shutil.copytree(PACKAGE, source / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("helpers.py", "pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    held = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(root).as_posix() for p in PACKAGE.rglob("*") if p.suffix in (".py", ".ipynb")}
    assert "helpers.py" in held
    assert sorted(wanted - held) == []
