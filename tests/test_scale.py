"""Scale detection, ``--rescale`` parsing and the affine map to probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from calib.errors import CalibError
from calib.readers import stated
from calib.readers.base import LoadOptions, Source
from calib.scale import PROBABILITY, Scale, detect_scale, parse_rescale


@pytest.mark.parametrize(
    ("values", "name", "lo", "hi"),
    [
        ([0.2, 0.55, 0.9, 1.0, 0.0], "0-1", 0, 1),
        ([1, 2, 3, 4, 5, 3], "1-5", 1, 5),
        ([1, 4, 7, 10, 9], "1-10", 1, 10),
        ([0, 3, 7, 10, 8], "0-10", 0, 10),
        ([0, 15, 60, 85, 100, 95], "0-100", 0, 100),
        ([60, 70, 80, 90], "0-100", 0, 100),
    ],
)
def test_each_known_scale(values: list[float], name: str, lo: float, hi: float) -> None:
    s = detect_scale(np.array(values, dtype=float))
    assert (s.name, s.lo, s.hi) == (name, lo, hi)
    assert f"assumed the {name} scale" in s.how


def test_percent_strings_mean_0_to_100() -> None:
    s = detect_scale(np.array([0.5, 0.9]), percent_strings=True)
    assert (s.name, s.lo, s.hi) == ("percent", 0, 100)
    assert "85%" in s.how


@pytest.mark.parametrize(
    ("values", "name", "why"),
    [
        ([0, 1, 1, 0], "0-1", "all 0 or 1: probabilities, not a 1-5 scale"),
        ([1, 1, 1], "0-1", "a single 1 fits 0-1 first"),
        ([1, 2.5, 3.5, 5], "1-5", "half points stay on 1-5"),
        ([1.5, 9.5, 10], "1-10", "half points stay on 1-10"),
        ([0, 5, 10], "0-10", "a 0 rules out 1-10"),
        ([0, 0.5, 11], "0-100", "11 rules out every smaller scale"),
        ([2, 3, 4, 5], "1-5", "a 0-100 judge that only said 2 to 5 looks like 1-5 (stated, overridable)"),
    ],
)
def test_ambiguous_cases_follow_the_documented_order(values: list[float], name: str, why: str) -> None:
    assert detect_scale(np.array(values, dtype=float)).name == name, why


def test_five_percent_slack_keeps_the_scale_and_counts_outsiders() -> None:
    v = np.r_[np.arange(0, 100.0), 850.0]  # one typo among 101 values
    s = detect_scale(v)
    assert s.name == "0-100"
    assert s.how == ("values from 0 to 99: assumed the 0-100 scale; 1 value lies outside it and is dropped as a "
                     "bad line; a scale is kept with up to 5% of the values outside it, here 5 of 101")
    # 6 of 101 outside 0-100 is more than 5%: refuse rather than guess
    with pytest.raises(CalibError, match=r"cannot tell the confidence scale: values run from 0 to 900, and 6 of 101 "
                                         r"lie outside 0-100 \(at most 5 may\); give the scale with --rescale LO,HI"):
        detect_scale(np.r_[np.arange(0, 95.0), [850.0, 900, 900, 900, 900, 900]])


@pytest.mark.parametrize(("outside", "words"), [
    (1, "1 value lies outside it and is dropped as a bad line"),
    (2, "2 values lie outside it and are dropped as bad lines"),
])
def test_the_scale_line_is_a_sentence_with_its_number_agreeing(outside: int, words: str) -> None:
    # 51 values, 2 of them allowed outside (5% of 51 rounded down): the Data page's line
    # read "1 value(s) outside it (at most 2 of 51, 5%, may be: ...)"
    v = np.r_[np.arange(0, 51.0 - outside), [500.0] * outside]
    how = detect_scale(v).how
    assert how == (f"values from 0 to {50 - outside}: assumed the 0-100 scale; {words}; a scale is kept with up "
                   "to 5% of the values outside it, here 2 of 51")
    assert "(s)" not in how


def test_non_finite_values_are_ignored_and_no_values_means_0_1() -> None:
    assert detect_scale(np.array([np.nan, 50.0, np.inf, 70.0])).name == "0-100"
    assert detect_scale(np.array([])).name == "0-1"


def test_parse_rescale() -> None:
    s = parse_rescale("0,100")
    assert (s.lo, s.hi, s.name) == (0, 100, "0-100") and "given" in s.how
    s = parse_rescale(" 1 , 7 ")
    assert (s.lo, s.hi, s.name) == (1, 7, "1-7")
    for bad in ("100", "a,b", "1,2,3", ""):
        with pytest.raises(CalibError, match=r"--rescale wants two numbers LO,HI"):
            parse_rescale(bad)
    with pytest.raises(CalibError, match=r"not a valid range: need LO < HI"):
        parse_rescale("5,5")
    with pytest.raises(CalibError, match=r"must be finite numbers"):
        parse_rescale("nan,1")


def test_affine_map_and_inverse() -> None:
    s = Scale(1, 5, "1-5")
    v = np.array([1, 2, 3.5, 5])
    assert s.to_prob(v).tolist() == [0.0, 0.25, 0.625, 1.0]
    assert np.allclose(s.to_stated(s.to_prob(v)), v)
    assert s.contains(np.array([0.99, 1, 5, 5.01])).tolist() == [False, True, True, False]
    assert PROBABILITY.to_prob(0.3) == pytest.approx(0.3)


def test_rescale_override_in_the_reader_changes_only_the_probability() -> None:
    data = b'{"confidence": 3, "correct": true}\n{"confidence": 5, "correct": false}\n{"confidence": 9, "correct": true}\n'
    rows, report = stated.read(Source("s.jsonl", data), LoadOptions())
    assert rows.scale.name == "1-10" and rows.prob.tolist() == pytest.approx([2 / 9, 4 / 9, 8 / 9])
    rows, report = stated.read(Source("s.jsonl", data), LoadOptions(rescale=parse_rescale("0,10")))
    assert rows.stated.tolist() == [3, 5, 9]
    assert rows.prob.tolist() == pytest.approx([0.3, 0.5, 0.9])
    assert report.scale == {"lo": 0.0, "hi": 10.0, "name": "0-10", "how": "given: --rescale 0,10"}
