"""The body of ``pitaudit evidence``: write a pack (``--db --table --round --out``) or check one (``--verify DIR``).

Exit status: 0 written / verified; 1 the pack fails verification (each problem printed, naming the file);
2 the command cannot run (a one-line reason: no such round, no database, a bad camera map, ...).
"""

from __future__ import annotations

from pathlib import Path

import typer

from pipelines.evidence.cameras import CameraMapError


def default_folder(table_id: str, round_no: int) -> Path | None:
    """Where the report links to the round's pack, relative to the current folder (run in the report's folder):
    ``evidence/<table segment>/<round_no>``, by the report's own rule (``pipelines.report.links``)."""
    try:
        from pipelines.report.links import evidence_relpath
    except ImportError:  # the report's link rule is not in this version
        return None
    return Path(evidence_relpath(table_id, round_no))


def run_evidence(db: Path | None, table: str | None, round_no: int | None, gaming_day: str | None, out: Path | None,
                 cameras: Path | None, rule_docs: Path | None, verify_dir: Path | None, seal: str | None, fail,
                 settings=None) -> None:
    """``settings`` (:class:`pipelines.settings.Settings`) gives the camera map and the rule documents an option does not."""
    from pipelines.evidence.gather import EvidenceError
    from pipelines.evidence.pack import verify, write_pack

    if verify_dir is not None:
        if not verify_dir.is_dir():  # nothing to check is "could not run" (2), not a pack that fails its seal (1)
            fail(f"--verify {verify_dir}: no such folder")
        verdict = verify(verify_dir, seal)
        for note in verdict.notes:
            typer.echo(f"  {note}")
        if not verdict.ok:
            for problem in verdict.problems:
                typer.secho(f"FAILED: {problem}", err=True, fg=typer.colors.RED)
            raise typer.Exit(1)
        typer.echo(f"verified: every file of {verify_dir} is as sealed (seal {verdict.seal})")
        return
    missing = [name for name, v in (("--db", db), ("--table", table), ("--round", round_no)) if v is None]
    if missing:
        fail(f"to write a pack give {', '.join(missing)} (or --verify DIR to check one)")
    if out is None:
        out = default_folder(table, round_no)
        if out is None:
            fail("give --out DIR (the folder for the pack)")
    day = None
    if gaming_day is not None:
        from pipelines.audit.scope import ScopeError, parse_gaming_day

        try:
            day = parse_gaming_day(gaming_day, "--gaming-day")  # the audit's reading: a date a round can have
        except ScopeError as exc:
            fail(str(exc))
    try:
        folder, the_seal = write_pack(db, table, round_no, out, day,
                                      cameras if cameras is not None else getattr(settings, "cameras", None),
                                      rule_docs if rule_docs is not None else getattr(settings, "rule_docs", None))
    except (EvidenceError, CameraMapError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the pack into {out}: {exc.strerror or exc}")
    typer.echo(f"evidence pack: {folder / 'index.html'}")
    typer.echo(f"seal (SHA-256 of {folder / 'SHA256SUMS'}): {the_seal}")
    typer.echo(f"check it with: pitaudit evidence --verify {folder} --seal {the_seal}")
