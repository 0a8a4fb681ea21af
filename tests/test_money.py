"""Integer money: odds as fractions and the rule sets' rounding (points the rule texts leave open)."""

from hypothesis import given, strategies as st

from rulebook.money import Odds, Rounding, round_amount


def test_commission_win_on_an_odd_amount_rounds_down_TBAC_5_1_1():
    assert Odds(19, 20).win(10000) == 9500
    assert Odds(19, 20).win(2510) == 2384  # 2384.5 -> the house keeps the half unit


def test_blackjack_3_to_2_rounding():
    assert Odds(3, 2).win(1001) == 1501
    assert Odds(3, 2).win(1001, Rounding.UP) == 1502
    assert Odds(3, 2).win(1001, Rounding.HALF_UP) == 1502


def test_rounding_unit_is_a_chip():
    assert Odds(19, 20).win(2510, unit=100) == 2300


@given(st.integers(0, 10**12), st.integers(1, 1000), st.integers(1, 1000))
def test_down_never_exceeds_the_exact_amount_and_is_an_integer(amount, num, den):
    paid = Odds(num, den).win(amount)
    assert isinstance(paid, int)
    assert paid * den <= amount * num < (paid + 1) * den


@given(st.integers(0, 10**9), st.integers(1, 100), st.sampled_from([1, 5, 25, 100]))
def test_every_rounding_lands_on_a_unit_within_one_unit(numerator, denominator, unit):
    for mode in Rounding:
        r = round_amount(numerator, denominator, mode, unit)
        assert r % unit == 0
        assert abs(r * denominator - numerator) < unit * denominator
