"""streamplace: where the tasks of a stream-processing job should run, and how good that is."""

__version__ = "0.1.0"
