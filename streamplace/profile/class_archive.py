"""Spark's driver classes in one class-data archive (Java's dynamic AppCDS, JEP 350), so that
every ``streamplace profile`` (and every other command that starts Spark on this machine) maps
them from one file instead of loading and verifying each of them.

Measured on this machine (2 cores, Java 17, 2026-11-30): ``streamplace profile`` on a two-row
input took 19.0-19.7 s of wall time and 24.7-25.3 CPU seconds with the archive (three runs),
against 25.8-27.4 s and 31.6-34.4 CPU seconds without it (four runs), interleaved.

``make`` runs ``python -m streamplace.profile.class_archive``: a small profile job (a good and a
rejected row of each kind of record, read, checked, aggregated and written as Spark does for any
input) runs in a driver started with ``-XX:ArchiveClassesAtExit``; the JVM writes the archive as
it exits, into a temporary name renamed to :data:`~.spark.CLASS_ARCHIVE` once whole. A session
uses the archive when it exists (:func:`~.spark.session_conf`); a JVM that cannot use it (made by
another Java build, or damaged) says nothing and runs as without it. Classes the job did not load
are loaded as usual.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..model import Operator, Stream, Topology
from .spark import CLASS_ARCHIVE, SparkUnavailable, _end_jvm, start_session, stop_session

#: seconds the JVM may take to write the archive as it exits (about 40 s on this machine)
DUMP_GRACE_S = 600.0


def _records(folder: Path) -> tuple[Path, Path]:
    traffic, load = folder / "traffic.jsonl", folder / "load.csv"
    traffic.write_text('{"window_start": 0, "window_seconds": 10, "src_task": "a[1]", "dst_task": "b[1]", "tuples": 100, "bytes": 200}\n'
                       '{"window_start": 0, "window_seconds": 10, "src_task": "a[9]", "dst_task": "b[1]", "tuples": 1, "bytes": 2}\n')
    load.write_text("window_start,window_seconds,task,executed,cpu_seconds\n0,10,b[1],40,4\n0,10,b[1],x,1\n")
    return traffic, load


def build(path: Path = CLASS_ARCHIVE) -> Path:
    """Write the archive to ``path`` (replaced whole, or left as it was if anything fails)."""
    from pyspark import SparkContext

    from .metrics import build_profile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.part-{os.getpid()}")
    topology = Topology.build("archive", [Operator("a", 2), Operator("b", 2)], [Stream("a", "b")])
    try:
        with tempfile.TemporaryDirectory(prefix="streamplace-archive-") as folder:
            traffic, load = _records(Path(folder))
            spark = start_session("local[2]", fast_start=True, driver_memory="1g", shuffle_partitions=2, dump_classes=str(part))
            try:
                build_profile(spark, topology, [traffic], [load], out_dir=Path(folder) / "profile")
            finally:
                stop_session(spark)
                _end_jvm(SparkContext._gateway, grace=DUMP_GRACE_S)   # the archive is written as the JVM exits
        if not part.is_file() or part.stat().st_size == 0:
            raise SparkUnavailable(f"spark: the JVM wrote no class archive to {part}")
        os.replace(part, path)
        return path
    finally:
        part.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else CLASS_ARCHIVE
    try:
        made = build(target)
    except (SparkUnavailable, OSError) as exc:
        print(f"streamplace: no class archive for Spark's driver ({exc}); Spark starts without one", file=sys.stderr)
        return 1
    print(f"class archive for Spark's driver: {made} ({made.stat().st_size / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
