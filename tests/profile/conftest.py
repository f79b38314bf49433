"""One local SparkSession (2 cores) for the whole test run, and small shared helpers."""

import pytest

from streamplace.profile.spark import start_session, stop_session


@pytest.fixture(scope="session")
def spark():
    session = start_session("local[2]", fast_start=True, shuffle_partitions=2, driver_memory="1g")
    yield session
    stop_session(session)
