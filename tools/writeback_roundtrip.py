"""Read calib's write-back files back with each platform's own package (issue 26, item 4).

Run with a throwaway virtualenv holding the platforms' packages (never the project's):

    python3 -m venv /tmp/wbvenv
    /tmp/wbvenv/bin/pip install langfuse mlflow-skinny opentelemetry-proto arize-phoenix-client
    CALIB_PYTHON=/work/main/.venv/bin/python /tmp/wbvenv/bin/python tools/writeback_roundtrip.py

``calib route FILE --map MAP --threshold T --decisions OUT --decisions-format F`` is run
(with the project's Python, ``CALIB_PYTHON``) on the verbal fixture for each form, and each
file is read back by the platform's own code:

- langfuse: ``langfuse.api.core.pydantic_utilities.parse_obj_as(CreateScoresRequest, ...)``
  (the SDK's own reading of a JSON body, aliases resolved), the body the SDK sends to
  ``POST /api/public/scores``;
- phoenix: each annotation checked against the Phoenix client's generated API type
  ``SpanAnnotationData`` (keys, required keys, literals, value types: pydantic cannot read
  the client's ``typing.TypedDict`` on Python 3.11), then handed to
  ``Client().spans.log_span_annotations`` whose request to ``/v1/span_annotations`` is
  caught (``httpx.MockTransport``, no server) and read back;
- mlflow: ``mlflow.entities.Assessment.from_dictionary`` on each line (a ``Feedback``);
- otel: ``google.protobuf.json_format.Parse`` into ``opentelemetry.proto.logs.v1.LogsData``.

For every item, the probability and route read back must equal those of the JSONL
decisions file, exactly. The output of the last run is recorded in docs/writeback.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "verbal-5phrases.jsonl"
CALIB = os.environ.get("CALIB_PYTHON", sys.executable)


def calib(*args: str) -> None:
    subprocess.run([CALIB, "-m", "calib", *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def langfuse(path: Path) -> dict[str, tuple[float, str]]:
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    from langfuse.api.scores import CreateScoresRequest

    # as the SDK reads a JSON body: its aliases (traceId, dataType) resolved, then validated
    scores = parse_obj_as(CreateScoresRequest, json.loads(path.read_text()))
    out: dict[str, dict[str, object]] = {}
    for s in scores:
        out.setdefault(s.trace_id, {})[s.name] = s.value
        assert s.data_type in ("NUMERIC", "CATEGORICAL") and s.source == "API"
    return {k: (float(v["calib_probability"]), str(v["calib_route"])) for k, v in out.items()}


def _check_typed(obj: object, td: type) -> None:
    """``obj`` against a TypedDict of the Phoenix client (its generated API types): no key it
    does not declare, every required key, each value of the declared type or literal."""
    from typing import Literal, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

    assert isinstance(obj, dict), obj
    hints = get_type_hints(td)
    assert set(obj) <= set(hints), f"{td.__name__}: undeclared keys {set(obj) - set(hints)}"
    assert td.__required_keys__ <= set(obj), f"{td.__name__}: missing {td.__required_keys__ - set(obj)}"
    for key, value in obj.items():
        hint = hints[key]
        while get_origin(hint) in (NotRequired, Union) and get_origin(hint) is not Literal:
            hint = get_args(hint)[0]
        if is_typeddict(hint):
            _check_typed(value, hint)
        elif get_origin(hint) is Literal:
            assert value in get_args(hint), f"{key}: {value!r} not in {get_args(hint)}"
        elif hint is float:
            assert isinstance(value, int | float) and not isinstance(value, bool), key
        elif hint is str:
            assert isinstance(value, str), key
        else:
            assert get_origin(hint) is not None and isinstance(value, get_origin(hint)), (key, hint)


def phoenix(path: Path) -> dict[str, tuple[float, str]]:
    import httpx
    from phoenix.client import Client
    from phoenix.client.__generated__.v1 import SpanAnnotationData

    body = json.loads(path.read_text())
    assert set(body) == {"data"}
    for a in body["data"]:
        _check_typed(a, SpanAnnotationData)
    # the client's own request: what it posts to /v1/span_annotations, caught before the network
    sent: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/span_annotations"
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"data": [{"id": str(i)} for i in range(len(sent[-1]["data"]))]})

    client = Client(http_client=httpx.Client(base_url="http://phoenix.invalid",
                                              transport=httpx.MockTransport(answer)))
    client.spans.log_span_annotations(span_annotations=body["data"], sync=True)
    return {a["span_id"]: (a["result"]["score"], a["result"]["label"]) for a in sent[0]["data"]}


def mlflow(path: Path) -> dict[str, tuple[float, str]]:
    from mlflow.entities import Assessment, Feedback

    out: dict[str, dict[str, object]] = {}
    for line in path.read_text().splitlines():
        a = Assessment.from_dictionary(json.loads(line))
        assert isinstance(a, Feedback) and a.source.source_type == "CODE"
        out.setdefault(a.trace_id, {})[a.name] = a.value
    return {k: (float(v["calib_probability"]), str(v["calib_route"])) for k, v in out.items()}


def otel(path: Path) -> dict[str, tuple[float, str]]:
    from google.protobuf import json_format
    from opentelemetry.proto.logs.v1.logs_pb2 import LogsData

    data = json_format.Parse(path.read_text(), LogsData())
    out = {}
    for rl in data.resource_logs:
        for sl in rl.scope_logs:
            for rec in sl.log_records:
                assert rec.event_name == "gen_ai.evaluation.result"
                attrs = {kv.key: kv.value for kv in rec.attributes}
                out[attrs["gen_ai.response.id"].string_value] = (
                    attrs["gen_ai.evaluation.score.value"].double_value,
                    attrs["gen_ai.evaluation.score.label"].string_value,
                )
    return out


def main() -> int:
    readers = {"langfuse": (langfuse, "langfuse"), "phoenix": (phoenix, "arize-phoenix-client"),
               "mlflow": (mlflow, "mlflow-skinny"), "otel": (otel, "opentelemetry-proto")}
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        calib("fit", str(FIXTURE), "--method", "isotonic", "--out", str(d / "map.json"), "--reps", "0")
        route = ["route", str(FIXTURE), "--map", str(d / "map.json"), "--threshold", "0.8", "--reps", "0"]
        calib(*route, "--decisions", str(d / "decisions.jsonl"))
        want = {}
        for line in (d / "decisions.jsonl").read_text().splitlines():
            r = json.loads(line)
            want[r["id"]] = (r["probability"], r["route"])
        print(f"calib decisions: {len(want):,} items, "
              f"{sum(r == 'accepted' for _, r in want.values()):,} accepted")
        for fmt, (read, package) in readers.items():
            out = d / f"decisions.{fmt}"
            calib(*route, "--decisions", str(out), "--decisions-format", fmt)
            got = read(out)
            same = got == want
            failed += not same
            print(f"{fmt:9s} {package} {version(package)}: read back {len(got):,} items, "
                  f"probability and route equal per item: {same}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
