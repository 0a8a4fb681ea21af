"""The poker evaluator (rulebook.poker): golden cases from the rule texts, exhaustive counts,
properties, and cross-checks against two public evaluators (treys, phevaluator)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulebook import poker
from rulebook.cards import parse_card


def codes(text: str) -> list[int]:
    """'As Kd 10h' -> card codes; '10' is accepted for 'T' as the rule texts write it."""
    out = []
    for t in text.split():
        t = t.replace("10", "T")
        code = parse_card(t)
        assert code >= 0, t
        out.append(code)
    return out


def strength(text: str) -> int:
    return poker.evaluate_hand(codes(text))


def hand7(hole: str, board: str) -> int:
    return poker.evaluate_hand(codes(hole) + codes(board))


# --- golden cases from the rule texts ------------------------------------------------------------


def test_wheel_loses_to_six_high_straight_htb_5_4_4():
    """HTB-5.4.4: a straight containing a 6 or higher beats 5-4-3-2-A; HTB-4.4.2: the ace is low."""
    board = "3s 4h 5d Kc 8s"
    player = hand7("Ac 2d", board)  # 5-4-3-2-A
    dealer = hand7("2h 6c", board)  # 6-5-4-3-2
    assert poker.category(np.array([player, dealer])).tolist() == [poker.STRAIGHT, poker.STRAIGHT]
    assert dealer > player
    assert poker.describe(player) == "Straight, five high"
    assert poker.describe(dealer) == "Straight, six high"
    # the wheel is the lowest straight: below 6-5-4-3-2 and above every three of a kind
    assert strength("As Ac Ad Ks Qc") < player
    # ... and the same for straight flushes (HTB-5.4.4 names both)
    wheel_sf = strength("Ah 2h 3h 4h 5h")
    six_sf = strength("2h 3h 4h 5h 6h")
    assert poker.STRAIGHT_FLUSH == poker.category(np.array([wheel_sf]))[0]
    assert six_sf > wheel_sf > strength("As Ac Ad Ah Ks")
    # the ace is low only in 5-4-3-2-A: no straight wraps around it (HTB-4.4.2)
    assert poker.category(np.array([strength("Qs Kd Ah 2c 3s"), strength("Ks Ad 2h 3c 4s")])).tolist() == [0, 0]
    # an ace-high straight is the highest straight (HTB-4.4.1: ace high outside the wheel)
    assert strength("As Kd Qh Jc Ts") > strength("Ks Qd Jh Tc 9s")


def test_two_pairs_second_pair_then_kicker_htb_5_4_1():
    """HTB-5.4.1: highest pair, then the second pair, then the unpaired card; else a stand-off."""
    assert strength("Qs Qh 9c 9h 3d") > strength("Qc Qd 8c 8h Ad")  # second pair decides
    assert strength("Ks Kh 2c 2h 3d") > strength("Qc Qd Jc Jh Ad")  # highest pair first
    assert strength("Qs Qh 9c 9h 4d") > strength("Qc Qd 9s 9d 3c")  # then the kicker
    assert strength("Qs Qh 9c 9h 4d") == strength("Qc Qd 9s 9d 4c")  # stand-off
    assert poker.describe(strength("Qs Qh 9c 9h 3d")) == "Two pairs, queens and nines, three kicker"
    # seven cards with three pairs: the best two pairs and the best remaining card
    board = "Qs Qh 9c 9h 3d"
    assert hand7("4c 2s", board) > hand7("3c 2s", board)  # a hole card can be the kicker
    assert hand7("Ac 2s", board) > hand7("Kc 2s", board)  # the kicker can come from a hole card
    assert hand7("4c 4h", board) == strength("Qs Qh 9c 9h 4d")  # a third pair plays as the kicker


def test_one_pair_kickers_in_order_htb_5_4_2():
    """HTB-5.4.2: equal pairs are decided by the three unpaired cards, highest first."""
    assert strength("As Ah 8d 6h 5s") > strength("Ad Ac 8s 6c 4s")
    assert strength("As Ah 9d 3h 2s") > strength("Ad Ac 8s 7c 6s")
    assert strength("As Ah 8d 6h 5s") == strength("Ad Ac 8s 6c 5d")
    assert strength("2s 2h 4d 3h 5s") > strength("Ad Kc Qs Jc 9s")  # any pair beats five odd cards


def test_full_houses_decided_by_pair_when_trips_on_board_htb_5_4_3():
    """HTB-5.4.3: full houses by the three of a kind; with the trips on the board, by the pair."""
    board = "Kc Kd Kh 7s 2d"
    player = hand7("9c 9d", board)
    dealer = hand7("8c 8d", board)
    assert poker.category(np.array([player, dealer])).tolist() == [poker.FULL_HOUSE] * 2
    assert player > dealer
    assert hand7("9h 9s", board) == player  # equal pairs: stand-off
    assert poker.describe(player) == "Full house, kings over nines"
    assert strength("Ac Ad Ah 2s 2d") > strength("Kc Kd Kh Qs Qd")  # trips first
    # two trips in seven cards: the lower trips plays as the pair
    assert hand7("7c 7d", "Kc Kd Kh 7s 2d") == strength("Kc Kd Kh 7s 7d")


def test_suits_are_of_equal_rank_htb_4_4_3():
    """HTB-4.4.3: suits do not break ties; the same five ranks (both flush or both not) tie."""
    assert strength("As Ks Qd Jh 9c") == strength("Ah Kh Qc Jd 9s")
    assert strength("Js 8s 6s 5s 2s") == strength("Jh 8h 6h 5h 2h")
    assert strength("Tc Jc Qc Kc Ac") == strength("Td Jd Qd Kd Ad")
    board = "2c 7d 9h Js Kd"
    assert hand7("3c 4d", board) == hand7("3h 4s", board)  # the board plays for both
    rng = np.random.default_rng(7)
    hands = np.array([rng.permutation(52)[:7] for _ in range(2000)])
    relabel = rng.permutation(4)  # the same hands with the suits renamed
    renamed = (hands // 4) * 4 + relabel[hands % 4]
    assert np.array_equal(poker.evaluate7(hands), poker.evaluate7(renamed))


def test_royal_flush_detection_mbs_3_9_1():
    """MBS-3.9.1 / HTB-4.5: A-K-Q-J-10 of one suit is a royal flush, the highest hand."""
    royal = strength("Ad Kd Qd Jd 10d")
    assert royal == poker.ROYAL_FLUSH == poker.N_STRENGTHS
    assert poker.describe(royal) == "Royal flush"
    seven = poker.evaluate7(np.array([
        codes("Ah Kh Qh Jh Th 2c 3d"),  # royal with two odd cards
        codes("Ah Kh Qh Jh 9h 8h Tc"),  # ace-high flush plus a broadway straight: not royal
        codes("Kh Qh Jh Th 9h 8h Ah"),  # royal beside a king-high straight flush
        codes("Ah Kh Qh Jh Td 9h 8h"),  # flush and straight, no straight flush
    ]))
    assert poker.is_royal(seven).tolist() == [True, False, True, False]
    assert poker.category(seven).tolist() == [8, 5, 8, 5]
    assert poker.describe(strength("Jc 10c 9c 8c 7c")) == "Straight flush, jack high"


@pytest.mark.parametrize(
    ("example", "cat"),
    [  # the examples of HTB-4.5's table, in its order
        ("Ah Kh Qh Jh 10h", poker.STRAIGHT_FLUSH),
        ("Js 10s 9s 8s 7s", poker.STRAIGHT_FLUSH),
        ("Ac Ah Ad As 10h", poker.FOUR_OF_A_KIND),
        ("Kc Kh Kd 7s 7h", poker.FULL_HOUSE),
        ("Jh 8h 6h 5h 2h", poker.FLUSH),
        ("9c 8d 7c 6h 5s", poker.STRAIGHT),
        ("10s 10h 10c 8h 3d", poker.THREE_OF_A_KIND),
        ("Qc Qh 9c 9h 3d", poker.TWO_PAIRS),
        ("Ac Ah 7d 6h 2s", poker.ONE_PAIR),
        ("Qc 9h 6d 5s 3h", poker.HIGH_CARD),
    ],
)
def test_rule_text_examples_have_their_category_htb_4_5(example, cat):
    assert poker.category(np.array([strength(example)]))[0] == cat


def test_htb_4_5_examples_are_in_descending_order():
    examples = ["Ah Kh Qh Jh 10h", "Js 10s 9s 8s 7s", "Ac Ah Ad As 10h", "Kc Kh Kd 7s 7h",
                "Jh 8h 6h 5h 2h", "9c 8d 7c 6h 5s", "10s 10h 10c 8h 3d", "Qc Qh 9c 9h 3d",
                "Ac Ah 7d 6h 2s", "Qc 9h 6d 5s 3h"]
    values = [strength(e) for e in examples]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)


def test_class_order_equals_classifying_every_five_card_value_set():
    """The category-by-category enumeration equals classifying every five-card rank multiset
    (flush and not) with :func:`classify` and sorting by (category, tie-break): two derivations."""
    from rulebook.poker.classes import classify, hand_classes

    derived = []
    for combo in itertools.combinations_with_replacement(range(13), 5):
        if max(combo.count(v) for v in combo) <= 4:
            derived.append(classify(combo, False))
            if len(set(combo)) == 5:
                derived.append(classify(combo, True))
    derived.sort(key=lambda c: (c.category, c.tiebreak))
    assert tuple(derived) == hand_classes()


def test_describe_every_category():
    assert poker.describe(strength("Qc 10h 6d 5s 2h")) == "Five odd cards, queen, ten, six, five, two"
    assert poker.describe(strength("Ac Ah 8d 6h 5s")) == "One pair, aces, kickers eight, six, five"
    assert poker.describe(strength("10s 10h 10c 8h 3d")) == "Three of a kind, tens, kickers eight, three"
    assert poker.describe(strength("Jh 8h 6h 5h 2h")) == "Flush, jack, eight, six, five, two"
    assert poker.describe(strength("Ac Ah Ad As 10h")) == "Four of a kind, aces, ten kicker"
    assert poker.describe(1) == "Five odd cards, seven, five, four, three, two"
    with pytest.raises(ValueError, match="not 1..7462"):
        poker.describe(0)


def test_best_five_prefers_the_first_listed_cards():
    """A hole card that ties a board card is reported (MBS-4.1.2 asks whether a hole card is used)."""
    hole, board = codes("5h 2c"), codes("5c 6d 7s 8h 9c")
    best = poker.best_five(hole + board)
    assert best == tuple(codes("5h 6d 7s 8h 9c"))
    assert poker.evaluate_hand(best) == poker.evaluate_hand(hole + board)
    # the board plays: no hole card is in the best five
    assert poker.best_five(codes("2c 3d") + codes("Ah Kh Qh Jh 10h")) == tuple(codes("Ah Kh Qh Jh 10h"))


def test_bad_input_gets_one_line_reasons():
    with pytest.raises(ValueError, match="appears twice"):
        poker.evaluate_hand(codes("As As Kd Qh Jc"))
    with pytest.raises(ValueError, match="5 to 7 cards"):
        poker.evaluate_hand(codes("As Kd Qh Jc"))
    with pytest.raises(ValueError, match="not a card"):
        poker.evaluate_hand([0, 1, 2, 3, -1])
    with pytest.raises(ValueError, match="0..51"):
        poker.evaluate7(np.array([[0, 1, 2, 3, 4, 5, 52]]))
    with pytest.raises(ValueError, match="expected 7 cards"):
        poker.evaluate7(np.array([[0, 1, 2, 3, 4, 5]]))
    with pytest.raises(ValueError, match="2-D"):
        poker.evaluate7(np.arange(7))


def test_widths_and_dtypes_agree():
    rng = np.random.default_rng(3)
    hands = np.argsort(rng.random((5000, 52)), axis=1)[:, :7]
    s7 = poker.evaluate7(hands)
    assert s7.dtype == np.int32
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.uint64):
        assert np.array_equal(poker.evaluate7(hands.astype(dtype)), s7)
    assert np.array_equal(poker.evaluate(hands), s7)
    # six cards: the best of the six five-card subsets
    s6 = poker.evaluate(hands[:, :6])
    sub6 = np.max([poker.evaluate5(hands[:, list(c)]) for c in itertools.combinations(range(6), 5)], axis=0)
    assert np.array_equal(s6, sub6)
    assert np.array_equal(poker.evaluate(hands[:, :5]), poker.evaluate5(hands[:, :5]))
    assert poker.evaluate7(np.empty((0, 7), dtype=np.int8)).shape == (0,)
    # a strided / non-contiguous view is accepted
    assert np.array_equal(poker.evaluate7(np.asfortranarray(hands)), s7)


def test_chunks_threads_and_layouts_agree(monkeypatch):
    """Chunk boundaries, threads and input layouts do not change any answer."""
    from rulebook.poker import vector

    rng = np.random.default_rng(5)
    hands = np.argsort(rng.random((30_011, 52)), axis=1)[:, :7].astype(np.uint8)
    reference = poker.evaluate7(hands, workers=1)
    monkeypatch.setattr(vector, "CHUNK", 1000)  # many chunks, the last one short
    for workers in (1, 2, 3):
        assert np.array_equal(poker.evaluate7(hands, workers=workers), reference)
        assert np.array_equal(poker.evaluate7(hands.astype(np.int64), workers=workers), reference)
    wide = np.zeros((len(hands), 9), dtype=np.int16)
    wide[:, 1:8] = hands
    assert np.array_equal(poker.evaluate7(wide[:, 1:8]), reference)  # a strided view
    assert np.array_equal(poker.evaluate7(hands[::-1])[::-1], reference)  # negative strides


def test_bad_codes_in_arrays_name_the_hand():
    hands = np.tile(np.arange(7, dtype=np.int8), (5, 1))
    hands[3, 2] = -1  # unreadable (rulebook.cards.UNREADABLE)
    with pytest.raises(ValueError, match="hand 3 has card code -1"):
        poker.evaluate7(hands)
    wide = np.tile(np.arange(7, dtype=np.uint16), (5, 1))
    wide[4, 6] = 256 + 3  # would alias card 3 if narrowed without a check
    with pytest.raises(ValueError, match="hand 4 has card code 259"):
        poker.evaluate7(wide)
    with pytest.raises(ValueError, match="integers"):
        poker.evaluate7(np.zeros((2, 7)))
    with pytest.raises(ValueError, match="strengths must be"):
        poker.category(np.array([0]))


# --- exhaustive counts ------------------------------------------------------------------------------

FIVE_CARD_COUNTS = {  # all C(52, 5) = 2,598,960 hands
    poker.STRAIGHT_FLUSH: 40, poker.FOUR_OF_A_KIND: 624, poker.FULL_HOUSE: 3744, poker.FLUSH: 5108,
    poker.STRAIGHT: 10200, poker.THREE_OF_A_KIND: 54912, poker.TWO_PAIRS: 123552,
    poker.ONE_PAIR: 1098240, poker.HIGH_CARD: 1302540,
}
SEVEN_CARD_COUNTS = {  # all C(52, 7) = 133,784,560 hands
    poker.STRAIGHT_FLUSH: 41584, poker.FOUR_OF_A_KIND: 224848, poker.FULL_HOUSE: 3473184,
    poker.FLUSH: 4047644, poker.STRAIGHT: 6180020, poker.THREE_OF_A_KIND: 6461620,
    poker.TWO_PAIRS: 31433400, poker.ONE_PAIR: 58627800, poker.HIGH_CARD: 23294460,
}


def colex_combinations(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) as int8 rows, in colex order (those of range(m) come first)."""
    rows = np.arange(n, dtype=np.int8)[:, None]
    for size in range(2, k + 1):
        parts = []
        for top in range(size - 1, n):
            prefix = rows[: comb(top, size - 1)]
            parts.append(np.hstack([prefix, np.full((len(prefix), 1), top, dtype=np.int8)]))
        rows = np.vstack(parts)
    return rows


def strength_histogram(width: int) -> np.ndarray:
    """How many of the C(52, width) hands have each strength."""
    prefixes = colex_combinations(51, width - 1)
    hist = np.zeros(poker.N_STRENGTHS + 1, dtype=np.int64)
    for top in range(width - 1, 52):
        prefix = prefixes[: comb(top, width - 1)]
        for start in range(0, len(prefix), 1 << 21):
            chunk = prefix[start: start + (1 << 21)]
            hands = np.empty((len(chunk), width), dtype=np.int8)
            hands[:, :-1] = chunk
            hands[:, -1] = top
            hist += np.bincount(poker.evaluate(hands), minlength=poker.N_STRENGTHS + 1)
    assert hist.sum() == comb(52, width)
    return hist


def counts_by_category(hist: np.ndarray) -> dict[int, int]:
    cats = poker.category(np.arange(1, poker.N_STRENGTHS + 1))
    return {c: int(hist[1:][cats == c].sum()) for c in range(9)}


def test_all_five_card_hands():
    hist = strength_histogram(5)
    assert counts_by_category(hist) == FIVE_CARD_COUNTS
    assert int(np.count_nonzero(hist)) == 7462  # every class occurs, and no other value
    assert hist[poker.ROYAL_FLUSH] == 4


@pytest.mark.slow
def test_all_seven_card_hands():
    hist = strength_histogram(7)
    assert counts_by_category(hist) == SEVEN_CARD_COUNTS
    assert hist[poker.ROYAL_FLUSH] == 4324


# --- properties ------------------------------------------------------------------------------------

seven_cards = st.lists(st.integers(0, 51), min_size=7, max_size=7, unique=True)


@settings(max_examples=300, deadline=None)
@given(seven_cards, st.randoms(use_true_random=False))
def test_permuting_the_cards_never_changes_the_strength(cards, rnd):
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    both = poker.evaluate7(np.array([cards, shuffled]))
    assert both[0] == both[1]


@settings(max_examples=300, deadline=None)
@given(seven_cards)
def test_seven_cards_are_worth_their_best_five(cards):
    subsets = np.array(list(itertools.combinations(cards, 5)))
    assert poker.evaluate7(np.array([cards]))[0] == poker.evaluate5(subsets).max()
    best = poker.best_five(cards)
    assert poker.evaluate_hand(best) == poker.evaluate_hand(cards)


# --- cross-checks against public evaluators ----------------------------------------------------

TEXT = [r + s for r in "A23456789TJQK" for s in "cdhs"]


def random_pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n pairs of seven-card hands from one deck each: 2 hole cards each + 5 shared board cards."""
    rng = np.random.default_rng(seed)
    deck = np.argsort(rng.random((n, 52)), axis=1)[:, :9].astype(np.int8)
    board = deck[:, 4:9]
    return np.hstack([deck[:, 0:2], board]), np.hstack([deck[:, 2:4], board])


def outcome(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """+1 first hand wins, -1 loses, 0 tie (given higher-is-better numbers)."""
    return np.sign(a.astype(np.int64) - b.astype(np.int64))


def phevaluator_strengths(hands: np.ndarray) -> np.ndarray:
    """phevaluator's native 7-card call on every row (its ids: 2=0..A=12 rank, cdhs suits)."""
    from phevaluator import _pheval
    from phevaluator.card import Card

    ids = np.array([Card.to_id(t) for t in TEXT])[hands]
    cols = [c.tolist() for c in ids.T]
    return -np.fromiter(map(_pheval.evaluate_7cards, *cols), dtype=np.int64, count=len(hands))


def treys_strengths_vectorised(hands: np.ndarray) -> np.ndarray:
    """treys' own algorithm and tables (Evaluator._five: flush by suit bits, prime products into
    its flush/unsuited lookups; the best of the 21 subsets), run over arrays instead of a loop."""
    from treys import Card
    from treys.lookup import LookupTable

    table = LookupTable()
    card = np.array([Card.new(t) for t in TEXT], dtype=np.int64)[hands]
    flush_keys = np.array(sorted(table.flush_lookup), dtype=np.int64)
    flush_vals = np.array([table.flush_lookup[k] for k in flush_keys], dtype=np.int64)
    plain_keys = np.array(sorted(table.unsuited_lookup), dtype=np.int64)
    plain_vals = np.array([table.unsuited_lookup[k] for k in plain_keys], dtype=np.int64)
    best = np.full(len(hands), 9999, dtype=np.int64)
    for subset in itertools.combinations(range(7), 5):
        c = card[:, list(subset)]
        is_flush = (np.bitwise_and.reduce(c, axis=1) & 0xF000) != 0
        prime = np.prod(c & 0xFF, axis=1)
        f_pos = np.clip(np.searchsorted(flush_keys, prime), 0, len(flush_keys) - 1)
        p_pos = np.clip(np.searchsorted(plain_keys, prime), 0, len(plain_keys) - 1)
        rank = np.where(is_flush, flush_vals[f_pos], plain_vals[p_pos])
        found = np.where(is_flush, flush_keys[f_pos], plain_keys[p_pos]) == prime
        assert found.all()
        best = np.minimum(best, rank)
    return -best  # treys: lower is better


def treys_strengths_reference(hands: np.ndarray) -> np.ndarray:
    """treys.Evaluator.evaluate itself, one call per hand."""
    from treys import Card, Evaluator

    ev = Evaluator()
    card = [Card.new(t) for t in TEXT]
    return -np.array([ev.evaluate([card[c] for c in h[:2]], [card[c] for c in h[2:]]) for h in hands.tolist()])


def test_vectorised_treys_driver_is_treys():
    a, _ = random_pairs(20_000, seed=11)
    assert np.array_equal(treys_strengths_vectorised(a), treys_strengths_reference(a))


def test_million_pairs_agree_with_treys_and_phevaluator():
    a, b = random_pairs(1_000_000, seed=2025)
    ours = outcome(poker.evaluate7(a), poker.evaluate7(b))
    ph = outcome(phevaluator_strengths(a), phevaluator_strengths(b))
    assert np.array_equal(ours, ph)
    tr = outcome(treys_strengths_vectorised(a), treys_strengths_vectorised(b))
    assert np.array_equal(ours, tr)
    assert (ours == 0).sum() > 10_000  # ties occur and are checked too


@pytest.mark.slow
def test_million_pairs_agree_with_treys_evaluator_calls():
    a, b = random_pairs(1_000_000, seed=2026)
    ours = outcome(poker.evaluate7(a), poker.evaluate7(b))
    assert np.array_equal(ours, outcome(treys_strengths_reference(a), treys_strengths_reference(b)))


# --- every class, ordered as the public evaluators order it ------------------------------------------------
# The million random pairs above rarely meet the rarest classes (a straight flush is 0.03 % of seven-card
# hands, a wheel straight flush far less): these tests rank every one of the 2,598,960 five-card hands, so
# each of the 7,462 classes -- the wheel (HTB-4.4.2), its straight-flush form and the royal included -- is
# placed against every other exactly as treys and phevaluator place it.

TREYS_CLASS_OF = {  # treys' rank classes (0 royal flush, 1 straight flush .. 9 high card) in our categories
    0: poker.STRAIGHT_FLUSH, 1: poker.STRAIGHT_FLUSH, 2: poker.FOUR_OF_A_KIND, 3: poker.FULL_HOUSE, 4: poker.FLUSH, 5: poker.STRAIGHT,
    6: poker.THREE_OF_A_KIND, 7: poker.TWO_PAIRS, 8: poker.ONE_PAIR, 9: poker.HIGH_CARD,
}


def treys_five(hands: np.ndarray) -> np.ndarray:
    """treys' five-card rank of each row (1 = royal flush .. 7462), from its own lookup tables."""
    from treys import Card
    from treys.lookup import LookupTable

    table = LookupTable()
    card = np.array([Card.new(t) for t in TEXT], dtype=np.int64)[hands]
    is_flush = (np.bitwise_and.reduce(card, axis=1) & 0xF000) != 0
    prime = np.prod(card & 0xFF, axis=1)
    out = np.empty(len(hands), dtype=np.int64)
    for mask, lookup in ((is_flush, table.flush_lookup), (~is_flush, table.unsuited_lookup)):
        keys = np.array(sorted(lookup), dtype=np.int64)
        vals = np.array([lookup[k] for k in keys], dtype=np.int64)
        pos = np.searchsorted(keys, prime[mask])
        assert (keys[np.clip(pos, 0, len(keys) - 1)] == prime[mask]).all()
        out[mask] = vals[pos]
    return out


def phevaluator_five(hands: np.ndarray) -> np.ndarray:
    from phevaluator import _pheval
    from phevaluator.card import Card

    ids = np.array([Card.to_id(t) for t in TEXT])[hands]
    return np.fromiter(map(_pheval.evaluate_5cards, *[c.tolist() for c in ids.T]), dtype=np.int64, count=len(hands))


@pytest.fixture(scope="module")
def all_five_card_hands() -> np.ndarray:
    return colex_combinations(52, 5)


@pytest.mark.parametrize("public", [treys_five, phevaluator_five], ids=["treys", "phevaluator"])
def test_every_five_card_class_is_ordered_as_the_public_evaluators_order_it(all_five_card_hands, public):
    ours = poker.evaluate5(all_five_card_hands).astype(np.int64)
    theirs = public(all_five_card_hands)  # lower is better in both
    pairs = np.unique(np.stack([ours, theirs], axis=1), axis=0)  # sorted by our strength
    # one of their classes per class of ours and the other way round, in exactly the reverse order
    assert len(pairs) == 7462 == len(np.unique(ours)) == len(np.unique(theirs))
    assert (np.diff(pairs[:, 0]) > 0).all() and (np.diff(pairs[:, 1]) < 0).all()


def test_every_category_is_treys_rank_class(all_five_card_hands):
    from treys import Evaluator

    ours = poker.evaluate5(all_five_card_hands)
    theirs = treys_five(all_five_card_hands)
    classes = np.unique(np.stack([poker.category(ours), theirs], axis=1), axis=0)
    ev = Evaluator()
    for cat, rank in classes.tolist():
        assert TREYS_CLASS_OF[ev.get_rank_class(rank)] == cat, (cat, rank)
    assert set(classes[:, 0].tolist()) == set(range(9))


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("6c 5d 4h 3s 2c", "5h 4d 3c 2s Ah"),  # HTB-5.4.4: a six-high straight beats the wheel
        ("5h 4d 3c 2s Ah", "Ac Ad As 2d 3d"),  # the wheel is still a straight (HTB-4.4.2)
        ("6h 5h 4h 3h 2h", "5s 4s 3s 2s As"),  # and the same in straight-flush form
        ("5s 4s 3s 2s As", "Ac Ad Ah As Kd"),  # the wheel straight flush beats four aces
        ("Ah Kh Qh Jh Th", "Kd Qd Jd Td 9d"),  # the royal is the highest straight flush (HTB-4.5)
        ("Ac Kd Qh Js Tc", "Kh Qd Jc Ts 9h"),  # the ace high in A-K-Q-J-10 (HTB-4.4.1)
        ("Kc Kd 2h 2s 3c", "Qc Qd Jh Js Ac"),  # HTB-5.4.1: the higher pair first
        ("9c 9d 9h As Ac", "9s 8d 8h 8s Ad"),  # HTB-5.4.3: the trips first
    ],
)
def test_named_hands_compare_as_the_public_evaluators_compare_them_htb_4_4_and_5_4(better, worse):
    rows = np.array([codes(better), codes(worse)])
    ours = poker.evaluate5(rows)
    assert ours[0] > ours[1]
    for public in (treys_five, phevaluator_five):
        theirs = public(rows)
        assert theirs[0] < theirs[1], public.__name__
    # the wheel, ace low, does not wrap round: Q-K-A-2-3 is no straight (HTB-4.4.2)
    assert poker.category(np.array([strength("Qc Kd Ah 2s 3c")]))[0] == poker.HIGH_CARD
