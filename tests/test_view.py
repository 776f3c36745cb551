"""The view state and its query parameters (calib.hosting.view): round trips and bad links."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib.hosting import view as views
from calib.hosting.view import DEFAULT, View, from_params, to_params


def test_default_view_writes_no_parameters():
    assert to_params(DEFAULT) == {}


def test_only_changed_settings_are_written_with_short_stable_names():
    v = replace(DEFAULT, lo=80.0, hi=90.5, method="platt", samples=("a.jsonl", "b.jsonl"), bins=15)
    assert to_params(v) == {"lo": "80", "hi": "90.5", "map": "platt", "sample": "a.jsonl,b.jsonl", "bins": "15"}


def test_page_is_written_only_for_share_links():
    v = replace(DEFAULT, page="routing")
    assert "page" not in to_params(v)
    assert to_params(v, include_page=True)["page"] == "routing"
    # the entry page too: a share link always says where it opens
    assert to_params(DEFAULT, include_page=True) == {"page": "data"}


def test_reads_a_link_written_by_hand():
    v, notes = from_params(
        {"lo": "75", "hi": "95", "map": "Isotonic", "scoring": "kfold", "folds": "10", "scheme": "mass",
         "bins": "20", "reps": "500", "level": "90", "on": "calibrated", "cost_review": "2.5",
         "cost_miss": "40", "model": "qwen2.5:14b", "eval": "qwen-even", "target": "0.05", "page": "routing"}
    )
    assert notes == ()
    assert v == View(page="routing", model="qwen2.5:14b", scheme="mass", bins=20, reps=500, level=0.9,
                     method="isotonic", scoring="kfold", folds=10, eval_model="qwen-even", on="calibrated",
                     lo=75.0, hi=95.0, cost_review=2.5, cost_miss=40.0, target=0.05)


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("bins", "abc", "bins"), ("bins", "1", "bins"), ("bins", "1000", "bins"), ("bins", "2.5", "bins"),
        ("reps", "-1", "reps"), ("reps", "1e9", "reps"), ("seed", "-3", "seed"),
        ("level", "2", "level"), ("level", "0.2", "level"), ("level", "nan", "level"),
        ("map", "magic", "method"), ("scheme", "<script>", "scheme"), ("scoring", "", "scoring"),
        ("folds", "1", "folds"), ("on", "sideways", "on"), ("lo", "inf", "lo"), ("lo", "ten", "lo"),
        ("hi", "nan", "hi"), ("cost_review", "-5", "cost_review"), ("cost_miss", "1e300", "cost_miss"),
        ("target", "1.5", "target"), ("page", "admin", "page"), ("model", "x" * 500, "model"),
        ("model", "a\x00b", "model"), ("sample", "../../etc/passwd", "samples"),
        ("sample", "/etc/passwd", "samples"), ("sample", "a/b.jsonl", "samples"),
    ],
)
def test_a_bad_value_falls_back_to_the_default_and_is_named(key, value, field):
    v, notes = from_params({key: value, "bins": "12"} if key != "bins" else {key: value})
    assert getattr(v, field) == getattr(DEFAULT, field)
    assert len(notes) == 1 and f"'{key}'" in notes[0]
    # the user's value is not echoed back
    if len(value) > 3:
        assert value not in notes[0]
    if key != "bins":
        assert v.bins == 12  # other settings are still read


def test_unknown_parameters_are_ignored():
    v, notes = from_params({"share": "abc", "utm_source": "x", "lo": "70"})
    assert v.lo == 70.0 and notes == ()


def test_samples_must_exist_when_the_list_is_known():
    v, notes = from_params({"sample": "a.jsonl,b.jsonl"}, available_samples=("a.jsonl", "b.jsonl", "c.jsonl"))
    assert v.samples == ("a.jsonl", "b.jsonl") and notes == ()
    v, notes = from_params({"sample": "a.jsonl,zzz.jsonl"}, available_samples=("a.jsonl",))
    assert v.samples == () and len(notes) == 1


def test_upper_threshold_at_or_below_lower_one_is_dropped():
    v, notes = from_params({"lo": "90", "hi": "80"})
    assert (v.lo, v.hi) == (90.0, None) and len(notes) == 1
    v, _ = from_params({"lo": "90", "hi": "90"})
    assert v.hi is None


def test_list_values_take_the_last_one():
    # st.query_params gives the last of repeated keys; a dict from a test may hold a list
    v, _ = from_params({"lo": ["10", "20"]})
    assert v.lo == 20.0


def test_clamp_thresholds_to_the_scale():
    v = replace(DEFAULT, lo=-5.0, hi=150.0)
    c = views.clamp_thresholds(v, 0.0, 100.0)
    assert (c.lo, c.hi) == (0.0, 100.0)
    # clamped onto each other: the upper one goes
    c = views.clamp_thresholds(replace(DEFAULT, lo=120.0, hi=130.0), 0.0, 100.0)
    assert (c.lo, c.hi) == (100.0, None)


def test_with_changes_validates():
    v = views.with_changes(DEFAULT, lo=50.0, hi=40.0)
    assert v.hi is None


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF), max_size=40).map(str.strip)
sample = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}\.(jsonl|csv)", fullmatch=True)


@st.composite
def any_view(draw):
    lo = draw(st.none() | finite)
    hi = draw(st.none() | finite)
    if lo is not None and hi is not None and hi <= lo:
        hi = None
    return View(
        page=draw(st.sampled_from(views.PAGES)),
        samples=tuple(dict.fromkeys(draw(st.lists(sample, max_size=4)))),
        model=draw(text),
        scheme=draw(st.sampled_from(views.SCHEMES)),
        bins=draw(st.integers(*views.BINS_RANGE)),
        reps=draw(st.integers(*views.REPS_RANGE)),
        seed=draw(st.integers(*views.SEED_RANGE)),
        level=draw(st.sampled_from(views.LEVELS)),
        method=draw(st.sampled_from(views.METHODS)),
        scoring=draw(st.sampled_from(views.SCORINGS)),
        folds=draw(st.integers(*views.FOLDS_RANGE)),
        eval_model=draw(text),
        on=draw(st.sampled_from(views.THRESHOLD_ON)),
        lo=lo,
        hi=hi,
        cost_review=draw(st.floats(0, 1e6)),
        cost_miss=draw(st.floats(0, 1e6)),
        target=draw(st.none() | st.floats(0, 1)),
    )


@settings(max_examples=80, deadline=None)
@given(any_view())
def test_round_trip_through_the_url(v):
    back, notes = from_params(to_params(v, include_page=True))
    assert notes == ()
    assert back == v


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(views.PARAMS)), st.text(max_size=30), max_size=8))
def test_any_link_gives_a_valid_view(params):
    v, notes = from_params(params)
    assert v.page in views.PAGES and v.scheme in views.SCHEMES and v.method in views.METHODS
    assert views.BINS_RANGE[0] <= v.bins <= views.BINS_RANGE[1]
    assert v.hi is None or v.lo is None or v.hi > v.lo
    # writing it out and reading it back is stable
    assert from_params(to_params(v, include_page=True))[0] == v


# ----------------------------------------------------------------- the threshold decision's fields (issue 11)
def test_decision_fields_default_to_the_engines_and_stay_out_of_a_plain_link():
    from calib import settings as cfg
    from calib.decision import risk

    assert DEFAULT.confidence == cfg.DEFAULT_CONFIDENCE == risk.CONFIDENCE
    assert views.target_error(DEFAULT) == cfg.DEFAULT_TARGET == risk.TARGET
    assert DEFAULT.capacity == "" and DEFAULT.cost_right is None
    assert to_params(DEFAULT) == {}


def test_decision_fields_round_trip_through_their_own_parameters():
    v = replace(DEFAULT, target=0.1, confidence=0.9, capacity="20%", cost_right=0.5)
    p = to_params(v)
    assert p == {"target": "0.1", "confidence": "0.9", "capacity": "20%", "cost_right": "0.5"}
    assert from_params(p) == (v, ())
    # a capacity in items, and the percent form of the confidence a person types
    v2, notes = from_params({"capacity": " 200 ", "confidence": "99"})
    assert notes == () and v2.capacity == "200" and v2.confidence == 0.99


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [("confidence", "2", "confidence"), ("confidence", "0.3", "confidence"), ("confidence", "nan", "confidence"),
     ("confidence", "high", "confidence"), ("capacity", "lots", "capacity"), ("capacity", "-5", "capacity"),
     ("capacity", "150%", "capacity"), ("capacity", "2.5", "capacity"), ("capacity", "<b>9</b>", "capacity"),
     ("cost_right", "-1", "cost_right"), ("cost_right", "inf", "cost_right"), ("cost_right", "1e300", "cost_right")],
)
def test_a_bad_decision_value_falls_back_and_is_named(key, value, field):
    v, notes = from_params({key: value})
    assert getattr(v, field) == getattr(DEFAULT, field)
    assert len(notes) == 1 and f"'{key}'" in notes[0] and value not in notes[0]


@settings(max_examples=60, deadline=None)
@given(target=st.none() | st.floats(0.001, 0.999), confidence=st.floats(0.5, 0.999),
       items=st.none() | st.integers(0, 10**9), share=st.none() | st.integers(0, 100),
       cost_right=st.none() | st.floats(0, 1e6))
def test_any_decision_setting_round_trips(target, confidence, items, share, cost_right):
    capacity = "" if items is None and share is None else (f"{share}%" if share is not None else str(items))
    v = replace(DEFAULT, target=target, confidence=confidence, capacity=capacity, cost_right=cost_right)
    back, notes = from_params(to_params(v, include_page=True))
    assert notes == () and back == v
    # the engine reads the capacity the view kept as the person meant it
    from calib.decision import parse_capacity

    if capacity:
        assert parse_capacity(back.capacity) == ((items, None) if share is None else (None, share / 100))
