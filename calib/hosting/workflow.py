"""The owner's review workflow of a share (issue 25): who may label, how many labels each
item is planned to get, whether reviewers see the judge, the guidelines and reason tags;
and the checks every identity and setting passes before it is stored
(:mod:`calib.hosting.labels` keeps them in the catalog's ``reviewing`` row).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

#: Labels per overlapped item the owner may ask for, and the most reviewers a list names.
OVERLAP_K_RANGE = (2, 5)
MAX_REVIEWERS = 200
#: Longest guidelines (characters), most reason tags and longest tag.
MAX_GUIDELINES_CHARS = 10_000
#: Most reason tags and longest tag (the same as a label's: :data:`calib.labels.records.MAX_REASON_TAGS`).
MAX_REASON_TAGS = 20
MAX_TAG_CHARS = 60


@dataclass(frozen=True)
class Workflow:
    """The owner's review workflow of one share (issue 25).

    Attributes
    ----------
    assign:
        Whether the server assigns each reviewer their next item
        (:mod:`calib.hosting.assignment`); off: reviewers move freely, as before.
    overlap:
        Share of the items (0 to 1) labelled by ``k`` reviewers; the others by one.
    k:
        Labels planned per overlapped item (:data:`OVERLAP_K_RANGE`).
    reviewers:
        Who may label (trimmed names or e-mails, compared without case); empty: anyone
        with the link.
    show_judge:
        Whether reviewers see the judge's stated confidence and the file's outcome (off:
        blind, the default); stamped on every label.
    guidelines:
        The owner's guidelines (Markdown, shown as safe markup: no HTML).
    reason_tags:
        Reason tags a reviewer may pick with a label.
    card_fields:
        The owner's overrides of the card's fields: ``(field, key)`` pairs, field one of
        :data:`calib.labels.card.CARD_KEYS` (question, answer, reference, rationale).
    """

    assign: bool = False
    overlap: float = 0.0
    k: int = 2
    reviewers: tuple[str, ...] = ()
    show_judge: bool = False
    guidelines: str = ""
    reason_tags: tuple[str, ...] = ()
    card_fields: tuple[tuple[str, str], ...] = ()

    def allows(self, who: str) -> bool:
        """Whether ``who`` may label under the reviewer list."""
        return not self.reviewers or who.strip().casefold() in {r.casefold() for r in self.reviewers}


def check_reviewer(reviewer: object) -> str:
    """The reviewer identity as stored (trimmed), or a ``ValueError`` saying why not
    (the rules of :func:`calib.labels.records.label_problem`: no character of
    :data:`calib.labels.records.INVISIBLE_CATEGORIES`, :func:`~calib.labels.records.invisible_in_name`)."""
    from calib.labels.records import MAX_REVIEWER_CHARS, invisible_in_name

    if not isinstance(reviewer, str) or not reviewer.strip():
        raise ValueError("the reviewer's name must be non-empty text")
    who = reviewer.strip()
    if len(who) > MAX_REVIEWER_CHARS:
        raise ValueError(f"the reviewer's name is longer than {MAX_REVIEWER_CHARS} characters")
    invisible = invisible_in_name(who)
    if invisible is not None:
        raise ValueError(invisible)
    return who


def check_workflow(flow: Workflow) -> Workflow:
    """``flow`` with its texts trimmed, or a ``ValueError`` saying what is out of range."""
    import math

    if not isinstance(flow.overlap, (int, float)) or isinstance(flow.overlap, bool) or \
            not math.isfinite(flow.overlap) or not 0 <= flow.overlap <= 1:
        raise ValueError(f"the overlap share must be a number from 0 to 1, got {flow.overlap!r}")
    lo, hi = OVERLAP_K_RANGE
    if isinstance(flow.k, bool) or not isinstance(flow.k, int) or not lo <= flow.k <= hi:
        raise ValueError(f"the labels per overlapped item must be a whole number from {lo} to {hi}, got {flow.k!r}")
    names = tuple(dict.fromkeys(check_reviewer(r) for r in flow.reviewers))
    if len(names) > MAX_REVIEWERS:
        raise ValueError(f"the reviewer list names more than {MAX_REVIEWERS} reviewers")
    if not isinstance(flow.guidelines, str) or len(flow.guidelines) > MAX_GUIDELINES_CHARS:
        raise ValueError(f"the guidelines must be text of at most {MAX_GUIDELINES_CHARS:,} characters")
    if "\x00" in flow.guidelines:
        raise ValueError("the guidelines hold a NUL character")
    tags = tuple(dict.fromkeys(_check_tag(t) for t in flow.reason_tags))
    if len(tags) > MAX_REASON_TAGS:
        raise ValueError(f"at most {MAX_REASON_TAGS} reason tags")
    return replace(flow, overlap=float(flow.overlap), reviewers=names, reason_tags=tags,
                   card_fields=_check_fields(flow.card_fields))


def _check_fields(pairs: object) -> tuple[tuple[str, str], ...]:
    from calib.labels.card import CARD_KEYS
    from calib.labels.records import invisible_in_name

    out = {}
    for pair in pairs if isinstance(pairs, (tuple, list)) else ():
        field, key = pair
        if field not in CARD_KEYS:
            raise ValueError(f"a card field is one of {', '.join(CARD_KEYS)}, got {str(field)[:40]!r}")
        key = str(key).strip()
        if not key:
            continue
        if len(key) > MAX_TAG_CHARS * 4 or invisible_in_name(key) is not None:
            raise ValueError(f"the key of the card's {field} must be one line of at most {MAX_TAG_CHARS * 4} "
                             "characters")
        out[field] = key
    return tuple(out.items())


def _check_tag(tag: object) -> str:
    from calib.labels.records import tag_problem

    text = tag.strip() if isinstance(tag, str) else tag
    why = tag_problem(text)
    if why is not None:
        raise ValueError(why)
    return str(text)
