"""Running placements on Apache Storm: plan files for the scheduler plugin, the embedded runner.

The Java side (the Maven module ``storm/`` at the repository root) holds the Nimbus plugin that
applies plans, the spec topology and the traffic monitor; this package prepares their inputs,
runs Storm as a child JVM and turns what it reports into streamplace records.
"""

from .errors import StormError

__all__ = ["StormError"]
