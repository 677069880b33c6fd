"""TREC export read back by trec_eval, determinism across processes, no pickle, empty rankings."""

import json
import subprocess
import sys

import pytest
import pytrec_eval

import helpers as h


def test_trec_files_reproduce_the_evaluation_table(runs, qrels, tmp_path):
    paths = h.export_trec(runs, qrels, tmp_path)
    assert [p.name for p in paths] == ["qrels.txt", "run.BM25.txt", "run.vector.txt", "run.hybrid.txt"]
    with open(paths[0]) as f:
        trec_qrels = pytrec_eval.parse_qrel(f)
    table = h.evaluate(runs, qrels)
    for path, name in zip(paths[1:], runs):
        with open(path) as f:
            trec_run = pytrec_eval.parse_run(f)
        measures = {f"{m}.{k}" for m in ("P", "recall", "ndcg_cut") for k in h.KS}
        per_q = pytrec_eval.RelevanceEvaluator(trec_qrels, measures).evaluate(trec_run)
        assert len(per_q) == len(qrels)  # no question dropped
        for k in h.KS:
            for metric, measure in [("precision", f"P_{k}"), ("recall", f"recall_{k}"), ("nDCG", f"ndcg_cut_{k}")]:
                value = sum(v[measure] for v in per_q.values()) / len(qrels)
                assert table.loc[name, (metric, k)] == pytest.approx(value, abs=1e-12), (name, metric, k)
        full_rr = pytrec_eval.RelevanceEvaluator(trec_qrels, {"recip_rank"}).evaluate(trec_run)
        ours = h.mrr([runs[name][q] for q in qrels], [set(g) for g in qrels.values()])
        assert ours == pytest.approx(sum(v["recip_rank"] for v in full_rr.values()) / len(qrels), abs=1e-12)


def test_run_file_scores_strictly_decrease(tmp_path):
    path = h.write_trec_run({"q1": ["c", "a", "b"]}, tmp_path / "run.txt", "t")
    lines = [line.split() for line in path.read_text().splitlines()]
    assert [line[2] for line in lines] == ["c", "a", "b"]
    scores = [float(line[4]) for line in lines]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: h.write_trec_run({"q1": ["a", "a"]}, p, "t"), "duplicate id 'a'"),
        (lambda p: h.write_trec_run({"q 1": ["a"]}, p, "t"), "'q 1' cannot be written"),
        (lambda p: h.write_trec_qrels({"q1": {"a": 0.5}}, p), "chunk 'a': gain 0.5 is not a whole number"),
    ],
)
def test_bad_trec_input_is_refused(call, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        call(tmp_path / "out.txt")


def test_empty_ranking_scores_zero_where_trec_eval_drops_the_question():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q2": []}
    trec_run = {q: {d: 1.0 for d in r} for q, r in run.items() if r}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"P.1"}).evaluate(trec_run)
    assert set(per_q) == {"q1"}  # trec_eval without -c: q2 silently gone, mean 1.0
    assert h.evaluate({"r": run}, qrels, ks=[1]).loc["r", ("precision", 1)] == 0.5  # ours, as trec_eval -c


SCRIPT = """
import json, sys, helpers as h
runs, qrels = h.polder_runs(progress=False, cache_dir=sys.argv[1])
print(json.dumps({"runs": runs, "table": h.evaluate(runs, qrels).to_json()}))
"""


def test_two_processes_give_identical_rankings_and_tables(tmp_path):
    outputs = [
        subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / f"cache{i}")], capture_output=True, text=True, check=True).stdout
        for i in range(2)
    ]
    assert json.loads(outputs[0]) == json.loads(outputs[1])


NO_PICKLE = """
import sys

def refuse(event, args):
    if event == "pickle.find_class":
        raise RuntimeError(f"pickle loaded a class: {args}")

sys.addaudithook(refuse)
import helpers as h
chunks = h.load_chunks()
for _ in range(2):  # the second time, the embeddings come from the cache
    retriever = h.VectorRetriever(chunks, cache_dir=sys.argv[1], show_progress=False)
print(retriever.rank("How long does delivery take?")[0])
"""


def test_no_pickle_is_loaded(tmp_path):
    """Loading the model and the cached embeddings never unpickles anything (an audit hook watches)."""
    result = subprocess.run([sys.executable, "-c", NO_PICKLE, str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
