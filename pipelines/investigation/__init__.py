"""``pitaudit investigate``: one player, dealer or table over a range of gaming days, as a page and as data.

- :mod:`pipelines.investigate` (the module beside this package): the SQL, every value bound;
- :mod:`pipelines.investigation.count`: the true count before each blackjack round, from the device's cards;
- :mod:`pipelines.investigation.analysis`: results over time against expectation, bet size against the count;
- :mod:`pipelines.investigation.figures`, :mod:`pipelines.investigation.render`: the plotly figures and the page;
- :mod:`pipelines.investigation.command`: gather, write ``index.html`` and the rows as CSV and Parquet.
"""
