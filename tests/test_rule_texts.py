"""Finding a clause's text in a folder of rule documents (pipelines.rule_texts, `pitaudit clause`).

The documents here are built by the tests, in the shapes of the casino's texts (a table of contents
with page numbers, list markers and indentation, a clause number glued to its text, a table whose
rows begin with numbers, roman-numbered items, a markdown table of clauses, an appendix that numbers
again, a guide cited by its headings): the project never reads the casino's own copies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.rule_texts import (
    RuleDocsError,
    RuleDocuments,
    clause_spans,
    catalogue_titles,
    heading_clause,
    numbered_clause,
    open_configured,
)

# A numbered rule text in the shape of the casino's (its wording is the test's own).
NUMBERED = """\
**CASINO DEVELOPMENT LTD**

No.: 01/02.03.2021

EXAMPLE CARD GAME RULES

TABLE OF CONTENTS

1. NAME OF THE GAME\t2
2.\tDEFINITIONS\t2
3. HOW TO PLAY.....\t5
4\tIRREGULARITIES\t- = 9



1. NAME OF THE GAME

Name of the Game: Example Card Game

2. **DEFINITIONS**

- 2.1. "Hand" means the cards dealt to a playing area.
- 2.2. "Pair" means two cards of the same rank.

3. HOW TO PLAY

3.1. Wagers are placed before the first card.
- 3.2. Splitting
 - 3.2.1. A player may split two cards of the same rank.
 - 3.2.2. A player may place a Pair wager when splitting, which wins if the second card of that hand is identical.
- 3.2.3.A player may split to form at most four hands:

  - 3.2.3.1. Aces are split once only.
- 3.3. The dealer draws according to the table below:

Dealer's points\tDealer draws if the third card is:
3\t1 - 2 - 3 - 4 - 5 - 6 - 7 - 9 - 10
4\t2 - 3 - 4 - 5 - 6 - 7
8 or 9\tNatural - no more cards

3.4. After the decisions, the player may decide to:

- i. Fold, losing the Ante; or
 - ii. Raise, placing twice the Ante.
3.5. The order of hands:

| 3.5.1.  | Royal Flush     | Ace to ten of one suit |
| 3.5.2.  | Straight Flush  | five in sequence of one suit |

4. IRREGULARITIES

- 4.1. A card dealt in error begins the next hand, a Free Hand.
- 4.2. In a Free Hand all wagers are removed.
- 4.2.1. The Free Hand may be the last of the shoe.

APPENDIX A

1. Layout for four players
2. Layout for six players
"""

GUIDE = """\
HOW TO PLAY

EXAMPLE POKER

THE FOLLOWING IS A SUMMARY OF THE RULES

You play against the dealer.

ANTE WAGER AND AN OPTIONAL BONUS WAGER

Place an Ante before the cards.

FLOP WAGER

Fold, or bet twice the Ante.

SETTLEMENT

The dealer shows two cards.

FOR THE BONUS WAGER

WINNING BONUS WAGER\tPAYMENT ODDS
2 Aces\t30 to 1

ORDER OF POKER HANDS

1. ROYAL FLUSH

BONUS JACKPOT

Paid to every other jackpot wager.

BONUS PAYOUTS

FOUR OF A KIND $500
"""

INDEX = """\
EX = "example-rules.txt"

[EXG]
file = "guide.txt"
title = "Example poker, a player's guide"

[EXG.sections]
BONUS = "FOR THE BONUS WAGER"
SETTLEMENT = { heading = "SETTLEMENT", until = "ORDER OF POKER HANDS" }
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "rules"
    docs.mkdir()
    (docs / "example-rules.txt").write_text(NUMBERED, encoding="utf-8")
    (docs / "guide.txt").write_text(GUIDE, encoding="utf-8")
    (docs / "index.toml").write_text(INDEX, encoding="utf-8")
    return docs


def test_a_clause_comes_with_its_sub_clauses_and_stops_at_its_next_sibling(folder):
    text = RuleDocuments.open(folder).text("EX-3.2")
    assert text.splitlines()[0] == "- 3.2. Splitting"
    assert "3.2.2. A player may place a Pair wager when splitting" in text
    assert "3.2.3.1. Aces are split once only." in text  # two levels down, after a blank line
    assert "3.3." not in text and "dealer draws" not in text


def test_a_leaf_clause_is_only_itself():
    text = numbered_clause(NUMBERED, "3.2.2")
    assert text == (" - 3.2.2. A player may place a Pair wager when splitting, which wins if the second card "
                    "of that hand is identical.")


def test_a_number_glued_to_its_text_is_a_clause():
    assert numbered_clause(NUMBERED, "3.2.3").startswith("- 3.2.3.A player may split to form at most four hands:")


def test_table_rows_that_begin_with_numbers_stay_inside_their_clause():
    text = numbered_clause(NUMBERED, "3.3")
    assert "3\t1 - 2 - 3" in text and "8 or 9\tNatural" in text
    assert "3.4." not in text
    # ... and the row "4\t2 - 3 ..." is not taken for the top-level clause 4
    assert numbered_clause(NUMBERED, "4").startswith("4. IRREGULARITIES")


def test_a_top_level_clause_is_the_body_not_the_table_of_contents():
    assert numbered_clause(NUMBERED, "1") == "1. NAME OF THE GAME\n\nName of the Game: Example Card Game"
    assert numbered_clause(NUMBERED, "2").startswith("2. **DEFINITIONS**\n\n- 2.1.")


def test_the_last_clause_ends_at_the_appendix_whose_numbering_starts_again():
    assert numbered_clause(NUMBERED, "4.2") == (
        "- 4.2. In a Free Hand all wagers are removed.\n- 4.2.1. The Free Hand may be the last of the shoe.")
    assert "Layout" not in numbered_clause(NUMBERED, "4")
    assert numbered_clause(NUMBERED, "1").count("Layout") == 0


def test_a_list_item_of_a_clause():
    assert numbered_clause(NUMBERED, "3.4.i") == "- i. Fold, losing the Ante; or"
    assert numbered_clause(NUMBERED, "3.4.ii") == " - ii. Raise, placing twice the Ante."
    assert numbered_clause(NUMBERED, "3.4.iii") is None


def test_clauses_in_a_markdown_table_and_a_range():
    assert numbered_clause(NUMBERED, "3.5.2") == "| 3.5.2.  | Straight Flush  | five in sequence of one suit |"
    assert numbered_clause(NUMBERED, "4.1-4.2").splitlines() == [
        "- 4.1. A card dealt in error begins the next hand, a Free Hand.",
        "- 4.2. In a Free Hand all wagers are removed.",
        "- 4.2.1. The Free Hand may be the last of the shoe.",
    ]
    assert numbered_clause(NUMBERED, "3.2.1-2").splitlines()[-1].startswith(" - 3.2.2.")
    assert numbered_clause(NUMBERED, "4.2-4.1") is None


def test_a_missing_clause_or_an_unknown_prefix_is_none(folder):
    docs = RuleDocuments.open(folder)
    assert docs.clause("EX-3.9") is None
    assert docs.clause("EX-5") is None  # the appendix's "2." is not a fifth section
    assert docs.clause("EX-3.2.9") is None
    assert docs.clause("ZZ-1.1") is None
    assert docs.clause("EX-") is None


def test_the_clause_names_its_document(folder):
    c = RuleDocuments.open(folder).clause("ex-4.1")
    assert c is not None and c.document == "example-rules.txt" and c.clause_id == "ex-4.1"


def test_a_guide_is_cited_by_its_headings(folder):
    docs = RuleDocuments.open(folder)
    assert docs.text("EXG-FLOP-WAGER") == "FLOP WAGER\n\nFold, or bet twice the Ante."
    # the one heading that starts with the id's words
    assert docs.text("EXG-ANTE").startswith("ANTE WAGER AND AN OPTIONAL BONUS WAGER\n\nPlace an Ante")
    # named in the index, with a table row in capitals that is not a heading (it has a tab)
    assert docs.text("EXG-BONUS") == "FOR THE BONUS WAGER\n\nWINNING BONUS WAGER\tPAYMENT ODDS\n2 Aces\t30 to 1"
    # named in the index with where it ends: past the sub-heading
    settlement = docs.text("EXG-SETTLEMENT")
    assert settlement.startswith("SETTLEMENT") and "30 to 1" in settlement and "ROYAL" not in settlement
    assert docs.clause("EXG-SETTLEMENT").title == "Example poker, a player's guide"
    # two headings start with BONUS: ambiguous, so not guessed
    assert heading_clause(GUIDE, "BONUS") is None
    assert docs.text("EXG-BONUS-JACKPOT") == "BONUS JACKPOT\n\nPaid to every other jackpot wager."
    assert docs.text("EXG-NOTHING") is None


def test_without_an_index_documents_are_recognised_by_their_title(tmp_path):
    (tmp_path / "a.txt").write_text(NUMBERED, encoding="utf-8")
    (tmp_path / "b.md").write_text(GUIDE, encoding="utf-8")
    titles = {"EX": "Example Card Game Rules", "EXG": "How to play example poker", "ZZ": "Some other rules"}
    docs = RuleDocuments.open(tmp_path, titles)
    assert sorted(docs.documents) == ["EX", "EXG"]
    assert docs.text("EX-2.2") == '- 2.2. "Pair" means two cards of the same rank.'
    assert docs.text("EXG-FLOP-WAGER").startswith("FLOP WAGER")


def test_a_title_found_in_two_documents_recognises_neither(tmp_path):
    (tmp_path / "a.txt").write_text(NUMBERED, encoding="utf-8")
    (tmp_path / "copy.txt").write_text(NUMBERED, encoding="utf-8")
    assert RuleDocuments.open(tmp_path, {"EX": "Example Card Game Rules"}).documents == {}


def test_the_index_wins_over_recognition(folder):
    (folder / "other.txt").write_text(NUMBERED.replace("Wagers are placed", "Bets go down"), encoding="utf-8")
    docs = RuleDocuments.open(folder, {"EX": "Example Card Game Rules"})
    assert docs.documents["EX"].path.name == "example-rules.txt"
    assert docs.text("EX-3.1") == "3.1. Wagers are placed before the first card."


@pytest.mark.parametrize("index, reason", [
    ('EX = "missing.txt"', "names missing.txt, which is not in the folder"),
    ('EX = "../outside.txt"', "names a file outside the folder"),
    ("EX = 3", "must name a file"),
    ('[EX]\nfile = "example-rules.txt"\npage = 2', "unknown keys ['page']"),
    ("EX = ", "is not valid TOML"),
])
def test_a_bad_index_is_a_one_line_reason(folder, index, reason):
    (folder / "index.toml").write_text(index, encoding="utf-8")
    with pytest.raises(RuleDocsError, match=None) as info:
        RuleDocuments.open(folder)
    assert reason in str(info.value)
    assert "\n" not in str(info.value).strip()


def test_a_folder_that_does_not_exist(tmp_path):
    with pytest.raises(RuleDocsError, match="does not exist"):
        RuleDocuments.open(tmp_path / "nope")


def test_the_setting_names_the_folder(monkeypatch):
    from pipelines.settings import load_settings

    monkeypatch.delenv("PITAUDIT_RULE_DOCS", raising=False)
    assert load_settings().rule_docs is None
    monkeypatch.setenv("PITAUDIT_RULE_DOCS", "")
    assert load_settings().rule_docs is None
    monkeypatch.setenv("PITAUDIT_RULE_DOCS", "/srv/rules")
    assert load_settings().rule_docs == Path("/srv/rules")


def test_the_shipped_rule_sets_give_a_title_for_every_clause_prefix(tmp_path):
    titles = catalogue_titles()
    assert set(titles) == {"TBAC", "BJ", "HTB", "MBS", "THB-G"}
    assert titles["BJ"] == "Blackjack Game Rules"
    assert all(t and "/" not in t for t in titles.values())  # a title, not a path
    # a folder holding a document with that title, and no index
    (tmp_path / "bj.txt").write_text(NUMBERED.replace("EXAMPLE CARD GAME RULES", "BLACKJACK\nGAME RULES"),
                                     encoding="utf-8")
    docs = open_configured(tmp_path)
    assert sorted(docs.documents) == ["BJ"]
    assert docs.text("BJ-4.1") == "- 4.1. A card dealt in error begins the next hand, a Free Hand."
    assert open_configured(None) is None


# --- a round trip over generated documents -------------------------------------------------------------

_word = st.sampled_from(["the", "wager", "dealer", "card", "shall", "be", "paid", "Player", "hand", "odds"])
_body = st.lists(_word, min_size=1, max_size=6).map(lambda ws: " ".join(ws).capitalize() + ".")


@st.composite
def _documents(draw):
    """A rule text with a random clause tree, rendered with the markers, indents and gaps the casino's
    texts use, and for each clause the lines it must come back as."""
    lines: list[str] = []
    owned: dict[tuple[int, ...], list[int]] = {}  # clause -> indices of the lines it spans

    def render(number: tuple[int, ...], depth: int) -> None:
        start = len(lines)
        marker = draw(st.sampled_from(["", "- ", "* "])) if depth else ""
        indent = " " * draw(st.integers(0, 3)) if depth else ""
        label = ".".join(map(str, number)) + "."
        glue = draw(st.sampled_from([" ", ""])) if depth >= 2 else " "
        lines.append(f"{indent}{marker}{label}{glue}{draw(_body)}")
        if draw(st.booleans()):
            lines.append(draw(_body))  # a continuation line of the clause
        if draw(st.booleans()):
            lines.append("")
        if depth < 3:
            for k in range(1, draw(st.integers(0, 3)) + 1):
                render(number + (k,), depth + 1)
        owned[number] = list(range(start, len(lines)))

    lines += ["RULES", "", "TABLE OF CONTENTS"]
    tops = draw(st.integers(1, 4))
    lines += [f"{n}. SECTION {n}\t{n + 1}" for n in range(1, tops + 1)]
    lines.append("")
    for n in range(1, tops + 1):
        render((n,), 0)
    return "\n".join(lines), lines, owned


@settings(max_examples=60, deadline=None)
@given(_documents())
def test_every_generated_clause_comes_back_exactly(doc):
    text, lines, owned = doc
    assert set(clause_spans(text)) == set(owned)
    for number, idx in owned.items():
        expected = "\n".join(lines[i].rstrip() for i in idx).strip("\n")
        assert numbered_clause(text, ".".join(map(str, number))) == expected


# --- the command ---------------------------------------------------------------------------------------

runner = CliRunner()


def test_the_clause_command_prints_the_text(folder):
    result = runner.invoke(app, ["clause", "EX-3.2.2", "--rule-docs", str(folder)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == numbered_clause(NUMBERED, "3.2.2").strip()


def test_the_clause_command_reads_the_setting(folder, monkeypatch):
    monkeypatch.setenv("PITAUDIT_RULE_DOCS", str(folder))
    result = runner.invoke(app, ["clause", "EXG-FLOP-WAGER"])
    assert result.exit_code == 0, result.output
    assert "Fold, or bet twice the Ante." in result.output


def test_the_clause_command_without_a_folder_is_one_line(monkeypatch):
    monkeypatch.delenv("PITAUDIT_RULE_DOCS", raising=False)
    result = runner.invoke(app, ["clause", "TBAC-7.7"])
    assert result.exit_code == 2
    assert "no folder of rule documents is configured" in result.output
    assert "TBAC-7.7" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_clause_command_for_a_clause_not_there(folder):
    result = runner.invoke(app, ["clause", "EX-9.9", "--rule-docs", str(folder)])
    assert result.exit_code == 1
    assert result.output.strip() == "pitaudit: clause EX-9.9 is not in example-rules.txt"
    result = runner.invoke(app, ["clause", "TBAC-7.7", "--rule-docs", str(folder)])
    assert result.exit_code == 1 and "no rule document" in result.output


def test_the_clause_command_names_the_references_that_are_pitaudits_own(folder):
    result = runner.invoke(app, ["clause", "FORMATS-EVENT-SEQ", "--rule-docs", str(folder)])
    assert result.exit_code == 1 and "docs/formats.md" in result.output
    result = runner.invoke(app, ["clause", "LIMIT-SIGN"])
    assert result.exit_code == 1 and "posted limit sign" in result.output
