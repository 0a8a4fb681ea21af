"""``json.dumps(data, indent=2, ensure_ascii=False[, sort_keys=True], default=str)``, byte for byte, fast.

A pack's ``round.json`` quotes its round's source lines (a Hold'em round's line, with every wager, once per wager
record): tens of kilobytes of text a pack. With ``indent`` the standard library encodes in pure Python: at the
audit's 2,000 packs a night, about 4 of their 30 CPU seconds. orjson writes the same bytes for the values a pack
holds (text, integers, booleans, null, lists and objects with text keys), so it encodes those; anything else (a
float, whose exponent orjson spells differently, an integer beyond 64 bits, a key that is not text, a value
``default`` turns into text) goes to the standard library as before. ``tests/test_evidence_exact_json.py``
holds the two equal.
"""

from __future__ import annotations

import json

import orjson

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _plain(value) -> bool:
    """Whether ``value`` holds only what orjson and the standard library write alike."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if not _INT_MIN <= v <= _INT_MAX:
                return False
        elif t is dict:
            for k, x in v.items():
                if type(k) is not str:
                    return False
                t2 = type(x)
                if t2 is str or t2 is bool or x is None:
                    continue
                stack.append(x)
        elif t is list:
            stack.extend(v)
        else:
            return False
    return True


def dumps(data, sort_keys: bool = False) -> str:
    """The standard library's indented JSON of ``data`` (see the module docstring), without a final newline."""
    if _plain(data):
        option = orjson.OPT_INDENT_2 | (orjson.OPT_SORT_KEYS if sort_keys else 0)
        try:
            return orjson.dumps(data, option=option).decode("utf-8")
        except orjson.JSONEncodeError:  # text that is not valid UTF-8 (a lone surrogate), nesting too deep
            pass
    return json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=False, default=str)
