"""The session-scoped ``spark`` fixture (one local SparkSession for the whole test run) is in tests/conftest.py."""
