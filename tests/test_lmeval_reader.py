"""lm-evaluation-harness samples reader, checked on the real lm-eval 0.4.13 output.

The expected prediction, confidence and correctness of every sample are computed
here from the raw JSON, by lm-eval's rule written out by hand: acc = argmax of the
log-likelihoods, acc_norm = argmax of ll / len(choice text without the leading
space); confidence = top softmax probability.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from calib.errors import CalibError
from calib.loading import load, load_many, sniff_format
from calib.readers import lmeval
from calib.readers.base import LoadOptions, Source
from tests.damage import JUNK, mutations

DATA = Path(__file__).parent / "data" / "lm-eval-0.4.13-dummy"
SAMPLES = sorted(DATA.glob("samples_*.jsonl"))
RESULTS = next(DATA.glob("results_*.json"))
TASKS = ["calib_mc_letters", "calib_mc_text"]


def expected(sample: dict, variant: str) -> tuple[int, float, bool]:
    lls = [float(r[0]) for r in sample["filtered_resps"]]
    args = sample["arguments"]
    texts = [args[f"gen_args_{i}"]["arg_1"] for i in range(len(lls))]
    assert all(t.startswith(" ") for t in texts)
    scores = lls if variant == "acc" else [ll / len(t[1:]) for ll, t in zip(lls, texts, strict=True)]
    best = max(scores)
    pred = scores.index(best)
    conf = 1.0 / sum(math.exp(s - best) for s in scores)
    return pred, conf, pred == int(sample["target"])


def raw_samples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("variant", ["acc", "acc_norm"])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name.split("_2026")[0])
def test_every_sample_matches_an_independent_computation(path: Path, variant: str) -> None:
    ds = load(path, options=LoadOptions(variant=variant))
    rows = ds.rows
    raw = raw_samples(path)
    assert rows is not None and len(rows) == len(raw) == 40
    for i, s in enumerate(raw):
        pred, conf, ok = expected(s, variant)
        assert rows.options.pred[i] == pred, (variant, i)
        assert rows.stated[i] == pytest.approx(conf, rel=1e-12)
        assert bool(rows.correct[i]) == ok
        # lm-eval's own per-sample verdict for this variant agrees
        assert bool(rows.correct[i]) == (s[variant] == 1.0)
        assert rows.item_id[i] == str(s["doc_id"]) and rows.line[i] == i + 1
    task = lmeval.task_of(path.name)
    assert set(rows.group) == {task}
    assert rows.options.normalisation == ("char" if variant == "acc_norm" else "none")
    results = json.loads(RESULTS.read_text())["results"][task]
    assert sum(rows.correct) / len(rows) == pytest.approx(results[f"{variant},none"], abs=1e-12)
    assert any(f"recomputed {variant} equals the {variant} lm-eval stored on all 40" in n for n in ds.report.notes)


def test_acc_norm_differs_from_acc_on_the_text_task() -> None:
    path = next(p for p in SAMPLES if "calib_mc_text" in p.name)
    a = load(path, options=LoadOptions(variant="acc")).rows
    b = load(path, options=LoadOptions(variant="acc_norm")).rows
    assert (a.options.pred != b.options.pred).any()


def test_folder_is_one_dataset_with_the_task_as_group() -> None:
    for variant in ("acc", "acc_norm"):
        ds = load(DATA, options=LoadOptions(variant=variant))
        assert ds.table.groups == tuple(TASKS)
        assert ds.report.kept == 80 and ds.report.format == "lmeval"
        agg = json.loads(RESULTS.read_text())["results"]
        for task in TASKS:
            sel = ds.rows.group == task
            assert ds.rows.correct[sel].mean() == pytest.approx(agg[task][f"{variant},none"], abs=1e-12)
            assert all(x.startswith(task + "/") for x in ds.rows.item_id[sel])
        notes = "\n".join(ds.report.notes)
        assert f"skipped {RESULTS.name}" in notes
        assert f"recomputed {variant} equals lm-eval's aggregate for 2 task(s)" in notes
        assert ds.table.total == 80


def test_read_folder_skips_and_names_other_files() -> None:
    files = [(str(p), p.read_bytes()) for p in DATA.iterdir()]
    files.append(("notes.txt", b"hello"))
    files.append(("samples_calib_mc_text_2025-01-01T00-00-00.000000.jsonl", SAMPLES[1].read_bytes()[:500]))
    ds = load_many(files, name="run")
    notes = "\n".join(ds.report.notes)
    assert "skipped notes.txt: not an lm-eval samples" in notes
    assert "skipped samples_calib_mc_text_2025-01-01T00-00-00.000000.jsonl: an older run" in notes
    assert ds.report.kept == 80 and ds.name == "run"


def test_gzipped_samples_in_a_folder() -> None:
    files = [(p.name + ".gz", gzip.compress(p.read_bytes(), mtime=0)) for p in SAMPLES]
    ds = load_many(files, name="gz")
    assert ds.report.kept == 80 and ds.table.groups == tuple(TASKS)


def test_old_array_layout_reads_the_same(tmp_path: Path) -> None:
    for path in SAMPLES:
        arr = tmp_path / path.name.replace(".jsonl", ".json")
        arr.write_text(json.dumps(raw_samples(path), indent=2))
        assert sniff_format(arr.name, arr.read_bytes()) == "lmeval"
        new, old = load(path).rows, load(arr).rows
        assert old.stated.tolist() == new.stated.tolist()
        assert old.correct.tolist() == new.correct.tolist()
        assert old.line.tolist() == list(range(1, 41))


def test_truncated_jsonl_names_the_line(tmp_path: Path) -> None:
    data = SAMPLES[0].read_bytes()
    lines = data.split(b"\n")
    cut = b"\n".join(lines[:16]) + b"\n" + lines[16][: len(lines[16]) // 2]
    p = tmp_path / SAMPLES[0].name
    p.write_bytes(cut)
    ds = load(p)
    assert ds.report.kept == 16
    (issue,) = ds.report.issues
    assert (issue.line, issue.reason) == (17, "truncated line")
    with pytest.raises(CalibError, match=r"line 17: the last line is cut off"):
        load(p, options=LoadOptions(strict=True))


def test_truncated_array_names_the_sample(tmp_path: Path) -> None:
    text = json.dumps(raw_samples(SAMPLES[0]), indent=1)
    p = tmp_path / "samples_calib_mc_letters_2026-11-30T09-40-26.713250.json"
    cut_at = text.index('"doc_id": 12')
    p.write_text(text[: cut_at + 300])
    ds = load(p)
    assert ds.report.kept == 12
    (issue,) = ds.report.issues
    assert issue.line == 13 and "sample 13 is not valid JSON" in issue.detail
    assert ds.report.kept + ds.report.dropped + ds.report.blank == ds.report.lines_read == 13
    with pytest.raises(CalibError, match="line 13: sample 13 is not valid JSON"):
        load(p, options=LoadOptions(strict=True))
    # cut between two samples: the missing "]" is reported after the last complete one
    p.write_text(text[: text.index("{", cut_at - 40)].rstrip().rstrip(","))
    ds = load(p)
    assert ds.report.kept == 12 and ds.report.issues[0].reason == "truncated file"
    assert ds.report.kept + ds.report.dropped == ds.report.lines_read == 13


def test_bad_samples_are_reported_by_line_and_doc_id(tmp_path: Path) -> None:
    raw = raw_samples(SAMPLES[1])
    gen = dict(raw[1], filtered_resps=["Paris is the capital"], doc_id=101)
    nogold = dict(raw[2], target="Lisbon", doc_id=102)
    one = dict(raw[3], filtered_resps=[["-1.0", "False"]], doc_id=103)
    lines = [json.dumps(raw[0]), json.dumps(gen), "{oops", json.dumps(nogold), json.dumps(one), json.dumps(raw[4])]
    p = tmp_path / "samples_t_2026-01-01T00-00-00.000000.jsonl"
    p.write_text("\n".join(lines) + "\n")
    ds = load(p)
    by_line = {i.line: i for i in ds.report.issues}
    assert by_line[2].reason == "not a multiple-choice sample" and by_line[2].sample_id == "101"
    assert "generate_until" in by_line[2].detail
    assert by_line[3].reason == "invalid JSON"
    assert by_line[4].reason == "gold not among choices" and "'Lisbon'" in by_line[4].detail
    assert by_line[5].reason == "not a multiple-choice sample"
    assert ds.rows.line.tolist() == [1, 6]
    assert ds.report.kept + ds.report.dropped + ds.report.blank == ds.report.lines_read == 6
    assert "(sample 101)" in by_line[2].message()


def test_target_as_choice_text_and_as_list(tmp_path: Path) -> None:
    raw = raw_samples(SAMPLES[1])  # calib_mc_text: continuations are the choice texts
    as_text, as_list = [], []
    for s in raw:
        texts = [s["arguments"][f"gen_args_{i}"]["arg_1"][1:] for i in range(4)]
        gold = int(s["target"])
        as_text.append(dict(s, target=texts[gold]))
        as_list.append(dict(s, target=json.dumps([gold, (gold + 1) % 4])))
    for name, rows in (("text", as_text), ("list", as_list)):
        p = tmp_path / f"samples_{name}_2026-01-01T00-00-00.000000.jsonl"
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        got = load(p).rows
        for i, s in enumerate(raw):
            pred, _, ok = expected(s, "acc")
            gold = int(s["target"])
            want = ok if name == "text" else pred in (gold, (gold + 1) % 4)
            assert bool(got.correct[i]) == want
        if name == "list":
            assert (got.options.pred == got.options.gold).tolist() == got.correct.tolist()


def test_results_file_alone_is_explained() -> None:
    with pytest.raises(CalibError, match="aggregate results file; it has no per-sample .* --log_samples"):
        load(RESULTS)


def test_folder_without_samples_is_explained() -> None:
    with pytest.raises(CalibError, match=r"no lm-eval samples files .*--log_samples"):
        load_many([(str(RESULTS), RESULTS.read_bytes())], name="x")


def test_unsupported_options_are_clear() -> None:
    src = Source(SAMPLES[0].name, SAMPLES[0].read_bytes())
    with pytest.raises(CalibError, match="do not record token counts"):
        lmeval.read(src, LoadOptions(normalisation="token"))
    with pytest.raises(CalibError, match="unknown lm-eval variant 'f1'"):
        lmeval.read(src, LoadOptions(variant="f1"))


def test_task_names_from_file_names() -> None:
    assert lmeval.task_of("samples_mmlu_high_school_biology_2024-05-13T18-34-56.123456.jsonl") == \
        "mmlu_high_school_biology"
    assert lmeval.task_of("out/model/samples_arc_easy_2026-11-30T09-40-26.713250.jsonl.gz") == "arc_easy"
    assert lmeval.task_of("samples_hellaswag.jsonl") == "hellaswag"


def test_damaged_files_raise_only_calib_errors() -> None:
    for i, d in enumerate(mutations(SAMPLES[1].read_bytes(), seed=11, count=60, junk=(*JUNK, b"\n["))):
        for variant in ("acc", "acc_norm"):
            try:
                lmeval.read(Source(SAMPLES[1].name, d), LoadOptions(variant=variant))
            except CalibError:
                pass
            except Exception as exc:  # pragma: no cover
                pytest.fail(f"mutation {i} raised {type(exc).__name__}: {exc}")


def test_a_sample_over_the_options_cap_is_dropped_by_line_as_the_logprobs_reader_does(tmp_path: Path) -> None:
    """Every row is padded to the widest (pad_rows): one sample of 1,001 choices would
    make every row 1,001 wide. Over the cap of options per item (1,000, the option
    log-probs reader's) the sample is dropped and named by its line, in the same words;
    the other samples are kept, as wide as the widest of them."""
    raw = raw_samples(SAMPLES[0])
    wide = {"doc_id": 900, "doc": {}, "target": 0, "filtered_resps": [["-1.0", "False"]] * 1001}
    edge = {"doc_id": 901, "doc": {}, "target": 0, "filtered_resps": [[str(-1.0 - j), "False"] for j in range(1000)]}
    lines = [json.dumps(raw[0]), json.dumps(wide), json.dumps(raw[1]), json.dumps(edge)]
    p = tmp_path / "samples_t_2026-01-01T00-00-00.000000.jsonl"
    p.write_text("\n".join(lines) + "\n")
    ds = load(p)
    by_line = {i.line: i for i in ds.report.issues}
    assert list(by_line) == [2], by_line
    assert by_line[2].reason == "too many options" and by_line[2].sample_id == "900"
    # the option log-probs reader's words for the same count
    lp = tmp_path / "lp.jsonl"
    lp.write_text(json.dumps({"logprobs": [-1.0] * 1001, "gold": 0}) + "\n"
                  + json.dumps({"logprobs": [-1.0, -2.0], "gold": 0}) + "\n")
    theirs = {i.line: i for i in load(lp).report.issues}[1]
    assert theirs.reason == "too many options"
    assert by_line[2].detail.split(" has ", 1)[1] == theirs.detail.split(" has ", 1)[1]
    assert ds.rows.line.tolist() == [1, 3, 4]  # 1,000 choices is at the cap: kept
    assert ds.rows.options.logits.shape[1] == 1000
