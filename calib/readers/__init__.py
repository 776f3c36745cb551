"""The readers: one module (or package) per input format, all returning the same thing.

- :mod:`calib.readers.base`: what every reader shares: :class:`~calib.readers.base.Source`
  (an input's name and bytes), :class:`~calib.readers.base.LoadOptions` (field names,
  scale, strictness, limits), the bad-line collector and the result type
  :data:`~calib.readers.base.Read`, ``(Judgments, LoadReport)``.
- :mod:`calib.readers.jsonl`: JSON from untrusted inputs: the limits checked before
  parsing, the line rules (:class:`~calib.readers.jsonl.JsonLines`), field access, numbers.
- :mod:`calib.readers.source`: an input's bytes, ``.gz`` decompressed under the cap.
- One reader per format, each ``read(source, options) -> Read``: :mod:`.stated`
  (stated confidences), :mod:`.logprobs` (option log-probs), :mod:`.lmeval`
  (lm-evaluation-harness samples; a whole output folder with
  :func:`calib.readers.lmeval.read_folder`), :mod:`.inspect` (Inspect AI logs).
- The eval and tracing platforms' own files: :mod:`.verdicts` (their shared base: items
  with named judge, human and code scores, one rule for confidence and outcome) under
  :mod:`.promptfoo`, :mod:`.deepeval`, :mod:`.langfuse`,
  :mod:`.langsmith`, :mod:`.phoenix`, :mod:`.otel`, :mod:`.mlflow` (its SQLite store by :mod:`.mlflow_store`), :mod:`.helm`, :mod:`.lighteval` and
  :mod:`.openai` (its Batch logprobs through :mod:`calib.options`).

Readers import ``base``, ``jsonl`` and ``source``, never :mod:`calib.loading`, which
recognises the format, calls the reader and builds the dataset.
"""
