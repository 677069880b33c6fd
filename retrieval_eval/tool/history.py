"""A history of builds: ``make evaluate``, ``make evaluate-runs`` and ``make gate`` with ``HISTORY=file.jsonl`` append one
JSON row per run (time, ``LABEL``, the settings' fingerprint, the run file's SHA-256, the number of questions, each
tested metric's mean at K with its 95% interval, and the gate's verdict); appends never rewrite a row, and a damaged
row is named by file and line. The gate finds its baseline's row by the file's hash (:func:`baseline_notes`).
``make history HISTORY=file.jsonl`` draws each metric over the builds with its interval, the gate's "worse" marked."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from ..analysis.statistics import mean_interval
from ..core.errors import FormatError
from ..core.paths import ROOT
from ..core.registry import METRICS, tested_metrics
from ..inputs.models import fingerprint

FIELDS = {"time": str, "label": str, "run": str, "settings": str, "questions": int, "k": int, "metrics": dict,
          "gate": (str, type(None))}
OPTIONAL = {"run_sha256": str, "cost": dict, "build": str}  # rows written before these fields lack them
INTERVAL = ("mean", "low", "high")
FAILED = ("worse", "not shown within the margin")  # the gate verdicts that fail a build


def _not_a_number(constant: str):
    raise ValueError(f"{constant} is not a finite number")


def read_history(path: str | os.PathLike) -> list[dict]:
    """Every row of a history file, checked (blank lines skipped); a line that is not UTF-8 or not one JSON object with
    :data:`FIELDS` and a finite mean and interval per metric raises :class:`~retrieval_eval.core.errors.FormatError`
    naming file and line."""
    rows = []
    for number, raw in enumerate(Path(path).read_bytes().splitlines(), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(path, number, f"is not valid UTF-8 (byte {raw[exc.start]:#04x}): a history is written "
                              "as UTF-8; repair or delete that line", raw) from None
        if not line.strip():
            continue
        try:
            row = json.loads(line, parse_constant=_not_a_number)
        except ValueError as exc:
            why = str(exc) if "finite" in str(exc) else "damaged?"
            raise FormatError(path, number, f"is not a JSON row of a history ({why}; appends never rewrite a row: "
                              "delete or repair that line)", line) from None
        bad = [name for name, kind in FIELDS.items() if not isinstance(row, dict) or not isinstance(row.get(name), kind)]
        bad += [name for name, kind in OPTIONAL.items() if not bad and name in row and not isinstance(row[name], kind)]
        bad += [f"metrics.{m}" for m, v in (row.get("metrics", {}).items() if not bad else ())
                if not isinstance(v, dict) or not all(isinstance(v.get(x), (int, float)) for x in INTERVAL)]
        if bad:
            raise FormatError(path, number, f"a history row without a valid {', '.join(bad)}", line)
        rows.append(row)
    return rows


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, read in blocks (a run of 100,000 questions is hundreds of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def settings_fingerprint(ev) -> str:
    """What makes two runs' numbers comparable, by content: the labels, the chunks (ids and texts, when read), the
    embedding model, the chunk size and k. Paths do not count: the same file moved is the same setting."""
    chunks = hashlib.sha256("".join(f"{c['id']}\t{c['text']}\n" for c in ev.chunks).encode()).hexdigest() if ev.chunks else None
    return fingerprint(labels=sorted((q, sorted(g.items())) for q, g in ev.qrels.items()), chunks=chunks, k=ev.k,
                       model=ev.about.get("embedding model"), chunk_size=ev.about.get("chunk size (word pieces)"))


def history_rows(ev, label: str = "", runs: Mapping[str, str] | None = None, gate: str | None = None,
                 files: Mapping[str, str | os.PathLike] | None = None) -> list[dict]:
    """One row per run of an :class:`~retrieval_eval.tool.report.Evaluation` (or per ``runs`` key, renamed to its
    value): each tested metric's mean at ``ev.k`` with its interval (Wilson for 0/1 values, else a bootstrap), the
    hash of its TREC file in ``files`` and its cost in ``ev.cost`` when known."""
    settings, build = settings_fingerprint(ev), uuid.uuid4().hex[:12]  # the build: two in one second stay two
    time = datetime.now(timezone.utc).isoformat(timespec="seconds")
    scores = ev.scores[ev.scores["k"] == ev.k]
    cost = getattr(ev, "cost", None)
    rows = []
    for run, shown in (runs or {name: name for name in ev.runs}).items():
        mine = scores[scores["run"] == run]
        metrics = {METRICS[m].at(ev.k): mean_interval(mine.loc[mine["metric"] == m, "value"].to_numpy())
                   for m in tested_metrics()}
        row = {"time": time, "label": label, "run": shown, "settings": settings, "questions": len(ev.qrels),
               "k": ev.k, "metrics": metrics, "gate": gate, "build": build}
        if files and run in files:
            row["run_sha256"] = file_sha256(files[run])
        if cost is not None and run in cost.index:
            row["cost"] = {key: (None if value != value else value) for key, value in cost.loc[run].items()}
        rows.append(row)
    return rows


def baseline_notes(history: Path | None, baseline: Path, settings: str, max_age: int,
                   now: datetime | None = None) -> tuple[str, ...]:
    """What the history says of the baseline run file: its newest row with the file's hash gives its age and settings.
    A warning (starting "Warning:") when no row holds it, when it is older than ``max_age`` days, or when its
    settings' fingerprint differs from ``settings`` (this run's); none without a history."""
    if history is None:
        return ()
    sha = file_sha256(baseline)
    rows = [r for r in (read_history(history) if history.exists() else []) if r.get("run_sha256") == sha]
    if not rows:
        return (f"Warning: no row of the history {history.name} holds the baseline {baseline.name} (by its SHA-256), "
                "so its age and settings are unknown: record it when it is made (evaluate-runs with HISTORY).",)
    row = rows[-1]
    recorded = datetime.fromisoformat(row["time"])
    days = ((now or datetime.now(timezone.utc)) - recorded).total_seconds() / 86400
    notes = [f"The baseline was recorded {days:.1f} days ago ({row['time']}{', ' + row['label'] if row['label'] else ''}), "
             f"settings {row['settings'][:8]}; this run's settings {settings[:8]}."]
    if days > max_age:
        notes.append(f"Warning: the baseline is {days:.0f} days old, more than MAX_AGE = {max_age}: gate against a fresh run "
                     "of the main branch.")
    if row["settings"] != settings:
        notes.append("Warning: the baseline was scored with other settings (labels, corpus, model, chunk size or k): "
                     "its numbers and these are not comparable.")
    return tuple(notes)


def append_history(path: str | os.PathLike, rows: list[dict]) -> Path:
    """Append ``rows`` to the history file (created when missing), after checking the rows already there."""
    path = Path(path)
    open_line = False  # the last row lacks its line end (a file edited by hand): end it before appending
    if path.exists():
        read_history(path)  # a damaged row stops the append, named
        open_line = not path.read_bytes().endswith(b"\n") and path.stat().st_size > 0
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n" * open_line + "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def build_of(row: dict) -> tuple:
    """The build a row belongs to: its time, label and build id (rows written before the id: time and label)."""
    return row["time"], row["label"], row.get("build")


def plot_history(rows: list[dict], path: str | os.PathLike) -> Path:
    """Each metric over the builds (:func:`build_of`, in file order), a line per metric and run with its
    interval, in the course's figure style; a run the gate failed is a red cross. Saved as PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..course.plots import STYLE, WIDTH
    builds = list(dict.fromkeys(map(build_of, rows)))
    metrics = list(dict.fromkeys(m for r in rows for m in r["metrics"]))
    run = (lambda r: r["run"]) if len(rows) > len(builds) else (lambda r: "")  # one row a build: one line a metric
    runs = list(dict.fromkeys(map(run, rows)))
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH, 5))
        lines = [(metric, run) for metric in metrics for run in runs]
        for j, (metric, name) in enumerate(lines):
            mine = [r for r in rows if run(r) == name and metric in r["metrics"]]
            x = [builds.index(build_of(r)) + 0.06 * (j - (len(lines) - 1) / 2) for r in mine]  # side by side
            mean, low, high = ([r["metrics"][metric][f] for r in mine] for f in INTERVAL)
            ax.errorbar(x, mean, yerr=[[m - lo for m, lo in zip(mean, low)], [h - m for m, h in zip(mean, high)]],
                        marker="o", capsize=3, label=f"{name}: {metric}" if name else metric)
            flagged = [(xi, m) for xi, m, r in zip(x, mean, mine) if r["gate"] in FAILED]
            if flagged:
                ax.scatter(*zip(*flagged), marker="X", s=140, color="red", zorder=3, label="the gate failed it")
        ax.set(xticks=range(len(builds)), ylim=(0, 1.02), ylabel="mean with 95% interval")
        ax.set_xticklabels([label or time[:16] for time, label, _ in builds], rotation=20, ha="right")
        once = dict(zip(*ax.get_legend_handles_labels()[::-1]))  # each label once
        ax.legend(once.values(), once.keys(), loc="lower left")
        fig.tight_layout()
        fig.savefig(path, dpi=STYLE["figure.dpi"])
    plt.close(fig)
    return Path(path)


def main(environ: Mapping[str, str] | None = None) -> int:
    """``make history HISTORY=file.jsonl``: the PNG ``output/history-<stem>.png``; 2 when the file is missing or damaged."""
    environ = os.environ if environ is None else environ
    output_dir = Path(environ.get("RETRIEVAL_EVAL_OUTPUT") or ROOT / "output").absolute()
    try:
        if not environ.get("HISTORY", "").strip():
            raise ValueError("HISTORY is missing: the history file that make evaluate, evaluate-runs or gate appended to")
        path = Path(environ["HISTORY"]).expanduser()
        rows = read_history(path)
        if not rows:
            raise ValueError(f"{path} holds no row yet: run make evaluate, evaluate-runs or gate with HISTORY={path}")
        output_dir.mkdir(parents=True, exist_ok=True)
        png = plot_history(rows, output_dir / f"history-{path.stem}.png")
    except (ValueError, OSError) as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    print(f"{len(rows)} rows, {len(set(map(build_of, rows)))} builds: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
