"""The owner's guidelines on the review card (issue 25): Markdown that cannot carry HTML.

:func:`dashboard.review_card.safe_markdown` is checked against the hostile guidelines
below with the standard library's HTML parser (no tag, no attribute survives) and by
hand (no script-like scheme, no image syntax, no character reference left to decode);
the browser test (tests/e2e/test_review_workflow.py) shows such guidelines inert in the
DOM.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

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
