"""Which step of the engine's narrative each card of the device went to, and to which hand.

The engine narrates a round as text steps, each with its clause (:class:`rulebook.round.Step`); a step that
deals a card names it (``Card 3 8h to the Player``, ``seat 2 hand 1 hits: Kd, 18``, ``flop card 1: As``,
``burn 2c``). The pack draws the cards in the order they left the device, so each device event is paired with
the first step, from the last one paired onwards, that names that card (a burn: a step that says burn). The
narrative is the engine's; this module only reads it, and a card no step names is shown with no step rather
than with a guess.
"""

from __future__ import annotations

import re

from rulebook.cards import FOREIGN, NO_CARD, UNREADABLE, card_text

SUIT_SYMBOL = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
RANK_LABEL = {"T": "10"}


def _token(text: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9?])" + re.escape(text) + r"(?![A-Za-z0-9?])")


def hand_of(step_text: str) -> str | None:
    """The hand a card step deals to, read from the engine's words (None when the step does not say)."""
    t = step_text.strip()
    if re.match(r"(?i)burn\b", t):
        return "burn"
    m = re.search(r"\bto the (Player|Banker)\b", t)
    if m:
        return m.group(1)
    m = re.match(r"(seat \d+(?: hand \d+)?)", t)
    if m:
        return m.group(1)
    if re.match(r"(?i)dealer", t):
        return "dealer"
    m = re.match(r"(flop|turn|river|community)\b", t)
    if m:
        return f"board ({m.group(1)})"
    return None


def face(code: int | None, raw: str | None) -> dict:
    """How to draw a card: rank and suit symbol, red or black; an unreadable, foreign or missing read as itself."""
    if code is not None and 0 <= code < 52:
        text = card_text(code)
        return {"text": text, "rank": RANK_LABEL.get(text[0], text[0]), "suit": SUIT_SYMBOL[text[1]],
                "colour": "red" if text[1] in "dh" else "black", "valid": True}
    label = {UNREADABLE: "??", FOREIGN: raw or "XX", NO_CARD: "(not read)"}.get(code, raw or "?")
    return {"text": raw if raw is not None else label, "rank": label, "suit": "", "colour": "odd", "valid": False}


def _names(code: int | None, raw: str | None) -> list[str]:
    """What the engine may have written for this card."""
    if code is not None and 0 <= code < 52:
        return [card_text(code)]
    out = ["??", "XX"]
    if raw:
        out.insert(0, raw)
    return out


def card_rows(events: list[dict], steps: list[dict]) -> list[dict]:
    """One row per card or burn event of the round (device order): the event, the card drawn, the step it fed.

    ``events`` carry ``device_id, event_seq, ts, event, card, card_code, source_file, source_line``; ``steps``
    are ``{"what", "clause"}`` in the engine's order. A row's ``step`` is the index of its step (or None).
    """
    used: set[int] = set()
    cursor = 0
    rows = []
    dealt = 0  # cards (not burns) so far: the engine's "Card 5 ..." counts them
    for n, e in enumerate(ev for ev in events if ev.get("event") in ("card", "burn")):
        code = e.get("card_code")
        raw = e.get("card")
        is_burn = e["event"] == "burn"
        dealt += not is_burn
        pats = [_token(x) for x in _names(code, raw)]

        def fits(i: int) -> bool:
            what = steps[i]["what"]
            if is_burn:
                return bool(re.match(r"(?i)burn\b", what.strip()))
            return not re.match(r"(?i)burn\b", what.strip()) and any(p.search(what) for p in pats)

        def numbered(i: int) -> bool:  # the step that deals this card by its number ("Card 7 a foreign card: ...")
            return not is_burn and steps[i]["what"].startswith(f"Card {dealt} ")

        def deals(i: int) -> bool:  # a step that names the card and a hand, not a tally that names it again
            return fits(i) and hand_of(steps[i]["what"]) is not None

        # a card seen twice in a round (3s as the third and the fifth card) was paired with the step that tallies
        # the first ("Player As 3s: 4 points"): the deal's own step comes first, then any step dealing it, then any
        # step naming it
        found = None
        for test in (numbered, deals, fits):
            found = next((i for i in range(cursor, len(steps)) if i not in used and test(i)), None)
            if found is None:
                found = next((i for i in range(0, cursor) if i not in used and test(i)), None)
            if found is not None:
                break
        if found is not None:
            used.add(found)
            cursor = found + 1
        step = steps[found] if found is not None else None
        ts = e.get("ts")
        rows.append({
            "n": n + 1, "device_id": e.get("device_id"), "event_seq": e.get("event_seq"),
            "ts": ts.isoformat().replace("+00:00", "Z") if hasattr(ts, "isoformat") else ts,
            "event": e["event"], "card": face(code, raw), "step": found,
            "hand": "burn" if is_burn else (hand_of(step["what"]) if step else None),
            "what": step["what"] if step else None, "clause": step["clause"] if step else None,
            "source_file": e.get("source_file"), "source_line": e.get("source_line"),
        })
    return rows
