"""The review workflow in a real browser (issue 25): three reviewers and an owner on one
link with assignment on and an overlap of 30%.

- Assignment: the reviewers label in turn, with the keyboard shortcuts (Y Right, N Wrong,
  U Unsure, K Skip), until the server has nothing left for any of them; read from the
  catalog with sqlite3, every item has exactly its planned labels (``round(0.3 * 10)``
  items two, the others one, counted here) and the overlapped labels are spread evenly
  (at most one apart between reviewers).
- The card: question, answer, reference (an owner's override) and rationale from the file,
  as text. Blind: no card ever shows the stated confidence, its probability, the file's outcome or
  the score in the why-line (checked in the DOM on every card); the owner's guidelines,
  with a ``<script>`` and an ``<img onerror>`` in them, are shown and inert.
- Adjudication: the owner (with the owner key) adjudicates two disagreements; the audit
  on the reviewers' outcomes then shows the accuracy computed here by hand from the
  labels the test gave and the adjudications it made (the final-label rule written out).

Every wait is on a condition.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from calib.hosting.workflow import Workflow
from tests.e2e.conftest import screenshot
from tests.e2e.hosting import SLOW, sidebar

N = 10
ROWS = [{"id": f"w{i:02d}", "confidence": 30 + 5 * i, "correct": i % 3 != 0, "question": f"Q{i}",
         "response": f"answer {i}", "meta": {"ref": f"reference {i}"}, "rationale": f"because {i}"} for i in range(N)]
GUIDELINES = (
    "**Be strict.** The reference answer wins.\n\n"
    "<script>window.__xss_script=1</script>\n\n"
    '<img src="x" onerror="window.__xss_img=1">\n\n'
    "[js](javascript:window.__xss_js=1)"
)
FLAGS = ("__xss_script", "__xss_img", "__xss_js")
HIDDEN = ("Stated confidence", "As a probability", "Outcome in the file", "Why this item: below", "(review queue)",
          "(audit sample)")
ITEM_LINE = re.compile(r"^Item \d+ of \d+: (\S+)$")  # blind: not even the list (the queue: scored low)
DONE = "No item is left for you"


def shown(page) -> str | None:
    """The item the page shows, or ``None`` when it says none is left."""
    page.wait_for_function(
        """(done) => [...document.querySelectorAll('[data-testid="stText"]')].some(e => /^Item \\d+ of /.test(
            e.innerText)) || document.body.innerText.includes(done)""", arg=DONE, timeout=SLOW)
    box = page.get_by_test_id("stText").filter(has_text=re.compile(r"^Item \d+ of "))
    if box.count() == 0:
        return None
    m = ITEM_LINE.match(box.first.inner_text(timeout=SLOW).strip())
    assert m, "no item line"
    return m.group(1)


def assert_blind_and_inert(page, item: str) -> None:
    i = int(item[1:])
    want = [f"Q{i}", f"answer {i}", f"reference {i}", f"because {i}"]  # the override reached meta.ref
    page.wait_for_function(
        """(want) => JSON.stringify([...document.querySelectorAll('[data-testid="stCode"]')]
            .map(e => e.innerText.trim())) === JSON.stringify(want)""", arg=want, timeout=SLOW)
    text = "\n".join(page.get_by_test_id("stMain").all_inner_texts())
    for word in HIDDEN:
        assert word not in text, word
    assert "Why this item: the review plan chose it" in text
    assert page.get_by_test_id("stExpander").filter(has_text="Be strict.").count() == 1
    assert page.evaluate(f"() => {list(FLAGS)!r}.filter(f => window[f] !== undefined)") == []
    for selector in ("[onerror]", "a[href^='javascript']", "img[src='x']"):
        assert page.locator(selector).count() == 0, selector


def act(page, key: str, item: str) -> None:
    """Press ``key`` on the card showing ``item`` and wait until another item (or none) shows."""
    page.get_by_test_id("stHeading").first.click()  # focus the page, not a text box
    page.keyboard.press(key)
    page.wait_for_function(
        """([item, done]) => document.body.innerText.includes(done) ||
            [...document.querySelectorAll('[data-testid="stText"]')].some(e => /^Item \\d+ of /.test(e.innerText)
            && !e.innerText.trim().endsWith(': ' + item))""", arg=[item, DONE], timeout=SLOW)


def final_outcomes(given: list[tuple[str, str, str]], adjudicated: dict[str, bool]) -> list[bool]:
    """Each row's outcome by the final-label rule, written out: the adjudication, else the
    majority of right/wrong labels (unsure no vote), a tie or only unsure keeping the file's."""
    out = []
    for row in ROWS:
        item = row["id"]
        if item in adjudicated:
            out.append(adjudicated[item])
            continue
        votes = Counter(v for _, i, v in given if i == item and v != "unsure")
        out.append(row["correct"] if votes["right"] == votes["wrong"] else votes["right"] > votes["wrong"])
    return out


def test_three_reviewers_assigned_blind_then_the_owner_adjudicates(server, browser) -> None:  # long: one story
    store = Store.open(server.data_dir)
    data = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    share = store.share([DatasetSpec.from_upload("judge", "judge.jsonl", data)], {"v": 1, "params": {"page": "review"}})
    assert store.set_review(share.token, enabled=True, sample_size=0, owner_secret=share.owner_secret).ok
    flow = Workflow(assign=True, overlap=0.3, k=2, guidelines=GUIDELINES, reason_tags=("ambiguous",),
                    card_fields=(("reference", "meta.ref"),))
    assert store.set_workflow(share.token, flow, owner_secret=share.owner_secret).ok
    contexts = []
    try:
        pages = {}
        for who in ("Ann", "Bob", "Cy"):
            ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
            contexts.append(ctx)
            pages[who] = ctx.new_page()
            pages[who].goto(f"{server.url}/Review?share={share.token}&reviewer={who}")
        given: list[tuple[str, str, str]] = []  # (reviewer, item, right / wrong / unsure)
        skipped, done, turn = set(), set(), 0
        while len(done) < 3:
            who = ("Ann", "Bob", "Cy")[turn % 3]
            turn += 1
            if who in done:
                continue
            page = pages[who]
            item = shown(page)
            if item is None:
                done.add(who)
                continue
            assert_blind_and_inert(page, item)
            if who == "Bob" and not skipped:
                act(page, "k", item)
                skipped.add(item)
            elif who == "Cy" and not any(v == "unsure" for _, _, v in given):
                act(page, "u", item)
                given.append((who, item, "unsure"))
            else:  # the first verdict on an item says right, a second wrong: every overlap disagrees
                first = not any(i == item for _, i, _ in given)
                act(page, "y" if first else "n", item)
                given.append((who, item, "right" if first else "wrong"))
        screenshot(pages["Ann"], "review_workflow_done")

        with sqlite3.connect(server.data_dir / "catalog.sqlite3") as con:
            rows = con.execute("SELECT reviewer, item, correct, unsure FROM labels WHERE share_id = ? ORDER BY id",
                               (share.share_id,)).fetchall()
            skips = con.execute("SELECT reviewer, item FROM assignments WHERE share_id = ? AND state = 'skipped'",
                                (share.share_id,)).fetchall()
        assert [(w, i, "unsure" if u else "right" if c else "wrong") for w, i, c, u in rows] == given
        assert skips == [("Bob", next(iter(skipped)))]
        per_item = Counter(i for _, i, _ in given)
        overlapped = round(0.3 * N)
        assert sorted(per_item.values()) == [1] * (N - overlapped) + [2] * overlapped
        per_reviewer = Counter(w for w, i, _ in given if per_item[i] == 2)
        # within one; two when Bob skipped an overlapped item (he is never offered it again)
        spread = 1 + (per_item[next(iter(skipped))] == 2)
        assert max(per_reviewer.values()) - min(per_reviewer.get(w, 0) for w in pages) <= spread, per_reviewer

        # the owner, with the owner key, adjudicates two disagreements
        ctx = browser.new_context(viewport={"width": 1300, "height": 1400})
        contexts.append(ctx)
        owner = ctx.new_page()
        owner.goto(f"{server.url}/Review?share={share.token}&reviewer=Owner")
        sidebar(owner).get_by_text("Owner of this link?").click()
        key = sidebar(owner).get_by_label("Owner key", exact=True)
        key.fill(share.owner_secret)
        key.press("Enter")
        owner.get_by_test_id("stHeading").filter(has_text="Adjudication").first.wait_for(timeout=SLOW)
        owner.get_by_text(f"{overlapped} item(s) where reviewers disagree").first.wait_for(timeout=SLOW)
        for name, left in (("Final: right", overlapped - 1), ("Final: wrong", overlapped - 2)):
            owner.get_by_role("button", name=name).click()
            owner.get_by_text(f"Final label set: {name[7:]}.").first.wait_for(timeout=SLOW)
            owner.get_by_text(f"{left} item(s) where reviewers disagree").first.wait_for(timeout=SLOW)
        with sqlite3.connect(server.data_dir / "catalog.sqlite3") as con:
            adj = con.execute("SELECT item, correct FROM adjudications WHERE share_id = ? ORDER BY id",
                              (share.share_id,)).fetchall()
        assert [c for _, c in adj] == [1, 0] and all(per_item[i] == 2 for i, _ in adj)

        # the audit on the final labels equals the rule computed by hand
        outcomes = final_outcomes(given, {i: bool(c) for i, c in adj})
        expected = f"{100 * sum(outcomes) / N:.1f}%"
        metric = owner.get_by_test_id("stMetric").filter(has_text="Accuracy (reviewers' outcomes)")
        owner.wait_for_function(
            """(want) => [...document.querySelectorAll('[data-testid="stMetric"]')].some(
                e => e.innerText.includes("Accuracy (reviewers' outcomes)") && e.innerText.includes(want))""",
            arg=expected, timeout=SLOW)
        assert expected in metric.first.inner_text()
        screenshot(owner, "review_workflow_owner")
        assert owner.get_by_test_id("stException").count() == 0
    finally:
        for c in contexts:
            c.close()
    assert "Traceback" not in server.log()
