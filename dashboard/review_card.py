"""The Review page's card (issue 25): one item, the question "Is this answer right?", the
buttons Right / Wrong / Unsure / Skip (none highlighted, each with a key), the owner's
guidelines and reason tags.

Contract
--------
- **Blind by default.** The judge's stated confidence and the file's outcome are shown
  only when the owner turned "show the judge" on for the link
  (:attr:`calib.hosting.workflow.Workflow.show_judge`); the store stamps that on every label.
  Blind, the card does not name the item's list either (the review queue is the items the
  judge scored below the threshold), and :func:`blind_reviewer` tells the other pages of a
  reviewer's session to withhold what lists items with their confidence or outcome.
- **Safe text.** Item ids, question text, notes and names: ``st.text`` / ``st.code`` only.
  The guidelines are the one Markdown shown, through :func:`safe_markdown`: HTML tags
  removed, then ``st.markdown`` with ``unsafe_allow_html=False``; image syntax and script
  URL schemes neutralised, so that a ``<script>`` or ``<img onerror>`` is inert.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import streamlit as st

from calib.present.review import BUTTON_HELP, CARD_QUESTION, RIGHT, SHORTCUTS, SKIP, UNSURE, WRONG

if TYPE_CHECKING:
    from collections.abc import Callable

    from calib.hosting.workflow import Workflow
    from calib.labels.plan import ReviewItem
    from dashboard.context import Access

_TAG = re.compile(r"<[^>]*>?")
_SCHEME = re.compile(r"(?i)(javascript|vbscript|data|file)\s*:")


def safe_markdown(text: str) -> str:
    """``text`` with every HTML tag (and an unclosed ``<``) removed, every ``&`` written
    ``&amp;`` (so that no character reference can spell a tag or a scheme), image syntax
    made a plain link text, and script-like URL schemes dropped: Markdown that cannot
    carry HTML, a script or an outside image."""
    out = _TAG.sub("", text).replace("<", "").replace(">", "").replace("&", "&amp;")
    out = out.replace("![", "[")
    while _SCHEME.search(out):  # "javajavascript:script:" leaves a scheme after one pass
        out = _SCHEME.sub("", out)
    return out


def guidelines(flow: Workflow) -> None:
    """The owner's guidelines, shown on every card (nothing when there are none)."""
    if flow.guidelines.strip():
        with st.expander("Guidelines", expanded=True):
            st.markdown(safe_markdown(flow.guidelines), unsafe_allow_html=False)


def item_card(item: ReviewItem, pos: int, total: int, mine: str | None, why: str | None,
              outcome: bool, fields: dict[str, str] | None = None) -> None:
    """One item: where it is, why it is here, its question, answer, reference and the
    judge's rationale (``fields``, :func:`calib.labels.card.card_fields`; else the reader's
    text), and the judge only when ``why`` is given (``None``: blind; ``outcome``: the file
    has an outcome to show)."""
    from calib.present import format as fmt
    from calib.present.review import BLIND_WHY, CARD_FIELDS

    # blind: not even the list, since "review queue" says the judge scored it below the threshold
    where = "" if why is None else " (review queue)" if item.kind == "queue" else " (audit sample)"
    with st.container(border=True):
        st.text(f"Item {pos + 1} of {total}{where}: {item.item}")
        st.text(why or BLIND_WHY)
        st.text(f"Line {item.line}" + (f" · group {item.group}" if item.group else ""))
        if fields:
            for name, title in CARD_FIELDS.items():
                if name in fields:
                    st.caption(title)
                    st.code(fields[name], language=None, wrap_lines=True)
        elif item.text:
            st.caption("Question and answer (as the file has them)")
            st.code(item.text, language=None, wrap_lines=True)
        else:
            st.caption("The file has no question or answer text for this item.")
        st.subheader(CARD_QUESTION)
        if why is not None:
            m1, m2, m3 = st.columns(3)
            m1.metric("Stated confidence", fmt.sig(item.stated, 4))
            m2.metric("As a probability", fmt.pct(item.prob))
            if outcome:
                m3.metric("Outcome in the file", "right" if item.correct else "wrong",
                          help="The file's outcome field: whether this answer was right by the key. Your label "
                               "answers the same question.")
        if mine is not None:
            st.caption(f"Your label: {mine} (labelling again replaces it; the history is kept).")


def buttons(on_label: Callable[[bool, bool], None], on_skip: Callable[[], None], tags: tuple[str, ...],
            key: str) -> None:
    """Reason tags (when the owner set some), then Right / Wrong / Unsure / Skip: none
    primary, a highlighted one would suggest an answer."""
    if tags:
        st.multiselect("Reasons (optional)", list(tags), key=f"calib_review_reasons_{key}")
    cols = st.columns(4)
    specs = [(RIGHT, "calib_review_right", on_label, (True, False)),
             (WRONG, "calib_review_wrong", on_label, (False, False)),
             (UNSURE, "calib_review_unsure", on_label, (False, True)),
             (SKIP, "calib_review_next", on_skip, ())]
    for col, (name, bkey, fn, args) in zip(cols, specs, strict=True):
        col.button(name, key=bkey, shortcut=SHORTCUTS[name], on_click=fn, args=args, help=BUTTON_HELP[name])


def reasons_of(key: str) -> list[str]:
    """The reason tags picked on the card ``key``."""
    return list(st.session_state.get(f"calib_review_reasons_{key}") or [])


def blind_reviewer(access: Access) -> bool:
    """This session opened a share link whose owner runs a blind review (reviewing on,
    the judge not shown), and is not the owner's: per-item confidence and outcomes (the
    review queue's download) are withheld from it, as the card withholds them."""
    from dashboard.keys import OWNER_KEY, SHARED_KEY
    from dashboard.runtime import share_store

    token = st.session_state.get(SHARED_KEY)
    if not token:
        return False  # the owner's own session, or no link
    state = share_store().review_state(token)
    if state is None or not state.setting.enabled or state.setting.flow.show_judge:
        return False
    typed = str(st.session_state.get("calib_owner_key") or "").strip()
    secret = st.session_state.get(OWNER_KEY, {}).get(token) or typed or None
    return not share_store().owns(token, owner_secret=secret, user=access.user)
