"""The Routing page's two-threshold certificate and cheapest certified chain of judges (issue 28):
each in an expander, computed when asked (a button), from :mod:`calib.decision.two_thresholds`
and :mod:`calib.decision.cascade`, written by :mod:`calib.present.two_stage`. Judge names are
user text: they reach the page through ``st.text`` and dataframes only."""

from __future__ import annotations

import streamlit as st

from calib.dataset import Dataset
from calib.errors import CalibError
from calib.hosting import view as views
from calib.present import format as fmt
from dashboard.chart import show_figure
from dashboard.context import Context
from dashboard.layout import show_error
from dashboard.results import settings_of


def show_two_thresholds(ds: Dataset, v: views.View) -> None:
    """The lower and upper thresholds certified together, with the p-value map."""
    import pandas as pd

    from calib.present.two_stage import pvalue_map, two_threshold_lines
    from calib.runs.decide import two_thresholds

    with st.expander("Two thresholds certified together (a second judge in the middle band)"):
        share = st.number_input("Most items sent to a person (share)", min_value=0.01, max_value=0.99, value=0.3,
                                step=0.05, key="two_share")
        if not st.button("Certify two thresholds", key="two_go"):
            return
        try:
            t = two_thresholds(ds, settings_of(v), max_review_share=float(share))
        except CalibError as exc:
            show_error(exc)
            return
        st.text("\n".join(two_threshold_lines(t)))
        if t.holds:
            st.dataframe(pd.DataFrame([
                {"": "to a person", "items": fmt.count(t.to_person), "share": fmt.pct(t.to_person / t.total),
                 "bound": fmt.pct(t.share_upper)},
                {"": "second judge (middle band)", "items": fmt.count(t.middle), "share": fmt.pct(t.middle / t.total),
                 "bound": ""},
                {"": "accepted unseen", "items": fmt.count(t.accepted), "share": fmt.pct(t.accepted / t.total),
                 "bound": f"error {fmt.pct(t.error_upper)}"},
            ]), hide_index=True, key="df_two")
        show_figure(pvalue_map(t, ds.name), key="fig_two_pvalues")


def show_cascade(ctx: Context, v: views.View) -> None:
    """The cheapest certified chain of the loaded judges, against each alone."""
    if len(ctx.datasets) < 2:
        return
    import pandas as pd

    from calib.present.two_stage import cascade_lines
    from calib.runs.decide import cascade, max_judges

    with st.expander("Cheapest certified chain of judges (judge A, then B on doubt, then a person)"):
        judges = [ds for ds in ctx.datasets if ds.rows is not None][:max_judges()]
        prices = st.text_input("Price of one call to each judge, in load order (comma-separated)",
                               value=",".join(["1"] * len(judges)), key="cascade_prices")
        person = st.number_input("Price of one person's review", min_value=0.0, value=10.0, key="cascade_person")
        if not st.button("Find the cheapest certified chain", key="cascade_go"):
            return
        try:
            p = [float(x) for x in prices.split(",")]
        except ValueError:
            show_error(CalibError("prices: numbers separated by commas, one per judge"))
            return
        try:
            c = cascade([ds.rows for ds in judges], [ds.name for ds in judges], p, float(person), settings_of(v))
        except CalibError as exc:
            show_error(exc)
            return
        st.text(c.message)
        st.dataframe(pd.DataFrame([{
            "plan": x.label, "chain": x.describe(), "cost per 1,000 items": fmt.money(x.cost_per_1000.value),
            "interval": fmt.interval(*x.cost_per_1000.ci, fmt.money), "accepted": fmt.count(x.accepted),
            "error among accepted": fmt.pct(x.error_rate), "bound": fmt.pct(x.error_upper),
        } for x in c.plans]), hide_index=True, key="df_cascade")
        st.text(cascade_lines(c)[3])  # the prices: judge names are user text, never markdown
