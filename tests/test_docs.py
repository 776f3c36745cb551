"""The README is a front door into the manual (docs/, a MkDocs site): short, with the quick start's
two commands verbatim, and every relative link in it reaching a file (and, for ``page.md#anchor``,
a heading of that page). The site's own links are checked by ``mkdocs build --strict``
(tests/run.sh), whose ``validation`` settings in mkdocs.yml turn a missing page or anchor into an
error; the README is outside the site, so it is checked here."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's ``toc`` extension makes it (MkDocs' default):
    accents dropped, punctuation removed, lower case, runs of spaces and hyphens one hyphen."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def headings(page: Path) -> set[str]:
    out, fence = set(), False
    for line in page.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"^#{1,6} (.+?)\s*$", line)):
            out.add(slug(m.group(1)))
    return out


def test_readme_is_a_front_door() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for command in ("python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && "
                    ".venv/bin/streamlit run app.py", "bash tests/run.sh"):
        assert f"```bash\n{command}\n```" in text, command
    links = [t for t in LINK.findall(text) if t.startswith("docs/") and t.split("#")[0].endswith(".md")]
    assert len(links) >= 10, "the README links into the manual's pages"


def test_readme_links_resolve() -> None:
    broken = []
    for target in LINK.findall(README.read_text()):
        if re.match(r"^[a-z]+:", target):  # http(s), mailto: not ours
            continue
        path, _, anchor = target.partition("#")
        file = (ROOT / path) if path else README
        if not file.exists() or (anchor and anchor not in headings(file)):
            broken.append(target)
    assert broken == []


def test_slug_matches_mkdocs_anchors() -> None:
    """:func:`slug` against Python-Markdown's own (what MkDocs builds the anchors with), on every
    heading of the manual."""
    from markdown.extensions.toc import slugify

    pages = sorted((ROOT / "docs").glob("*.md"))
    assert pages
    for page in pages:
        for line in page.read_text().splitlines():
            if m := re.match(r"^#{1,6} (.+?)\s*$", line):
                plain = m.group(1).replace("`", "")  # toc slugs the rendered text: no backticks
                assert slug(m.group(1)) == slugify(plain, "-"), (page.name, line)
