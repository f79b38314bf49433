"""Storm tests need Java 17+ and the built module (`make test` builds it with Maven first).

Where either is missing they skip with the reason, except under CI (CI=true), where a missing
module is a failure: CI runs `make test`, which must have built it.
"""

import os

import pytest

from streamplace.storm import StormError, jvm


@pytest.fixture(scope="session")
def storm_ready():
    try:
        jvm.java()
        jvm.classpath()
    except StormError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Storm tests cannot run under CI: {exc}")
        pytest.skip(f"Storm tests need Java and the built module: {exc}")
    return True
