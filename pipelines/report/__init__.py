"""The nightly audit report: one self-contained HTML file (plotly.js inline, no CDN, no web fonts).

:func:`render_report` turns frames into the page (Jinja2 templates with autoescaping); it never reads the
database. :func:`report_inputs` gathers those frames for the audited partitions (aggregated in SQL, so a
night of millions of wagers arrives as thousands of rows). docs/report.md describes the sections, the
seams other parts feed (the hold detector's per-table frame, the per-night trend) and the evidence links.
"""

from pipelines.report.gather import report_inputs
from pipelines.report.render import ReportInputs, render_report, write_report

__all__ = ["ReportInputs", "render_report", "report_inputs", "write_report"]
