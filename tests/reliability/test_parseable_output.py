"""Theme 7: METIS's own messages never reach stdout; a partition METIS could not make is a said fallback."""

import json
import subprocess
import sys

SCRIPT = """
import json, warnings
import numpy as np, scipy.sparse as sp
from streamplace.partition.kway import kway_partition
n = 12
star = sp.coo_matrix((np.ones(n - 1), ([0] * (n - 1), list(range(1, n)))), shape=(n, n))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    parts = kway_partition((star + star.T).tocsr(), np.ones(n), 11, targets=[100] + [1e-6] * 10)
print(json.dumps({"parts": np.asarray(parts).tolist(), "warnings": [str(w.message) for w in caught]}))
"""


def test_metis_failure_keeps_stdout_clean_and_says_so():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # nothing but the JSON on stdout (METIS printed "***Cannot bisect" here)
    assert proc.stdout.startswith('{"parts"') and "***" not in proc.stdout
    assert any("METIS could not make this partition" in w for w in doc["warnings"])
    assert len(doc["parts"]) == 12 and all(0 <= p < 11 for p in doc["parts"])
