"""The course: pictures (plots.py), the classroom widgets (widgets/), the check-yourself checker (checker.py),
teaching aids (teaching.py) and the one-page sheet (sheet.py). Only the course and the tool import matplotlib."""
