"""The models against published measurements: not part of the ``fabricplan`` package.

Each module builds the rows of one part of docs/validation.md from fabricplan's public models and
the published figures they are compared with; the scripts in ``scripts/`` write the document and
the tests in ``tests/`` assert the tolerances. This package imports ``fabricplan``; nothing in
``src/fabricplan`` imports it (tests/architecture/test_import_direction.py).

- :mod:`validation.perf`: collectives, per-NIC ceilings, compute points, training runs, the socket
  transport, AWS EFA and memory per GPU against ``catalog/data/published_perf.yaml``
  (``scripts/validate_perf.py``);
- :mod:`validation.nvlink`: all-reduce on multi-host NVLink domains (GB200 NVL72)
  (``scripts/validate_nvlink_domains.py``);
- :mod:`validation.sim`: the flow-level simulator against published routing figures
  (``scripts/validate_sim.py``).

Run from the repository root: the scripts put it on ``sys.path`` themselves, pytest through
``pythonpath`` in pyproject.toml.
"""
