"""The pack's files from a gathered round: ``index.html`` (Jinja2, every value escaped) and ``round.json``.

The page is one self-contained file: its style inline, no script, no font, no image but what CSS draws (the
cards), and a Content-Security-Policy that forbids the browser any request. Values from the logs (ids, card
reads, sentences) go through Jinja2's autoescaping; the only markup built in Python is the clause filter's,
from escaped parts.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from pipelines.evidence import exact_json
from pipelines.evidence.rule_text import ClauseText, no_text
from pipelines.id_cells import id_class
from pipelines.step_money import step_in_major_units


def format_money(amount: int | None, currency: str | None, signed: bool = False) -> str:
    """An integer amount in the currency's smallest unit, in major units where the report's helper is installed."""
    if amount is None:
        return ""
    try:
        from pipelines.currency import format_amount
    except ImportError:  # the report's ISO 4217 table is not in this version: show the smallest unit
        sign = "+" if signed and amount > 0 else ""
        return f"{sign}{amount:,}"
    return format_amount(int(amount), currency, signed)


def money_unit_note(currency: str | None) -> str:
    """How the page's amounts read: major units when the report's ISO 4217 helper is installed, else the smallest unit."""
    try:
        from pipelines.currency import format_amount  # noqa: F401
    except ImportError:
        return f"amounts in the smallest unit of {currency or 'an unknown currency'} (e.g. cents)"
    return f"amounts in {currency or 'an unknown currency'}"


def _templates_dir() -> str:
    return str(resources.files("pipelines.evidence") / "templates")


_DICT_ATTRIBUTES = frozenset(a for a in dir(dict) if not a.startswith("__"))


class _PageEnvironment(Environment):
    """Jinja2's environment, reading ``x.name`` of a dict as ``x["name"]`` first. Jinja2 tries the attribute first and
    the item after it; a pack's values are dicts, so each of a page's ~600 lookups raised and caught an
    ``AttributeError`` first. A dict has no attribute but its methods, so for any other name the result is the one
    Jinja2 gives, and a method's name (``limits.items()``) still goes to Jinja2's own lookup."""

    def getattr(self, obj, attribute):
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def plain_value(v) -> str:
    """An engine outcome's value as a reviewer reads it: cards "7s 9c 4h", yes/no, a Hold'em seat "seat 2: played,
    Straight flush, ten high, win" (escaped by the template like any text)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return ""
    if isinstance(v, list):
        return " ".join(plain_value(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{'seat ' + k if k.isdigit() else k}: {plain_value(x)}" if not isinstance(x, dict) else
                         f"{'seat ' + k if k.isdigit() else k}: " + ", ".join(plain_value(y) for y in x.values())
                         for k, x in v.items())
    return str(v)


@lru_cache(maxsize=65536)
def _step_in_major_units(text: str | None, currency: str | None) -> str:
    """:func:`pipelines.step_money.step_in_major_units`, remembered: the same step texts recur from pack to pack
    (a baccarat card to the Player), and each is sixteen regular expressions."""
    return step_in_major_units(text, currency)


@lru_cache(maxsize=8)
def environment(clause_text: ClauseText = no_text) -> Environment:
    """The page's Jinja2 environment for ``clause_text`` (cached: the audit renders thousands of pages with one)."""
    env = _PageEnvironment(loader=FileSystemLoader(_templates_dir()), autoescape=True, undefined=StrictUndefined,
                           trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)

    @lru_cache(maxsize=4096)  # a clause's markup is the same on every page (a page asks for ~30)
    def clause(clause_id: str | None) -> Markup:
        if not clause_id:
            return Markup("")
        text = clause_text(clause_id)
        tag = Markup('<span class="cl">{}</span>').format(clause_id)
        if not text:
            return tag
        return tag + Markup(' <details class="text"><summary>text</summary><blockquote>{}</blockquote></details>').format(text)

    env.filters["clause"] = clause
    env.filters["money"] = lambda amount, currency, signed=False: format_money(amount, currency, signed)
    env.filters["plain"] = plain_value
    env.filters["idclass"] = id_class
    # the engine's step texts with their amounts in major units (round.json keeps the engine's integers)
    env.filters["step_money"] = _step_in_major_units
    return env


@lru_cache(maxsize=1)
def _css() -> str:
    return (resources.files("pipelines.evidence") / "templates" / "evidence.css").read_text(encoding="utf-8")


def render_html(data: dict, clause_text: ClauseText = no_text) -> str:
    """``index.html`` for ``data`` (the pack's JSON document, see :func:`pipelines.evidence.pack.pack_document`)."""
    env = environment(clause_text)
    css = _css()
    now = {f["finding_id"] for f in data["findings_now"]}
    recorded = {f["finding_id"] for f in data["findings"]}
    return env.get_template("evidence.html.j2").render(
        r=data["round"], outcome=data["outcome"], video=data["video"], cards=data["cards"], steps=data["steps"],
        wagers=data["wagers"], irregularities=data["irregularities"], findings=data["findings"],
        findings_now=data["findings_now"], findings_changed=bool(recorded) and now != recorded,
        neighbours=data["neighbours"], sources=data["sources"], source_lines=data["source_lines"],
        notes=data["notes"], clause_note=data.get("clause_note"), version=data["pitaudit_version"], format=data["format"],
        css=Markup(css), unit_note=money_unit_note(data["round"].get("currency")),
    )


def render_json(data: dict) -> str:
    """``round.json``: the same document, keys sorted, so the same round gives the same bytes."""
    return exact_json.dumps(data, sort_keys=True) + "\n"
