"""Make this folder's chunks.jsonl and golden.csv from the Anthropic cookbook's two published files.

Run once, from the repository's root: ``python data/cookbook/convert.py anthropic_docs.json
docs_evaluation_dataset.json data/cookbook`` (README.md beside this file gives the files' commit and SHA-256)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from retrieval_eval.core.errors import FormatError
from retrieval_eval.inputs.formats import _identifier, _text, read_records


def cookbook_to_series(docs_json: str | Path, eval_json: str | Path, folder: str | Path) -> tuple[Path, Path]:
    """The Anthropic cookbook's RAG set as ``chunks.jsonl`` (id = ``chunk_link``, doc = the link without its
    anchor, ``heading`` kept but not read) and ``golden.csv`` (relevant = ``correct_chunks`` joined by ``|``)."""
    docs_json, eval_json, folder = Path(docs_json), Path(eval_json), Path(folder)
    chunks = read_records(docs_json, {"id": ("chunk_link",), "title": ("chunk_heading",), "text": ("text",)},
                          [("id",), ("title",), ("text",)], "chunk")
    questions = read_records(eval_json, {"id": ("id",), "question": ("question",), "relevant": ("correct_chunks",),
                                         "answer": ("correct_answer",)},
                             [("id",), ("question",), ("relevant",)], "question")
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for line, c in chunks:
        link = _identifier(c["id"], docs_json, line, "chunk_link")
        heading = _text(c["title"], docs_json, line, "chunk_heading", True)
        lines.append(json.dumps({"id": link, "doc": link.split("#")[0], "heading": heading,
                                 "text": _text(c["text"], docs_json, line, "text")}, ensure_ascii=False))
    (folder / "chunks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "question", "relevant", "answer"])
    for line, q in questions:
        if not isinstance(q["relevant"], list) or not q["relevant"]:
            raise FormatError(eval_json, line, "the field correct_chunks must be a non-empty list of chunk links")
        writer.writerow([_identifier(q["id"], eval_json, line, "id"), _text(q["question"], eval_json, line, "question"),
                         "|".join(_identifier(d, eval_json, line, "correct_chunks") for d in q["relevant"]),
                         _text(q.get("answer"), eval_json, line, "correct_answer", True)])
    (folder / "golden.csv").write_text(buffer.getvalue(), encoding="utf-8")
    return folder / "chunks.jsonl", folder / "golden.csv"


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python data/cookbook/convert.py <docs.json> <eval.json> <out folder>")
    for path in cookbook_to_series(*sys.argv[1:]):
        print("wrote", path)
