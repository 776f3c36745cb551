"""Presentation: the figures, the text and HTML reports and the tables that the pages,
the reports and the CLI all show, written with one formatter set (:mod:`calib.present.format`).
Nothing here computes a statistic; it formats results the engine returned."""
