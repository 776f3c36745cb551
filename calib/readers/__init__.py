"""The readers: one module (or package) per input format.

What each returns (``tests/test_readers_return_type.py`` checks it):

- every row reader (each format :func:`calib.loading.load` dispatches on but ``counts``,
  and an lm-eval folder): :data:`~calib.readers.base.Read`, ``(Judgments, LoadReport)``;
- the count-table reader, :func:`calib.readers.counts.read_counts`: a
  :class:`~calib.table.CountTable` (the file holds counts, not rows);
- the glob reader, :func:`calib.readers.warehouse.load_glob`: a whole
  :class:`~calib.dataset.Dataset` without rows (its input can be bigger than memory: the
  rows are reduced to the count table in SQL and never exist in Python).

- :mod:`calib.readers.base`: what every reader shares: :class:`~calib.readers.base.Source`
  (an input's name and bytes), :class:`~calib.readers.base.LoadOptions` (field names,
  scale, strictness, limits), the bad-line collector and the result type
  :data:`~calib.readers.base.Read`, ``(Judgments, LoadReport)``.
- :mod:`calib.readers.jsonl`: JSON from untrusted inputs: the limits checked before
  parsing, the line rules (:class:`~calib.readers.jsonl.JsonLines`), field access, numbers.
- :mod:`calib.readers.source`: an input's bytes, ``.gz`` decompressed under the cap.
- One row reader per format, each ``read(source, options) -> Read``: :mod:`.stated`
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

Also: :mod:`~calib.readers.jsonl` reads a JSON array of records as lines;
:mod:`~calib.readers.source` turns UTF-16/32 and bare-CR text into UTF-8 lines;
:mod:`~calib.readers.counts` reads a count-table file (CSV, Parquet or JSON) under limits
that trust no footer; :mod:`~calib.readers.warehouse` reduces a glob or folder of
Parquet/JSONL/CSV to the count table in DuckDB, out of core (with ``--cluster-key``, the
per-cluster counts too), with the value rules in SQL from :mod:`.sql` (which also
writes the ``calib sql`` query per warehouse dialect).

A named cluster field (``--cluster-key``) is read by the row readers in their one pass
over the input (:func:`calib.readers.jsonl.cluster_key`); :func:`calib.clusters.infer`
only turns the values into clusters and the note.
"""
