import numpy as np

from streamplace.schedulers.segments import segment_cumsum


def test_running_sum_restarts_at_each_key():
    keys = np.array([0, 0, 0, 2, 2, 5])
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert segment_cumsum(keys, values).tolist() == [1.0, 3.0, 6.0, 4.0, 9.0, 6.0]
    assert segment_cumsum(np.array([], dtype=int), np.array([])).tolist() == []
