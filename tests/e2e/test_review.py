"""Reviewing in a real browser (issue 12): the owner shares a file whose item text is
hostile and enables reviewing in the Share panel; two reviewers, each in their own
browser context behind the password, label the same link at once with real clicks and a
keyboard shortcut. Every label is kept (the catalog read with sqlite3), both progress
bars agree after a reload, the server killed with SIGKILL and restarted on the same data
directory still has them; a third context holding another share's link sees and writes
only that share, whatever it does to the URL; the payloads in the item text stay text.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
from pathlib import Path

import pytest

from calib.hosting.shares import DatasetSpec
from calib.hosting.store import Store
from calib.labels.records import read_labels
from tests.e2e.conftest import screenshot, start_server
from tests.e2e.hosting import SLOW, assert_unavailable, go_to, share, sidebar, upload, wait_text
from tests.e2e.screens import settle

PASSWORD = "review test password"
OUTSIDE = "203.0.113.7"  # TEST-NET-3: any request to it is a leak
PAYLOADS = (
    "<script>window.__xss_script=1</script>",
    f'<img src="http://{OUTSIDE}/i.png" onerror="window.__xss_img=1">',
    f"![x](http://{OUTSIDE}/md.png) [click](javascript:window.__xss_js=1)",
    '<a href="javascript:window.__xss_a=1">go</a> **bold** :red[red]',
)
FLAGS = ("__xss_script", "__xss_img", "__xss_js", "__xss_a", "__xss_id")
ID_TAIL = "<img/src=x/onerror=window.__xss_id=1>"  # item ids are user text too (no spaces: one token)
CONFIDENCES = (30, 50, 60, 70, 90, 95)  # default threshold 80: four of six go to the queue
N_ITEMS, SAMPLE = 24, 5
ITEM_LINE = re.compile(r"^Item \d+ of (\d+)(?: \((review queue|audit sample)\))?: (\S+)$")  # blind: no list


def hostile_file(prefix: str = "it", n: int = N_ITEMS) -> bytes:
    lines = [
        json.dumps(
            {
                "id": item_id(prefix, i),
                "confidence": CONFIDENCES[i % 6],
                "correct": i % 4 != 0,
                "question": f"Q{i}: {PAYLOADS[i % len(PAYLOADS)]}",
            }
        )
        for i in range(n)
    ]
    return ("\n".join(lines) + "\n").encode()


def item_id(prefix: str, i: int) -> str:
    return f"{prefix}{i:02d}{ID_TAIL}"


def expected_total(n: int = N_ITEMS) -> int:
    conf = [CONFIDENCES[i % 6] for i in range(n)]
    return sum(c < 80 for c in conf) + min(SAMPLE, sum(c >= 80 for c in conf))


class Watch:
    """The dialogs and outside requests of one page."""

    def __init__(self, page) -> None:
        self.dialogs: list[str] = []
        self.outside: list[str] = []
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self.outside.append(r.url) if OUTSIDE in r.url else None)

    def _dialog(self, d) -> None:
        self.dialogs.append(d.message)
        d.dismiss()


def assert_inert(page, watch: Watch) -> None:
    ran = page.evaluate(f"() => {list(FLAGS)!r}.filter(f => window[f] !== undefined)")
    assert ran == [], f"a payload ran: {ran}"
    assert watch.dialogs == [] and watch.outside == []
    for selector in (f'img[src*="{OUTSIDE}"]', "a[href^='javascript']", "[onerror]", "img[src='x']"):
        assert page.locator(selector).count() == 0, selector


def unlock(page) -> None:
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Unlock").click()


def open_review(page, url: str, name: str | None = None) -> None:
    """Open ``url`` (a share link or a Review address), past the password, and give the
    reviewer's name when the page asks for it."""
    page.goto(url)
    unlock(page)
    page.get_by_test_id("stHeading").filter(has_text="Review").first.wait_for(timeout=SLOW)
    if name is not None:
        page.get_by_label("Your name (kept with your labels)").fill(name)
        page.get_by_role("button", name="Start reviewing").click()
    page.get_by_test_id("stText").filter(has_text="Reviewing as ").first.wait_for(timeout=SLOW)


def item_shown(page) -> tuple[int, str | None, str]:
    """(total, list (``None`` in a blind review), item id) of the item the page shows."""
    box = page.get_by_test_id("stText").filter(has_text=re.compile(r"^Item \d+ of "))
    m = ITEM_LINE.match(box.first.inner_text(timeout=SLOW).strip())
    assert m, "no item line"
    return int(m.group(1)), m.group(2), m.group(3)


def progress(page) -> str:
    bar = page.get_by_test_id("stProgress").first
    bar.wait_for(timeout=SLOW)
    return re.search(r"\d[\d,]* of \d[\d,]* labelled", bar.inner_text()).group(0)


def label(page, how: str, done: list[tuple[str, str, bool]], who: str, note: str = "") -> None:
    """Label the item shown, by clicking Right / Wrong or pressing a shortcut key (after
    typing ``note`` key by key into the note box), and wait until the page has moved on
    to another item; record what was labelled."""
    _, _, item = item_shown(page)
    correct = how in ("Right", "y")
    if note:
        # the visible box: each item's note box has its own key, and the last items' stay in
        # the page, hidden (zero size, marked stale), until the run that replaced them ends
        page.get_by_label("Note (optional)").filter(visible=True).press_sequentially(note)
    if how in ("Right", "Wrong"):
        page.get_by_role("button", name=how).click()
    else:
        page.get_by_test_id("stHeading").first.click()  # focus the page, not a text box
        page.keyboard.press(how)
    page.get_by_test_id("stAlertContentSuccess").filter(
        has_text=f"Saved: {'right' if correct else 'wrong'}."
    ).first.wait_for(timeout=SLOW)
    page.wait_for_function(
        """(item) => [...document.querySelectorAll('[data-testid="stText"]')]
            .some(e => /^Item \\d+ of /.test(e.innerText) && !e.innerText.trim().endsWith(': ' + item))""",
        arg=item,
        timeout=SLOW,
    )
    done.append((who, item, correct))


def downloaded(page, button: str) -> bytes:
    """The bytes a click on the download button named ``button`` gives."""
    with page.expect_download(timeout=SLOW) as dl:
        page.get_by_role("button", name=button).click()
    return Path(dl.value.path()).read_bytes()


def catalog_labels(data_dir, share_id: str) -> list[tuple[str, str, bool]]:
    with sqlite3.connect(data_dir / "catalog.sqlite3") as con:
        rows = con.execute(
            "SELECT reviewer, item, correct FROM labels WHERE share_id = ? ORDER BY id", (share_id,)
        ).fetchall()
    return [(w, i, bool(c)) for w, i, c in rows]


@pytest.fixture()
def review_server(tmp_path):
    servers = [start_server(tmp_path, env={"CALIB_PASSWORD": PASSWORD})]
    yield servers
    for s in servers:
        s.stop()


def test_two_reviewers_label_one_link_and_nothing_is_lost_or_leaks(review_server, browser, tmp_path):
    srv = review_server[0]
    contexts = []

    def context():
        c = browser.new_context(viewport={"width": 1400, "height": 1100})
        contexts.append(c)
        return c.new_page()

    try:
        # the owner uploads, opens the Review page (nothing to review yet), shares and enables reviewing
        owner = context()
        owner.goto(srv.url)
        unlock(owner)
        upload(owner, {"name": "hostile.jsonl", "mimeType": "application/json", "buffer": hostile_file()})
        go_to(owner, "Review")
        wait_text(owner, "Reviewing happens through a share link whose owner enabled it")
        link, owner_key = share(owner)
        token = re.search(r"share=([A-Za-z0-9_-]{32})", link).group(1)
        sidebar(owner).get_by_text("Enable reviewing").click()
        wait_text(owner, "Reviewing is on: reviewers with the link can label (audit sample of 50, seed 0).")
        size = sidebar(owner).get_by_label("Audit sample size", exact=True)
        size.fill(str(SAMPLE))
        size.press("Enter")
        wait_text(
            owner, f"Reviewing is on: reviewers with the link can label (audit sample of {SAMPLE}, seed 0)."
        )
        with sqlite3.connect(srv.data_dir / "catalog.sqlite3") as con:
            (share_id,) = con.execute("SELECT share_id FROM reviewing WHERE enabled = 1").fetchone()

        # two reviewers open the link (it lands on the Review page) and give their names
        ann, bob = context(), context()
        watches = [Watch(ann), Watch(bob)]
        open_review(ann, link, "Ann")
        open_review(bob, link, "Bob")
        total = expected_total()
        assert item_shown(ann)[0] == item_shown(bob)[0] == total
        for p in (ann, bob):
            assert progress(p) == f"0 of {total} labelled"
            # the payloads are on screen as text, character for character
            p.get_by_test_id("stCode").filter(has_text=PAYLOADS[0]).first.wait_for(timeout=SLOW)
            p.get_by_test_id("stText").filter(has_text=ID_TAIL).first.wait_for(timeout=SLOW)
        screenshot(ann, "review_ann_first")

        # interleaved: clicks and the keyboard shortcuts (N = Wrong, Y = Right)
        done: list[tuple[str, str, bool]] = []
        label(ann, "Right", done, "Ann")
        label(bob, "Wrong", done, "Bob")
        label(ann, "n", done, "Ann")
        label(bob, "Right", done, "Bob")
        label(ann, "Right", done, "Ann")
        label(bob, "y", done, "Bob")
        # typing a note with the shortcut letters in it labels nothing by itself
        label(ann, "Wrong", done, "Ann", note="yes no, Y N j")
        assert catalog_labels(srv.data_dir, share_id) == done  # every label, in the order given
        with sqlite3.connect(srv.data_dir / "catalog.sqlite3") as con:
            notes = [r[0] for r in con.execute("SELECT note FROM labels ORDER BY id")]
        assert notes == [""] * 6 + ["yes no, Y N j"]
        labelled = len({item for _, item, _ in done})
        for p, w in zip((ann, bob), watches, strict=True):
            p.reload()
            unlock(p)
            p.get_by_test_id("stText").filter(has_text="Reviewing as ").first.wait_for(timeout=SLOW)
            assert progress(p) == f"{labelled} of {total} labelled"
            assert_inert(p, w)
        assert [
            t.strip() for t in ann.get_by_test_id("stText").all_inner_texts() if t.startswith("Reviewing")
        ] == ["Reviewing as Ann"]  # the typed name survived the reload (kept in the URL)

        # the server is killed mid-flight and restarted on the same data directory
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(timeout=30)
        (tmp_path / "again").mkdir()
        srv = start_server(tmp_path / "again", data_dir=srv.data_dir, env={"CALIB_PASSWORD": PASSWORD})
        review_server.append(srv)
        assert catalog_labels(srv.data_dir, share_id) == done
        for p, who in ((ann, "Ann"), (bob, "Bob")):
            open_review(p, f"{srv.url}/Review?share={token}&reviewer={who}")
            assert progress(p) == f"{labelled} of {total} labelled"
        label(ann, "Wrong", done, "Ann")  # and labelling goes on
        assert catalog_labels(srv.data_dir, share_id) == done
        # a reviewer has no export (issue 25: the other reviewers' labels are the owner's)
        assert ann.get_by_role("button", name="Download the labels (JSONL)").count() == 0
        # the owner's exports (the owner key proves it on the new server) hold every label, in order,
        # and read back as they were
        open_review(owner, f"{srv.url}/Review?share={token}&reviewer=Owner")
        sidebar(owner).get_by_text("Owner of this link?").click()
        key_box = sidebar(owner).get_by_label("Owner key", exact=True)
        key_box.fill(owner_key)
        key_box.press("Enter")
        owner.get_by_role("button", name="Download the labels (JSONL)").wait_for(timeout=SLOW)
        settle(owner)
        jsonl, csv_ = (downloaded(owner, f"Download the labels ({kind})") for kind in ("JSONL", "CSV"))
        from_jsonl = [json.loads(line) for line in jsonl.decode("utf-8").splitlines()]
        assert [(d["reviewer"], d["item"], d["correct"]) for d in from_jsonl] == done
        assert [d["note"] for d in from_jsonl] == [""] * 6 + ["yes no, Y N j", ""]
        for data, name in ((jsonl, "labels.jsonl"), (csv_, "labels.csv")):
            back, problems = read_labels(data, name)
            assert problems == ()
            assert [lab.to_dict() for lab in back] == from_jsonl

        # a third person holds another share's link (reviewing on too)
        store = Store.open(srv.data_dir)
        other = store.share(
            [DatasetSpec.from_upload("other", "other.jsonl", hostile_file("zz", 12))],
            {"v": 1, "params": {"page": "review"}},
        )
        assert store.set_review(
            other.token, enabled=True, sample_size=SAMPLE, owner_secret=other.owner_secret
        ).ok
        eve = context()
        eve_watch = Watch(eve)
        open_review(eve, f"{srv.url}/?share={other.token}", "Eve")
        total_other = expected_total(12)
        assert progress(eve) == f"0 of {total_other} labelled"
        assert item_shown(eve)[2].startswith("zz")
        assert not any(
            t.strip().endswith(tuple(f": {item_id('it', i)}" for i in range(N_ITEMS)))
            for t in eve.get_by_test_id("stText").all_inner_texts()
        )
        label(eve, "Right", [], "Eve")
        assert catalog_labels(srv.data_dir, share_id) == done  # the first share's labels are untouched
        assert [(w, i[:2]) for w, i, _ in catalog_labels(srv.data_dir, other.share_id)] == [("Eve", "zz")]
        # editing the URL reaches nothing more: extra parameters are ignored, a changed token opens nothing
        eve.goto(
            f"{srv.url}/Review?share={other.token}&share_id={share_id}&reviewer=Eve&dataset=hostile.jsonl"
        )
        unlock(eve)
        assert progress(eve) == f"1 of {total_other} labelled"
        bad = token[:-1] + ("A" if token[-1] != "A" else "B")
        for url in (f"{srv.url}/Review?share={bad}&reviewer=Eve", f"{srv.url}/Review?share={share_id}"):
            eve.goto(url)
            unlock(eve)
            assert_unavailable(eve)
        assert_inert(eve, eve_watch)
        assert catalog_labels(srv.data_dir, share_id) == done
        screenshot(eve, "review_other_share")
    finally:
        for c in contexts:
            c.close()
    assert "Traceback" not in srv.log()
