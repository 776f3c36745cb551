"""``python -m calib``: the command line (:mod:`calib.cli`)."""

from calib.cli import main

raise SystemExit(main())
