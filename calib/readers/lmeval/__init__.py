"""Reader for lm-evaluation-harness sample logs (``--log_samples``).

The package: :mod:`.sample` reads one sample line, :mod:`.file` one samples file
(:func:`read`), :mod:`.folder` an output folder (:func:`read_folder`).

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task (versions before about
0.4.3 wrote one JSON array into the file) next to ``results_<date>.json``. For a
``multiple_choice`` task each sample holds:

- ``filtered_resps``: one ``[log-likelihood, is_greedy]`` pair per choice, the
  numbers written as strings (``["-6.358", "False"]``);
- ``arguments``: ``{"gen_args_0": {"arg_0": <context>, "arg_1": " <choice>"}, ...}``
  (older logs: a list of ``[context, continuation]``), each continuation being the
  choice text after the task's ``target_delimiter`` (default one space);
- ``target``: the gold as lm-eval's ``doc_to_target`` gave it, stringified: an index
  (``"2"``), a choice text, or a list of either; the raw label sits in ``doc``;
- ``acc`` / ``acc_norm``: lm-eval's own per-sample scores.

Two variants are read, exactly as lm-eval's ``ConfigurableTask.process_results``
computes them (``lm_eval/api/task.py``, multiple_choice branch)::

    pred      = argmax(lls)                      # acc
    pred_norm = argmax(lls / completion_len)     # acc_norm
    completion_len = [len(choice) for choice in doc_to_choice(doc)]

``doc_to_choice`` returns the choice texts *without* the target delimiter, so
``acc_norm`` divides by the character length of the continuation minus its
leading delimiter. The gold follows lm-eval's rules: a digit string is an index
(its template rule), another string is looked up among the choices, a list means
several right choices (correct if the prediction is any of them).

Confidence is the top softmax probability of the scores the variant ranks by
(raw log-likelihoods for ``acc``, per-character ones for ``acc_norm``), the group
the task name. The recomputed per-sample ``acc`` and ``acc_norm`` are compared with
the values lm-eval stored, and in a folder with the aggregates in
``results_*.json``; the load report says whether they agree.
"""

from calib.readers.lmeval.file import DEFAULT_DELIMITER, RESULTS_RE, SAMPLES_RE, read, task_of
from calib.readers.lmeval.folder import concat, read_folder

__all__ = ["DEFAULT_DELIMITER", "RESULTS_RE", "SAMPLES_RE", "concat", "read", "read_folder", "task_of"]
