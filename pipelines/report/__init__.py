"""The nightly audit report: one self-contained HTML file (plotly.js inline, no CDN, no web fonts).

Fed only from finished frames (findings, settlements, quarantine) by :func:`render_report`; it
never reads the database or decides anything.
"""

from pipelines.report.render import ReportInputs, render_report, write_report

__all__ = ["ReportInputs", "render_report", "write_report"]
