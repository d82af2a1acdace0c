"""Measurements in, calibrated models out: readers of nccl-tests and perftest logs (``read``,
``nccl_tests``, ``perftest``), the system a log describes (``system``), the fit of the calibratable
catalog parameters (``calibratable``, ``fit``) and the model-vs-measured check (``check``).

Imports the planning side (``perf``, ``design``, ``spec``, ``catalog``); nothing on that side
imports it (ARCHITECTURE.md).
"""
