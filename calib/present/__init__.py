"""Presentation: the figures, the text and HTML reports and the tables that the pages,
the reports and the CLI all show, written with one formatter set (:mod:`calib.present.format`).
Nothing here computes a statistic; it formats results the engine returned.

- :mod:`~calib.present.format`: how every number, interval, p-value and user text is written;
- :mod:`~calib.present.tables`: the tables shown by several faces (comparison, per value);
- :mod:`~calib.present.figures`: the Plotly figures (the only module importing plotly);
- :mod:`~calib.present.text_report`: the audit as text (``calib audit``) and as JSON;
- :mod:`~calib.present.html_report`: the self-contained HTML report and its blocks;
- :mod:`~calib.present.reliability_page`: the reliability diagram of one or several audits as a
  page (``calib audit --plot``).
"""
