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

from calib.present.format import MISSING, ci_text, num, pct

if TYPE_CHECKING:  # pandas is imported where a frame is built: the text report needs none
    import pandas as pd

    from calib.audit import Audit
    from calib.compare import Comparison, ModelRow
    from calib.decision import JudgeComparison
    from calib.metrics import ValueRow

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
        "Calibration error": _with_ci(r.ece, r.ece_lo, r.ece_hi),
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


def _with_ci(x: float | None, lo: float | None, hi: float | None) -> str:
    ci = ci_text((lo, hi), 2)
    return f"{num(x, 2)} {ci}" if x is not None and ci else num(x, 2)


def _brier_text(r: ModelRow) -> str:
    if r.brier is None or r.brier_constant is None:
        return MISSING
    # the paired test decides (as in the audit); the p-value is in the JSON
    who = {"constant": "constant wins", "stated": "stated wins"}.get(r.brier_winner or "", "no clear winner")
    return f"{num(r.brier)} vs {num(r.brier_constant)} ({who})"


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
          "hit rate (%)": p(r.hit_rate), "CI low (%)": p(r.lo), "CI high (%)": p(r.hi),
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
