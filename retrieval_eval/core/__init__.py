"""The core every learner reads first: the metrics for one question (metrics.py), their registry with the kernels
for every question at once (registry.py), the tables (evaluation.py), the types and checks at the door (checks.py),
every error (errors.py) and where files live (paths.py). Imports nothing else of the package."""
