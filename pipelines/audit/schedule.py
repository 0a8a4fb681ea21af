"""``pitaudit serve``: the nightly audit as a Prefect deployment with a cron schedule, served by this process.

The deployment carries only plain parameters (the input folder, the database, the output folder as absolute
paths; the gaming day's start), so the Prefect server can store them and start a run from the UI with others
(a backfill: ``from_day``/``to_day``). A run is the same flow as ``pitaudit audit`` (``pipelines.audit.flow``),
named by its gaming day, logging to the run (the UI shows its progress), publishing its summary and top
findings as artifacts. At most one run at a time (``concurrency_limit=1``; the writer lock would make a second
one wait anyway).

It needs a Prefect server the user runs (``prefect server start``, then ``PREFECT_API_URL`` pointing at it):
an embedded server lives only as long as one command, and a schedule needs one that stays. Without a server,
run ``pitaudit audit`` from cron or a systemd timer instead (README, "Every night").
"""

from __future__ import annotations

import re
from pathlib import Path

DEPLOYMENT_NAME = "nightly"
TAGS = ["pitaudit"]


class ScheduleError(ValueError):
    """The schedule cannot be served; one line."""


def check_schedule(cron: str, timezone: str) -> None:
    """A cron line of five fields and a time zone the tz database knows, or :class:`ScheduleError`."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if len(cron.split()) != 5 or not re.fullmatch(r"[0-9*/,\-A-Za-z ]+", cron):
        raise ScheduleError(f"--cron must be five fields (minute hour day month weekday), e.g. \"30 6 * * *\"; got {cron!r}")
    from prefect.client.schemas.schedules import CronSchedule

    try:
        CronSchedule(cron=cron)
    except ValueError:
        raise ScheduleError(f"--cron {cron!r} is not a valid cron line") from None
    if not _fires(cron):
        raise ScheduleError(f"--cron {cron!r} never fires (no date has that day in that month); e.g. \"30 6 * * *\"")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"--timezone must be a time zone such as Asia/Ho_Chi_Minh, got {timezone!r}") from None


def _fires(cron: str) -> bool:
    """Whether the cron line has a next date, as the scheduler (Prefect's own croniter) finds it. ``30 6 31 2 *`` (the
    31st of February) is well formed, and was served as a schedule that never ran: no run, no error, no night."""
    import datetime as dt

    try:
        from prefect._vendor.croniter import CroniterBadDateError, croniter
    except ImportError:  # Prefect without its vendored croniter: the check is a nicety
        return True
    try:
        croniter(cron, dt.datetime(2026, 1, 1)).get_next(dt.datetime)
    except CroniterBadDateError:
        return False
    return True


def nightly_deployment(input_dir: Path, db_path: Path, out_dir: Path, cron: str, timezone: str,
                       gaming_day_start: str = "06:00", name: str = DEPLOYMENT_NAME):
    """The deployment (a Prefect ``RunnerDeployment``, not yet registered): the audit flow, the schedule, the
    parameters. Nothing blocks and nothing is sent to a server here."""
    from prefect.schedules import Cron
    from prefect.types.entrypoint import EntrypointType

    from pipelines.audit.flow import audit_flow

    check_schedule(cron, timezone)
    parameters = {
        "input_dir": str(Path(input_dir).resolve()),
        "db_path": str(Path(db_path).resolve()),
        "out_dir": str(Path(out_dir).resolve()),
        "gaming_day_start": gaming_day_start,
    }
    return audit_flow.to_deployment(
        name=name,
        schedules=[Cron(cron, timezone=timezone)],
        parameters=parameters,
        concurrency_limit=1,
        tags=TAGS,
        description=f"pitaudit nightly audit of {parameters['input_dir']} into {parameters['db_path']}",
        entrypoint_type=EntrypointType.MODULE_PATH,
        _sync=True,  # a sync caller: never the coroutine (Prefect's dispatch guesses from any loop left running)
    )


def register(deployment) -> str:
    """Create (or update) the deployment on the server; returns its id. Does not block."""
    return str(deployment.apply(_sync=True))


def serve_forever(deployment) -> None:  # pragma: no cover - blocks until interrupted
    """Register the deployment and run its scheduled runs in this process until Ctrl-C."""
    from prefect import serve

    serve(deployment, print_starting_message=True)
