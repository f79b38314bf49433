"""Graph partitioning behind one wrapper (k-way with target part weights)."""

from .kway import kway_partition

__all__ = ["kway_partition"]
