"""Presentation: the figures, the text and HTML reports and the tables that the pages,
the reports and the CLI all show, written with one formatter set (:mod:`calib.present.format`).
Nothing here computes a statistic; it formats results the engine returned.

- :mod:`~calib.present.format`: how every number, interval, p-value and user text is written;
- :mod:`~calib.present.explain`: the one source of plain words: every figure's help, its
  "what this means" sentence from its value (written by :mod:`~calib.present.meanings`),
  which tests the verdict uses; ``COUNTS`` and ``INTERVAL_PATTERN`` for the browser tests;
- :mod:`~calib.present.questions`: each page's question and its answer for the loaded data,
  the Overview's three lines;
- :mod:`~calib.present.tables`: the tables shown by several faces (comparison, per value);
  :mod:`~calib.present.routing_table`: the routing figures at a threshold, one label, order
  and writer for every face;
- :mod:`~calib.present.figures`: the Plotly figures (the only module importing plotly), with
  :mod:`~calib.present.plot_base` (their shared look: Okabe-Ito palette, layout, reference
  line, interval bars) and :mod:`~calib.present.scale_figures` (how the scale was used:
  histogram, per-value hit rates, letter bias; re-exported by ``figures``);
- :mod:`~calib.present.static`: the matplotlib figures (no browser);
  :mod:`~calib.present.axes`: where every figure's axes start and end, the dodge of judges
  at one value, the binned fitting data of a continuous map (plain numbers shared by the
  Plotly and matplotlib figures);
- :mod:`~calib.present.text_report`: the audit as text (``calib audit``) and as JSON;
- :mod:`~calib.present.html_report`: the self-contained HTML report and its blocks
  (:mod:`~calib.present.report_blocks`);
- :mod:`~calib.present.reliability_page`: the reliability diagram of one or several audits as a
  page (``calib audit --plot``), and how to read one (``diagram_reading``, the words of the
  dashboard's Reliability page too);
- :mod:`~calib.present.decision`, :mod:`~calib.present.decision_figures`: the decision card
  and its figures; :mod:`~calib.present.two_stage`: the words of two thresholds, route
  stability and cascades, and the two-threshold p-value map;
- :mod:`~calib.present.drift`: drift's words and figures; :mod:`~calib.present.traffic`:
  the traffic mode's words and its bound-over-labels figure; :mod:`~calib.present.review`:
  the review workflow's words (the card's question and buttons, blind, progress, adjudication);
- :mod:`~calib.present.notebook`: the notebook face: what ``calib.audit(df)``,
  ``calib.fit``, ``calib.route`` and ``calib.compare`` return, each with ``_repr_html_``.
"""
