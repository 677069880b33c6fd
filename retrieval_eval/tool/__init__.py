"""The bring-your-own-data tool: ``make evaluate`` and ``make evaluate-runs`` (cli.py) and their report
(report.py)."""
