"""Evaluation of placements: traffic and load metrics, records, the decision rule, diffs and the cost-model fit."""
