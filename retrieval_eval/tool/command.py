"""``retrieval-eval``, the console command the package installs: one verb per job, every parameter a flag (the make
variable's name in lower case, ``--chunk-size`` for ``CHUNK_SIZE``; make's variables in the environment are not read),
and an exit status a CI script can follow. The make targets call the same functions; make itself turns any failed
command into status 2."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from . import cli, gate, history

STATUS = {
    "evaluate": "exit status: 0 the report is written, 1 a problem with the data or the report, 2 bad parameters",
    "evaluate-runs": "exit status: 0 the report is written, 1 a problem with the data or the report, 2 bad parameters",
    "gate": "exit status: 0 not shown worse (or within the margin), 1 worse (or not shown within it), 2 bad input",
    "history": "exit status: 0 the plot is written, 2 the history is missing or damaged",
}
JOBS = {
    "evaluate": "chunk, label and rank a corpus with every registered retriever, and write the report",
    "evaluate-runs": "score TREC runs against labels, and write the report",
    "gate": "is the candidate run worse than the baseline, question by question?",
    "history": "draw each metric over the builds a history file holds",
}
SEVERAL = {"RUNS", "KS", "METRICS"}  # flags that take several values


def flag(name: str) -> str:
    return "--" + name.lower().replace("_", "-")


def parser() -> argparse.ArgumentParser:
    """The command's parser: a sub-command per verb, each with the flags of the parameters it takes."""
    top = argparse.ArgumentParser(prog="retrieval-eval", description="Retrieval metrics for RAG: evaluate, gate, history.")
    verbs = top.add_subparsers(dest="verb", required=True, metavar="{" + ",".join(JOBS) + "}")
    for verb, job in JOBS.items():
        sub = verbs.add_parser(verb, help=job, description=job[0].upper() + job[1:] + "." * (not job.endswith("?")), epilog=STATUS[verb])
        for name, parameter in cli.PARAMETERS.items():
            if verb in parameter.targets or (verb == "history" and name == "HISTORY"):
                default = f" (default: {parameter.default})" if parameter.default not in (None, "") else ""
                sub.add_argument(flag(name), dest=name, nargs="+" if name in SEVERAL else None, metavar=name,
                                 required=verb == "history", help=parameter.help + default)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one verb; its exit status (argparse's own 2 for a flag it does not know)."""
    args = vars(parser().parse_args(argv))
    verb = args.pop("verb")
    given = {name: (shlex.join(value) if name == "RUNS" else " ".join(value)) if isinstance(value, list) else value
             for name, value in args.items() if value is not None}
    environ = {**{k: v for k, v in os.environ.items() if k not in {*cli.PARAMETERS, "START_DIR"}},
               "START_DIR": os.getcwd(), **given}
    if verb == "gate":
        return gate.main(environ)
    if verb == "history":
        return history.main(environ)
    return cli.main([verb], environ)


if __name__ == "__main__":
    sys.exit(main())
