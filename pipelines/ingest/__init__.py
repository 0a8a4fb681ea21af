"""Ingest: the card-device and table-system logs into DuckDB, validated, nothing lost (docs/ingest.md).

A straight line of stages, one module each: ``discover`` -> ``screen`` -> ``plan`` -> ``parse`` (``parallel``
on worker processes) -> ``load`` (the only one that sees the writer); ``run.ingest_folder(con, input_dir,
gaming_day_start, settings=..., progress=...)`` calls them in order and returns the summary. The CLI
(``pitaudit ingest``) draws the progress and prints the summary (``pipelines.console``).
"""
