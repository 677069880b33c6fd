"""The judging widget: a judge grades a TREC pool by keyboard alone (0 not relevant, 1 partly, 2 answers fully; s skip,
b back), one (question, chunk) pair at a time, the chunks in id order so no run shows. Every grade is saved at once
as TREC qrels in ``output/judgements/<judge>.qrels``: a judge who comes back resumes, and a judge writes only their
own file. :func:`merge_judgements` reads several judges' files."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from statistics import median_low

import anywidget
import ipywidgets as w
import traitlets
from IPython.display import display

from ...analysis.judges import pool
from ...core.paths import OUTPUT_DIR, write_atomically
from ...inputs.text import escape
from ...inputs.trec import qrels_text, read_qrels
from ._view import FALLBACK_STYLE, KERNEL_NOTE, STATIC_NOTE, STYLE, WIDGET_MIME

KEYS = {"0": 0, "1": 1, "2": 2}
GRADES = {0: "not relevant", 1: "partly", 2: "answers fully"}

ESM = r"""
export default {
  render({ model, el }) {
    const box = document.createElement("div");
    box.className = "rw-judging-box";
    box.tabIndex = 0;
    const draw = () => { box.innerHTML = model.get("html"); };
    box.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      if (["0", "1", "2", "s", "b"].includes(e.key)) {
        e.stopPropagation();
        e.preventDefault();
        model.send({ key: e.key });
      } else if (!e.key.startsWith("Arrow") && !["PageUp", "PageDown", "Home", "End", "Tab"].includes(e.key)) {
        e.stopPropagation();  // JupyterLab's own shortcuts stay out while judging
      }
    });
    model.on("change:html", draw);
    draw();
    el.appendChild(box);
  }
};
"""
CSS = STYLE + """
.rw-judging-box { outline: none; border: 2px solid #bbb; padding: 6px 10px; max-width: 1100px; }
.rw-judging-box:focus { border-color: #0b4f9c; }
.rw-judging-box .rw-chunk { max-height: 40vh; overflow-y: scroll; white-space: pre-wrap; border: 1px solid #ddd;
  padding: 4px 8px; background: #fafafa; }
.rw-judging-box kbd { border: 1px solid #888; border-radius: 3px; padding: 0 4px; background: #f2f2f2; }
"""
HELP = ("<kbd>0</kbd> not relevant · <kbd>1</kbd> partly · <kbd>2</kbd> answers fully · <kbd>s</kbd> skip · "
        "<kbd>b</kbd> back. Click this box first, then use the keys only.")


def judgement_file(judge: str, folder: str | Path | None = None) -> Path:
    """Where ``judge``'s grades are kept: ``<folder>/<judge>.qrels`` (default ``output/judgements/``). A name that
    only another judge's file differs from by case is refused (one file would hold both on some disks)."""
    if not isinstance(judge, str) or not re.fullmatch(r"\w[\w.-]{0,60}", judge):
        raise ValueError(f"judge must be a plain name (letters, digits, '_', '.', '-'), got {judge!r}")
    folder = Path(folder) if folder is not None else OUTPUT_DIR / "judgements"
    other = [p.name for p in folder.glob("*.qrels") if p.stem.lower() == judge.lower() and p.stem != judge]
    if other:
        raise ValueError(f"judge {judge!r}: another judge's file {other[0]} differs only by case; pick another name")
    return folder / f"{judge}.qrels"


def merge_judgements(paths: Sequence[str | Path]) -> tuple[dict, dict]:
    """Several judges' files as ``({judge: qrels}, merged qrels)``: each judge's grades as their file holds them
    (for :func:`~retrieval_eval.analysis.agreement.agreement`), and every pair any judge graded with the lower median
    of its grades."""
    by_judge = {Path(p).stem: read_qrels(p) for p in paths}
    if len(by_judge) != len(paths):
        raise ValueError("two files name the same judge: give each judge's file once")
    grades: dict = {}
    for qrels in by_judge.values():
        for q, gains in qrels.items():
            for c, g in gains.items():
                grades.setdefault(q, {}).setdefault(c, []).append(g)
    return by_judge, {q: {c: median_low(gs) for c, gs in gains.items()} for q, gains in grades.items()}


class JudgingWidget(anywidget.AnyWidget):
    """The judging widget; build it with :func:`judging_widget`."""

    _esm, _css = ESM, CSS
    html = traitlets.Unicode("").tag(sync=True)
    label = "judging widget"

    def __init__(self, setup, judge: str, depth: int = 3, questions: Sequence[str] | None = None,
                 folder: str | Path | None = None):
        super().__init__()
        self.path = judgement_file(judge, folder)
        self.judge, self.pool = judge, pool(setup, depth, questions)
        self.questions = dict(zip(setup.golden["id"], setup.golden["question"]))
        self.texts = {c["id"]: c["text"] for c in setup.chunks}
        self.pairs = [(q, c) for q, ids in self.pool.items() for c in ids]
        saved = read_qrels(self.path) if self.path.exists() else {}
        unknown = [(q, c) for q, gains in saved.items() for c in gains if (q, c) not in set(self.pairs)]
        if unknown:
            raise ValueError(f"{self.path} grades {unknown[0]}, which is not in this pool: another pool's file")
        self.grades = {(q, c): g for q, gains in saved.items() for c, g in gains.items()}
        self.at = next((i for i, pair in enumerate(self.pairs) if pair not in self.grades), len(self.pairs))
        self.on_msg(lambda _widget, content, _buffers: self.press(content.get("key", "")))
        self.html = self.view_html()

    @property
    def qrels(self) -> dict:
        """The grades given so far, ``{question: {chunk: grade}}`` in pool order (what the file holds)."""
        graded = [(q, c) for q, c in self.pairs if (q, c) in self.grades]
        return {q: {c: self.grades[(q, c)] for q2, c in graded if q2 == q} for q in dict.fromkeys(q for q, _ in graded)}

    def press(self, key: str) -> None:
        """One key: ``0``/``1``/``2`` grade the pair shown (saved at once) and move on, ``s`` skips it, ``b`` goes back."""
        if key in KEYS and self.at < len(self.pairs):
            self.grades[self.pairs[self.at]] = KEYS[key]
            write_atomically(self.path, qrels_text(self.qrels).encode("utf-8"))
            self.at += 1
        elif key == "s":
            self.at = min(self.at + 1, len(self.pairs))
        elif key == "b":
            self.at = max(self.at - 1, 0)
        self.html = self.view_html()

    def view_html(self) -> str:
        done = f"{len(self.grades)} of {len(self.pairs)} pairs graded by <b>{escape(self.judge)}</b>, saved in {escape(self.path.name)}"
        if self.at == len(self.pairs):
            return f"<p>{done}. The end of the pool: <kbd>b</kbd> goes back to change a grade.</p><p>{HELP}</p>"
        q, c = self.pairs[self.at]
        given = self.grades.get((q, c))
        return (f"<p>Pair {self.at + 1} of {len(self.pairs)} · {done}"
                + (f" · this one: <b>{given} ({GRADES[given]})</b>" if given is not None else "") + "</p>"
                f"<p><b>Question {escape(q)}:</b> {escape(self.questions[q])}</p>"
                f"<div class='rw-chunk'><b>Chunk {escape(c)}</b>\n{escape(self.texts[c])}</div><p>{HELP}</p>")

    def static_html(self) -> str:
        return (f"<p>Here, with a running kernel, a judge grades {len(self.pairs)} (question, chunk) pairs of "
                f"{len(self.pool)} questions (every run's top chunks, in id order so no run shows) with the keys "
                "0, 1, 2, s (skip) and b (back); each grade is saved at once as TREC qrels in "
                f"<code>output/judgements/&lt;judge&gt;.qrels</code>, so a judge can stop and come back.</p>")

    def _ipython_display_(self):
        note = w.HTML(KERNEL_NOTE.format(label=self.label, more=""))
        note.add_class("rw-kernel-note")
        box = w.VBox([self, note])
        for cls in ("rw-widget", "rw-live", "judging-widget"):
            box.add_class(cls)
        display({WIDGET_MIME: box._repr_mimebundle_()[WIDGET_MIME], "text/plain": ""}, raw=True)
        display({"text/html": f"<style>{STYLE}</style>{FALLBACK_STYLE}<div class='rw-fallback'>"
                              f"{STATIC_NOTE.format(label=self.label, more=', saying what it does')}"
                              f"<div class='rw-widget rw-full'>{self.static_html()}</div></div>",
                 "text/plain": f"[{self.label}: a live widget when the notebook runs with a kernel]"}, raw=True)

    merge = staticmethod(merge_judgements)


def judging_widget(setup, judge: str, depth: int = 3, questions: Sequence[str] | None = None,
                   folder: str | Path | None = None) -> JudgingWidget:
    """A judge grades the pool of the setup's runs (every run's top ``depth`` and the labelled chunks of
    ``questions``, default all) by keyboard, saved as ``output/judgements/<judge>.qrels`` and resumed from there;
    ``widget.qrels`` holds the grades, ``widget.merge(paths)`` reads several judges' files (:func:`merge_judgements`)."""
    return JudgingWidget(setup, judge, depth, questions, folder)
