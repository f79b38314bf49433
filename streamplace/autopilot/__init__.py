"""The autopilot: one process beside Nimbus that keeps a running topology well placed.

:mod:`.loop` runs one period at a time (read the monitor's windows, calibrate the model on them,
reschedule the running placement, decide, log); :mod:`.policy` holds when a candidate is applied
(ours, with hysteresis, and the literature's). ``streamplace autopilot`` is its command line.
"""
