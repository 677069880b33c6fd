"""What the numbers can tell: intervals and paired tests (statistics.py), verdicts in plain words
(comparisons.py), other tools' conventions (conventions.py), the golden-set audit (audit.py) and the deep dives'
experiments (baselines.py, chunking.py, answers.py). Imports the wings before it."""
