"""Option log-prob JSONL reader and the class-wise (letter bias) view.

Every expected value is computed here per row with plain Python (math.exp, max,
loops), independently of calib.options.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from calib.errors import CalibError
from calib.loading import load, sniff_format
from calib.options import letter_bias
from calib.readers import logprobs
from calib.readers.base import LoadOptions, Source
from tests.damage import JUNK, mutations

LETTERS = "ABCDEFGH"


def brute(scores: list[float], gold: int) -> tuple[int, float, bool]:
    """(prediction, top softmax probability, correct) the long way."""
    m = max(scores)
    pred = scores.index(m)
    denom = sum(math.exp(s - m) for s in scores if s != -math.inf)
    return pred, 1.0 / denom, pred == gold


def write(tmp_path: Path, lines: list[object], name: str = "lp.jsonl", newline_at_end: bool = True) -> Path:
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    p = tmp_path / name
    p.write_text(text + ("\n" if newline_at_end else ""), encoding="utf-8")
    return p


def random_items(n: int, seed: int, *, kmin: int = 2, kmax: int = 6, key: str = "logprobs") -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.randint(kmin, kmax)
        raw = [rng.gauss(0, 3) for _ in range(k)]
        m = max(raw)
        lse = m + math.log(sum(math.exp(x - m) for x in raw))
        out.append({"id": f"i{i}", key: [x - lse for x in raw], "gold": rng.randrange(k),
                    "subject": rng.choice(["law", "math", "bio"])})
    return out


def test_every_row_matches_brute_force(tmp_path: Path) -> None:
    items = random_items(300, seed=1)
    ds = load(write(tmp_path, items))
    rows = ds.rows
    assert rows is not None and len(rows) == 300
    for i, it in enumerate(items):
        pred, conf, ok = brute(it["logprobs"], it["gold"])
        assert rows.options.pred[i] == pred
        assert rows.stated[i] == pytest.approx(conf, rel=1e-12)
        assert rows.prob[i] == pytest.approx(conf, rel=1e-12)
        assert bool(rows.correct[i]) == ok
        assert rows.item_id[i] == it["id"] and rows.group[i] == it["subject"]
        assert rows.line[i] == i + 1
    assert rows.scale.lo == 0 and rows.scale.hi == 1
    assert ds.report.fields["scores"] == "logprobs" and ds.report.fields["gold"] == "gold"
    assert any("log-probabilities" in n for n in ds.report.notes)
    # padded columns: items with fewer options carry -inf there
    k = max(len(it["logprobs"]) for it in items)
    assert rows.options.logits.shape == (300, k)
    short = next(i for i, it in enumerate(items) if len(it["logprobs"]) < k)
    assert np.isneginf(rows.options.logits[short, len(items[short]["logprobs"]):]).all()


def test_dict_scores_and_letter_gold(tmp_path: Path) -> None:
    rng = random.Random(2)
    items = []
    for i in range(60):
        k = rng.randint(3, 5)
        letters = list(LETTERS[:k])
        rng.shuffle(letters)  # key order in the file must not matter
        scores = {c: -abs(rng.gauss(0, 2)) for c in letters}
        items.append({"question_id": i, "option_logprobs": scores, "answer": rng.choice(letters).lower()})
    ds = load(write(tmp_path, items))
    r = ds.rows
    assert r.options.letters == tuple(LETTERS[:5])
    for i, it in enumerate(items):
        letters = sorted(it["option_logprobs"])
        sc = [it["option_logprobs"][c] for c in letters]
        pred, conf, ok = brute(sc, letters.index(it["answer"].upper()))
        assert r.options.letters[r.options.pred[i]] == letters[pred]
        assert r.stated[i] == pytest.approx(conf, rel=1e-12)
        assert bool(r.correct[i]) == ok


def test_probabilities_are_detected_and_renormalised(tmp_path: Path) -> None:
    items = [
        {"id": "a", "probs": [0.1, 0.6, 0.3], "label": 1},
        {"id": "b", "probs": [0.2, 0.2, 0.4], "label": "C"},  # sums to 0.8
        {"id": "c", "option_probs": [0.5, 0.5], "label": 0},  # wrong key: reported
    ]
    ds = load(write(tmp_path, items))
    assert ds.rows.stated.tolist() == pytest.approx([0.6, 0.5])
    assert ds.rows.correct.tolist() == [True, True]
    assert any("read as probabilities" in n for n in ds.report.notes)
    assert any("renormalised" in n for n in ds.report.notes)
    assert ds.report.dropped_by_reason == {"no option scores": 1}


def test_probabilities_under_a_logprob_key_are_read_as_probabilities(tmp_path: Path) -> None:
    items = [{"logprobs": [0.7, 0.2, 0.1], "gold": 0}, {"logprobs": [0.25, 0.25, 0.5], "gold": 1}]
    ds = load(write(tmp_path, items))
    assert ds.rows.stated.tolist() == pytest.approx([0.7, 0.5])
    assert "holds probabilities" in ds.report.notes[0]


def test_logits_with_positive_values_are_said_to_be_logits(tmp_path: Path) -> None:
    ds = load(write(tmp_path, [{"logits": [2.0, 0.0, 0.0, 0.0], "gold": 0}]))
    assert ds.rows.stated[0] == pytest.approx(math.exp(2) / (math.exp(2) + 3))
    assert "unnormalised logits" in ds.report.notes[0]


def test_huge_logits_do_not_overflow(tmp_path: Path) -> None:
    ds = load(write(tmp_path, [{"logits": [1000.0, 999.0, -1000.0], "gold": 1}]))
    assert ds.rows.stated[0] == pytest.approx(1 / (1 + math.exp(-1)))
    assert not ds.rows.correct[0]


@pytest.mark.parametrize("norm", ["char", "byte", "token"])
def test_length_normalisation_matches_per_row_division(tmp_path: Path, norm: str) -> None:
    rng = random.Random(3)
    words = ["Paris", "Lyon", "Saint-Étienne", "Nîmes", "a", "Aix-en-Provence"]
    items = []
    for _ in range(80):
        texts = [" " + rng.choice(words) for _ in range(4)]
        items.append({"logprobs": [-rng.uniform(0.1, 20) for _ in range(4)], "gold": rng.randrange(4),
                      "choices": texts, "token_counts": [rng.randint(1, 9) for _ in range(4)]})
    ds = load(write(tmp_path, items), options=LoadOptions(normalisation=norm))
    for i, it in enumerate(items):
        if norm == "token":
            lens = it["token_counts"]
        else:  # the leading space (delimiter) is not counted
            lens = [len(t[1:]) if norm == "char" else len(t[1:].encode()) for t in it["choices"]]
        sc = [s / n for s, n in zip(it["logprobs"], lens, strict=True)]
        pred, conf, ok = brute(sc, it["gold"])
        assert ds.rows.options.pred[i] == pred
        assert ds.rows.stated[i] == pytest.approx(conf, rel=1e-12)
        assert bool(ds.rows.correct[i]) == ok
    assert ds.rows.options.normalisation == norm
    assert any(n.startswith(f"normalisation: {norm}") for n in ds.report.notes)


def test_char_normalisation_without_texts_is_a_clear_error(tmp_path: Path) -> None:
    p = write(tmp_path, [{"logprobs": [-1, -2], "gold": 0}])
    with pytest.raises(CalibError, match=r"normalisation 'char' needs the choice texts .*choices"):
        load(p, options=LoadOptions(normalisation="char"))
    with pytest.raises(CalibError, match="unknown normalisation 'chars'"):
        load(p, options=LoadOptions(normalisation="chars"))


def test_bad_lines_are_reported_and_good_ones_kept(tmp_path: Path) -> None:
    lines = [
        {"logprobs": [-1, -2, -3], "gold": 0},
        "",
        "{not json",
        {"logprobs": [-1, "x"], "gold": 0},
        {"logprobs": [-1, -2], "gold": 7},
        {"logprobs": [-1, -2], "gold": "Q"},
        {"logprobs": [-1], "gold": 0},
        {"logprobs": [-1, -2]},
        "[1, 2]",
        {"logprobs": "-1,-2", "gold": 0},
        {"logprobs": [-0.5, -3], "gold": "1"},
    ]
    ds = load(write(tmp_path, lines))
    rep = ds.report
    assert rep.kept == 2 and rep.blank == 1 and rep.lines_read == 11
    assert rep.kept + rep.dropped + rep.blank == rep.lines_read
    by_line = {i.line: i for i in rep.issues}
    assert by_line[3].reason == "invalid JSON"
    assert by_line[4].reason == "score not a number" and "option B" in by_line[4].detail
    assert by_line[5].reason == "gold out of range"
    assert by_line[6].reason == "gold not an option"
    assert by_line[7].reason == "fewer than 2 options"
    assert by_line[8].reason == "no gold option"
    assert by_line[9].reason == "not a JSON object"
    assert by_line[10].reason == "scores not a list"
    assert ds.rows.line.tolist() == [1, 11]
    assert ds.rows.correct.tolist() == [True, False]  # gold "1" is index 1
    assert by_line[5].message().startswith("lp.jsonl:line 5 [gold]: ")


def test_strict_stops_at_the_first_bad_line(tmp_path: Path) -> None:
    p = write(tmp_path, [{"logprobs": [-1, -2], "gold": 0}, {"logprobs": [-1, -2], "gold": 9}])
    with pytest.raises(CalibError, match=r"lp.jsonl:line 2 \[gold\]: gold index 9 .*strict"):
        load(p, options=LoadOptions(strict=True))


def test_truncated_file_names_the_cut_line(tmp_path: Path) -> None:
    items = random_items(20, seed=4)
    full = "\n".join(json.dumps(x) for x in items) + "\n"
    cut = full[: full.index("\n", full.index("i16")) - 15]  # inside line 17
    p = tmp_path / "cut.jsonl"
    p.write_text(cut)
    ds = load(p)
    assert ds.report.kept == 16
    (issue,) = ds.report.issues
    assert issue.line == 17 and issue.reason == "truncated line"
    assert "cut off" in issue.message()
    with pytest.raises(CalibError, match=r"cut.jsonl:line 17: the last line is cut off"):
        load(p, options=LoadOptions(strict=True))


def test_nothing_usable_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CalibError, match=r"no line has option scores"):
        logprobs.read(Source("x.jsonl", b'{"confidence": 3}\n'), LoadOptions())
    with pytest.raises(CalibError, match=r"x.jsonl: no usable line .*gold index 5"):
        logprobs.read(Source("x.jsonl", b'{"logprobs": [-1, -2], "gold": 5}\n'), LoadOptions())


def test_sniffed_as_logprobs() -> None:
    for key in ("logprobs", "choice_logprobs", "option_logprobs", "logits", "probs", "option_probs"):
        assert sniff_format("f.jsonl", json.dumps({key: [0, 1], "gold": 0}).encode()) == "logprobs"


def test_letter_bias_matches_counting_by_hand(tmp_path: Path) -> None:
    rng = random.Random(5)
    items = []
    for _ in range(400):
        sc = [rng.gauss(0, 1) for _ in range(4)]
        sc[0] += 0.8  # a model that likes "A"
        items.append({"logits": sc, "gold": rng.randrange(4)})
    ds = load(write(tmp_path, items))
    lb = letter_bias(ds.rows.options)
    for k, letter in enumerate("ABCD"):
        preds = [(brute(it["logits"], it["gold"])) for it in items]
        mine = [(p, c, ok) for (p, c, ok) in preds if p == k]
        assert lb.letters[k] == letter
        assert lb.predicted[k] == len(mine)
        assert lb.gold[k] == sum(it["gold"] == k for it in items)
        assert lb.predicted_share[k] == pytest.approx(len(mine) / 400)
        assert lb.mean_confidence[k] == pytest.approx(sum(c for _, c, _ in mine) / len(mine))
        assert lb.accuracy[k] == pytest.approx(sum(ok for *_, ok in mine) / len(mine))
    frame = lb.to_frame()
    assert frame.loc[0, "bias"] > 0.1  # the "A" preference shows
    assert list(frame.columns)[:3] == ["letter", "predicted", "gold"]


def test_damaged_files_raise_only_calib_errors(tmp_path: Path) -> None:
    data = write(tmp_path, random_items(50, seed=9)).read_bytes()
    for i, d in enumerate(mutations(data, seed=12, count=60, junk=(*JUNK, b"Infinity"))):
        for norm in ("none", "char"):
            try:
                logprobs.read(Source("f.jsonl", d), LoadOptions(normalisation=norm))
            except CalibError:
                pass
            except Exception as exc:  # pragma: no cover
                pytest.fail(f"mutation {i} raised {type(exc).__name__}: {exc}")


# ------------------------------------------------------------------ issue 22: many options
def test_option_labels_are_built_once_not_once_per_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """The labels A, B... were rebuilt for every option of every row (10k options per row:
    31 s for 158 kB): the labels built must stay linear in the options read."""
    import calib.options

    built = [0]
    real = calib.options.option_letters

    def counting(k: int) -> tuple[str, ...]:
        built[0] += k
        return real(k)

    monkeypatch.setattr(logprobs, "option_letters", counting)
    rows = [{"id": f"q{i}", "logprobs": [-1.0 - (j % 7) for j in range(400)], "gold": i % 3} for i in range(5)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    got, report = logprobs.read(Source("many.jsonl", data), LoadOptions())
    assert report.kept == 5 and got.options is not None and got.options.logits.shape == (5, 400)
    assert built[0] <= 2 * 400 * 5, built[0]  # was 400 per option: 800,000


def test_a_row_with_more_options_than_the_cap_is_a_bad_line_the_others_kept() -> None:
    from calib.options import MAX_OPTIONS

    good = [{"id": f"q{i}", "logprobs": [-0.5, -1.5, -2.0], "gold": i % 3} for i in range(6)]
    big = {"id": "big", "logprobs": [-1.0] * (MAX_OPTIONS + 1), "gold": 0}
    lines = good[:3] + [big] + good[3:]
    data = "".join(json.dumps(r) + "\n" for r in lines).encode()
    rows, report = logprobs.read(Source("cap.jsonl", data), LoadOptions())
    assert report.kept == 6 and report.dropped == 1
    (issue,) = report.issues
    assert issue.line == 4 and f"{MAX_OPTIONS + 1:,} options, over the {MAX_OPTIONS:,}" in issue.message()
    # dict rows whose keys differ: the columns (the union of the keys) are capped too
    many = [{"id": f"d{i}", "option_probs": {f"k{i}_{j}": 0.5 for j in range(2)}, "answer": f"k{i}_0"}
            for i in range(MAX_OPTIONS // 2 + 1)]
    data = "".join(json.dumps(r) + "\n" for r in many).encode()
    with pytest.raises(CalibError, match=rf"cols\.jsonl: the rows name {MAX_OPTIONS + 2:,} different options"):
        logprobs.read(Source("cols.jsonl", data), LoadOptions())


def test_a_table_of_rows_by_options_over_the_parse_budget_is_refused_before_it_is_built() -> None:
    """A few wide rows among many narrow ones: every row is padded to the widest."""
    rows = [{"id": f"q{i}", "logprobs": [-0.5, -1.5], "gold": 0} for i in range(3)]
    rows.insert(1, {"id": "wide", "logprobs": [-1.0] * 900, "gold": 0})
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    with pytest.raises(CalibError, match=r"w\.jsonl: 4 rows x 900 option columns \(the widest row is line 2\)"):
        logprobs.read(Source("w.jsonl", data), LoadOptions(max_parse_bytes=8 * 4 * 900 - 1))
    assert logprobs.read(Source("w.jsonl", data), LoadOptions(max_parse_bytes=8 * 4 * 900))[1].kept == 4


def test_no_usable_line_counts_with_thousands_separators(tmp_path: Path) -> None:
    """Issue 22: counts in messages carry thousands separators ("1,200 fewer than 2 options")."""
    from calib.errors import CalibError
    from calib.loading import load

    p = write(tmp_path, [{"logprobs": [-1.0], "gold": 0}] * 1200)
    with pytest.raises(CalibError, match="no usable line \\(1,200 fewer than 2 options\\)"):
        load(p)
