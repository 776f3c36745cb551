"""Hosting: what a shared server adds around the engine, none of it Streamlit.

- :mod:`calib.hosting.access` — who may look: the password gate, OIDC domains, trusted
  proxies and the registry of sessions that may upload; :mod:`calib.hosting.lockout` — the
  password lock-out's failures in the catalog, shared by replicas when
  ``CALIB_DATABASE_URL`` is set;
- :mod:`calib.hosting.webguard` — the web server's guard in front of every request:
  headers, the upload guard, the proxy policy, the readiness probe ``/_calib/ready``; it
  writes :mod:`calib.hosting.page_head`'s tags into each page's HTML (the app's root for
  Streamlit's connection, the element chunks loaded from the start, preloads) and answers
  :mod:`calib.hosting.static_assets`' files from memory (Streamlit's front-end files and
  the app's versioned assets, gzip-compressed, kept by browsers);
- :mod:`calib.hosting.nodelay` — every connection sends at once (``TCP_NODELAY``, which
  Streamlit's listening socket left off);
- :mod:`calib.hosting.budget` — memory and heavy-work slots lent to sessions;
- :mod:`calib.hosting.resident` — the state one server process keeps for all its sessions
  (the lock-out, the memory ledger, the heavy-work gate and the share store), made once
  under a lock, outside Streamlit's caches, which any client's ``clear_cache`` message empties;
- :mod:`calib.hosting.shutdown` — graceful shutdown: the catalog writes under way finish
  when the server stops;
- :mod:`calib.hosting.shares`, :mod:`calib.hosting.catalog`, :mod:`calib.hosting.store` —
  share links: their value types, their crash-safe storage, and the store's actions;
  :mod:`calib.hosting.database` — the database under the catalog (SQLite by default,
  PostgreSQL with ``CALIB_DATABASE_URL``; serialised all-or-nothing writes on both),
  :mod:`calib.hosting.schema` its one schema and versioned migrations,
  :mod:`calib.hosting.migrate` the copy of an SQLite catalog into PostgreSQL;
- :mod:`calib.hosting.labels` — reviewing inside a share: the owner's review setting, the
  reviewers' append-only labels and adjudications (every call scoped by the link token),
  the review plans of a share; :mod:`calib.hosting.workflow` the owner's review workflow
  and its checks; :mod:`calib.hosting.assignment` the hand-out of each reviewer's next item
  (the overlap plan, holds, skips, never over the plan);
- :mod:`calib.hosting.view` — the view state a URL (and a share) carries.

The engine never imports this package; the dashboard and the CLI may.
"""
