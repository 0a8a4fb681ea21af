"""The text of a rule clause, read from the casino's own rule documents.

The rule texts belong to the casino: the rule sets cite their clauses by id (``TBAC-7.7``,
``BJ-4.10.1.2``, ``THB-G-SETTLEMENT``) and pitaudit ships no copy of them. Where a person should read
a clause (``pitaudit clause``, a dispute evidence pack), its text comes from a folder of plain-text
documents the user configures (``PITAUDIT_RULE_DOCS``); with none configured, only the id is shown.

A folder maps each clause prefix to a document by an ``index.toml`` (``TBAC = "baccarat.txt"``, or a
table with ``file``, ``title`` and ``sections`` for documents cited by heading), and, for prefixes
the index does not name, by recognising a document from its title (the rule sets' titles, passed in
by the caller). Two shapes of document are understood, those of the rule texts pitaudit cites:

- numbered clauses (``7.7.``, ``- 4.10.1.2.``, ``### 1.1.``): a clause is its own line and every line
  up to the next clause of the same or a higher level, so its sub-clauses come with it; a list item
  (``HTB-4.11.2.i``) is the item's lines within its clause. Tables of contents, table rows and
  appendices that start with a number are told apart from clauses by the numbering itself;
- headings (a player's guide with no clause numbers): ``THB-G-FLOP-WAGER`` is the section under the
  heading ``FLOP WAGER`` (or the one heading that starts with those words), up to the next heading;
  ``sections`` in the index names the heading (and where the section ends) when the id does not.

Parsing is pure (text in, text out); only :meth:`RuleDocuments.open` and the lazy reading of a
document touch the file system.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

RULE_DOCS_ENV = "PITAUDIT_RULE_DOCS"  # read by pipelines.settings (``Settings.rule_docs``)
INDEX_FILE = "index.toml"
DOCUMENT_SUFFIXES = (".txt", ".md")
_RECOGNITION_CHARS = 6000  # a title is looked for near the start of a document


class RuleDocsError(Exception):
    """The folder of rule documents cannot be used (a one-line reason for a person)."""


# --- numbered clauses ---------------------------------------------------------------------------------

# a clause number at the start of a line (or of a table row), after an optional list marker, heading or bold
_NUMBER = re.compile(r"^\s*(?:\|\s*)?(?:[-*+]\s*)?(?:#{1,6}\s*)?(?:\*\*)?(\d{1,3}(?:\.\d{1,3})*)(?:\.(?!\d)|(?=\s))")
# a table-of-contents entry: a page number after a tab or dot leaders at the end of the line
_TOC = re.compile(r"(?:\t|\.{3,})[\s.\-=]*\d{1,3}\s*$")
_APPENDIX = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?APPENDIX\b", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+]\s*)?\(?([ivx]{1,5}|[a-z])[.)](?:\s|$)")


def clause_spans(text: str) -> dict[tuple[int, ...], tuple[int, int]]:
    """Every numbered clause of a document: its number -> (first line, line after its last), 0-based.

    A line is a clause when its number fits the numbering so far: a sub-clause follows its parent
    and its elder siblings, and a top-level clause ``N`` is the last line numbered ``N`` after
    section ``N-1`` and before the first sub-clause of ``N`` (so a table of contents, or a table whose
    rows begin with numbers, is not taken for one). A clause ends before the next clause of the same
    or a higher level, or an appendix.
    """
    lines = text.splitlines()
    candidates: list[tuple[int, tuple[int, ...]]] = []
    for i, line in enumerate(lines):
        m = _NUMBER.match(line)
        if m and not _TOC.search(line):
            candidates.append((i, tuple(int(p) for p in m.group(1).split("."))))

    # sub-clauses (two levels or more): in order, each after its parent or its elder sibling
    subs: dict[tuple[int, ...], int] = {}
    tops_seen: set[int] = set()
    last: tuple[int, ...] | None = None
    for i, num in candidates:
        if len(num) == 1:
            tops_seen.add(num[0])
            continue
        if num in subs or num[0] not in tops_seen:
            continue
        if last is not None and (num <= last or num[0] < last[0]):
            continue
        if len(num) > 2 and num[:-1] not in subs:
            continue
        subs[num] = i
        last = num

    # top-level clauses 1, 2, ... in turn: section N's line lies after everything of section N-1 and
    # before the first sub-clause of N (or of any later section); the last such line is the heading
    appendix = next((i for i, line in enumerate(lines) if _APPENDIX.match(line)), len(lines))
    first_sub: dict[int, int] = {}
    last_sub: dict[int, int] = {}
    for num, i in subs.items():
        first_sub[num[0]] = min(first_sub.get(num[0], i), i)
        last_sub[num[0]] = max(last_sub.get(num[0], i), i)
    tops: dict[tuple[int, ...], int] = {}
    lower = -1
    n = 1
    while n in tops_seen or n in first_sub:
        later = [i for k, i in first_sub.items() if k >= n]
        upper = min(later) if later else appendix
        inside = [i for i, num in candidates if num == (n,) and lower < i < upper]
        if inside:
            tops[(n,)] = inside[-1]
        elif n not in first_sub:
            break  # no section n: what follows is not the document's numbering (a table, an appendix)
        lower = max(tops.get((n,), lower), last_sub.get(n, lower))
        n += 1
    ordered = sorted({**tops, **subs}.items(), key=lambda kv: kv[1])

    spans: dict[tuple[int, ...], tuple[int, int]] = {}
    for k, (num, start) in enumerate(ordered):
        end = appendix if appendix > start else len(lines)
        for other, other_start in ordered[k + 1:]:
            if len(other) <= len(num):
                end = min(end, other_start)
                break
        spans[num] = (start, end)
    return spans


def _tidy(lines: list[str]) -> str:
    """The lines without trailing spaces, runs of blank lines folded to one, no blank edges."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _number(text: str) -> tuple[int, ...] | None:
    parts = text.strip().strip(".").split(".")
    return tuple(int(p) for p in parts) if parts and all(p.isdigit() for p in parts) else None


def numbered_range(text: str, first: str, last: str) -> str | None:
    """Clauses ``first`` to ``last`` (``"7.5"``, ``"7.8"``; ``last`` may give only its final parts:
    ``"4.14.2"``, ``"3"``), as one passage."""
    a, b = _number(first), _number(last)
    if a is None or b is None or len(b) > len(a):
        return None
    b = a[: len(a) - len(b)] + b
    spans = clause_spans(text)
    if a not in spans or b not in spans or spans[b][0] < spans[a][0]:
        return None
    return _tidy(text.splitlines()[spans[a][0]:spans[b][1]])


def numbered_clause(text: str, number: str) -> str | None:
    """The clause ``number`` (``"7.7"``, ``"4.11.2.i"``) of a numbered document, with its sub-clauses;
    a range (``"7.5-7.8"``, ``"4.14.2-3"``) gives its clauses as one passage."""
    if "-" in number:
        first, _, last = number.partition("-")
        return numbered_range(text, first, last)
    parts = number.strip(".").split(".")
    item = None
    if parts and not parts[-1].isdigit():
        item = parts.pop().lower()
    if not parts or not all(p.isdigit() for p in parts):
        return None
    span = clause_spans(text).get(tuple(int(p) for p in parts))
    if span is None:
        return None
    lines = text.splitlines()[span[0]:span[1]]
    if item is None:
        return _tidy(lines)
    start = None
    for k, line in enumerate(lines[1:], start=1):
        m = _ITEM.match(line)
        if not m:
            continue
        if start is not None:
            return _tidy(lines[start:k])
        if m.group(1) == item:
            start = k
    return _tidy(lines[start:]) if start is not None else None


# --- documents cited by heading -----------------------------------------------------------------------

def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[A-Z0-9]+", text.upper()))


def is_heading(line: str) -> bool:
    """A heading of a document without clause numbers: a short line in capitals, no tab, no digit."""
    bare = line.strip().strip("*#").strip()
    return (bool(bare) and len(bare) <= 80 and "\t" not in bare and not any(c.isdigit() for c in bare)
            and any(c.isalpha() for c in bare) and bare == bare.upper())


@dataclass(frozen=True)
class Section:
    """Where a heading-cited clause is: its heading, and optionally the heading it runs up to."""

    heading: str
    until: str | None = None


def heading_clause(text: str, key: str, sections: Mapping[str, Section] | None = None) -> str | None:
    """The section ``key`` (``"FLOP-WAGER"``) of a document cited by its headings.

    ``sections`` (from the index) names the heading of a key, and where its section ends; otherwise
    the key's words must be the heading's words, or the start of exactly one heading's words.
    A section runs from its heading to the next heading (or to ``until``).
    """
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if is_heading(line)]
    wanted = (sections or {}).get(key.upper())
    start = None
    if wanted is not None:
        target = _words(wanted.heading)
        start = next((i for i, line in enumerate(lines) if _words(line) == target), None)
    else:
        target = _words(key)
        start = next((i for i in heads if _words(lines[i]) == target), None)
        if start is None and target:
            starting = [i for i in heads if _words(lines[i])[: len(target)] == target]
            start = starting[0] if len(starting) == 1 else None
    if start is None:
        return None
    end = len(lines)
    if wanted is not None and wanted.until:
        stop = _words(wanted.until)
        end = next((i for i in range(start + 1, len(lines)) if _words(lines[i]) == stop), end)
    else:
        end = next((i for i in heads if i > start), end)
    return _tidy(lines[start:end])


# --- the folder ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Clause:
    """A clause's text and the document it was read from."""

    clause_id: str
    text: str
    document: str  # the file name within the folder
    title: str | None = None


@dataclass(frozen=True)
class Document:
    """One rule document of the folder and how its clauses are cited."""

    prefix: str
    path: Path
    title: str | None = None
    sections: Mapping[str, Section] = field(default_factory=dict)


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def read_document(path: Path) -> str:
    """A rule document's text (UTF-8; a byte-order mark dropped; undecodable bytes replaced)."""
    return path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")


def parse_index(data: Mapping[str, object], folder: Path) -> dict[str, Document]:
    """The documents an ``index.toml`` names: ``PREFIX = "file"`` or ``[PREFIX]`` with ``file``,
    optional ``title`` and ``[PREFIX.sections]`` (``KEY = "HEADING"`` or ``{heading, until}``)."""
    docs: dict[str, Document] = {}
    for prefix, entry in data.items():
        if isinstance(entry, str):
            entry = {"file": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise RuleDocsError(f"{folder / INDEX_FILE}: {prefix} must name a file (PREFIX = \"file.txt\")")
        unknown = set(entry) - {"file", "title", "sections"}
        if unknown:
            raise RuleDocsError(f"{folder / INDEX_FILE}: {prefix} has unknown keys {sorted(unknown)}")
        sections: dict[str, Section] = {}
        for key, value in (entry.get("sections") or {}).items():
            if isinstance(value, str):
                sections[key.upper()] = Section(value)
            elif isinstance(value, dict) and isinstance(value.get("heading"), str) and set(value) <= {"heading", "until"}:
                sections[key.upper()] = Section(value["heading"], value.get("until"))
            else:
                raise RuleDocsError(f"{folder / INDEX_FILE}: {prefix}.sections.{key} must be a heading or {{heading, until}}")
        name = Path(entry["file"])
        path = folder / name
        if name.is_absolute() or ".." in name.parts:
            raise RuleDocsError(f"{folder / INDEX_FILE}: {prefix} names a file outside the folder: {entry['file']}")
        if not path.is_file():
            raise RuleDocsError(f"{folder / INDEX_FILE}: {prefix} names {entry['file']}, which is not in the folder")
        title = entry.get("title")
        docs[prefix.upper()] = Document(prefix.upper(), path, title if isinstance(title, str) else None, sections)
    return docs


def recognise(texts: Mapping[Path, str], titles: Mapping[str, str]) -> dict[str, Document]:
    """Documents recognised by title: the prefix whose title appears near the start of exactly one file
    (letters and digits compared, case and punctuation ignored, so line breaks in a title do not matter)."""
    heads = {path: _normalised(text[:_RECOGNITION_CHARS]) for path, text in texts.items()}
    found: dict[str, Document] = {}
    for prefix, title in titles.items():
        key = _normalised(title)
        if not key:
            continue
        hits = [path for path, head in heads.items() if key in head]
        if len(hits) == 1:
            found[prefix.upper()] = Document(prefix.upper(), hits[0], title)
    return found


class RuleDocuments:
    """The casino's rule documents in one folder, looked up by clause id."""

    def __init__(self, folder: Path, documents: Mapping[str, Document]):
        self.folder = folder
        self.documents = dict(documents)
        self._texts: dict[Path, str] = {}

    @classmethod
    def open(cls, folder: Path, titles: Mapping[str, str] | None = None) -> RuleDocuments:
        """The documents of ``folder``: those its ``index.toml`` names, then those recognised by the
        ``titles`` (clause prefix -> document title) for the prefixes the index leaves out."""
        folder = Path(folder)
        if not folder.is_dir():
            raise RuleDocsError(f"the folder of rule documents {folder} does not exist")
        docs: dict[str, Document] = {}
        index = folder / INDEX_FILE
        if index.is_file():
            try:
                data = tomllib.loads(index.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise RuleDocsError(f"{index} is not valid TOML: {exc}") from None
            docs.update(parse_index(data, folder))
        found = cls(folder, docs)
        missing = {p.upper(): t for p, t in (titles or {}).items() if p.upper() not in docs}
        if missing:
            named = {d.path.resolve() for d in docs.values()}
            files = sorted(p for p in folder.iterdir()
                           if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES and p.resolve() not in named)
            found.documents.update(recognise({p: found._text(p) for p in files}, missing))
        return found

    def _text(self, path: Path) -> str:
        if path not in self._texts:
            self._texts[path] = read_document(path)
        return self._texts[path]

    def document_for(self, clause_id: str) -> tuple[Document, str] | None:
        """The document of a clause id and the rest of the id after its prefix (longest prefix first)."""
        cid = clause_id.strip().upper()
        for prefix in sorted(self.documents, key=len, reverse=True):
            if cid.startswith(prefix + "-") and len(cid) > len(prefix) + 1:
                return self.documents[prefix], clause_id.strip()[len(prefix) + 1:]
        return None

    def clause(self, clause_id: str) -> Clause | None:
        """The clause's text with its sub-clauses, or None when no document or no such clause."""
        found = self.document_for(clause_id)
        if found is None:
            return None
        doc, rest = found
        text = self._text(doc.path)
        if rest[:1].isdigit():
            body = numbered_clause(text, rest)
        else:
            body = heading_clause(text, rest, doc.sections)
        if not body:
            return None
        return Clause(clause_id.strip(), body, doc.path.name, doc.title)

    def text(self, clause_id: str) -> str | None:
        c = self.clause(clause_id)
        return c.text if c else None


def open_configured(folder: Path | None) -> RuleDocuments | None:
    """The rule documents of ``folder`` (say, the settings' folder), recognised against the shipped
    rule sets' titles; None when no folder is configured (show the clause id alone). A folder that is
    configured but unusable raises :class:`RuleDocsError`: a person asked for texts and should know."""
    if folder is None:
        return None
    return RuleDocuments.open(folder, catalogue_titles())


def catalogue_titles() -> dict[str, str]:
    """Each clause prefix of the shipped rule sets -> its document's title (the rule set's ``source``
    up to its first comma), to recognise the documents of a folder without an index."""
    from rulebook.catalogue import builtin

    cat = builtin()
    titles: dict[str, str] = {}
    for name in cat.names():
        for rs in cat.versions(name):
            title = rs.header.source.split(",")[0].strip()
            titles.setdefault(rs.header.clause_prefix, title)
    return titles
