"""Data contracts: every column's name, type, meaning and checks, held once (``schemas.tables`` for the
canonical ``core_*`` tables, ``schemas.inputs`` for the inputs as read), from which the pandera (polars)
models (``schemas.pandera_models``) and the DuckDB DDL (``schemas.ddl``) are generated."""
