"""The one exception type for problems a user can fix."""

from __future__ import annotations


class CalibError(ValueError):
    """An input or option the user can fix.

    The message is written for a person: it names the file, line or sample and the
    reason, and is shown as-is by the command line (exit code 2) and the dashboard
    (an error box, never a traceback).
    """
