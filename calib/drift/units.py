"""The resampling units of two paired runs (:mod:`calib.drift.compare`, :mod:`calib.drift.attribution`):
the item, or with clusters the connected group of items sharing a cluster in either run."""

from __future__ import annotations

import numpy as np
from scipy import sparse


def codes(labels: np.ndarray) -> np.ndarray:
    """Labels as numbers 0..k-1 (their order when sorted as text)."""
    return np.unique(np.asarray(labels).astype(str), return_inverse=True)[1].reshape(-1)


def paired_units(io: np.ndarray, in_: np.ndarray, co: np.ndarray | None, cn: np.ndarray | None,
                  items: int) -> tuple[np.ndarray, int]:
    """The unit of each shared item when pairing: the item itself, or with clusters the
    connected group of items that share a cluster in either run (a cluster coarser than
    the item, ``--cluster-key``, moves as one: its rows are dependent in both runs)."""
    if co is None and cn is None:
        return np.arange(items), items
    from scipy.sparse.csgraph import connected_components

    heads, tails = [], []
    offset = items
    for item, cl in ((io, co), (in_, cn)):
        if cl is None:
            continue
        code = codes(cl)
        heads.append(item)
        tails.append(offset + code)
        offset += int(code.max()) + 1 if code.size else 0
    h, t = np.concatenate(heads), np.concatenate(tails)
    graph = sparse.coo_matrix((np.ones(h.size), (h, t)), shape=(offset, offset))
    _, label = connected_components(graph, directed=False)
    unit = codes(label[:items])  # the items' components, numbered 0..units-1
    return unit, int(unit.max()) + 1
