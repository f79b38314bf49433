"""Where a JVM started as streamplace starts one loads a class from (the class-data-sharing tests)."""

import os
import subprocess

from streamplace.storm import jvm


def class_source(opts: list[str], cp: list[str], main: str, cwd) -> str:
    """Where a JVM with ``opts`` and class path ``cp`` loads its main class ``main`` from; the JVM
    is stopped once it says (a daemon's main would go on to start the daemon, in ``cwd``)."""
    proc = subprocess.Popen([jvm.java(), *opts, "-Xlog:class+load=info", "-cp", os.pathsep.join(cp), main],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd)
    try:
        line = next(line for line in proc.stdout if f"{main} source:" in line)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    return line.split("source:", 1)[1].strip()
