"""helpers.py, the face: a short list of names that all exist, and an import that loads nothing heavy."""

import json
import os
import subprocess
import sys

import helpers as h
from retrieval_eval.paths import ROOT

PACKAGE = ROOT / "retrieval_eval"
# Imported only where they are used: a notebook that only reads tables never waits for them.
HEAVY = ["torch", "sentence_transformers", "transformers", "tokenizers", "huggingface_hub", "safetensors", "scipy",
         "statsmodels", "sklearn", "pytrec_eval", "rank_bm25", "bm25s"]


def imported_by(statement: str) -> list[str]:
    """The top-level modules a fresh interpreter holds after ``statement``."""
    script = f"import json, sys; {statement}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_the_face_hands_on_at_most_120_names_that_all_exist():
    assert len(h.__all__) <= 120
    assert len(set(h.__all__)) == len(h.__all__)
    assert [name for name in h.__all__ if not hasattr(h, name)] == []


def test_nothing_else_is_public():
    public = {name for name in vars(h) if not name.startswith("_")}
    assert public == set(h.__all__)


def test_importing_helpers_loads_no_model_library_and_no_statistics_library():
    loaded = imported_by("import helpers")
    assert [m for m in HEAVY if m in loaded] == []
    assert "matplotlib" in loaded  # the plots and widgets import pyplot: what a notebook needs anyway


def test_importing_the_metrics_loads_neither_pandas_nor_matplotlib():
    """The file a learner reads in one sitting imports what its definitions need (NumPy), nothing more."""
    loaded = imported_by("import retrieval_eval.metrics")
    assert [m for m in ["pandas", "matplotlib", *HEAVY] if m in loaded] == []


def test_a_wheel_holds_the_face_and_every_module(tmp_path):
    """`pip install .` (not editable) must work: the wheel holds helpers.py and every file of the package.
    Built from a copy in tmp_path: a build writes build/ and *.egg-info beside the sources."""
    import shutil
    import zipfile

    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("helpers.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    held = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*") if p.suffix in (".py", ".ipynb")}
    assert "helpers.py" in held
    assert sorted(wanted - held) == []
