"""Clustered rows: the cluster bootstrap, design effects and cluster-robust tests.

Rows are not independent when one item is judged several times (Inspect epochs, an
id repeated on several lines, several judgments of one passage). The unit sampled is
then the cluster (the item), and every interval must resample clusters (Field &
Welsh 2007; Miller 2024, "Adding Error Bars to Evals"): resampling rows treats 5
epochs of 200 items as 1,000 independent answers and gives intervals far too narrow.

Counts per cluster
------------------
:class:`Clusters` holds, for each cluster ``g`` and each cell ``c`` of the count
table, the rows ``n[g, c]`` and right answers ``k[g, c]`` (scipy.sparse CSR: a
cluster touches a few cells). A cluster bootstrap resample draws ``G`` clusters with
replacement; cluster ``g`` is drawn ``w_g`` times, ``w ~ Multinomial(G, 1/G)``, and
the resampled counts are ``w @ n`` and ``w @ k``. Clusters with the same counts are
exchangeable, so they are drawn as one *pattern* with probability ``m_u / G``
(``m_u`` clusters share pattern ``u``): the same distribution, at a cost that grows
with the number of distinct patterns (with every cluster a single row this is the
row bootstrap of :mod:`calib.bootstrap`: at most two patterns per cell).

Design effects
--------------
The tests of :mod:`calib.metrics` are sums of per-row scores ``s_i`` (a residual
``y - p``, a Brier difference, a logistic score) whose variance they compute as if
rows were independent (``info``). With clusters, the variance of ``sum s`` is
estimated by the cluster-robust (sandwich) sum ``J = sum_g U_g U_g^T`` over the
cluster totals ``U_g = sum_{i in g} s_i`` (Liang & Zeger 1986). The *design effect*
of the test is ``trace(info^-1 J) / q`` (Kish 1965 for ``q = 1``; for ``q > 1`` the
mean generalised design effect of Rao & Scott 1981); a z statistic is divided by its
square root (which makes it the sandwich z) and a chi-square statistic by it (the
first-order Rao-Scott correction). Every score here takes one value for the right
answers and one for the wrong answers of a cell, so cluster totals are two sparse
products.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from calib.numbers import finite_or_none

if TYPE_CHECKING:  # scipy.sparse is imported by the calls that use it: loading a file
    # imports this module, and scipy.sparse would cost every small audit its import
    from scipy import sparse

    from calib.loadreport import LoadReport
    from calib.readers.base import LoadOptions
    from calib.rows import Judgments

#: Numbers drawn per numpy call in :func:`draw` (as :data:`calib.bootstrap.DRAW_SLICE`).
DRAW_SLICE = 200_000
#: ``--cluster-key`` value that turns inference off (rows independent).
NONE = "none"
#: Bits for ``k`` when a cell's ``(n, k)`` pair is packed into one integer (patterns).
_PACK = 2**31


@dataclass(frozen=True)
class Clusters:
    """Rows and right answers per (cluster, cell) of a count table.

    Attributes
    ----------
    n, k:
        ``(G, cells)`` int64 CSR matrices: rows of cluster ``g`` in cell ``c``, and
        right answers among them. No cluster is empty.
    how:
        How the clusters were found, in words (``"Inspect epochs: sample id"``).
    """

    n: sparse.csr_matrix
    k: sparse.csr_matrix
    how: str

    @property
    def count(self) -> int:
        """Number of clusters G."""
        return int(self.n.shape[0])

    @property
    def cells(self) -> int:
        return int(self.n.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        """Rows per cluster, ``(G,)`` int64."""
        return np.asarray(self.n.sum(axis=1), dtype=np.int64).ravel()

    def merge_cells(self, index: np.ndarray, cells: int) -> Clusters:
        """Column ``c`` summed into new cell ``index[c]`` (``-1`` drops the column);
        clusters left empty are dropped."""
        from scipy import sparse  # lazy: see the imports above
        index = np.asarray(index, dtype=np.int64)
        keep = np.flatnonzero(index >= 0)
        m = sparse.csr_matrix(
            (np.ones(keep.size, dtype=np.int64), (keep, index[keep])), shape=(self.cells, int(cells))
        )
        return _nonempty(self.n @ m, self.k @ m, self.how)

    def select(self, cells: np.ndarray) -> Clusters:
        """Only these columns (an index or a bool mask), in that order; clusters left
        empty are dropped."""
        cols = np.asarray(cells)
        if cols.dtype == bool:
            cols = np.flatnonzero(cols)
        return _nonempty(self.n[:, cols], self.k[:, cols], self.how)

    @cached_property
    def patterns(self) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
        """Distinct per-cluster counts ``(U, cells)`` of n and k, and how many clusters
        share each (:func:`draw` draws patterns). Built once."""
        return _pattern_table(self)

    def to_dict(self) -> dict[str, object]:
        """``count``, ``how``, ``effective_n`` and ``design_effect`` (of the accuracy,
        :func:`outcome_design_effect`; ``None`` with one class only; the effective n
        ``None`` too when the design effect is 0, :func:`effective_n`)."""
        deff = outcome_design_effect(self)
        return {"count": self.count, "how": self.how, "effective_n": _n_over(self, deff), "design_effect": deff}


def _nonempty(n: sparse.csr_matrix, k: sparse.csr_matrix, how: str) -> Clusters:
    from scipy import sparse  # lazy: see the imports above
    n, k = sparse.csr_matrix(n, dtype=np.int64), sparse.csr_matrix(k, dtype=np.int64)
    n.eliminate_zeros()
    k.eliminate_zeros()
    live = np.flatnonzero(np.diff(n.indptr) > 0)
    if live.size < n.shape[0]:
        n, k = n[live], k[live]
    return Clusters(n, k, how)


def build(
    cluster: np.ndarray, cell: np.ndarray, correct: np.ndarray, cells: int, how: str,
) -> Clusters:
    """Per-cluster counts from rows: each row's cluster label, table cell and outcome.

    Clusters are ordered by label (``np.unique``). A row whose cell is ``-1`` is left out.
    """
    cell = np.asarray(cell, dtype=np.int64)
    use = cell >= 0
    y = np.asarray(correct, dtype=np.int64)[use]
    g = distinct_codes(np.asarray(cluster)[use].astype(str))
    return from_codes(g, cell[use], np.ones(y.size, dtype=np.int64), y, cells, how)


def distinct_codes(values: np.ndarray) -> np.ndarray:
    """``np.unique(values, return_inverse=True)[1]`` of a fixed-width unicode array, as
    int64: each value's rank among the distinct values, in numpy's string order.

    Values of at most 8 characters, each below U+0100 (``"i123456"``), are packed into
    integers that order and compare as numpy orders and compares the strings
    (:func:`_packed`), and the integers are sorted instead: a million 7-character ids
    0.13 s against 0.36 s. The same numbers either way, so a cluster keeps its number
    (the bootstrap draws clusters in that order)."""
    v = np.ascontiguousarray(values).reshape(-1)
    key = _packed_ids(v)
    return np.unique(v if key is None else key, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _packed_ids(v: np.ndarray) -> np.ndarray | None:
    """:func:`_packed` of the values of a contiguous 1-d unicode array; ``None`` when
    they do not pack (too wide, a code point above U+00FF, not unicode, empty)."""
    width = v.itemsize // 4 if v.dtype.kind == "U" else 0
    return _packed(v.view(np.uint32).reshape(v.size, width)) if width and v.size else None


def from_codes(
    cluster: np.ndarray, cell: np.ndarray, n: np.ndarray, k: np.ndarray, cells: int, how: str,
) -> Clusters:
    """Per-cluster counts from (cluster number, cell, rows, right answers) entries, as a
    GROUP BY over (cluster, cell) returns them: entries of one pair are summed, and a
    number no entry uses leaves no cluster (numbers need not be consecutive)."""
    from scipy import sparse  # lazy: see the imports above
    g = np.asarray(cluster, dtype=np.int64)
    shape = (int(g.max()) + 1 if g.size else 0, int(cells))
    idx = (g, np.asarray(cell, dtype=np.int64))
    return _nonempty(sparse.csr_matrix((np.asarray(n, dtype=np.int64), idx), shape=shape),
                     sparse.csr_matrix((np.asarray(k, dtype=np.int64), idx), shape=shape), how)


# ---------------------------------------------------------------- bootstrap
def _pattern_table(clusters: Clusters) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """Distinct cluster count patterns ``(U, cells)`` for n and k, and how many clusters
    share each: rows of ``n * 2**31 + k`` compared entry by entry, per number of
    non-empty cells."""
    from scipy import sparse  # lazy: see the imports above
    code = sparse.csr_matrix(clusters.n * _PACK + clusters.k)
    code.sort_indices()
    nnz = np.diff(code.indptr)
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    mult: list[np.ndarray] = []
    for d in np.unique(nnz):
        rows = np.flatnonzero(nnz == d)
        at = code.indptr[rows][:, None] + np.arange(d)
        key = np.hstack([code.indices[at].astype(np.int64), code.data[at]])
        uniq, counts = np.unique(key, axis=0, return_counts=True)
        pieces.append((uniq[:, :d], uniq[:, d:]))
        mult.append(counts)
    cols = np.concatenate([c.ravel() for c, _ in pieces]) if pieces else np.zeros(0, np.int64)
    vals = np.concatenate([v.ravel() for _, v in pieces]) if pieces else np.zeros(0, np.int64)
    lens = np.concatenate([np.full(c.shape[0], c.shape[1]) for c, _ in pieces]) if pieces else np.zeros(0, int)
    indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    shape = (int(lens.size), clusters.cells)
    pn = sparse.csr_matrix((vals // _PACK, cols, indptr), shape=shape)
    pk = sparse.csr_matrix((vals % _PACK, cols, indptr), shape=shape)
    return pn, pk, np.concatenate(mult) if mult else np.zeros(0, np.int64)


def draw(clusters: Clusters, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster bootstrap: ``reps`` resamples of G clusters drawn with replacement.

    Cluster ``g`` is drawn ``w_g`` times, ``w ~ Multinomial(G, 1/G)`` (Davison &
    Hinkley 1997, sect. 3.8); clusters with equal counts are drawn as one pattern
    (see the module docstring). Seeded. The multinomial costs about 0.1 µs per
    resample and distinct pattern: 2,000 resamples of 1,000 items take about 0.1 s,
    of 20,000 items (5 epochs each over 101 stated values) 2 to 4 s.

    Returns
    -------
    n, k:
        int64 arrays of shape ``(reps, cells)``: rows and right answers per cell in
        each resample.
    """
    G, cells = clusters.count, clusters.cells
    out_n = np.zeros((reps, cells), dtype=np.int64)
    out_k = np.zeros((reps, cells), dtype=np.int64)
    if G == 0:
        return out_n, out_k
    pn, pk, mult = clusters.patterns
    rng = np.random.default_rng(seed)
    pvals = mult / G
    # in slices, as calib.bootstrap does: one numpy call holds the GIL throughout
    step = max(1, DRAW_SLICE // max(mult.size, cells))
    for start in range(0, reps, step):
        stop = min(reps, start + step)
        w = rng.multinomial(G, pvals, size=stop - start)  # (m, U): draws of each pattern
        out_n[start:stop] = w @ pn
        out_k[start:stop] = w @ pk
    return out_n, out_k


# ----------------------------------------------------------- design effects
def totals(clusters: Clusters, right: np.ndarray, wrong: np.ndarray) -> np.ndarray:
    """Per-cluster sums of a per-row score taking the value ``right[c]`` on a right
    answer and ``wrong[c]`` on a wrong answer in cell ``c``:
    ``U_g = sum_c k_gc right_c + (n_gc - k_gc) wrong_c``.

    ``right``/``wrong``: ``(cells,)`` or ``(cells, q)``; returns ``(G,)`` or ``(G, q)``.
    """
    right = np.asarray(right, dtype=np.float64)
    wrong = np.asarray(wrong, dtype=np.float64)
    return np.asarray(clusters.k @ (right - wrong) + clusters.n @ wrong)


def design_effect(
    clusters: Clusters, right: np.ndarray, wrong: np.ndarray, info: np.ndarray | float, *, centre: bool = False,
    coordinate: np.ndarray | None = None,
) -> float | None:
    """Mean design effect of a summed score, ``trace(info^-1 J) / q``.

    .. math:: J = \\sum_g U_g U_g^T, \\qquad U_g = \\sum_{i \\in g} s_i

    (:func:`totals`), the cluster-robust variance of ``sum_i s_i`` (Liang & Zeger
    1986); ``info`` is its variance under independence (a number, a ``(q,)``
    diagonal or a ``(q, q)`` matrix). For ``q = 1`` this is Kish's (1965) design
    effect ``Var_cluster / Var_independent``; for ``q > 1`` the mean eigenvalue of
    ``info^-1 J``, the divisor of Rao & Scott's (1981) first-order correction.

    Scores of a test of a fully specified hypothesis (calibration: ``E s = 0``) are
    used as they are; ``centre=True`` subtracts each cluster's share of the mean
    (``U_g - N_g * mean``, times ``G / (G - 1)``) for a score whose mean is estimated.
    ``None`` when undefined (``info`` zero or singular, fewer than 2 clusters when
    centring).

    ``coordinate`` (per cell, ``-1`` for none) puts the score of cell ``c`` in
    coordinate ``coordinate[c]`` of a ``q = info.size`` vector, e.g. the bins of a
    chi-square statistic (``right``/``wrong`` per cell, ``info`` the diagonal): sparse,
    for tables of any number of cells.
    """
    if coordinate is not None:
        return _binned_design_effect(clusters, right, wrong, np.asarray(coordinate), np.asarray(info, float))
    u = totals(clusters, right, wrong)
    u = u.reshape(u.shape[0], -1)
    G, q = u.shape
    if centre:
        if G < 2:
            return None
        size = clusters.sizes.astype(np.float64)
        u = u - size[:, None] * (u.sum(axis=0) / size.sum())
    info = np.asarray(info, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if info.ndim <= 1:  # independence variance diagonal: only J's diagonal is needed
            ratio = np.sum(u * u, axis=0) / np.broadcast_to(info, (q,))
            d = float(np.mean(ratio))
        else:
            try:
                d = float(np.trace(np.linalg.solve(info, u.T @ u))) / q
            except np.linalg.LinAlgError:
                return None
    if centre:
        d *= G / (G - 1)
    return finite_or_none(d)


def _binned_design_effect(
    clusters: Clusters, right: np.ndarray, wrong: np.ndarray, coordinate: np.ndarray, info: np.ndarray,
) -> float | None:
    from scipy import sparse  # lazy: see the imports above
    per = sparse.csr_matrix(clusters.k.multiply(np.asarray(right, float) - wrong) + clusters.n.multiply(wrong))
    keep = np.flatnonzero(coordinate >= 0)
    m = sparse.csr_matrix((np.ones(keep.size), (keep, coordinate[keep])), shape=(clusters.cells, info.size))
    u = per @ m
    j = np.asarray(u.multiply(u).sum(axis=0), dtype=np.float64).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        d = float(np.mean(j / info))
    return finite_or_none(d)


def outcome_design_effect(clusters: Clusters) -> float | None:
    """Design effect of the accuracy (the mean outcome):

    .. math:: \\text{deff} = \\frac{\\frac{G}{G-1} \\sum_g (K_g - N_g \\bar y)^2}{\\frac{N}{N-1} N \\bar y (1 - \\bar y)}

    (Kish 1965, sect. 8.2), 1 when every cluster is one row; about
    ``1 + (m - 1) rho`` for clusters of ``m`` rows with intraclass correlation
    ``rho``. The effective sample size is ``N / deff``. ``None`` with one class only.
    """
    size = clusters.sizes
    N = int(size.sum())
    if N < 2:
        return None
    ybar = float(clusters.k.sum()) / N
    info = N * ybar * (1 - ybar) * N / (N - 1)
    if info <= 0:
        return None
    one = np.ones(clusters.cells)
    return design_effect(clusters, one, 0 * one, info, centre=True)


def effective_n(clusters: Clusters) -> float | None:
    """``N / deff`` of :func:`outcome_design_effect`: as many independent answers
    would estimate the accuracy as precisely. ``None`` when the design effect is
    undefined, or 0: every cluster's accuracy equals the overall one exactly (e.g. each
    cluster half right), so the clustered variance estimate is 0 and ``N / 0`` says
    nothing about precision."""
    return _n_over(clusters, outcome_design_effect(clusters))


def _n_over(clusters: Clusters, deff: float | None) -> float | None:
    return None if deff is None or deff <= 0 else float(clusters.sizes.sum()) / deff


def cell_design_effects(clusters: Clusters, prob: np.ndarray | None = None) -> np.ndarray:
    """Kish's (1965) design effect of each cell's own hit rate, ``(cells,)``.

    For cell ``c`` with ``N_c`` rows, ``K_c`` right, in ``G_c`` clusters, and cluster
    totals ``U_gc = k_gc - n_gc m_c``:

    .. math:: \\text{deff}_c = \\frac{\\frac{G_c}{G_c - 1} \\sum_g U_{gc}^2}{\\frac{N_c}{N_c - 1} N_c \\bar y_c (1 - \\bar y_c)}

    with ``m_c = \\bar y_c = K_c / N_c`` (centred, for an interval around the estimate);
    given ``prob``, ``m_c = prob_c`` and the uncentred ratio ``\\sum_g U_{gc}^2 / (N_c p_c (1 - p_c))``
    (a test of the fully specified "hit rate = p_c"). NaN where undefined (one class
    only, ``p_c`` at 0 or 1, fewer than 2 clusters or rows when centring); 1 when every
    cluster holds one row of the cell.
    """
    from scipy import sparse  # lazy: see the imports above
    n, k = clusters.n.tocsc(), clusters.k.tocsc()
    N = np.asarray(n.sum(axis=0), dtype=np.float64).ravel()
    K = np.asarray(k.sum(axis=0), dtype=np.float64).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        m = K / N if prob is None else np.asarray(prob, dtype=np.float64)
        # U = k - n * m column by column, on the stored entries (both share n's pattern: k <= n)
        u = sparse.csc_matrix(k - n.multiply(m[None, :]))
        j = np.asarray(u.multiply(u).sum(axis=0), dtype=np.float64).ravel()
        if prob is None:
            G = np.diff(n.indptr).astype(np.float64)  # clusters with rows in the cell
            d = (j * G / (G - 1)) / (N * m * (1 - m) * N / (N - 1))
            d = np.where((G >= 2) & (N >= 2), d, np.nan)
        else:
            d = j / (N * m * (1 - m))
    return np.where(np.isfinite(d) & (d > 0), d, np.nan)


def test_adjustment(d: float | None) -> float:
    """The divisor a test applies (``X^2 / d``, ``z / sqrt(d)``): the design effect,
    never below 1 (a negative within-cluster correlation, or noise around 1, does not
    sharpen a test)."""
    return 1.0 if d is None else max(1.0, d)


# ---------------------------------------------------------------- inference
def labels(values: np.ndarray, line: np.ndarray) -> tuple[np.ndarray, int]:
    """Cluster labels with each missing value (``None`` or ``""``) its own cluster
    (labelled by its line); the number of such rows."""
    v = np.asarray(values, dtype=object)
    missing = np.array([x is None or x == "" for x in v], dtype=bool)
    out = v.astype(str).astype(object)
    out[missing] = [f"\x00line {int(i)}" for i in np.asarray(line)[missing]]
    return out, int(missing.sum())


def turned_off(key: str | None) -> bool:
    """Whether ``--cluster-key`` asks for independent rows (:data:`NONE`, any case)."""
    return key is not None and key.strip().lower() == NONE


def missing_note(missing: int) -> str:
    """The load note's tail on the rows without a cluster value ("" when there are none)."""
    return f"; {missing:,} row(s) without a value are each their own cluster" if missing else ""


def named_note(how: str, count: int, rows: int, missing: int) -> str:
    """The load note of clusters from a named field (``--cluster-key``)."""
    return f"clusters: {how}: {count:,} clusters of {rows:,} rows; intervals resample clusters" + missing_note(missing)


def infer(rows: Judgments, report: LoadReport, options: LoadOptions) -> tuple[Judgments, LoadReport]:
    """Set ``rows.cluster`` from ``options.cluster_key`` and say so in the report.

    - ``cluster_key`` ``"none"``: rows are independent.
    - ``cluster_key`` ``None`` (inferred): the reader's own clusters (Inspect epochs:
      the sample id), else the item id when some id is on several rows.
    - a field name: the values the reader read from that field in its one pass over the
      input (:func:`calib.readers.jsonl.cluster_key`: the stated, log-prob, lm-eval,
      Inspect and platform readers), else the item id when it is the id field. The input is
      never read again here.

    A row without a value is its own cluster (counted in the note).
    """
    key = options.cluster_key
    if turned_off(key):
        return replace(rows, cluster=None, cluster_how=""), report
    if len(rows) == 0:
        return rows, report
    id_field = report.fields.get("id") if isinstance(report.fields, dict) else None
    if key is None:
        if rows.cluster is not None:  # the reader's own (Inspect epochs), noted by it
            return rows, replace(report, fields={**report.fields, "cluster": id_field or "id"})
        values, how = rows.item_id, f"repeated item id ({id_field or 'id'})"
        if surely_distinct(values):  # 1M ids in order: 0.01 s (0.06 s shuffled), against 0.2 s for the set below
            return rows, report
        ids = values.tolist()
        seen = set(ids)
        empty = ids.count("") if "" in seen else 0
        if len(seen) - (empty > 0) == len(ids) - empty:  # no id repeats: one hash pass (1M ids: 0.1 s)
            return rows, report
        repeated = _ids_repeated(values, ids)
        lab, missing = labels(values, rows.line)
        note = (f"{repeated:,} ids appear on more than one row: intervals resample the "
                f"{_distinct(lab):,} ids (clusters), not the {len(rows):,} rows; "
                f"--cluster-key {NONE} treats rows as independent") + missing_note(missing)
    else:
        if rows.cluster is not None:  # read by the reader in its one pass
            values, how = rows.cluster, f"field {key!r}"
        elif np.any(rows.item_id != "") and (key == id_field or (id_field is None and key in ("id", "item_id"))):
            values, how = rows.item_id, f"item id ({key})"
        elif key == id_field:  # the id field, on no kept row: said below ("no row has the field")
            values, how = np.full(len(rows), None, dtype=object), f"field {key!r}"
        else:
            raise _error(f"{report.source}: --cluster-key {key}: a field can be read per row only from "
                         f"JSONL, an Inspect log or an eval platform's file; here the item id "
                         f"({id_field or 'id'}) is the only choice")
        lab, missing = labels(values, rows.line)
        if missing == len(rows):
            raise _error(f"{report.source}: --cluster-key {key}: no row has the field {key!r}; "
                         f"fields seen: {', '.join(str(v) for v in report.fields.values() if v)}")
        note = named_note(how, _distinct(lab), len(rows), missing)
    fields = {**report.fields, "cluster": key or id_field or "id"}
    return replace(rows, cluster=lab, cluster_how=how), replace(report, notes=(*report.notes, note), fields=fields)


def _distinct(labels_: np.ndarray) -> int:
    """How many distinct labels (``len(np.unique(labels_))`` of the object array of
    strings :func:`labels` returns): a set instead of a sort of Python strings, 0.27 s
    against 1.6 s for a million."""
    return len(set(labels_.tolist()))


def _ids_repeated(values: np.ndarray, ids: list[str]) -> int:
    """How many non-empty ids are on more than one row (``values`` the ids as an array,
    ``ids`` the same as a list): by sorting packed ids when they pack (:func:`_packed`),
    else by counting them in a dict (0.13 s against 0.4 s for a million)."""
    key = _packed_ids(np.ascontiguousarray(values).reshape(-1))
    if key is None:
        return sum(1 for x, c in Counter(ids).items() if c > 1 and x != "")
    uniq, count = np.unique(key, return_counts=True)
    return int(np.count_nonzero((count > 1) & (uniq != 0)))  # "" packs to 0 and is no id


def surely_distinct(values: np.ndarray) -> bool:
    """Whether the non-empty values of a fixed-width unicode array are all distinct;
    ``False`` means "not proved" (a hash collision, an object array), and the caller
    counts exactly.

    Ids of at most 8 characters, each below U+0100 (``"q123456"``), are compared
    exactly, each packed into one integer in text order (:func:`_packed`); longer ones
    by a 64-bit hash (distinct hashes imply distinct strings). The integers are sorted
    (a merge of runs when the ids come mostly in order, as ``q0, q1, ...`` do: a few ms
    for a million, against 0.05 s for a sort of hashes) and neighbours compared."""
    if values.dtype.kind != "U" or values.size < 2 or values.itemsize > 4 * 64:
        return False  # long ids: one pass per character costs more than the set
    width = values.itemsize // 4
    codes = np.ascontiguousarray(values).view(np.uint32).reshape(values.size, width)
    key = _packed(codes)
    if key is None:
        # FNV-1a over the code points (wrapping uint64 arithmetic); a trailing NUL is padding
        key = np.full(values.size, 0xCBF29CE484222325, dtype=np.uint64)
        prime = np.uint64(0x100000001B3)
        for j in range(width):
            key ^= codes[:, j]
            key *= prime
        key = key[codes.any(axis=1)]  # "" (all padding) is no id
    else:
        key = key[key != 0]  # "" (all padding) is no id; any other id has a non-zero code
    if key.size < 2:
        return True
    # mostly in order (few descents): timsort merges the runs; else the default sort
    runs = int(np.count_nonzero(key[1:] < key[:-1]))
    key = np.sort(key, kind="stable" if runs <= key.size // 64 else None)
    return bool(np.all(key[1:] != key[:-1]))


def _packed(codes: np.ndarray) -> np.ndarray | None:
    """Each row of ``codes`` (code points, one row per id, NUL-padded) as one uint64,
    big-endian, so that the integers compare as the ids do and are equal exactly when the
    ids are; ``None`` when the ids are wider than 8 characters or hold a code point
    above U+00FF. Only an all-NUL row (``""``) packs to 0."""
    n, width = codes.shape
    if width > 8 or (codes.size and int(codes.max()) > 0xFF):
        return None
    out = np.zeros((n, 8), dtype=np.uint8)
    out[:, :width] = codes
    return out.view(">u8").reshape(n).astype(np.uint64)


def _error(msg: str) -> Exception:
    from calib.errors import CalibError

    return CalibError(msg)
