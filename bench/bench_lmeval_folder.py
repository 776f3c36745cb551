"""Benchmark: a 57-subject lm-eval MMLU output folder (14,042 samples) read and audited.

    python bench/bench_lmeval_folder.py [--repeat 3] [--keep DIR]

Writes a synthetic folder shaped exactly like lm-eval 0.4.13's ``--log_samples``
output (one ``samples_mmlu_<subject>_<date>.jsonl`` per subject with the MMLU
test-split sizes, zero-shot prompts, four continuations " A".." D", log-likelihoods as
strings, plus ``results_<date>.json``) into a temporary folder, then times:

- reading the files' bytes (what an upload hands over),
- ``calib.loading.load_many`` (``calib.readers.lmeval.read_folder``: parse, recompute acc; then the count table),
- ``calib.table.from_judgments`` alone,
- ``calib.audit.audit`` of the pooled table (the dashboard's Overview) and with the
  57 per-subject audits (``calib audit --json``, the Report page).

Prints the figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calib.loading import load_many as read_folder  # noqa: E402
from calib.readers.base import LoadOptions  # noqa: E402
from calib.table import from_judgments  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_data"))
from make_samples import MMLU_SUBJECTS  # noqa: E402

DATE = "2026-11-30T09-40-26.713250"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_folder(out: Path, seed: int = 0) -> int:
    """Write the folder; returns the number of samples."""
    rng = np.random.default_rng(seed)
    total = 0
    results: dict[str, dict] = {}
    configs: dict[str, dict] = {}
    for subject, n in MMLU_SUBJECTS.items():
        task = f"mmlu_{subject}"
        lines = []
        right = 0
        for i in range(n):
            choices = [f"option {j} for {subject} question {i}" for j in range(4)]
            answer = int(rng.integers(0, 4))
            question = f"Synthetic question {i} about {subject.replace('_', ' ')}?"
            prompt = (f"The following are multiple choice questions (with answers) about "
                      f"{subject.replace('_', ' ')}.\n\n{question}\n"
                      + "".join(f"{'ABCD'[j]}. {c}\n" for j, c in enumerate(choices)) + "Answer:")
            lls = rng.normal(-1.5, 0.8, size=4)
            if rng.random() < 0.6:  # a model right ~60% of the time (plus chance)
                lls[answer] = lls.max() + abs(rng.normal(0.5, 0.5))
            acc = float(int(np.argmax(lls)) == answer)
            right += int(acc)
            resps = [[f"{x!r}", "False"] for x in lls.tolist()]
            lines.append(json.dumps({
                "doc_id": i,
                "doc": {"question": question, "subject": subject, "choices": choices, "answer": answer},
                "target": str(answer),
                "arguments": {f"gen_args_{j}": {"arg_0": prompt, "arg_1": f" {'ABCD'[j]}"} for j in range(4)},
                "resps": [[r] for r in resps],
                "filtered_resps": resps,
                "filter": "none",
                "metrics": ["acc"],
                "doc_hash": _sha(question),
                "prompt_hash": _sha(prompt),
                "target_hash": _sha(str(answer)),
                "acc": acc,
            }))
        (out / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
        results[task] = {"alias": f" - {subject}", "acc,none": right / n, "acc_stderr,none": 0.0}
        configs[task] = {"task": task, "target_delimiter": " ", "output_type": "multiple_choice"}
        total += n
    (out / f"results_{DATE}.json").write_text(json.dumps(
        {"results": results, "configs": configs, "lm_eval_version": "0.4.13"}, indent=2))
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the folder here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        n = write_folder(folder)
        t_write = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"folder: {len(list(folder.iterdir()))} files, {n:,} samples, {size / 1e6:.1f} MB "
              f"(written in {t_write:.2f} s)")
        best: dict[str, float] = {}

        def clock(label: str, fn):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            out = fn()
            best[label] = min(best.get(label, float("inf")), time.perf_counter() - t)
            return out

        from calib import bootstrap
        from calib.audit import audit

        for _ in range(args.repeat):
            files = clock("read bytes", lambda: [(str(p), p.read_bytes()) for p in sorted(folder.iterdir())])
            ds = clock("read_folder (parse + acc + count table)",
                       lambda files=files: read_folder(files, name="mmlu", options=LoadOptions()))
            clock("from_judgments alone", lambda ds=ds: from_judgments(ds.rows))
            bootstrap._draw_cache.clear()  # each repeat draws its resamples afresh
            # the dashboard's Overview: the pooled audit; `calib audit --json`: one per subject too
            clock("audit, groups pooled (Overview)", lambda ds=ds: audit(ds.table.pooled_over_groups()))
            clock("audit with the 57 per-subject audits (CLI, Report)", lambda ds=ds: audit(ds.table))
        assert ds.report.kept == n == 14_042 and len(ds.table.groups) == 57
        print(f"kept {ds.report.kept:,} samples in {len(ds.table.groups)} groups, {ds.table.cells:,} cells "
              f"(pooled: {ds.table.pooled})")
        for note in ds.report.notes[:5]:
            print("  note:", note[:150])
        print(f"best of {args.repeat}:")
        for label, t in best.items():
            print(f"  {label:<42} {t:7.3f} s")
        total = best["read bytes"] + best["read_folder (parse + acc + count table)"] + best[
            "audit, groups pooled (Overview)"]
        print(f"  {'bytes -> loaded -> pooled audit':<42} {total:7.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
