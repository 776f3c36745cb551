"""Hand-off: a review's final labels, assignment and agreement as records, written as
JSONL or spreadsheet-safe CSV and read back (the labels themselves:
:func:`calib.labels.records.labels_to_jsonl` and co.).

Contract
--------
- **Records.** A record is a flat ``dict`` with the fields of its kind, in order
  (:data:`FIELDS`), each of one type (:data:`TYPES`: text, a bool, a whole number, a
  number, or one of these or missing, ``None``):

  - ``final`` (:func:`final_records`): one per item of the labels, its final label by
    :func:`calib.labels.final.final_labels`' rule (``correct`` ``None`` for a tie or an item
    only unsure), why (``status``), the counts of right, wrong and unsure labels, the
    adjudicator (``""`` unless adjudicated) and the time the label was fixed (the
    adjudication's, else the latest counted label's);
  - ``assignment`` (:func:`assignment_records`): one per (item, reviewer) that took an
    item (``labelled``, ``held``, ``released``: a hold that expired, ``skipped``), and one
    ``open`` record (reviewer ``""``) per item nobody took, each with the labels
    planned for the item (:func:`calib.hosting.assignment.planned_labels`);
  - ``agreement`` (:func:`agreement_records`): one per figure of
    :meth:`calib.labels.report.ReviewReport.agreement_dict`, what ``calib labels agreement
    --json`` prints: the four statistics, each reviewer's agreement with the final
    labels, the disagreement rate and the reviewers' error rate, with their intervals.

- **Files.** :func:`to_jsonl` writes one JSON object per record; :func:`to_csv` a header
  and one row per record, every text cell through :func:`calib.labels.records.csv_cell`
  (the project's spreadsheet rule, :func:`calib.routing.spreadsheet_cell`: a
  formula-like cell gets a leading apostrophe) and quoted, bools ``true``/``false``,
  numbers as Python writes them (``repr``: read back exactly), ``None`` an empty cell.
  :func:`read_records` reads either back (the format sniffed), checking every field's
  type and naming each bad line; export then import is the identity.
- **Back into the audit.** :func:`final_as_labels` turns final labels into adjudications
  (the adjudicator, else ``"final label"``), which the final-label rule takes as they
  are; :func:`read_any_labels` reads a labels file or a final-labels file, so
  ``calib audit FILE --labels final.csv``, ``calib labels import`` and the Review page's
  import accept either.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from calib.errors import CalibError
from calib.labels.final import adjudications, final_labels
from calib.labels.records import (
    ADJUDICATION,
    MAX_MESSAGES,
    Label,
    csv_cell,
    csv_uncell,
    current,
    for_dataset,
    label_problem,
    parse_time,
    read_labels,
)
from calib.labels.report import ReviewReport
from calib.readers.base import BadLines, LoadOptions
from calib.readers.jsonl import BOM, check_lines_cost, json_objects

#: The fields of each kind of record, in order (the CSV header, the JSONL keys).
FIELDS: dict[str, tuple[str, ...]] = {
    "final": ("dataset", "item", "correct", "status", "right", "wrong", "unsure", "adjudicator", "time"),
    "assignment": ("dataset", "item", "planned", "reviewer", "state", "time"),
    "agreement": ("dataset", "figure", "reviewer", "estimate", "lower", "upper", "level", "items", "note"),
}
#: Each field's type: ``str``, ``bool``, ``int``, ``float``; ``?`` after it: may be missing (``None``).
TYPES: dict[str, str] = {
    "dataset": "str", "item": "str", "correct": "bool?", "status": "str", "right": "int", "wrong": "int",
    "unsure": "int", "adjudicator": "str", "time": "str", "planned": "int", "reviewer": "str", "state": "str",
    "figure": "str", "estimate": "float?", "lower": "float?", "upper": "float?", "level": "float",
    "items": "int?", "note": "str",
}
#: The reviewer of a final label imported by majority (no adjudicator).
FINAL_REVIEWER = "final label"
#: The states of an assignment record.
STATES = ("labelled", "held", "released", "skipped", "open")


# ------------------------------------------------------------------ the records
def final_records(labels: Sequence[Label], *, dataset: str | None = None) -> list[dict[str, Any]]:
    """One record per item: its final label and why (see the module)."""
    mine = for_dataset(labels, dataset)
    fin = final_labels(mine)
    adj = adjudications(mine)
    latest: dict[str, str] = {}
    for lab in current(x for x in mine if x.kind != ADJUDICATION):
        if lab.item not in latest or parse_time(lab.time) > parse_time(latest[lab.item]):
            latest[lab.item] = lab.time
    name = dataset if dataset is not None else (mine[0].dataset if mine else "")
    out = []
    for i, item in enumerate(fin.items):
        a = adj.get(item)
        out.append({"dataset": name, "item": item, "correct": fin.correct[i], "status": fin.status[i],
                    "right": fin.right[i], "wrong": fin.wrong[i], "unsure": fin.unsure[i],
                    "adjudicator": a.reviewer if a is not None else "",
                    "time": a.time if a is not None else latest.get(item, "")})
    return out


def assignment_records(rows: Iterable[tuple[str, int, str, str, str]], dataset: str) -> list[dict[str, Any]]:
    """Records of ``(item, planned, reviewer, state, time)`` rows, as the share store's
    :meth:`calib.hosting.assignment.AssignmentCatalog.assignment_rows` gives them."""
    out = []
    for item, planned, reviewer, state, time in rows:
        if state not in STATES:
            raise CalibError(f"assignment of item {item[:80]!r}: unknown state {state!r}")
        out.append({"dataset": dataset, "item": item, "planned": int(planned), "reviewer": reviewer,
                    "state": state, "time": time})
    return out


def agreement_records(report: ReviewReport, *, dataset: str = "") -> list[dict[str, Any]]:
    """One record per figure of ``report.agreement_dict()`` (see the module)."""
    d = report.agreement_dict()
    level, items = float(d["interval"]["level"]), int(d["items"])

    def rec(figure: str, est: Any, ci: Any, *, reviewer: str = "", n: int | None = None, note: str = "") -> dict:
        lo, hi = ci if ci is not None else (None, None)
        return {"dataset": dataset, "figure": figure, "reviewer": reviewer, "estimate": _num(est),
                "lower": _num(lo), "upper": _num(hi), "level": level, "items": n, "note": note}

    out = [rec(k, d[k]["estimate"], d[k]["ci"], n=items, note=d[k].get("reason") or "")
           for k in ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement")]
    out += [rec("agreement_with_final", r["estimate"], r["ci"], reviewer=r["reviewer"], n=r["compared"])
            for r in d["per_reviewer"]]
    err = d["reviewer_error"]
    double = int(err["double_coded"])
    out.append(rec("disagreement", err["disagreement"]["estimate"], err["disagreement"]["ci"], n=double))
    out.append(rec("reviewer_error", err["error"]["estimate"], err["error"]["ci"], n=double, note=err["model"]))
    out.append(rec("reviewer_error_max", err["error_max"], None, n=double,
                   note="the per-label error rate at most, whatever the direction of the errors"))
    return out


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


# ------------------------------------------------------------------ files
def to_jsonl(records: Iterable[dict[str, Any]], kind: str) -> bytes:
    """One JSON object per record (keys :data:`FIELDS` of ``kind``), UTF-8."""
    fields = FIELDS[kind]
    return "".join(json.dumps({f: r[f] for f in fields}, ensure_ascii=False) + "\n" for r in records).encode()


def to_csv(records: Iterable[dict[str, Any]], kind: str) -> bytes:
    """A header and one row per record, spreadsheet-safe and exact (see the module)."""
    fields = FIELDS[kind]
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    w.writerow(fields)
    for r in records:
        w.writerow([_cell(r[f]) for f in fields])
    return buf.getvalue().encode("utf-8")


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)  # quoted: the exact float, never a locale's rounding
    return csv_cell(v) if isinstance(v, str) else v


def read_records(data: bytes, name: str, kind: str, *, options: LoadOptions | None = None
                 ) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """Records of ``kind`` from :func:`to_jsonl` or :func:`to_csv` output: the valid ones
    in file order and one message per bad line (at most :data:`MAX_MESSAGES`); limits
    checked before parsing (:func:`calib.readers.jsonl.check_lines_cost`)."""
    opts = options or LoadOptions()
    if len(data) > opts.max_decompressed_bytes:
        raise CalibError(f"{name}: over the {opts.max_decompressed_bytes:,} bytes a {kind} file may hold")
    if data.count(b"\n") + (not data.endswith(b"\n")) > opts.max_rows:
        raise CalibError(f"{name}: more than {opts.max_rows:,} lines; refused (raise CALIB_MAX_ROWS if this "
                         "file is genuine)")
    check_lines_cost(data, name, opts)
    data = data.removeprefix(BOM)
    msgs = BadLines(name, MAX_MESSAGES)
    out = []
    if data.lstrip()[:1] == b"{":
        for no, obj in json_objects(data, opts.max_line_chars, msgs.add):
            rec = _record(obj, kind, no, msgs, from_csv=False)
            if rec is not None:
                out.append(rec)
        return out, msgs.messages()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CalibError(f"{name} line {line}: bytes that are not UTF-8 (neither JSONL nor a UTF-8 CSV)") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        missing = [f for f in FIELDS[kind] if f not in header]
        if missing:
            raise CalibError(f"{name} line 1: not a {kind} file: the header lacks " + ", ".join(missing))
        for row in reader:
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                msgs.add(reader.line_num, f"{len(row)} cells where the header has {len(header)}")
                continue
            rec = _record(dict(zip(header, row, strict=True)), kind, reader.line_num, msgs, from_csv=True)
            if rec is not None:
                out.append(rec)
    except csv.Error as exc:
        msgs.add(reader.line_num, f"the CSV row cannot be read ({exc})")
    return out, msgs.messages()


def _record(obj: dict[str, Any], kind: str, no: int, msgs: BadLines, *, from_csv: bool) -> dict[str, Any] | None:
    rec = {}
    for f in FIELDS[kind]:
        if f not in obj:
            msgs.add(no, f"{f} is missing")
            return None
        v = _typed(obj[f], TYPES[f], from_csv)
        if v is _BAD:
            msgs.add(no, f"{f} must be {_WORDS[TYPES[f].rstrip('?')]}, got {str(obj[f])[:60]!r}")
            return None
        rec[f] = v
    return rec


_BAD = object()
_WORDS = {"str": "text", "bool": "true or false", "int": "a whole number", "float": "a number"}


def _typed(v: Any, typ: str, from_csv: bool) -> Any:  # noqa: PLR0911 - one return per type
    base, optional = typ.rstrip("?"), typ.endswith("?")
    if from_csv:
        if not isinstance(v, str):
            return _BAD
        if optional and v == "":
            return None
        if base == "str":
            return csv_uncell(v)
        if base == "bool":
            return {"true": True, "false": False}.get(v.strip().lower(), _BAD)
        try:
            return int(v) if base == "int" else float(v)
        except ValueError:
            return _BAD
    if v is None:
        return None if optional else _BAD
    ok = {"str": isinstance(v, str), "bool": isinstance(v, bool),
          "int": isinstance(v, int) and not isinstance(v, bool),
          "float": isinstance(v, (int, float)) and not isinstance(v, bool)}[base]
    return (float(v) if base == "float" else v) if ok else _BAD


# ------------------------------------------------------------------ back into the audit
def final_as_labels(records: Iterable[dict[str, Any]]) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """The final labels as adjudications (see the module), and a message per record that
    cannot be one (its time or item); ties and items only unsure have no label."""
    out, bad = [], []
    for n, r in enumerate(records, 1):
        if r["correct"] is None:
            continue
        lab = Label(item=r["item"], correct=r["correct"], reviewer=r["adjudicator"] or FINAL_REVIEWER,
                    time=r["time"], kind=ADJUDICATION, dataset=r["dataset"])
        why = label_problem(lab)
        if why is None:
            out.append(lab)
        elif len(bad) < MAX_MESSAGES:
            bad.append(f"final label {n}: {why}")
    return tuple(out), tuple(bad)


def is_final_file(data: bytes) -> bool:
    """Whether ``data`` looks like a final-labels file: its first line has the final
    records' ``status`` and ``adjudicator`` fields and no ``reviewer``."""
    first = data.removeprefix(BOM).lstrip().split(b"\n", 1)[0]
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if text.startswith("{"):
        try:
            keys = set(json.loads(text))
        except (ValueError, TypeError):
            return False
    else:
        keys = {c.strip() for c in next(csv.reader([text]), [])}
    return {"status", "adjudicator"} <= keys and "reviewer" not in keys


def read_any_labels(data: bytes, name: str, *, options: LoadOptions | None = None
                    ) -> tuple[tuple[Label, ...], tuple[str, ...]]:
    """Labels from a labels file (:func:`calib.labels.records.read_labels`) or from a
    final-labels file (:func:`read_records`, then :func:`final_as_labels`)."""
    if not is_final_file(data):
        return read_labels(data, name, options=options)
    records, bad = read_records(data, name, "final", options=options)
    labels, more = final_as_labels(records)
    return labels, (*bad, *more)
