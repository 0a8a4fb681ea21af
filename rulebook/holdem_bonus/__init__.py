"""Texas Hold'em Bonus: Hoiana (HTB-), MBS progressive (MBS-), a player's guide (THB-G-).

- ``params``: the rule set's parameters (pay tables, Ante qualifier, deal procedures and their clauses,
  decision and showdown clauses, irregularity effects, the progressive jackpot's lines and semantics;
  amounts the texts leave open have no default: an integer or ``"unstated"``).
- ``deal``: the deal procedure applied to the device's card events (``reconstruct``), its fixed
  positions for clean rounds (``layout``) and its inverse (``deal_events``).
- ``decisions.read_seat``: each seat's fold/flop/turn/river/concede decisions, checked against the rules.
- ``hands``: the Bonus and jackpot pay tables read on concrete cards.
- ``engine.settle_round``: the scalar reference, one round, every step with its clause.
- ``vector.settle_many``: many rounds at once (one ``evaluate7`` call per batch, numpy settlement;
  irregular rounds handed to the scalar engine), proved equal to it; ``main_game``/``bonus`` kernels.
- ``strategy``: the player's named strategies, and the exact per-flop count of the ``optimal`` one.
- ``odds.house_edges``: the exact Bonus, the main game under a named strategy (counted exactly under
  ``optimal``, simulated under a rule strategy) with its standard error, the exact progressive
  return at the rule set's stated stake.

Judgements where the texts are open: docs/interpretations/holdem_bonus.md.
"""
