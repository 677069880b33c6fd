"""helpers.py, the face: a short list of names that all exist, loaded on first use, and an import that loads nothing;
and the wings of retrieval_eval/: each imports only from itself and the wings before it."""

import ast
import json
import os
import subprocess
import sys

import helpers as h
from retrieval_eval.core.paths import ROOT

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


def test_each_name_is_defined_where_the_face_says():
    import importlib

    for name, module in h.NAMES.items():
        assert name in vars(importlib.import_module(f"retrieval_eval.{module}")), (name, module)


def test_importing_helpers_loads_nothing_and_a_name_loads_only_its_module():
    assert [m for m in ["pandas", "matplotlib", "numpy", *HEAVY] if m in imported_by("import helpers")] == []
    loaded = imported_by("import helpers as h; h.evaluate")
    assert "pandas" in loaded and [m for m in ["matplotlib", *HEAVY] if m in loaded] == []
    assert "matplotlib" in imported_by("import helpers as h; h.plot_intervals")


# The wings, in the one direction imports run: a wing imports only from itself and the wings before it.
WINGS = ("core", "inputs", "retrieval", "analysis", "course", "tool")


def package_imports(path):
    """The modules of retrieval_eval a file imports, as dotted names."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(module.split(".")[: -node.level] + ([base] if base else []))
            found += [f"{base}.{alias.name}" for alias in node.names] if not node.module else [base]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name.startswith("retrieval_eval.")]


def test_every_module_sits_in_a_wing_and_imports_run_one_way():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) == 1:
            continue  # the package's own __init__.py
        assert parts[0] in WINGS, f"{path.relative_to(ROOT)} is in no wing"
        mine = WINGS.index(parts[0])
        for target in package_imports(path):
            wing = target.split(".")[1]
            assert wing in WINGS and WINGS.index(wing) <= mine, f"{path.relative_to(ROOT)} imports {target}: a wing back"


def test_importing_the_metrics_loads_neither_pandas_nor_matplotlib():
    """The file a learner reads in one sitting imports what its definitions need (NumPy), nothing more."""
    loaded = imported_by("import retrieval_eval.core.metrics")
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
