"""The investigation page: one HTML file, Jinja2 with autoescaping, and the plotly.js of its output folder.

plotly.js (about 3.5 MB) is not inlined in every page: the pages of one output folder share one copy,
``plotly.min.js`` (:func:`write_plotly_js`), which each page loads by a relative path, so a copied folder still
opens offline (the audit's ``investigations/plotly.min.js``; ``pitaudit investigate --out DIR``'s
``DIR/plotly.min.js``). The page's Content-Security-Policy allows scripts from its own folder tree and inline
ones, and no request to any network.

Every value from the logs reaches the page through Jinja2's escaping or plotly's JSON (which escapes ``<``,
``>`` and ``/``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path

import plotly.offline
import polars as pl
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from pipelines.evidence.render import format_money
from pipelines.id_cells import id_class
from pipelines.stats.tests_frame import p_relation

# the page shows the first rows of a long table and says so; the CSV and Parquet files beside it hold all. 100, not
# the 500 it was: the rows' cells, rendered one by one, were most of each page's time on a night with 30 days of
# history, and of a page's HTML (a 30-day window of a table is thousands of rounds; the page is for reading)
MAX_HTML_ROWS = 100
PLOTLY_JS = "plotly.min.js"


@lru_cache(maxsize=1)
def _env() -> Environment:
    """One environment per process: its template is compiled once, not once per page."""
    folder = str(resources.files("pipelines.investigation") / "templates")
    env = Environment(loader=FileSystemLoader(folder), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["money"] = lambda amount, currency, signed=False: format_money(amount, currency, signed)
    env.filters["idclass"] = id_class
    env.filters["p_value"] = p_relation
    env.filters["num"] = lambda v, digits=2: "" if v is None else (f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}")
    return env


@lru_cache(maxsize=1)
def _css() -> str:
    # the evidence pack's page style, then this page's own rules (charts, figure cards)
    return "".join((resources.files(package) / "templates" / name).read_text(encoding="utf-8") for package, name in (
        ("pipelines.evidence", "evidence.css"), ("pipelines.investigation", "investigation.css")))


def write_plotly_js(folder: Path) -> Path:
    """``folder/plotly.min.js``: the plotly.js the pages under ``folder`` load (replaced, so a folder reused by a newer
    pitaudit gets its plotly)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PLOTLY_JS
    path.write_text(plotly.offline.get_plotlyjs(), encoding="utf-8")
    return path


def script_href(page_folder: Path, plotly_js: Path) -> str:
    """The relative link from a page in ``page_folder`` to the shared ``plotly_js``."""
    return Path(os.path.relpath(plotly_js, page_folder)).as_posix()


def table_rows(df: pl.DataFrame, limit: int = MAX_HTML_ROWS) -> list[dict]:
    return df.head(limit).to_dicts()


def render_page(context: dict, plotly_src: str = PLOTLY_JS) -> str:
    """The page; ``plotly_src``: the relative link to the folder's ``plotly.min.js`` (:func:`script_href`)."""
    figures = {k: Markup(v) for k, v in context.pop("figures").items()}
    return _env().get_template("investigation.html.j2").render(
        **context, figures=figures, css=Markup(_css()), plotly_src=plotly_src, max_rows=MAX_HTML_ROWS)
