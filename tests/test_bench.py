"""benchmarks/bench.py: every section runs to the end on tiny inputs (so a rename can never break `make bench`
again) and gives the Speed table its rows."""

import importlib.util
import os
import shutil

import pytest

from retrieval_eval.core.paths import ROOT

spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
FAST = {"evaluation", "bm25", "vector-search"}  # no model, no subprocess


@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name in FAST else pytest.mark.slow)
                                  for name in bench.SECTIONS])
def test_section_runs_on_tiny_inputs(name):
    if name == "widgets" and not shutil.which("chromium") and not os.path.exists("/usr/bin/chromium"):
        pytest.skip("the widgets section needs Chromium")
    rows = bench.run([name], tiny=True)
    assert rows and all(len(row) == 3 and all(row) for row in rows)
    assert all(f"({name}; " in what and " → " in load for what, _, load in rows)


def test_unknown_section_is_refused():
    with pytest.raises(SystemExit, match="unknown section.*'evaluaton'"):
        bench.run(["evaluaton"])


def test_the_synthetic_golden_sets_pass_the_door_at_full_size(tmp_path):
    """The bench's generated inputs at the size `make bench` uses (not the tiny one): a generator that repeats a
    question stopped the BEIR section at full size only."""
    from retrieval_eval.retrieval.setup import load_inputs
    inputs = load_inputs(golden=bench.write_beir_folder(tmp_path / "beir"))
    assert len(inputs.golden) == bench.BEIR_QUESTIONS and len(inputs.chunks) == bench.BEIR_CHUNKS
    _, golden = bench.synthetic_golden_set(bench.np.random.default_rng(bench.SEED), tmp_path / "set")
    assert not bench.pd.read_csv(golden)["question"].map(bench.h.normalise).duplicated().any()
