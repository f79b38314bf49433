"""Evaluation of placements: traffic and load metrics, performance model."""
