"""Hosting: what a shared server adds around the engine, none of it Streamlit.

- :mod:`calib.hosting.access` — who may look: the password gate, OIDC domains, trusted
  proxies and the registry of sessions that may upload;
- :mod:`calib.hosting.webguard` — the web server's guard in front of every request;
- :mod:`calib.hosting.budget` — memory and heavy-work slots lent to sessions;
- :mod:`calib.hosting.shares`, :mod:`calib.hosting.catalog`, :mod:`calib.hosting.store` —
  share links: their value types, their crash-safe storage, and the store itself;
- :mod:`calib.hosting.view` — the view state a URL (and a share) carries.

The engine never imports this package; the dashboard and the CLI may.
"""
