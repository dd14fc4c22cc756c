"""The daemon's health for Prometheus: what it counts and measures (collect.py), and the
`/metrics` endpoint its event loop serves when `[metrics] enabled = true` (serve.py)."""

from daemon.metrics.collect import READER_LINKS, DaemonMetrics, Readings
from daemon.metrics.serve import metrics_url, serve_metrics

__all__ = ["READER_LINKS", "DaemonMetrics", "Readings", "metrics_url", "serve_metrics"]
