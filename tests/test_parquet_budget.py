"""A Parquet count table is decoded under a row cap and a byte budget that trust no footer
(issue 22): each file is read in a fresh process that reports its own peak resident set
(``VmHWM``: ``ru_maxrss`` would start at the parent's peak, which Linux hands on
across fork and exec) beside its resident set after the imports, under an
address-space cap so that a regression fails here instead of taking the machine."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests import hostile

ROOT = Path(__file__).resolve().parents[1]

#: The child: imports, its resident set, then read_counts under the cap; prints JSON.
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import pandas, pyarrow, pyarrow.parquet  # noqa: F401  (the floor holds the readers)
from calib.errors import CalibError
from calib.readers.counts import read_counts

def status_mb(key):
    line = next(x for x in open("/proc/self/status") if x.startswith(key + ":"))
    return int(line.split()[1]) / 1024

floor = status_mb("VmHWM")
out = {"floor": floor}
try:
    t = read_counts(sys.argv[1], **json.loads(sys.argv[2]))
    out.update(total=int(t.total), cells=int(t.cells), groups=list(map(len, t.groups)))
except CalibError as exc:
    out["error"] = str(exc)
except BaseException as exc:  # a crash: its type, to fail the test with it
    out["crash"] = f"{type(exc).__name__}: {exc}"[:300]
out["peak"] = status_mb("VmHWM")
out["after"] = status_mb("VmRSS")
print(json.dumps(out))
"""


def read_in_child(path: Path, **kwargs: object) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), json.dumps(kwargs)], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_dictionary_group_name_is_not_expanded_per_row(tmp_path: Path) -> None:
    """One 4,000-character group name on a million rows (0.4 MB on disk) used to decode
    to 4 GB (Arrow) and then 16 GB (numpy's fixed-width text): now the table is read with
    the name held once, and the peak stays within 400 MB of the floor."""
    path = tmp_path / "dict.parquet"
    path.write_bytes(hostile.parquet_dict_group(1_000_000))
    assert path.stat().st_size < 2**20
    out = read_in_child(path)
    assert "crash" not in out and "error" not in out, out
    assert out["total"] == 1_000_000 and out["cells"] == 1 and out["groups"] == [4000]
    assert out["peak"] - out["floor"] < 400, out


def test_a_footer_that_understates_its_rows_is_caught_while_reading(tmp_path: Path) -> None:
    """A footer saying 10 rows over 8 million real ones: the rows are counted as they are
    decoded and reading stops one batch past the cap; what was read is given back."""
    path = tmp_path / "lying.parquet"
    path.write_bytes(hostile.parquet_lying_footer(8_000_000))
    assert pq.ParquetFile(path).metadata.num_rows == 10  # the footer lies
    out = read_in_child(path, max_rows=1000)
    assert "crash" not in out, out
    assert str(path) in out.get("error", ""), out
    assert "more than 1,000 rows" in out["error"] and "found while reading" in out["error"], out
    assert "metadata says 10" in out["error"], out
    # 8M rows of three 8-byte columns are 192 MB as Arrow and again as pandas
    assert out["peak"] - out["floor"] < 64, out
    assert out["after"] - out["floor"] < 64, out


def test_distinct_text_over_the_byte_budget_is_refused_while_reading(tmp_path: Path) -> None:
    """20,000 distinct 4,000-character group names (80 MB decoded, 1.3 MB on disk) under
    a 256 MB parse budget (32 MB of decoded columns): refused by name and limit, at a
    peak a few times the budget (it was 1.6 GB: the names became numpy's '<U4000')."""
    rows = 20_000
    names = pa.array([f"{i:08d}" + "x" * 3992 for i in range(rows)])
    table = pa.table({"group": names, "value": pa.array([90.0] * rows), "n": pa.array([1] * rows),
                      "correct": pa.array([1] * rows)})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=False)
    path = tmp_path / "text.parquet"
    path.write_bytes(buf.getvalue())
    out = read_in_child(path, max_parse=256 * 2**20)
    assert "crash" not in out, out
    err = out.get("error", "")
    assert str(path) in err and "decodes to more than 32 MB" in err and "'group'" in err, out
    assert out["peak"] - out["floor"] < 300, out
