"""rulebook: the casino's game rules as data, and a pure engine that settles rounds by them.

Nothing in this package reads a clock, a database or a global. Rule sets are loaded once from
the versioned TOML files under ``rulebook/rulesets/`` (the only file access, in ``catalogue``)
into frozen objects, and every engine function takes the rule set it applies as an argument.
Every amount the engine returns carries the clause of the casino's rule text it came from.
"""
