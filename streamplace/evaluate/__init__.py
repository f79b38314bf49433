"""Evaluation of placements: traffic and load metrics, records, the decision rule and diffs (the cost-model fit: :mod:`streamplace.fit`)."""
