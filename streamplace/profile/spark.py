"""The one place that builds SparkSessions (docs/pipeline.md).

Defaults are for the embedded case, ``local[*]`` on this machine: web UI and console progress
bar off, few shuffle partitions (``2 x cores`` locally, Spark's adaptive execution coalesces
further), session time zone UTC (monitoring windows are epoch seconds), the JVM's logs at
error level (``log4j2.properties`` beside this file), ANSI SQL left on (parsing uses
``try_cast`` so a bad field becomes a rejected row, never a failed job).

``master`` comes from the argument, else ``$STREAMPLACE_SPARK_MASTER``, else ``local[*]``.
For a master on this machine (``local``, or ``spark://`` on a loopback address) the driver
binds to 127.0.0.1 and executors get the same log configuration. PySpark runs Python workers
with ``$PYSPARK_PYTHON``: it is set to this interpreter unless the user set it, so workers see
the same packages.

Spark 4 needs Java 17 or newer: :func:`check_java` turns a missing or old Java into one clear
line (:class:`SparkUnavailable`) before any JVM is launched. PySpark's own Python loggers for
query errors are silenced: those errors are raised, and the CLI reports them in one line. The
JVM's stderr passes through a filter that drops the one line Java prints for the incubator module
Spark's launcher always adds (``WARNING: Using incubator modules: jdk.incubator.vector``); every
other line reaches stderr unchanged.

The JVM's temporary files go in a directory of their own, made under ``$TMPDIR`` (else ``/tmp``)
for this process: it is Spark's ``spark.local.dir`` (block-manager and shuffle files) and the
JVM's ``java.io.tmpdir`` (Spark's scratch directories, native libraries it unpacks). The
process's exit and an interrupt (:mod:`streamplace.interrupt`, which kills the JVM before its
shutdown hooks could delete them) remove it. One per process, not per session, because the JVM
lives as long as the process.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from ..files import quote
from .. import interrupt

MASTER_ENV = "STREAMPLACE_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
MIN_JAVA = 17
#: inputs up to this many bytes start the JVM with the C1 compiler only (``fast_start``): measured
#: with ``streamplace profile`` on 2 cores (traffic CSV, C1 against C2), C1 took 14.7 s against
#: 18.7 s of wall time on 1.1 MB (one run each) and 17.2 s against 19.0 s on 9.5 MB (two runs
#: each, a third less CPU), C2 27-29 s against 34-36 s on 60 MB (two runs each): a short job
#: spends most of its time starting up
FAST_START_MAX_BYTES = 16 * 2**20
LOG4J = Path(__file__).with_name("log4j2.properties")
#: the driver JVM's class-data archive (:mod:`.class_archive`, which ``make`` runs): when it
#: exists a local driver maps Spark's classes from it instead of loading and verifying each one
CLASS_ARCHIVE = Path(sys.prefix) / "share" / "streamplace" / "spark-driver.jsa"
#: the JVM's class-data-sharing messages off: an archive made by another Java build is skipped,
#: silently, and the JVM loads its classes as without one
CDS_QUIET = "-Xlog:cds*=off"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
JVM_BANNER = "WARNING: Using incubator modules:"
_temp_dir: str | None = None  # this process's directory for the JVM's temporary files


class SparkUnavailable(RuntimeError):
    """Spark cannot run here (no Java, Java too old, a session on another master exists)."""


def fast_start_for(input_bytes: int) -> bool:
    """Whether a job reading ``input_bytes`` of records starts its JVM with C1 only
    (:data:`FAST_START_MAX_BYTES`)."""
    return input_bytes <= FAST_START_MAX_BYTES


def java_version(env: dict | None = None) -> int:
    """Major version of the ``java`` Spark would launch (``$JAVA_HOME/bin/java``, else PATH)."""
    env = dict(os.environ if env is None else env)
    home = env.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java", path=env.get("PATH", ""))
    where = f"JAVA_HOME={home}" if home else "PATH"
    if not java or not Path(java).exists():
        raise SparkUnavailable(f"java: not found in {where}; Spark needs Java {MIN_JAVA} or newer (install a JDK/JRE, e.g. openjdk-{MIN_JAVA}-jre-headless)")
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailable(f"java: cannot run {java}: {exc}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not match:
        raise SparkUnavailable(f"java: cannot tell the version of {java} (`java -version` printed {quote((proc.stderr or proc.stdout).strip()[:80])})")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_292" is Java 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise SparkUnavailable(f"java: {java} is Java {major}; Spark 4 needs Java {MIN_JAVA} or newer")
    return major


#: the master URLs Spark takes (its "Master URLs" documentation): local[...], a standalone
#: cluster, YARN, Kubernetes; anything else Spark refuses with a Java stack trace on stderr
MASTER_URL = re.compile(r"local(\[\s*(\*|\d+)\s*(,\s*\d+\s*)?\])?|local-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\]"
                        r"|spark://[^\s/]+(/\S*)?|yarn|k8s://\S+")


def resolve_master(master: str | None = None) -> str:
    """The master to use (argument, else ``$STREAMPLACE_SPARK_MASTER``, else ``local[*]``);
    :class:`SparkUnavailable` in one line if it is no Spark master URL."""
    chosen = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
    if not MASTER_URL.fullmatch(chosen):
        where = "--spark-master" if master else MASTER_ENV
        raise SparkUnavailable(f"spark: {where}: {chosen!r} is not a Spark master URL (local, local[N], local[*], "
                               "spark://HOST:PORT, yarn, k8s://HOST:PORT)")
    return chosen


def is_on_this_machine(master: str) -> bool:
    if master.startswith("local"):
        return True
    host = urlparse(master).hostname
    return host in LOOPBACK


def _local_cores(master: str) -> int:
    match = re.match(r"local\[(\d+)", master)
    return int(match.group(1)) if match else (os.cpu_count() or 2)


def session_conf(master: str, *, driver_memory: str = "2g", shuffle_partitions: int | None = None,
                 fast_start: bool = False, short_jobs: bool = False, local_dir: str | None = None,
                 dump_classes: str | None = None) -> dict[str, str]:
    """The Spark configuration :func:`start_session` uses (exposed for inspection and tests);
    ``local_dir`` is the driver's ``spark.local.dir`` and ``java.io.tmpdir``.

    ``fast_start`` (small inputs, :data:`FAST_START_MAX_BYTES`): the driver (and executors on a
    cluster of this machine) compile with C1 only, and adaptive query execution is off. Its
    re-planning at every shuffle pays on large data (coalesced partitions, skewed joins), not on a
    few MiB. Measured 2026-11-30 on 2 cores, interleaved, ``build_profile`` in a new session:
    6.2-7.0 s (four runs) against 6.7-7.6 s (five) on 8.3 MiB of traffic CSV, 3.5-4.0 s (five)
    against 3.9-4.0 s (two) on 80 KB; replay and profile of page-view's 6,000 records in one warm
    session, median 3.30 against 3.70 s (four runs each).

    ``short_jobs``: many short jobs over small data in one session (the demo's replay and profile
    of each application, a test run): whole-stage code generation off, since compiling each
    plan's code costs more than it saves there. Replay and profile of page-view's 6,000 records
    in one warm session: median 2.76 s against 3.43 s (five runs each, interleaved). Not for one
    ``profile`` run: 80-250 KB within noise, 0.8-8 MiB 0.1-0.5 s slower (two or three runs each).

    The driver maps :data:`CLASS_ARCHIVE` when it exists, or (``dump_classes``) writes the classes
    it loaded to that file when it exits."""
    local = master.startswith("local")
    log_opt = f"-Dlog4j2.configurationFile={LOG4J.resolve().as_uri()}"
    jit = ["-XX:TieredStopAtLevel=1"] if fast_start else []
    if dump_classes:
        cds = [f"-XX:ArchiveClassesAtExit={dump_classes}", CDS_QUIET]
    else:
        usable = CLASS_ARCHIVE.is_file() and " " not in str(CLASS_ARCHIVE)   # Spark splits the options at spaces
        cds = [f"-XX:SharedArchiveFile={CLASS_ARCHIVE}", CDS_QUIET] if usable else []
    # the serial collector for a small input's driver: replay and profile of the four bundled
    # applications twice in one session (6,000 records each), 2 cores, 2026-11-30: 39.9-41.2 CPU s
    # of the JVM and 32.8-34.0 s against 47.1-49.8 and 35.8-38.1 with the default G1 (three
    # interleaved runs each); a large input keeps G1
    gc = ["-XX:+UseSerialGC"] if fast_start else []
    driver_opts = [log_opt, *jit, *gc, *cds] + ([f"-Djava.io.tmpdir={local_dir}"] if local_dir else [])
    conf = {
        "spark.app.name": "streamplace",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(shuffle_partitions or (2 * _local_cores(master) if local else 16)),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # PySpark 4 otherwise records the Python call site of every column function in the JVM
        # (13 py4j round trips per F.col instead of 5; build_profile makes thousands): the call site
        # only decorates Spark's error text, which streamplace rewrites to one line anyway
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.driver.memory": driver_memory,
        "spark.driver.extraJavaOptions": " ".join(driver_opts),
    }
    if fast_start:
        conf["spark.sql.adaptive.enabled"] = "false"
    if short_jobs:
        conf["spark.sql.codegen.wholeStage"] = "false"
    if local_dir:
        conf["spark.local.dir"] = local_dir
    if is_on_this_machine(master):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        if not local:
            conf["spark.executor.extraJavaOptions"] = " ".join([log_opt, *jit])
    return conf


def start_session(master: str | None = None, *, driver_memory: str = "2g", shuffle_partitions: int | None = None,
                  fast_start: bool = False, short_jobs: bool = False, dump_classes: str | None = None):
    """A new SparkSession (checks Java first). Stop it with :func:`stop_session`. ``dump_classes``:
    the JVM writes a class-data archive there when it exits (:mod:`.class_archive`)."""
    master = resolve_master(master)
    java_version()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_on_this_machine(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.logger import PySparkLogger
    from pyspark.sql import SparkSession

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):  # errors are raised (and reported) anyway
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
    conf = {"spark.master": master, **session_conf(master, driver_memory=driver_memory, shuffle_partitions=shuffle_partitions,
                                                  fast_start=fast_start, short_jobs=short_jobs, local_dir=_process_temp_dir(),
                                                  dump_classes=dump_classes)}
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        _launch_gateway(conf)
        return builder.getOrCreate()
    except Exception as exc:  # py4j / launcher errors: keep one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkUnavailable(f"spark: cannot start a session on {master}: {first}") from exc


def _process_temp_dir() -> str:
    """This process's directory for the JVM's temporary files (made on first use), removed at
    exit or on an interrupt."""
    global _temp_dir
    if _temp_dir is None:
        _temp_dir = tempfile.mkdtemp(prefix="streamplace-spark-")
        interrupt.hold(_temp_dir)
        atexit.register(shutil.rmtree, _temp_dir, ignore_errors=True)
    return _temp_dir


def _forward_stderr(fd: int) -> None:
    """Copy the JVM's stderr to ours, without Java's incubator-module banner."""
    with os.fdopen(fd, "rb") as pipe:
        for line in pipe:
            if not line.startswith(JVM_BANNER.encode()):
                sys.stderr.buffer.write(line)
                sys.stderr.flush()


def _launch_gateway(conf: dict[str, str]) -> None:
    """Start PySpark's JVM (once per process) with its stderr through :func:`_forward_stderr`.

    PySpark would start the same JVM on the first SparkContext; starting it here only adds the
    filter. The JVM settings (driver memory and options) are taken at this launch.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        read, write = os.pipe()
        threading.Thread(target=_forward_stderr, args=(read,), name="spark-stderr", daemon=True).start()
        try:
            gateway = launch_gateway(SparkConf(loadDefaults=False).setAll(list(conf.items())), popen_kwargs={"stderr": write})
        finally:
            os.close(write)   # the JVM holds its own copy; the filter ends when the JVM exits
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm
        atexit.register(_end_jvm, gateway)   # runs before the removal of its temporary directory


def _end_jvm(gateway, grace: float = 10.0) -> None:
    """At exit: end PySpark's JVM and wait for it, so that no JVM outlives the command. The JVM
    exits when its stdin closes (PySpark's own way of ending it with the Python process, which
    alone would leave it running for a moment after this process is gone); SIGKILL after
    ``grace`` seconds.

    py4j is told first that the gateway is gone, so that no Java object Python frees later sends
    its release. A release already on its way (py4j's finalizer thread sends them while the main
    thread runs) fails when the JVM ends, and py4j logs that as a traceback on the root logger:
    :func:`_quiet_py4j` keeps it off stderr, where it would follow a command's one-line error.
    """
    client = gateway._gateway_client
    client.is_connected = False   # py4j's own flag: its client sends nothing once it is False
    _quiet_py4j()
    proc = gateway.proc
    if proc.poll() is not None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=grace)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


def _quiet_py4j() -> None:
    """Drop py4j's log records from here on (the JVM is being ended: a failed send is expected)."""
    logging.getLogger().addFilter(lambda record: "py4j" not in Path(record.pathname).parts)


def active_session():
    """The SparkSession running in this process, if any (without importing pyspark needlessly)."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.builder.getOrCreate()


def stop_session(spark) -> None:
    """Stop the session and its SparkContext (the JVM is ended at exit: :func:`_end_jvm`)."""
    spark.stop()


@contextmanager
def spark_session(master: str | None = None, **options):
    """Use the active session if it runs on the requested master, else start one and stop it after.

    ``master=None`` accepts any active session (so one session can serve a whole test run);
    an explicit master that differs from the active session's is an error, because one process
    holds one SparkContext.
    """
    active = active_session()
    if active is not None:
        running = active.sparkContext.master
        if master is None or master == running:
            yield active
            return
        raise SparkUnavailable(f"spark: a session on {running} is already running in this process; cannot also use {master}")
    spark = start_session(master, **options)
    try:
        yield spark
    finally:
        stop_session(spark)
