"""Ingest: the card-device and table-system logs into DuckDB, validated, nothing lost (docs/ingest.md).

Public API: ``run.run_ingest(input_dir, db_path, gaming_day_start)`` (the CLI command) and
``run.ingest_folder(con, input_dir, gaming_day_start)`` (with an open writer connection, for the audit).
"""
