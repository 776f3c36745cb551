"""Confidence in words: verbal and ordinal phrases read as an ordered stated scale.

A judge that answers "very likely" or "B+" states its confidence on an *ordered* scale
whose distances are unknown. calib reads each phrase as its rank ``1..k`` on one ordered
list of phrases (a :class:`PhraseScale`, from the built-in table :data:`FAMILIES` or
given by the user, ``--phrases "low,medium,high"``), so the stated scale is
``Scale(1/2, k + 1/2, labels=...)``: every audit of the scale (per-value hit rates with their
Wilson intervals, the distinct values used), the isotonic map (monotone in the order,
scored held-out) and the threshold certificate work on phrases as on a 1-k score, and
every face writes the phrase where it would write the value.

The probability of a phrase *before* a map is the midpoint of its rank's equal share of
``[0, 1]``, ``(r - 1/2) / k`` (0.1, 0.3, 0.5, 0.7, 0.9 for five phrases): a convention
for an ordered scale, not a stated probability (no table of "likely = 70%" is assumed,
since judges do not share one). It keeps every phrase strictly inside (0, 1), so the
lowest phrase being right or the highest wrong is an error of degree, never an
"impossible" event, and the calibration tests ask whether each phrase is worth its even
share; the per-phrase hit rates and the fitted map say what each phrase is worth.

Reading a phrase (:func:`normalise`): Unicode NFC, case ignored (``str.casefold``),
surrounding spaces and a final ``.`` or ``!`` dropped, runs of spaces, ``_`` and a
hyphen between two letters (``very-high``) read as one space; ``"A+"`` and ``"B-"``
keep their sign. A phrase in no list is an ``unknown phrase`` bad line naming it.

Which list (:func:`choose`): with ``--phrases``, the given one. Otherwise the smallest
family of :data:`FAMILIES` holding every phrase the file uses (the first in table order
on a tie): ``low / medium / high`` reads on the three-phrase family, add ``very high``
and it reads on the five-phrase one. Phrases of no single family refuse the file with the
phrases named and the ``--phrases`` fix.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calib.errors import CalibError
from calib.scale import OK, Scale, ScaleReading

#: Reason of a bad line whose confidence is a phrase on no list.
R_UNKNOWN_PHRASE = "unknown phrase"
#: Reason of a bad line whose confidence is a number among phrases.
R_NUMBER_AMONG_PHRASES = "number among phrases"


@dataclass(frozen=True)
class Family:
    """One ordered list of phrases, lowest confidence first; each position a tuple of
    spellings (English first, then other languages' common forms), all normalised."""

    name: str
    positions: tuple[tuple[str, ...], ...]


def _f(name: str, *positions: str) -> Family:
    """A family from ``"a|b|c"`` strings, one per position (``|`` separates spellings)."""
    return Family(name, tuple(tuple(normalise(s) for s in p.split("|")) for p in positions))


def normalise(text: str) -> str:
    """How a phrase is compared (see the module docstring)."""
    s = unicodedata.normalize("NFC", text).casefold().strip()
    s = s.rstrip(".!").strip()
    s = re.sub(r"(?<=[^\W\d_])-(?=[^\W\d_])", " ", s)
    return re.sub(r"[\s_]+", " ", s)


#: The built-in phrase table (documented in docs/verbal.md). Languages: English, German,
#: French, Spanish, Portuguese, Italian; Chinese and Japanese for the three levels.
FAMILIES: tuple[Family, ...] = (
    _f("low-medium-high",
       "low|niedrig|faible|bas|basse|bajo|baja|baixo|baixa|basso|bassa|低",
       "medium|moderate|mittel|moyen|moyenne|medio|media|médio|média|中",
       "high|hoch|élevé|élevée|haut|haute|alto|alta|高"),
    _f("very low-very high",
       "very low|sehr niedrig|très faible|très bas|très basse|muy bajo|muy baja|muito baixo|muito baixa"
       "|molto basso|molto bassa|很低|非常に低い",
       "low|niedrig|faible|bas|basse|bajo|baja|baixo|baixa|basso|bassa|低|低い",
       "medium|moderate|mittel|moyen|moyenne|medio|media|médio|média|中|普通",
       "high|hoch|élevé|élevée|haut|haute|alto|alta|高|高い",
       "very high|sehr hoch|très élevé|très élevée|très haut|très haute|muy alto|muy alta|muito alto"
       "|muito alta|molto alto|molto alta|很高|非常に高い"),
    _f("likelihood",
       "impossible|unmöglich|imposible|impossível|impossibile",
       "almost certainly not|almost impossible|virtually impossible|fast unmöglich|presque impossible"
       "|casi imposible|quase impossível|quasi impossibile",
       "very unlikely|highly unlikely|sehr unwahrscheinlich|très improbable|très peu probable"
       "|muy improbable|muy poco probable|muito improvável|molto improbabile",
       "unlikely|probably not|unwahrscheinlich|improbable|peu probable|poco probable|improvável|improbabile",
       "about even|even chance|as likely as not|about as likely as not|toss up|50/50|fifty fifty"
       "|uncertain|unsure|unsicher|incertain|incierto|incerto",
       "likely|probably|probable|wahrscheinlich|probable|probablement|probable|probablemente|provável"
       "|provavelmente|probabile",
       "very likely|highly likely|sehr wahrscheinlich|très probable|muy probable|muito provável|molto probabile",
       "almost certain|almost certainly|virtually certain|nearly certain|fast sicher|presque certain"
       "|quasi certain|casi seguro|casi cierto|quase certo|quasi certo",
       "certain|certainly|definitely|sicher|certain|seguro|cierto|certo"),
    _f("confidence",
       "not confident|not at all confident|not confident at all|gar nicht sicher|pas du tout confiant"
       "|nada seguro|nada confiante",
       "slightly confident|a little confident|kaum sicher|peu confiant|poco seguro|pouco confiante",
       "somewhat confident|moderately confident|fairly confident|ziemlich sicher|assez confiant"
       "|algo seguro|bastante seguro|razoavelmente confiante",
       "very confident|highly confident|sehr sicher|très confiant|muy seguro|muito confiante",
       "completely confident|extremely confident|fully confident|absolutely confident|völlig sicher"
       "|totalement confiant|completamente seguro|totalmente confiante"),
    _f("agreement",
       "strongly disagree|stimme überhaupt nicht zu|pas du tout d'accord|totalmente en desacuerdo"
       "|discordo totalmente",
       "disagree|stimme nicht zu|pas d'accord|en desacuerdo|discordo",
       "neutral|neither agree nor disagree|weder noch|ni d'accord ni pas d'accord|ni de acuerdo ni en desacuerdo"
       "|não concordo nem discordo",
       "agree|stimme zu|d'accord|de acuerdo|concordo",
       "strongly agree|stimme voll zu|tout à fait d'accord|totalmente de acuerdo|concordo totalmente"),
    _f("letter grade", "f", "d-", "d", "d+", "c-", "c", "c+", "b-", "b", "b+", "a-", "a", "a+"),
)


@dataclass(frozen=True)
class PhraseBook:
    """The phrases a reader accepts: each normalised spelling gets a code (its index in
    ``vocab``), which the reader stores as the row's confidence until :func:`choose`
    turns codes into ranks once every line is read."""

    families: tuple[Family, ...]
    given: bool = False
    vocab: tuple[str, ...] = ()
    codes: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, families: tuple[Family, ...], given: bool = False) -> PhraseBook:
        vocab = tuple(dict.fromkeys(s for f in families for p in f.positions for s in p))
        return cls(families, given, vocab, {s: i for i, s in enumerate(vocab)})

    def code(self, value: Any) -> int | None:
        """The code of a confidence value, ``None`` when it is no phrase of the book."""
        if not isinstance(value, str):
            return None
        return self.codes.get(normalise(value))

    def known(self) -> str:
        """The accepted phrases for a message: the given order, or the families' first spellings."""
        if self.given:
            return "the phrases given (" + ", ".join(p[0] for p in self.families[0].positions) + ")"
        return "the built-in lists (" + ", ".join(f.name for f in self.families) + "; docs/verbal.md)"


BUILT_IN = PhraseBook.of(FAMILIES)


def parse_phrases(text: str | list[str] | tuple[str, ...], flag: str = "--phrases") -> PhraseBook:
    """A user's order of phrases, lowest first: ``"low,medium,high"`` or a list."""
    items = [s for s in (text.split(",") if isinstance(text, str) else list(text))]
    names = [normalise(str(s)) for s in items]
    if any(not s for s in names):
        raise CalibError(f"{flag}: an empty phrase in {text!r}; give the phrases lowest first, e.g. low,medium,high")
    if len(set(names)) != len(names):
        twice = sorted({s for s in names if names.count(s) > 1})
        raise CalibError(f"{flag}: {', '.join(repr(s) for s in twice)} given twice; each phrase has one place")
    if len(names) < 2:
        raise CalibError(f"{flag}: give at least two phrases, lowest first, e.g. low,medium,high")
    return PhraseBook.of((Family("given", tuple((s,) for s in names)),), given=True)


@dataclass(frozen=True)
class PhraseScale:
    """The ordered phrases a file is read on: ``labels[r - 1]`` is rank ``r``'s phrase."""

    family: str
    labels: tuple[str, ...]
    used: int
    how: str


def choose(book: PhraseBook, codes: np.ndarray) -> tuple[PhraseScale, np.ndarray]:
    """The family of the used phrase ``codes`` (see the module docstring) and each row's
    rank ``1..k`` on it (float)."""
    used = sorted({int(c) for c in np.unique(codes)}) if codes.size else []
    words = {book.vocab[c] for c in used}
    fits = [f for f in book.families if words <= {s for p in f.positions for s in p}]
    if not fits:
        raise CalibError(
            f"the phrases {', '.join(repr(w) for w in sorted(words))} belong to no one built-in list of phrases; "
            'give their order, lowest first, with --phrases "a,b,c"'
        )
    fam = min(fits, key=lambda f: len(f.positions))
    rank_of = {s: r for r, p in enumerate(fam.positions, start=1) for s in p}
    lut = np.zeros(len(book.vocab), dtype=np.float64)
    for c in used:
        lut[c] = rank_of[book.vocab[c]]
    ranks = lut[codes.astype(np.int64)] if codes.size else np.zeros(0)
    labels = []
    for r, spellings in enumerate(fam.positions, start=1):
        seen = [book.vocab[c] for c in used if rank_of[book.vocab[c]] == r]
        labels.append(seen[0] if len(seen) == 1 else spellings[0])
    k = len(fam.positions)
    source = "given with --phrases" if book.given else f"the built-in {fam.name!r} list"
    how = (f"phrases read as ranks 1-{k} on {source} ({' < '.join(labels)}); {len(used)} of {k} used; "
           f"before a map, a phrase's probability is the midpoint of its rank's equal share, (r - 1/2) / {k}, "
           "a convention for an order, not a stated probability")
    return PhraseScale(fam.name, tuple(labels), len(words), how), ranks


def rank_of(labels: tuple[str, ...], text: str) -> float | None:
    """The rank of phrase ``text`` on ``labels`` (for a threshold given as a phrase)."""
    want = normalise(text)
    for r, s in enumerate(labels, start=1):
        if normalise(s) == want:
            return float(r)
    return None


def phrase_reading(codes: np.ndarray, book: PhraseBook) -> ScaleReading:
    """The phrase codes a reader stored, read on their list (:func:`choose`) as ranks on
    ``Scale(1/2, k + 1/2, labels=...)`` (so ``p = (r - 1/2) / k``): the same result type as :func:`calib.scale.read_scale`."""
    ps, ranks = choose(book, np.asarray(codes, dtype=np.float64))
    k = len(ps.labels)
    scale = Scale(0.5, k + 0.5, f"{k} phrases", ps.how, ps.labels)
    n = ranks.size
    return ScaleReading(scale, ranks, np.full(n, OK, dtype=np.int8), np.zeros(n, dtype=np.int8), (scale,),
                        {"phrases": n})
