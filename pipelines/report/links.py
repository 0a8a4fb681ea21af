"""Where a round's evidence pack lives beside the report, and how to link to it: one rule for both sides.

The layout (docs/report.md, "Evidence packs"): ``<report folder>/evidence/<table segment>/<round_no>/index.html``,
written by ``pitaudit evidence --db FILE --table ID --round N --out <report folder>/evidence/<table segment>/<round_no>``.

A table id comes from the input, so it is made a safe single path segment: percent-encoded (RFC 3986; letters,
digits and ``-_.~`` stay), with a leading dot encoded too (no ``.``, ``..`` or hidden folder). ``BAC-01`` stays
``BAC-01``; ``../x`` becomes ``%2E.%2Fx``. The link is that path percent-encoded once more, because a browser
decodes an href before it opens the file. A file system refuses a name over 255 bytes, so a segment longer than
``SEGMENT_MAX`` keeps its first characters and ends with ``%%`` and a SHA-256 of the id: one long id in a log must
not stop a night's publish, and ``%%`` never occurs in a percent-encoding, so no other id's segment is the same.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import PurePosixPath
from urllib.parse import quote

EVIDENCE_DIR = "evidence"
SEGMENT_MAX = 120  # characters (ASCII) of a segment: far inside the 255 bytes of a file name
_HASHED_PREFIX = SEGMENT_MAX - 2 - 32


def table_segment(table_id: str) -> str:
    """The folder name of ``table_id`` under ``evidence/``: a single safe path segment."""
    seg = quote(table_id, safe="-_.~")
    if seg.startswith("."):
        seg = "%2E" + seg[1:]
    if len(seg) > SEGMENT_MAX:
        head = seg[:_HASHED_PREFIX]
        cut = head.rfind("%", len(head) - 2)  # never split a %XX
        head = head[:cut] if cut >= 0 else head
        seg = f"{head}%%{hashlib.sha256(table_id.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"
    return seg or "%00"


def evidence_relpath(table_id: str, round_no: int) -> PurePosixPath:
    """``evidence/<table segment>/<round_no>``: the pack's folder relative to the report's folder."""
    return PurePosixPath(EVIDENCE_DIR, table_segment(table_id), str(int(round_no)))


def evidence_href(table_id: str, round_no: int) -> str:
    """The relative link from report.html to the pack's index.html."""
    return f"{EVIDENCE_DIR}/{quote(table_segment(table_id), safe='')}/{int(round_no)}/index.html"


def evidence_command(table_id: str, round_no: int, db: str = "pitaudit.duckdb") -> str:
    """The shell command that writes the pack where the report links to it (run in the report's folder)."""
    out = evidence_relpath(table_id, round_no).as_posix()
    return (f"pitaudit evidence --db {shlex.quote(db)} --table {shlex.quote(table_id)} --round {int(round_no)} "
            f"--out {shlex.quote(out)}")


INVESTIGATIONS_DIR = "investigations"


def investigation_relpath(kind: str, subject_id: str, first: str, last: str) -> PurePosixPath:
    """``investigations/<player|dealer|table>/<id segment>/<first>_<last>``: the investigation of a statistical
    finding's subject over its window, relative to the report's folder (the id made safe as a table's is)."""
    return PurePosixPath(INVESTIGATIONS_DIR, kind, table_segment(subject_id), f"{first}_{last}")


def investigation_href(kind: str, subject_id: str, first: str, last: str) -> str:
    """The relative link from report.html to that investigation's index.html."""
    return f"{INVESTIGATIONS_DIR}/{kind}/{quote(table_segment(subject_id), safe='')}/{first}_{last}/index.html"
