"""retrieval_eval/trec.py: the TREC files read back by trec_eval reproduce the evaluation table; bad input."""

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
        (lambda p: h.write_trec_run({"q1": ["a", 2]}, p, "t"), r"question 'q1': the ranking holds 2 \(int\) at rank 2"),
        (lambda p: h.write_trec_run({1: ["a"]}, p, "t"), r"the run holds question id 1 \(int\)"),
        (lambda p: h.write_trec_qrels({"q1": {None: 1}}, p), r"question 'q1': the gains hold id None \(NoneType\)"),
        (lambda p: h.write_trec_qrels({("q", 1): {"a": 1}}, p), r"the qrels hold question id \('q', 1\) \(tuple\)"),
    ],
)
def test_bad_trec_input_is_refused(call, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        call(tmp_path / "out.txt")
