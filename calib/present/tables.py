"""The tables that the pages, the reports and the CLI all show, each built once.

- :func:`comparison_table` / :func:`comparison_markdown`: several models side by side
  (:class:`calib.compare.Comparison`) in the blog post's layout, as formatted text;
- :func:`per_value_frame`: what each stated value meant (:class:`calib.metrics.ValueRow`),
  as numbers in percent.

Every figure is written with :mod:`calib.present.format`; nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from calib.present.format import MISSING, ci_text, num, pct, term

if TYPE_CHECKING:  # pandas is imported where a frame is built: the text report needs none
    import pandas as pd

    from calib.audit import Audit
    from calib.compare import Comparison, ModelRow
    from calib.decision import JudgeComparison
    from calib.estimates import Estimate
    from calib.loadreport import LoadReport
    from calib.maps import CalibrationMap, FitResult
    from calib.metrics import ValueRow
    from calib.scale import Scale

#: Columns of :func:`per_value_frame` that hold percentages (one decimal reads well).
PER_VALUE_PERCENT_COLUMNS: tuple[str, ...] = (
    "share (%)", "hit rate (%)", "CI low (%)", "CI high (%)", "stated minus hit rate (percentage points)")


def comparison_table(c: Comparison) -> pd.DataFrame:
    """The comparison as formatted text in the blog's layout, one column per heading:
    Model, Right, Mean stated, Said <at> or more, Right when it did, Calibration error
    (ECE with its interval), Brier vs constant (with the paired test's winner)."""
    import pandas as pd

    at_label = _at_label(c.rows, c.at)
    return pd.DataFrame([{
        "Model": r.model,
        "Right": pct(r.accuracy, 1),
        "Mean stated": num(r.mean_stated, 1 if r.scale != "0-1" else 3),
        f"Said {at_label} or more": MISSING if r.share_at is None else f"{pct(r.share_at, 0)} of answers",
        "Right when it did": pct(r.right_when_at, 1),
        "Calibration error": _with_ci(r.ece),
        "Brier vs constant": _brier_text(r),
    } for r in c.rows])


def comparison_markdown(c: Comparison) -> str:
    """:func:`comparison_table` as Markdown (user text escaped for table cells)."""
    return markdown_table(comparison_table(c))


def with_decision_columns(df: pd.DataFrame, jc: JudgeComparison, *, with_costs: bool = False) -> pd.DataFrame:
    """:func:`comparison_table` with each judge's recommended threshold, items accepted
    unseen, error among accepted with its bound and (``with_costs``) its cheapest cost
    (:func:`calib.present.decision.judge_rows`), matched on the judge's name."""
    import pandas as pd

    from calib.present.decision import judge_rows

    extra = pd.DataFrame(judge_rows(jc, with_costs=with_costs)).rename(columns={"Judge": "Model"})
    out = df.merge(extra, on="Model", how="left", sort=False)
    return out.fillna(MISSING)


def markdown_table(df: pd.DataFrame) -> str:
    """A table of text as Markdown (``|`` escaped and line breaks flattened in cells)."""
    head = "| " + " | ".join(df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    lines = [head, sep]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |")
    return "\n".join(lines)


def _with_ci(e: Estimate) -> str:
    ci = ci_text(e.ci, 2)
    return f"{num(e.value, 2)} {ci}" if e.value is not None and ci else num(e.value, 2)


def _brier_text(r: ModelRow) -> str:
    if r.brier.value is None or r.brier_constant.value is None:
        return MISSING
    # the paired test decides (as in the audit); the p-value is in the JSON
    who = {"constant": "constant wins", "stated": "stated wins"}.get(r.brier_winner or "", "no clear winner")
    return f"{num(r.brier.value)} vs {num(r.brier_constant.value)} ({who})"


def _at_label(rows: Sequence[ModelRow], at: float) -> str:
    labels = {f"{r.at_stated:g}" for r in rows}
    return labels.pop() if len(labels) == 1 else f"{100 * at:g}%"


def per_value_frame(rows: Sequence[ValueRow], *, digits: int | None = None) -> pd.DataFrame:
    """What each stated value meant, one row per value: stated, answers, share (%), right,
    hit rate (%), CI low (%) and CI high (%) (Wilson), stated minus hit rate (percentage
    points); percentages rounded to ``digits`` decimals when given (for a report whose
    cells are written as they are), else left for the viewer to format
    (:data:`PER_VALUE_PERCENT_COLUMNS`)."""
    import pandas as pd

    def p(x: float) -> float:
        return 100 * x if digits is None else round(100 * x, digits)

    return pd.DataFrame(
        [{"stated": r.value, "answers": r.n, "share (%)": p(r.share), "right": r.correct,
          "hit rate (%)": p(r.hit_rate.value), "CI low (%)": p(r.hit_rate.lo),
          "CI high (%)": p(r.hit_rate.hi),
          "stated minus hit rate (percentage points)": p(r.gap)} for r in rows],
        columns=["stated", "answers", *PER_VALUE_PERCENT_COLUMNS[:1], "right", *PER_VALUE_PERCENT_COLUMNS[1:]],
    )


#: The audit's tests in the order they are shown: key, short name, what each checks. The
#: one source of their names for the text report, the HTML report and the pages.
TESTS: tuple[tuple[str, str, str], ...] = (
    ("calibration_in_the_large", "Calibration-in-the-large", "mean stated = accuracy"),
    ("goodness_of_fit", "Goodness of fit", "every bin's hit rate = its stated value"),
    ("cox_lr", "Cox recalibration (LR)", "intercept 0, slope 1"),
    ("brier_vs_constant", "Brier vs constant (paired)", "the stated confidence vs the constant base rate"),
    ("spiegelhalter", "Spiegelhalter Z (not used)",
     "reported, never decides: blind to common LLM failures"),
    ("auroc_vs_chance", "AUROC vs chance (M-W U)", "the confidence ranks right answers above wrong ones"),
)


def test_label(key: str, scheme: str) -> str:
    """A test's short name; the goodness of fit says whether it runs per value or on bins."""
    if key == "goodness_of_fit":
        return "Per-value goodness of fit" if scheme == "values" else "Binned goodness of fit"
    return next(label for k, label, _ in TESTS if k == key)


def tests_frame(a: Audit) -> pd.DataFrame:
    """One row per test: its name, what it checks, the statistic, the p-value (as
    :func:`calib.present.format.p_value` writes it) and the test's note."""
    import pandas as pd

    from calib.present.format import p_value

    rows = []
    for key, _, checks in TESTS:
        t = a.tests[key]
        rows.append({"test": test_label(key, a.scheme), "checks": checks, "statistic": t.statistic,
                     "p-value": p_value(t.p_value, t.log10_p, bound=t.p_bound), "note": t.note})
    return pd.DataFrame(rows, columns=["test", "checks", "statistic", "p-value", "note"])


def map_formula(cmap: CalibrationMap) -> str:
    """The map in one line: its formula with its parameters written in (each added term with
    its own sign: ``sigmoid(0.7564 logit f(s) - 0.8824)``, never ``+ -``)."""
    prm, m = cmap.params, cmap.method
    f = f"f(s) = stated probability with the continuity correction c = {cmap.correction:g}"
    if cmap.steps is not None and cmap.scale.hi - cmap.scale.lo < 2:
        f += f" in steps of {1 / cmap.steps:g}"  # on 0-1, the resolution of the fitting data
    if m == "platt":
        return f"q = sigmoid({prm['slope']:.4f} logit f(s) {term(prm['intercept'])}); {f}"
    if m == "temperature":
        return f"q = sigmoid(logit f(s) / T), T = {prm['T']:.4f}; {f}"
    if m == "beta":
        return (f"q = sigmoid({prm['a']:.4f} ln f(s) {term(-prm['b'])} ln(1 - f(s)) {term(prm['c'])}); {f}")
    if m == "isotonic":
        return f"isotonic (PAV) fit through {len(prm['x'])} points, linear between them, flat beyond the ends"
    if m == "histogram":
        return f"histogram binning: the fitting data's hit rate in each of {len(prm['prob'])} bins"
    if m == "softmax_temperature":
        return (f"q = max_k softmax(l / T)_k over each item's option scores l, T = {prm['T']:.4f} "
                "(Guo et al. 2017)")
    return f"q = {prm['p']:.4f} for every stated value (the base rate)"


#: Columns of :func:`map_table_frame`, in words.
MAP_COLUMNS: dict[str, str] = {
    "stated": "stated", "prob": "calibrated probability", "n_fit": "answers (fit)",
    "hit_rate_fit": "hit rate (fit)", "n_eval": "answers (scored)", "hit_rate_eval": "hit rate (scored)",
}


def map_table_frame(fit: FitResult) -> pd.DataFrame:
    """What the map sends each stated value to, with the hit rates it was fitted and scored
    on, as text: percentages with one decimal, counts with separators, and
    :data:`calib.present.format.MISSING` (never ``None``) for a value absent from one side."""
    import pandas as pd

    def cell(key: str, x: object) -> str:
        if x is None:
            return MISSING
        if key in ("n_fit", "n_eval"):
            return f"{int(x):,}"  # type: ignore[call-overload]
        if key == "stated":
            from calib.wording import value

            return value(float(x))  # type: ignore[arg-type]
        return pct(float(x))  # type: ignore[arg-type]

    rows = [{MAP_COLUMNS[k]: cell(k, r.get(k)) for k in MAP_COLUMNS} for r in fit.table]
    return pd.DataFrame(rows, columns=list(MAP_COLUMNS.values()))


#: The letter-bias table's columns (:meth:`calib.options.LetterBias.to_frame`) in words.
LETTER_COLUMNS: dict[str, str] = {
    "letter": "option letter", "predicted": "times predicted", "gold": "times correct (gold)",
    "predicted_share": "share predicted (%)", "gold_share": "share correct (%)",
    "bias": "predicted minus gold share (points)", "mean_confidence": "mean confidence when predicted (%)",
    "accuracy_when_predicted": "right when predicted (%)",
}
#: Letter-bias columns that are proportions (shown in percent).
LETTER_PERCENT = ("predicted_share", "gold_share", "bias", "mean_confidence", "accuracy_when_predicted")


def letter_bias_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The letter-bias table with its columns in words, proportions in percent (one decimal)."""
    df = df.copy()
    for c in LETTER_PERCENT:
        if c in df.columns:
            df[c] = (100 * df[c]).round(1)
    return df.rename(columns={c: LETTER_COLUMNS.get(c, c.replace("_", " ")) for c in df.columns})


def maps_frame(fits: dict[str, FitResult], best: str | None, labels: dict[str, str]) -> pd.DataFrame:
    """Every map's held-out scores side by side (the Recalibration page before a choice):
    Brier and ECE of the stated confidence and after the map, each with its interval, the
    paired change, and which map the engine picks (:func:`calib.maps.best_method`)."""
    import pandas as pd

    from calib.present.format import estimate, signed

    rows = []
    for method, f in fits.items():
        ch = f.change.brier
        rows.append({
            "map": labels.get(method, method),
            "Brier, stated": estimate(f.before.brier.value, f.before.brier.lo, f.before.brier.hi, _n4),
            "Brier after the map": estimate(f.after.brier.value, f.after.brier.lo, f.after.brier.hi, _n4),
            "change": estimate(ch.value, ch.lo, ch.hi, lambda x: signed(x, 4)),
            "ECE after the map": estimate(f.after.ece.value, f.after.ece.lo, f.after.ece.hi),
            "best": "best" if method == best else "",
            "note": f"useless: {f.reason}" if f.useless else "",
        })
    return pd.DataFrame(rows, columns=["map", "Brier, stated", "Brier after the map", "change", "ECE after the map",
                                       "best", "note"])


def _n4(x: float | None) -> str:
    return num(x, 4)


def scale_words(text: str) -> str:
    """The engine's scale wording in the dashboard's words, not the CLI's flag: ``given:
    --rescale 0,200`` (kept in the JSON) reads "set by you: 0 to 200", and a warning's
    ``--rescale 1,10`` reads "the scale 1 to 10"."""
    import re

    text = re.sub(r"given: --rescale ([^,\s]+),([^\s;:?)]+)", r"set by you: \1 to \2", text)
    return re.sub(r"--rescale ([^,\s]+),([^\s;:?)]+)", r"the scale \1 to \2", text)


def platform_line(report: LoadReport) -> str | None:
    """Which eval platform wrote the file, and what it held (its reader's first note), for
    a file of an eval or tracing platform (:data:`calib.readers.base.PLATFORMS`); else ``None``."""
    from calib.readers.base import PLATFORMS

    if report.format not in PLATFORMS or not report.notes:
        return None
    return f"Format: {report.format} ({report.notes[0]})."


def load_lines(report: LoadReport, scale: Scale) -> list[str]:
    """A load report for people, each fact once: what was read and kept, the scale and
    how it was found, the fields detected (role <- field), then the reader's other notes
    (those repeating a field or the scale are left out: they are in the lines above)."""
    lines = [report.summary()]
    lines.append(f"scale: {scale.name} [{scale.lo:g}, {scale.hi:g}]"
                 + (f" ({scale_words(scale.how)})" if scale.how else ""))
    used = {k: v for k, v in report.fields.items() if v}
    if used:
        lines.append("fields: " + ", ".join(f"{k} <- {v}" for k, v in used.items()))
    repeats = tuple(f"{k}: " for k in report.fields) + ("scale: ",)
    lines += [n for n in report.notes if not n.startswith(repeats)]
    return lines
