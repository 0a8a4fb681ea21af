"""The investigation page: one self-contained HTML file (plotly.js inline, no network), Jinja2 with autoescaping.

Every value from the logs reaches the page through Jinja2's escaping or plotly's JSON (which escapes ``<``,
``>`` and ``/``); the page forbids the browser any request (Content-Security-Policy).
"""

from __future__ import annotations

from importlib import resources

import plotly.offline
import polars as pl
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from pipelines.evidence.render import format_money

MAX_HTML_ROWS = 500  # the page shows the first rows of a long table; the CSV and Parquet files hold all


def _env() -> Environment:
    folder = str(resources.files("pipelines.investigation") / "templates")
    env = Environment(loader=FileSystemLoader(folder), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["money"] = lambda amount, currency, signed=False: format_money(amount, currency, signed)
    env.filters["num"] = lambda v, digits=2: "" if v is None else (f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}")
    return env


def table_rows(df: pl.DataFrame, limit: int = MAX_HTML_ROWS) -> list[dict]:
    return df.head(limit).to_dicts()


def render_page(context: dict) -> str:
    css = (resources.files("pipelines.investigation") / "templates" / "investigation.css").read_text(encoding="utf-8")
    figures = {k: Markup(v) for k, v in context.pop("figures").items()}
    return _env().get_template("investigation.html.j2").render(
        **context, figures=figures, css=Markup(css), plotlyjs=Markup(plotly.offline.get_plotlyjs()), max_rows=MAX_HTML_ROWS)
