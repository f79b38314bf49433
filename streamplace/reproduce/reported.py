"""The numbers the five papers report: one table per paper, each value with its section/figure.

These are the only hard-coded paper values of ``streamplace reproduce``; every figure of ours is
computed. Keys are ``experiment/what``; values are numbers, mappings of numbers, or (low, high)
ranges of percentage gains. Gains are percentages (``25`` = 25 % higher).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reported:
    key: str
    value: Any
    source: str
    what: str

    @property
    def text(self) -> str:
        """The value as one line of text (tables, summary)."""
        return _text(self.value)


def _text(value) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{'/'.join(map(str, k)) if isinstance(k, tuple) else k}: {_text(v)}" for k, v in value.items())
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_text, value)) + ")"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _table(*rows: Reported) -> dict[str, Reported]:
    return {r.key: r for r in rows}


ISCHEDULER = _table(  # Eskandari et al., I-Scheduler (FGCS 2020)
    Reported("microbench/optimum", {"diamond-30@heterogeneous": 146, "star-30@heterogeneous": 86},
             "[I] Sec. 5, Fig. 5-6", "optimal inter-node cost (CPLEX)"),
    Reported("microbench/ischeduler", {"diamond-30@heterogeneous": 148, "star-30@heterogeneous": 90},
             "[I] Sec. 5, Fig. 5-6", "I-Scheduler inter-node cost where it misses the optimum"),
    Reported("microbench/off-optimum", ("diamond-30@heterogeneous", "star-30@heterogeneous"),
             "[I] Sec. 5, Fig. 4-6", "the only instances (of 72) where I-Scheduler is above the optimum"),
    Reported("microbench/theta", 1.0, "[I] Sec. 5, Fig. 7-9", "theta (s); every I-Scheduler run takes less"),
    Reported("micro-io/vs-rstorm", {"linear": 0, "diamond": 25, "star": 0}, "[I] Sec. 6.1, Fig. 10",
             "I/O-intensive throughput gain over R-Storm (0 = similar)"),
    Reported("micro-io/vs-online", (8, 46), "[I] Sec. 6.1, Fig. 10", "I/O-intensive throughput gain over OLS, all layouts"),
    Reported("micro-cpu/vs-rstorm", {"linear": 0, "diamond": 26, "star": 0}, "[I] Sec. 6.1, Fig. 11",
             "CPU-intensive throughput gain over R-Storm (0 = similar)"),
    Reported("micro-cpu/vs-online", (10, 35), "[I] Sec. 6.1, Fig. 11", "CPU-intensive throughput gain over OLS, all layouts"),
    Reported("smart-home/homogeneous", {"ischeduler": 6900, "rstorm": 5200, "online": 3700}, "[I] Sec. 6.2, Fig. 12",
             "average throughput on 8 high capacity nodes"),
    Reported("smart-home/nodes", {"ischeduler": 4, "rstorm": 4, "online": 8}, "[I] Sec. 6.2", "nodes used (of 8)"),
    Reported("smart-home/heterogeneous", ("rstorm", "online"), "[I] Sec. 6.2, Fig. 13",
             "I-Scheduler above both on 2 high + 4 low nodes (no numbers)"),
    Reported("frequent-routes/homogeneous", {"ischeduler": 16000, "rstorm": 15500, "online": 9800, "online (3 nodes)": 13900},
             "[I] Sec. 6.3, Fig. 16", "average throughput on 8 high capacity nodes"),
    Reported("frequent-routes/heterogeneous", {"ischeduler": 15700, "rstorm": 14800, "online": 13000},
             "[I] Sec. 6.3, Fig. 17", "average throughput on 2 high + 2 low nodes"),
)

T3 = _table(  # Eskandari et al., T3-Scheduler (FGCS 2018)
    Reported("microbench/linear-at-optimum", 24, "[T3] Sec. 5, Fig. 5a", "linear instances (of 24) where T3 equals the optimum"),
    Reported("microbench/diamond-star", "above the optimum at some sizes", "[T3] Sec. 5, Fig. 5b-c",
             "T3 on diamond and star"),
    Reported("microbench/cplex-seconds", {"linear-32@heterogeneous": 1114257, "diamond-32@homogeneous": 2471,
                                          "star-32@homogeneous": 6, "diamond-32@heterogeneous": 393, "star-32@heterogeneous": 7},
             "[T3] Sec. 5, Fig. 6", "CPLEX resolution time (s) at 32 tasks, 64-core server"),
    Reported("micro-io/vs-rstorm", {"linear": 0, "diamond": 20, "star": 0}, "[T3] Sec. 6.1, Fig. 7a",
             "I/O-intensive throughput gain over R-Storm (0 = similar)"),
    Reported("micro-io/vs-online", (7, 41), "[T3] Sec. 6.1, Fig. 7a", "I/O-intensive throughput gain over OLS, all layouts"),
    Reported("micro-cpu/vs-rstorm", {"linear": 0, "diamond": (24, 33), "star": 0}, "[T3] Sec. 6.1, Fig. 7b",
             "CPU-intensive throughput gain over R-Storm (0 = similar)"),
    Reported("micro-cpu/vs-online", {"linear": (8, 12), "diamond": (24, 33), "star": (8, 12)}, "[T3] Sec. 6.1, Fig. 7b",
             "CPU-intensive throughput gain over OLS"),
    Reported("smart-home/homogeneous", {"t3": 6600, "rstorm": 5200, "online": 3700}, "[T3] Sec. 6.2, Fig. 8a",
             "average throughput on 8 high capacity nodes"),
    Reported("smart-home/nodes", {"t3": 4, "rstorm": 4, "online": 8}, "[T3] Sec. 6.2", "nodes used (of 8)"),
    Reported("smart-home/heterogeneous", ("rstorm", "online"), "[T3] Sec. 6.2, Fig. 8b",
             "T3 above both on 2 high + 4 low nodes (no numbers)"),
    Reported("frequent-routes/homogeneous", {"t3": 15700, "rstorm": 15500, "online": 9800, "online (3 nodes)": 13900},
             "[T3] Sec. 6.3, Fig. 10a", "average throughput on 8 high capacity nodes"),
    Reported("frequent-routes/nodes", {"t3": 3, "rstorm": 3, "online": 8}, "[T3] Sec. 6.3", "nodes used (of 8)"),
    Reported("frequent-routes/heterogeneous", {"t3": 14900, "rstorm": 14800, "online": 13000}, "[T3] Sec. 6.3, Fig. 10b",
             "average throughput on 2 high + 2 low nodes"),
)

METIS = _table(  # Fischer & Bernstein (IEEE BigData 2015)
    Reported("throughput/metis-vs-even", {"parallel": 6, "payload": 52, "opengov": 19, "reference": 3}, "[F] Table I (id)",
             "Metis throughput gain over Default, mean over 10-80 nodes"),
    Reported("throughput/metis-vs-online", {"parallel": 6, "payload": 38, "opengov": 19, "reference": 2}, "[F] Table I (ig)",
             "Metis throughput gain over Greedy, mean over 10-80 nodes"),
    Reported("throughput/online-vs-even", {"parallel": 0, "payload": 12, "opengov": 0, "reference": 1}, "[F] Table I (id)",
             "Greedy throughput gain over Default, mean over 10-80 nodes"),
    Reported("throughput/spread", {"even": {"parallel": 5, "payload": 20, "opengov": 4, "reference": 9},
                                   "online": {"parallel": 21, "payload": 23, "opengov": 5, "reference": 9},
                                   "metis": {"parallel": 13, "payload": 26, "opengov": 9, "reference": 5}},
             "[F] Table I (a)", "average min-max spread of throughput over three runs (%), per scheduler"),
    Reported("network/metis-vs-even", {"payload": 33.75, "parallel": 14}, "[F] Sec. V-A1, Fig. 6",
             "mean network-load reduction of Metis against Default (%)"),
    Reported("network/metis-vs-even-max", {"payload-10": 88}, "[F] Sec. V-A1, Fig. 6",
             "largest network-load reduction (%), Payload on 10 nodes"),
    Reported("network/online-vs-even-best", {"reference": 9.75}, "[F] Sec. V-A1",
             "Greedy's largest mean network-load reduction (%), on Reference"),
    Reported("throughput/metis-below-even", 0, "[F] Sec. V-A2", "configurations where Metis is below Default"),
    Reported("throughput/metis-below-online", ("parallel-80",), "[F] Sec. V-A2",
             "the only significant case of Metis below Greedy (-1 %)"),
)

LF = _table(  # Son & Moon, L/F job scheduler (Electronics 2020)
    Reported("cohesion/lf-vs-even", {"linear": 3900.0, "ascent": 71.78, "descent": 71.02, "symmetry": 32.03, "star": 59.45},
             "[LF] Sec. 4.2, Fig. 6", "cohesion gain of L/F over even (%), same at low and high parallelism"),
    Reported("coupling/lf-vs-even", 0.0, "[LF] Sec. 4.2, Fig. 6", "coupling change of L/F against even (%), every configuration"),
)

THROUGHPUT = _table(  # Nasiri et al., heterogeneity-aware throughput scheduler
    Reported("table4/instances", {
        ("nasiri-small", "linear"): (3, 3, 7), ("nasiri-small", "diamond"): (12, 5, 7), ("nasiri-small", "star"): (9, 10, 5),
        ("nasiri-medium", "linear"): (41, 42, 35), ("nasiri-medium", "diamond"): (67, 15, 46),
        ("nasiri-medium", "star"): (45, 34, 25), ("nasiri-large", "linear"): (201, 156, 341),
        ("nasiri-large", "diamond"): (397, 208, 91), ("nasiri-large", "star"): (327, 156, 206)},
        "[N] Table 4", "instances of low/mid/high-compute operators chosen by the scheduler"),
    Reported("fig10/throughput-gain", {"nasiri-small": (26, 49), "nasiri-medium": (36, 48), "nasiri-large": (27, 31)},
             "[N] Sec. 6, Fig. 10", "throughput gain over Storm's default scheduler (%), range over the three layouts"),
    Reported("fig10/utilisation-gain", {"nasiri-small": (10, 35), "nasiri-medium": (31, 47), "nasiri-large": (10, 21)},
             "[N] Sec. 6, Fig. 10", "weighted-utilisation gain over the default scheduler (%), range over the layouts"),
)

TABLES = {"ischeduler": ISCHEDULER, "t3": T3, "metis": METIS, "lf": LF, "throughput": THROUGHPUT}
