"""The dispute evidence pack: one round, reconstructed from the database read-only and re-settled by the pure
engine, written as an HTML page and JSON a reviewer can take into an air-gapped room, with a manifest of
SHA-256 hashes that shows the pack (and the source files it came from) untouched.

- :mod:`pipelines.evidence.gather`: read the round and its partition, re-settle it with the audit's own steps;
- :mod:`pipelines.evidence.steps`: which engine step each card of the device went to;
- :mod:`pipelines.evidence.cameras`: the table-to-camera map and the video window;
- :mod:`pipelines.evidence.rule_text`: a clause's text, when the casino's rule documents are configured;
- :mod:`pipelines.evidence.manifest`: hashes, ``SHA256SUMS``, and ``--verify``;
- :mod:`pipelines.evidence.render` and :mod:`pipelines.evidence.pack`: the files, and the command.

The format is documented in ``docs/evidence.md``.
"""
