"""Label as you go in a real browser (issue 24): an owner uploads traffic without outcomes
(refused as an audit until they say it is traffic), turns reviewing on; two reviewers label
the labelling plan's items in the plan's order; the Review page shows the certificate once
the bound is under the target, and the alarm when a planted wrong label pushes it back over;
the Routing page shows the traffic's error among the accepted and the same alarm.

The numbers are checked against what they must be: the plan's order from
:func:`calib.traffic.plan.plan` (the page must serve that order), the inclusion probability
as planned / stratum size, the certificate's label from the betting bound computed here
label by label, and the error among the accepted as the labelled share wrong (one stratum
holds every accepted item, so the stratified estimate is that share).
"""

from __future__ import annotations

import json
import re

from calib.traffic.certify import betting_upper
from calib.traffic.plan import plan
from calib.traffic.read import read_traffic
from dashboard.chart import FRAME_SELECTOR
from tests.e2e.conftest import screenshot
from tests.e2e.hosting import SLOW, go_to, metric, share, sidebar, upload, wait_text
from tests.e2e.test_review import item_shown, label

TARGET, CONFIDENCE, BUDGET = 0.3, 0.8, 14
LOW, HIGH = 30, 95  # the default review threshold (80) sends the 30s to a person
N_LOW, N_HIGH = 10, 30



def traffic_file() -> bytes:
    rows = [{"id": f"t{i:02d}", "confidence": LOW if i < N_LOW else HIGH, "question": f"Question {i}",
             "answer": f"Answer {i}"} for i in range(N_LOW + N_HIGH)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def planned() -> list[str]:
    """The items in the order the plan lists them (what the page must serve)."""
    tr = read_traffic(traffic_file(), "traffic.jsonl")
    return list(plan(tr, None, BUDGET, target_error=TARGET, seed=0).ids)


def first_certified(order: list[str]) -> int:
    """The label after which the bound of the 95s is first under the target when every
    label is right: the betting bound over the 95s' labels (two strata: alpha = delta / 2)."""
    high = [k for k, item in enumerate(order, 1) if int(item[1:]) >= N_LOW]
    bounds = betting_upper([0.0] * len(high), (1 - CONFIDENCE) / 2)
    at = next(j for j, b in enumerate(bounds) if b <= TARGET)
    return high[at]


def review_as(page, url: str, name: str) -> None:
    page.goto(url)
    page.get_by_label("Your name (kept with your labels)").fill(name)
    page.get_by_role("button", name="Start reviewing").click()
    page.get_by_test_id("stText").filter(has_text="Reviewing as ").first.wait_for(timeout=SLOW)


def test_two_reviewers_label_traffic_in_the_plans_order_until_certified_then_alarmed(server, browser):
    order = planned()
    certified_at = first_certified(order)
    assert certified_at < len(order) - 1  # room for the planted wrong label
    contexts = []

    def context():
        c = browser.new_context(viewport={"width": 1400, "height": 1100})
        contexts.append(c)
        return c.new_page()

    try:
        owner = context()
        owner.goto(f"{server.url}/?target={TARGET}&confidence={CONFIDENCE}")
        upload(owner, {"name": "traffic.jsonl", "mimeType": "application/json", "buffer": traffic_file()},
               wait_rows=None)
        # as an audit, rows without an outcome are never accepted
        owner.get_by_test_id("stAlertContentError").filter(has_text="outcome").first.wait_for(timeout=SLOW)
        owner.get_by_text("Traffic: no outcomes yet (label as you go)").click()
        assert metric(owner, "Items kept") == f"{N_LOW + N_HIGH:,}"
        wait_text(owner, "No outcome is read: this file is traffic.")
        go_to(owner, "Overview")  # a page that needs outcomes says so
        wait_text(owner, "Only traffic without outcomes is loaded: this page needs each item's outcome.")
        go_to(owner, "Review")
        link, _ = share(owner)
        sidebar(owner).get_by_text("Enable reviewing").click()
        wait_text(owner, "Reviewing is on")
        size = sidebar(owner).get_by_label("Audit sample size", exact=True)
        size.fill(str(BUDGET))
        size.press("Enter")
        wait_text(owner, f"audit sample of {BUDGET},")
        # the owner shows the judge on the link (issue 25: blind by default), so the card says why
        owner.get_by_text("Show the judge (stated confidence and the file's outcome) to reviewers").click()
        owner.get_by_role("button", name="Save the workflow").click()
        wait_text(owner, "the judge is shown to reviewers (recorded with every label)")

        # Ann labels the first half of the plan, Bob (opening the link after her) the rest
        ann = context()
        review_as(ann, link, "Ann")
        total, kind, item = item_shown(ann)
        assert (total, item, kind) == (BUDGET, order[0], "audit sample" if int(order[0][1:]) >= N_LOW else
                                       "review queue")
        ann.get_by_test_id("stText").filter(
            has_text=f"inclusion probability {(BUDGET - 2) / N_HIGH:.3g}").first.wait_for(timeout=SLOW)
        done: list[tuple[str, str, bool]] = []
        half = certified_at // 2
        for _ in range(half):
            label(ann, "Right", done, "Ann")
        bob = context()
        review_as(bob, link, "Bob")
        wait_text(bob, "Not yet: about")
        while len(done) < certified_at:
            label(bob, "Right", done, "Bob")
        assert [item for _, item, _ in done] == order[:certified_at]  # the plan's order, nothing twice
        wait_text(bob, f"Certified at {HIGH} since label {certified_at}")
        figure = bob.frame_locator(FRAME_SELECTOR).first.locator(".js-plotly-plot")
        figure.locator("text.gtitle").filter(has_text="Bound on the error among accepted").wait_for(timeout=SLOW)
        assert bob.get_by_test_id("stAlertContentError").filter(has_text="ALARM").count() == 0

        # a planted wrong label on the next accepted item pushes the bound back over the target
        while int(item_shown(bob)[2][1:]) < N_LOW:
            label(bob, "Right", done, "Bob")
        label(bob, "Wrong", done, "Bob")
        bob.get_by_test_id("stAlertContentError").filter(
            has_text=f"ALARM: the certificate at {HIGH} is withdrawn").first.wait_for(timeout=SLOW)
        assert bob.get_by_text(re.compile(r"^Certified at ")).count() == 0
        screenshot(bob, "traffic_review_alarm")

        # the owner's Routing page: the traffic's error among the accepted and the alarm
        go_to(owner, "Routing")
        high = [correct for _, item, correct in done if int(item[1:]) >= N_LOW]
        want = f"{100 * high.count(False) / len(high):.1f}%"
        got = owner.get_by_test_id("stMetric").filter(has_text="Error among accepted, traffic")
        got.get_by_test_id("stMetricValue").filter(has_text=want).first.wait_for(timeout=SLOW)
        owner.get_by_test_id("stAlertContentError").filter(has_text="ALARM").first.wait_for(timeout=SLOW)
    finally:
        for c in contexts:
            c.close()
    assert "Traceback" not in server.log()
