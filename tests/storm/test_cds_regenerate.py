"""``storm/conf/cds/regenerate.py``'s command line: asking for help or giving an unknown option
starts no Storm run (the script's runs need the built module, and the testbed's root)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "storm" / "conf" / "cds" / "regenerate.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_help_describes_the_options_and_runs_nothing():
    proc = _run("--help")
    assert proc.returncode == 0 and "--runner-only" in proc.stdout and "runner.classlist" in proc.stdout


def test_an_unknown_option_is_refused_before_any_run():
    proc = _run("--bogus")
    assert proc.returncode == 2 and "unrecognized arguments: --bogus" in proc.stderr and proc.stdout == ""
