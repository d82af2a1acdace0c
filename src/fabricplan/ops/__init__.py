"""Operations side of fabricplan: read real NIC/switch configurations, lint them, size PFC headroom.

* ``ops.model``     — the one QoS model of a link (NIC side and switch side).
* ``ops.readers``   — readers for mlnx_qos output, the sysfs DCQCN tree, SONiC config_db.json and
  a cabling file.
* ``ops.headroom``  — pure PFC headroom functions (generic IEEE 802.1Qbb, SONiC/Spectrum, mlx5).
* ``ops.lint``      — rules (one module each), configuration and output formats; its engine also
  runs the health checks.
* ``ops.telemetry`` — the one time-series model of counters and RTT samples (telemetry readers in
  ``ops.readers.telemetry``, ``prom_text``, ``prometheus_api``).
* ``ops.health``    — health checks on telemetry (one module each), evaluation, output.
"""
