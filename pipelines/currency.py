"""Money as people read it: an integer amount in the currency's smallest unit shown in major units.

The number of decimals is the currency's ISO 4217 *minor unit* (source: ISO 4217, list one "Current
currency & funds code list", column "Minor unit", as published by the maintenance agency SIX Group).
An amount is never converted between currencies and never passed through a float: the major and minor
parts are split with integer division. A code not in the table is shown in its smallest unit, saying so.
"""

from __future__ import annotations

# ISO 4217 minor units of the currencies a casino floor in Asia-Pacific, Europe or the Americas may use.
# Most currencies have 2; the exceptions are listed in full for 0, 3 and 4.
MINOR_UNITS: dict[str, int] = {
    **{c: 2 for c in (
        "AED", "AUD", "BDT", "BND", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HKD", "HUF", "IDR",
        "ILS", "INR", "KHR", "KZT", "LAK", "LKR", "MMK", "MNT", "MOP", "MXN", "MYR", "NOK", "NPR", "NZD", "PHP",
        "PKR", "PLN", "RUB", "SAR", "SEK", "SGD", "THB", "TRY", "TWD", "USD", "ZAR",
    )},
    # no minor unit
    **{c: 0 for c in (
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
        "XOF", "XPF",
    )},
    # three decimals
    **{c: 3 for c in ("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND")},
    # four decimals (units of account)
    "CLF": 4, "UYW": 4,
}


def minor_units(currency: str | None) -> int | None:
    """The decimals of ``currency`` (ISO 4217), or None when the code is not in :data:`MINOR_UNITS`."""
    return MINOR_UNITS.get((currency or "").strip().upper())


def format_amount(amount: int | None, currency: str | None, signed: bool = False) -> str:
    """``4040300, "USD"`` -> ``"40,403.00"``; ``4040300, "VND"`` -> ``"4,040,300"``; None -> ``""``.

    A currency not in the table keeps the smallest unit and says so (``"4,040,300 (smallest unit)"``).
    ``signed`` writes a ``+`` before a positive amount (a difference).
    """
    if amount is None:
        return ""
    amount = int(amount)
    sign = "-" if amount < 0 else ("+" if signed and amount > 0 else "")
    digits = minor_units(currency)
    if digits is None:
        return f"{sign}{abs(amount):,} (smallest unit)"
    whole, frac = divmod(abs(amount), 10 ** digits)
    return f"{sign}{whole:,}" + (f".{frac:0{digits}d}" if digits else "")


def format_money(amount: int | None, currency: str | None, signed: bool = False) -> str:
    """:func:`format_amount` followed by the currency code: ``"40,403.00 USD"``."""
    if amount is None:
        return ""
    return f"{format_amount(amount, currency, signed)} {currency or '(no currency)'}"
