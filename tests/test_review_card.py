"""The review card (issue 25): the owner's guidelines as Markdown that cannot carry HTML,
and the item's question, answer, reference and rationale read from the file.

:func:`dashboard.review_card.safe_markdown` is checked against the hostile guidelines
below with the standard library's HTML parser (no tag, no attribute survives) and by
hand (no script-like scheme, no image syntax, no character reference left to decode);
the browser test (tests/e2e/test_review_workflow.py) shows such guidelines inert in the
DOM.
"""

from __future__ import annotations

import gzip
import json
import re
from html.parser import HTMLParser

import pytest

from calib.labels.card import MAX_FIELD_CHARS, card_fields
from dashboard.review_card import safe_markdown

HOSTILE = [
    "<script>window.__x=1</script>",
    '<img src="x" onerror="window.__x=1">',
    "<img/src=x/onerror=window.__x=1",  # unclosed
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">go</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt :alert(1))",
    "[click](javajavascript:script:alert(1))",
    "[click](java&#115;cript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "![pixel](http://203.0.113.7/p.png)",
    "<javascript:alert(1)>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_guidelines_keep_no_tag_scheme_image_or_reference(text: str) -> None:
    out = safe_markdown("Intro **bold**\n\n" + text)
    parser = _Tags()
    parser.feed(out)
    assert parser.tags == [] and "<" not in out and ">" not in out
    assert not re.search(r"(?i)(javascript|vbscript|data|file)\s*:", out)
    assert "![" not in out
    assert not re.search(r"&(?!amp;)", out)  # every & escaped: no reference left to decode
    assert out.startswith("Intro **bold**")  # the Markdown itself is kept


def test_plain_guidelines_are_kept_word_for_word() -> None:
    text = "# Rules\n\n- Say **Right** when the answer matches the reference.\n- Q&A: unsure if ambiguous."
    assert safe_markdown(text) == text.replace("&", "&amp;")


# ------------------------------------------------------------------ the card's fields
def _jsonl(*objs: dict) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def test_the_card_fields_are_detected_in_order_and_overridable() -> None:
    data = _jsonl(
        {"id": "a", "confidence": 40, "correct": True, "prompt": "2+2?", "response": "4", "target": "4",
         "reasoning": "adds up"},
        {"id": "b", "confidence": 50, "correct": False, "question": "Capital of France?", "input": "ignored",
         "answer": "Lyon", "meta": {"ref": "Paris"}, "explanation": ["wrong", "city"]},
        {"id": "c", "confidence": 60, "correct": True},
    )
    got = card_fields(data, "judge.jsonl", [1, 2, 3])
    assert got == {
        1: {"question": "2+2?", "answer": "4", "reference": "4", "rationale": "adds up"},
        2: {"question": "Capital of France?", "answer": "Lyon", "rationale": '["wrong","city"]'},
    }
    # an override names the key (a dotted path reaches a nested one); only the lines asked for
    over = card_fields(data, "judge.jsonl", [2], {"reference": "meta.ref", "question": "input"})
    assert over == {2: {"question": "ignored", "answer": "Lyon", "reference": "Paris",
                        "rationale": '["wrong","city"]'}}
    # the file's confidence and outcome keys are never shown, even when named
    assert card_fields(data, "judge.jsonl", [1], {"answer": "correct"}, exclude=("correct",)) == {
        1: {"question": "2+2?", "reference": "4", "rationale": "adds up"}}
    assert card_fields(gzip.compress(data), "judge.jsonl.gz", [1])[1]["answer"] == "4"
    assert card_fields(b"id,confidence,correct,answer\na,40,1,4\n", "judge.csv", [2]) == {}  # JSON lines only


def test_a_long_field_is_cut_and_a_bad_line_gives_nothing() -> None:
    data = b'{"question": "' + b"x" * (MAX_FIELD_CHARS + 50) + b'"}\n{not json\n'
    got = card_fields(data, "judge.jsonl", [1, 2])
    assert list(got) == [1] and got[1]["question"] == "x" * MAX_FIELD_CHARS
