"""What the command line prints and returns: exit codes, strict JSON, plain-text tables, load lines.

Figures inside the text are written with :mod:`calib.present.format`, the formatter set every
face shares.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from calib.present.tables import platform_line

if TYPE_CHECKING:
    from calib.dataset import Dataset

EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def dumps(obj: Any) -> str:
    """Strict JSON: numpy numbers made plain, NaN and infinity made ``null``."""
    from calib.numbers import plain

    # ASCII: a lone surrogate from the input (JSON allows "\ud800") is escaped, not a crash
    return json.dumps(plain(obj), indent=2, allow_nan=False, ensure_ascii=True)


def emit_json(obj: Any) -> None:
    """Print ``obj`` as the one strict JSON object of ``--json``."""
    sys.stdout.write(dumps(obj) + "\n")


def columns(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (0,)) -> list[str]:
    """A plain-text table: columns padded to their widest cell; ``left`` columns left-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  " + "  ".join(c.ljust(w) if i in left else c.rjust(w)
                                for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(headers)] + [line(r) for r in rows]


def load_lines(ds: Dataset) -> list[str]:
    """What was read: the load summary, the scale, the clusters and the first dropped lines."""
    r = ds.report
    out = [f"Loaded {r.source}: {r.summary()}."]
    if (tool := platform_line(r)) is not None:  # which tool wrote the file, and what it holds
        out.append(tool)
    if r.scale and r.scale.get("how"):
        out.append(f"Scale: {r.scale['how']}.")
    if ds.table.clusters is not None:  # dependent rows (calib.clusters)
        c = ds.table.clusters.to_dict()
        eff = "" if c["effective_n"] is None else f", effective n {c['effective_n']:,.0f} of {ds.table.total:,}"
        out.append(f"Clusters: {c['count']:,} ({c['how']}){eff}: intervals resample clusters.")
    out += [f"  {i.message()}" for i in r.issues[:5]]
    if r.dropped > 5:
        out.append(f"  ... {r.dropped - 5:,} more dropped lines (see --json load_report)")
    return out
