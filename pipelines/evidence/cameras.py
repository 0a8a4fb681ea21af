"""Which cameras watch a table, and the stretch of video a dispute needs: from the configuration, never guessed.

The map is a TOML file (``--cameras FILE``, or the ``cameras`` setting: ``PITAUDIT_CAMERAS``), e.g.::

    lead_seconds = 30            # video before betting opened (default 30)
    trail_seconds = 30           # video after the round was settled (default 30)

    [tables]
    "BAC-01" = ["CAM-0101", "CAM-0102"]
    "BJ-01"  = ["CAM-0201"]

Unknown keys are refused (a misspelt ``lead_second`` must not silently become the default). A table the map
does not name gets the window all the same, with no camera id: surveillance still knows where to look.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_LEAD_SECONDS = 30
DEFAULT_TRAIL_SECONDS = 30


class CameraMapError(ValueError):
    """The camera map cannot be read; a one-line reason."""


@dataclass(frozen=True)
class CameraMap:
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lead_seconds: int = DEFAULT_LEAD_SECONDS
    trail_seconds: int = DEFAULT_TRAIL_SECONDS
    source: str | None = None  # the file it was read from

    def cameras(self, table_id: str) -> tuple[str, ...]:
        return self.tables.get(table_id, ())


def parse_camera_map(text: str, source: str | None = None) -> CameraMap:
    """A camera map from TOML text (see the module docstring); :class:`CameraMapError` when it is not one."""
    where = f" in {source}" if source else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CameraMapError(f"the camera map{where} is not valid TOML: {exc}") from None
    unknown = set(data) - {"tables", "lead_seconds", "trail_seconds"}
    if unknown:
        raise CameraMapError(f"the camera map{where} has unknown key(s): {', '.join(sorted(unknown))} "
                             "(expected lead_seconds, trail_seconds and a [tables] section)")
    seconds = {}
    for key, default in (("lead_seconds", DEFAULT_LEAD_SECONDS), ("trail_seconds", DEFAULT_TRAIL_SECONDS)):
        v = data.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 3600:
            raise CameraMapError(f"{key}{where} must be a whole number of seconds from 0 to 3600, got {v!r}")
        seconds[key] = v
    tables = data.get("tables", {})
    if not isinstance(tables, dict):
        raise CameraMapError(f"[tables]{where} must map table ids to lists of camera ids")
    out: dict[str, tuple[str, ...]] = {}
    for table, cams in tables.items():
        if isinstance(cams, str):
            cams = [cams]
        if not isinstance(cams, list) or not all(isinstance(c, str) and c for c in cams):
            raise CameraMapError(f"table {table!r}{where} must map to a list of camera ids (text), got {cams!r}")
        out[table] = tuple(cams)
    return CameraMap(out, seconds["lead_seconds"], seconds["trail_seconds"], source)


def load_camera_map(path: Path | None = None) -> CameraMap:
    """The map at ``path`` (``--cameras``, else the ``cameras`` setting), else an empty map (windows without camera ids)."""
    if path is None:
        return CameraMap()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CameraMapError(f"cannot read the camera map {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8; a map saved in Latin-1, or a binary file named by mistake
        raise CameraMapError(f"the camera map {path} is not UTF-8 text (byte {exc.start:,})") from None
    return parse_camera_map(text, str(path))


def _parse(ts: str | None) -> dt.datetime | None:
    return None if ts is None else dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))


def video_window(round_info: dict, cards: list[dict], cams: CameraMap) -> dict:
    """The stretch of video to pull: from betting open (or the first event seen) less the lead, to the settlement
    (or the last event seen) plus the trail; in UTC and in the table's local time; with the cameras of the table."""
    times = [t for t in (_parse(round_info.get("bets_open_at")), _parse(round_info.get("bets_closed_at")),
                         _parse(round_info.get("settled_at"))) if t is not None]
    times += [t for t in (_parse(c.get("ts")) for c in cards) if t is not None]
    offset = round_info.get("utc_offset_minutes")
    window = {"cameras": list(cams.cameras(round_info["table_id"])), "lead_seconds": cams.lead_seconds,
              "trail_seconds": cams.trail_seconds, "camera_map": cams.source, "from_utc": None, "to_utc": None,
              "from_local": None, "to_local": None, "utc_offset_minutes": offset}
    if not times:
        return window
    start = min(times) - dt.timedelta(seconds=cams.lead_seconds)
    end = max(times) + dt.timedelta(seconds=cams.trail_seconds)
    window["from_utc"] = start.isoformat().replace("+00:00", "Z")
    window["to_utc"] = end.isoformat().replace("+00:00", "Z")
    if offset is not None:
        zone = dt.timezone(dt.timedelta(minutes=int(offset)))
        window["from_local"] = start.astimezone(zone).isoformat()
        window["to_local"] = end.astimezone(zone).isoformat()
    return window
