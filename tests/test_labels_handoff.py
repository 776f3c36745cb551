"""The review's hand-off (issue 25, item 8): final labels, assignment and agreement as
JSONL and spreadsheet-safe CSV, read back exactly; final labels back into the audit; the
CLI (``calib labels export --what ...``) writes the records the page's functions make.

Expected values are written here from the labels the test gave (the final-label rule
and the assignment states by hand), or read with the csv module and sqlite3, never taken
from the code under test alone.
"""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.hosting.store import Store
from calib.hosting.workflow import Workflow
from calib.labels import Label, final_labels
from calib.labels import handoff as ho
from calib.labels.report import review_report
from tests.cli_run import run, strict
from tests.test_labels_store import DATA, PLAN, PLANS, make_share

T = "2026-12-01T18:30:{:02d}Z"
FORMULA = ['=HYPERLINK("http://evil.invalid","x")', "+1", "-2", "@SUM(A1)", "\uff1d1", "'quoted"]


def labels() -> list[Label]:
    """Three reviewers on six items: a majority, a tie, an item only unsure, an
    adjudicated disagreement, two single labels; hostile ids and names."""
    out = []
    spec = [  # item, [(reviewer, correct, unsure)], adjudication
        (FORMULA[0], [("=ann", True, False), ("bob", True, False), ("@cat", False, False)], None),
        (FORMULA[1], [("=ann", True, False), ("bob", False, False)], None),
        (FORMULA[2], [("=ann", True, True)], None),
        (FORMULA[3], [("=ann", True, False), ("bob", False, False)], False),
        (FORMULA[4], [("bob", False, False)], None),
        (FORMULA[5], [("@cat", True, False)], None),
    ]
    s = 0
    for item, said, adj in spec:
        for who, correct, unsure in said:
            out.append(Label(item=item, correct=correct, reviewer=who, time=T.format(s), kind="queue",
                             unsure=unsure, reasons=("ambiguous",) if unsure else ()))
            s += 1
        if adj is not None:
            out.append(Label(item=item, correct=adj, reviewer="+owner", time=T.format(s), kind="adjudication"))
            s += 1
    return out


def test_final_records_by_hand():
    got = {r["item"]: (r["correct"], r["status"], r["right"], r["wrong"], r["unsure"], r["adjudicator"], r["time"])
           for r in ho.final_records(labels())}
    assert got == {
        FORMULA[0]: (True, "majority", 2, 1, 0, "", T.format(2)),
        FORMULA[1]: (None, "tie", 1, 1, 0, "", T.format(4)),
        FORMULA[2]: (None, "unsure", 0, 0, 1, "", T.format(5)),
        FORMULA[3]: (False, "adjudicated", 1, 1, 0, "+owner", T.format(8)),
        FORMULA[4]: (False, "majority", 0, 1, 0, "", T.format(9)),
        FORMULA[5]: (True, "majority", 1, 0, 0, "", T.format(10)),
    }


def _agreement_records() -> list[dict]:
    return ho.agreement_records(review_report(labels(), reps=200, seed=1), dataset="=judge")


ASSIGNMENT = [("=a", 2, "=ann", "labelled", T.format(1)), ("=a", 2, "bob", "held", T.format(2)),
              ("+b", 1, "", "open", ""), ("c", 1, "@cat", "skipped", T.format(3)),
              ("d", 2, "bob", "released", T.format(4))]


@pytest.mark.parametrize("kind", ["final", "assignment", "agreement"])
@pytest.mark.parametrize("write", [ho.to_jsonl, ho.to_csv])
def test_every_kind_round_trips_exactly_in_both_formats(kind, write):
    records = {"final": lambda: ho.final_records(labels()),
               "assignment": lambda: ho.assignment_records(ASSIGNMENT, "=judge"),
               "agreement": _agreement_records}[kind]()
    assert records and all(list(r) == list(ho.FIELDS[kind]) for r in records)
    back, messages = ho.read_records(write(records, kind), f"x.{kind}", kind)
    assert messages == () and back == records
    if kind == "agreement":  # floats exact, missing figures None (Cohen's kappa of three reviewers)
        cohen = next(r for r in back if r["figure"] == "cohen_kappa")
        assert cohen["estimate"] is None and "these labels have 3" in cohen["note"]


@pytest.mark.parametrize("kind", ["final", "assignment", "agreement"])
def test_csv_neutralises_formula_cells(kind):
    records = {"final": lambda: ho.final_records(labels()),
               "assignment": lambda: ho.assignment_records(ASSIGNMENT, "=judge"),
               "agreement": _agreement_records}[kind]()
    rows = list(csv.reader(io.StringIO(ho.to_csv(records, kind).decode())))
    cells = [c for row in rows[1:] for c in row]
    risky = [c for c in cells if c[:1] in ("=", "+", "@", "\uff1d") or (c[:1] == "-" and not _number(c))]
    assert risky == []  # every formula-like text starts with an apostrophe
    assert any(c.startswith("'=") for c in cells) and any(c.startswith("'@") or c.startswith("'+") for c in cells)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_bad_records_are_named_by_line_and_the_rest_kept():
    good = ho.final_records(labels())[:2]
    lines = ho.to_jsonl(good, "final").decode().splitlines()
    bad = json.loads(lines[0]) | {"right": "two"}
    data = "\n".join([lines[0], json.dumps(bad), lines[1]]).encode()
    back, messages = ho.read_records(data, "final.jsonl", "final")
    assert back == good and messages == ("final.jsonl line 2: right must be a whole number, got 'two'",)
    with pytest.raises(CalibError, match="f.csv line 1: not a final file: the header lacks correct, status, right"):
        ho.read_records(b'"dataset","item"\n"a","b"\n', "f.csv", "final")


def test_final_labels_go_back_into_the_audit_as_the_same_final_labels():
    for write in (ho.to_jsonl, ho.to_csv):
        data = write(ho.final_records(labels()), "final")
        assert ho.is_final_file(data)
        back, messages = ho.read_any_labels(data, "final")
        assert messages == ()
        assert final_labels(back).of() == final_labels(labels()).of()
        assert {lab.kind for lab in back} == {"adjudication"}


def test_the_audit_on_a_final_labels_file_equals_the_audit_on_the_labels(tmp_path, capsys):
    from calib.labels.records import labels_to_csv
    from tests.test_labels_store import PLAN

    items = [it.item for it in PLAN.items[:6]]
    labs = [Label(item=i, correct=k % 2 == 0, reviewer=w, time=T.format(k), kind=PLAN.items[n].kind)
            for n, i in enumerate(items) for k, w in enumerate(("ann", "bob", "cat")[: 1 + n % 3])]
    (tmp_path / "judge.jsonl").write_bytes(DATA)
    (tmp_path / "labels.csv").write_bytes(labels_to_csv(labs))
    (tmp_path / "final.csv").write_bytes(ho.to_csv(ho.final_records(labs), "final"))
    got = [strict(run(["audit", tmp_path / "judge.jsonl", "--labels", tmp_path / f, "--reps", 0, "--json"],
                      capsys)[1]) for f in ("labels.csv", "final.csv")]
    keys = ("n", "correct", "accuracy", "brier", "ece", "auroc", "log_loss", "overconfidence")
    assert [got[0][k] for k in keys] == [got[1][k] for k in keys]
    plain = strict(run(["audit", tmp_path / "judge.jsonl", "--reps", 0, "--json"], capsys)[1])
    assert plain["correct"] != got[0]["correct"]  # the labels moved the outcomes: the check can fail


# ------------------------------------------------------------------ the store and the CLI
@pytest.fixture
def share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data_dir = tmp_path / "data"
    clock = [time.time()]
    store = Store.open(data_dir, clock=lambda: clock[0])
    r = make_share(store)
    flow = Workflow(assign=True, overlap=1.0, k=2)
    assert store.set_workflow(r.token, flow, owner_secret=r.owner_secret).ok
    monkeypatch.delenv("CALIB_SHARE_TOKEN", raising=False)
    monkeypatch.delenv("CALIB_OWNER_SECRET", raising=False)
    monkeypatch.setenv("CALIB_DATA_DIR", str(data_dir))
    return store, r, clock


def test_assignment_rows_by_state(share):
    store, r, clock = share
    keys = [it.item for it in PLAN.items]
    a = store.next_item(r.token, "", keys, "ann").item
    assert store.add_label(r.token, Label(item=a, correct=True, reviewer="ann", kind=PLAN.items[keys.index(a)].kind),
                           PLANS).ok
    b = store.next_item(r.token, "", keys, "bob").item  # the same item: planned for two
    assert b == a
    c = store.next_item(r.token, "", keys, "cat").item
    clock[0] += store.hold_seconds + 1  # cat left: released
    d = store.next_item(r.token, "", keys, "dan").item
    assert store.skip_item(r.token, "", d, "dan").ok
    rows = store.assignment_rows(r.token, "", keys, owner_secret=r.owner_secret)
    assert store.assignment_rows(r.token, "", keys) is None  # the owner's only
    took = {(i, w): s for i, _, w, s, _ in rows if s != "open"}
    expected = {(a, "ann"): "labelled", (a, "bob"): "released", (c, "cat"): "released", (d, "dan"): "skipped"}
    assert took == expected
    assert [i for i, _, _, s, _ in rows if s == "open"] == [k for k in keys if k not in {a, c, d}]
    assert {p for _, p, _, _, _ in rows} == {2}  # overlap 100%, k 2


@pytest.mark.parametrize("kind", ["final", "agreement", "assignment"])
def test_the_cli_writes_the_records_the_page_makes(share, tmp_path, capsys, kind):
    store, r, _ = share
    keys = [it.item for it in PLAN.items]
    for who, verdicts in (("ann", (True, False, True, True)), ("bob", (True, True, True, False))):
        for v in verdicts:
            item = store.next_item(r.token, "", keys, who).item
            kind_of = PLAN.items[keys.index(item)].kind
            assert store.add_label(r.token, Label(item=item, correct=v, reviewer=who, kind=kind_of), PLANS).ok
    history = list(store.labels(r.token).labels)
    page = {"final": lambda: ho.final_records(history, dataset=""),
            "agreement": lambda: ho.agreement_records(review_report(history, reps=300, seed=2), dataset=""),
            "assignment": lambda: ho.assignment_records(
                store.assignment_rows(r.token, "", keys, owner_secret=r.owner_secret), "")}[kind]()
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"{kind}.{fmt}"
        args = ["labels", "export", "--token", r.token, "--what", kind, "-o", out, "--reps", 300, "--seed", 2]
        code, _, err = run([*args, "--owner-secret", r.owner_secret], capsys)
        assert code == 0, err
        back, messages = ho.read_records(out.read_bytes(), out.name, kind)
        assert messages == () and back == page
    if kind == "agreement":  # the figures of calib labels agreement --json on the exported labels
        code, _, _ = run(["labels", "export", "--token", r.token, "-o", tmp_path / "l.jsonl"], capsys)
        js = strict(run(["labels", "agreement", tmp_path / "l.jsonl", "--json", "--reps", 300, "--seed", 2],
                        capsys)[1])
        fig = {x["figure"]: x for x in page if not x["reviewer"]}
        for key in ("fleiss_kappa", "krippendorff_alpha", "percent_agreement"):
            assert (fig[key]["estimate"], [fig[key]["lower"], fig[key]["upper"]]) == (js[key]["estimate"],
                                                                                       js[key]["ci"])
        assert fig["reviewer_error"]["estimate"] == js["reviewer_error"]["error"]["estimate"]


def test_the_cli_assignment_is_the_owners(share, capsys):
    _, r, _ = share
    code, _, err = run(["labels", "export", "--token", r.token, "--what", "assignment"], capsys)
    assert code == 2 and "--owner-secret: the assignment is the link owner's" in err


def test_limits_apply_before_parsing():
    from calib.readers.base import LoadOptions

    data = ho.to_jsonl(ho.final_records(labels()), "final")
    with pytest.raises(CalibError, match=r"final.jsonl: more than 3 lines; refused"):
        ho.read_records(data, "final.jsonl", "final", options=LoadOptions(max_rows=3))
    with pytest.raises(CalibError, match="over the 100 bytes a final file may hold"):
        ho.read_records(data, "final.jsonl", "final", options=LoadOptions(max_decompressed_bytes=100))


def test_bytes_that_are_not_utf8_are_named_by_line():
    data = ho.to_csv(ho.final_records(labels()), "final") + b'"x","\xff"\n'
    lines = data.count(b"\n")
    with pytest.raises(CalibError, match=f"final.csv line {lines}: bytes that are not UTF-8"):
        ho.read_records(data, "final.csv", "final")
