"""``lines_at`` (the quarantined lines re-read at publish, only the wanted ones) gives the text ``iter_lines`` gives the
same lines, whatever the bytes: line ends (LF, CRLF, a lone CR), BOMs at the file's and a line's start, bytes that are
not UTF-8, lines over the length limit, a last line without its end, blocks cut anywhere."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from pipelines.ingest import lines as lines_module
from pipelines.ingest.lines import _lines_by_chunks, iter_lines, lines_at

PIECES = st.sampled_from([b"a", b"xyz", b",", b"\r", b"\r\n", b"\n", b"\n\n", b"\xef\xbb\xbf", b"\xff", b"\xe2\x82",
                          b"\xc3\xa9", b"\x00", b"{\"k\": 1}", b" ", b"\xe2\x82\xac"])


def _all_lines(path) -> dict[int, str]:
    out = {}
    for chunk in iter_lines(path):
        out.update(zip(chunk.line_numbers().to_list(), chunk.lines.to_list()))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(PIECES, max_size=60), chunk=st.integers(1, 40), pick=st.data())
def test_the_wanted_lines_are_those_iter_lines_reads(tmp_path_factory, monkeypatch, pieces, chunk, pick):
    # a small length limit, so that over-long lines (cut, or read the reference way) come up
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(lines_module, "RAW_KEEP_BYTES", 5)
    path = tmp_path_factory.mktemp("lines") / "f.csv"
    path.write_bytes(b"".join(pieces))
    every = _all_lines(path)
    wanted = pick.draw(st.sets(st.integers(1, len(every) + 3), max_size=8))
    expected = {n: t for n, t in every.items() if n in wanted}
    assert lines_at(path, wanted, chunk_bytes=chunk) == expected
    assert _lines_by_chunks(path, wanted) == expected if wanted else True


def test_a_long_file_is_read_only_up_to_the_last_line_wanted(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"".join(f"line {i}\r\n".encode() for i in range(1, 100_001)))
    assert lines_at(path, {3, 70_000}) == {3: "line 3", 70_000: "line 70000"}
    assert lines_at(path, {100_001, 100_000}) == {100_000: "line 100000"}
    assert lines_at(path, set()) == {}


def test_a_bom_cut_by_the_first_block_is_still_a_bom(tmp_path):
    """A file's BOM is taken off only when the first block holds all of it: blocks of 1 or 2 bytes read a file of a BOM
    alone as one line of nothing (found by the property above: lines_at gave ``{1: ''}``, iter_lines with 1 MiB
    blocks no line)."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"\xef\xbb\xbf")
    assert lines_at(path, {1}, chunk_bytes=1) == {}
    assert [len(c) for c in iter_lines(path, chunk_bytes=1)] in ([], [0])
    path.write_bytes(b"\xef\xbb\xbfa\nb")
    assert lines_at(path, {1, 2}, chunk_bytes=2) == {1: "a", 2: "b"}
    assert [t for c in iter_lines(path, chunk_bytes=2) for t in c.lines.to_list()] == ["a", "b"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(PIECES, max_size=80), chunk=st.integers(1, 40), most=st.integers(1, 6))
def test_chunks_of_at_most_some_lines_hold_the_same_lines_numbered_alike(tmp_path_factory, monkeypatch, pieces, chunk,
                                                                         most):
    """``chunk_lines`` cuts what is read into chunks of at most that many lines (the ingest's bound on what a parse
    holds): the same lines, numbers, undecodable and over-long marks as the chunks read whole."""
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 12)
    monkeypatch.setattr(lines_module, "RAW_KEEP_BYTES", 5)
    path = tmp_path_factory.mktemp("lines") / "f.csv"
    path.write_bytes(b"".join(pieces))

    def flat(chunks):
        out = []
        for c in chunks:
            numbers = c.line_numbers().to_list()
            out += [(n, t, i in c.not_utf8, c.too_long.get(i)) for i, (n, t) in enumerate(zip(numbers, c.lines))]
        return out

    sliced = list(iter_lines(path, chunk_bytes=chunk, chunk_lines=most))
    assert all(len(c) <= most for c in sliced)
    assert flat(sliced) == flat(iter_lines(path, chunk_bytes=chunk))
