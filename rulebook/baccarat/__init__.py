"""Hoiana Tiger Baccarat (Hoiana Tiger Baccarat Game Rules, No. 01/01.10.2024, clause prefix TBAC).

- ``params``: the rule set's parameters (pay table, variant, decks, rounding, deal order).
- ``rules``: the drawing rules as small functions (card values, Table One, Table Two, 4.16,
  ``required_card_count``).
- ``engine.settle_round``: the scalar reference, one round card by card, every step with its clause.
- ``vector``: the same over numpy arrays of rounds (``resolve``, ``settle``, ``irregularities``,
  ``deal_shoe``), proved equal to the scalar engine.
- ``odds.house_edges``: exact odds of every bet by enumeration of the shoe.

Judgements where the text is open: docs/interpretations/baccarat.md.
"""
