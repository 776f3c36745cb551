"""Who may use a hosted dashboard: a shared password, and/or an OIDC login with an
allow-list of e-mail domains. Off for local use.

This module decides; the dashboard asks. It never imports Streamlit: the page passes
in the secret it read from ``st.secrets`` and the user record of ``st.user``, and
shows the messages returned here.

Password
--------
The attempt and the password are both hashed with SHA-256 and the digests compared
with :func:`hmac.compare_digest`, so the time taken reveals neither a matching
prefix nor the password's length. Repeated failures lock out, in a sliding time
window (:class:`PasswordGate`):

- per client (an IP address or session key): after ``max_failures`` failures within
  ``window_s`` seconds, that client is refused until the oldest of those failures is
  ``window_s`` old;
- globally: after ``global_max_failures`` failures from anyone within the window,
  every attempt is refused until the window moves on. This stops a guesser who
  opens a new session (a new key) for every attempt, at the cost of also refusing
  the right password for a while during an attack.

While locked out, an attempt is refused *without* being checked, so a lock-out
cannot be used to test guesses. Counters live in the server process's memory (one
:class:`PasswordGate` per process, :mod:`calib.hosting.resident`: no client message
resets them; a restart clears them), or, when replicas share a catalog
(``CALIB_DATABASE_URL``), in its ``login_failures`` table
(:class:`calib.hosting.lockout.CatalogFailures`): a client spreading its guesses over
the replicas meets one count, and a restart keeps it.

OIDC
----
Streamlit's built-in login (``st.login``, ``streamlit[auth]``, configured in
``.streamlit/secrets.toml``, see :data:`AUTH_SECRETS_EXAMPLE`) proves who the user
is; :func:`user_allowed` decides whether that user may in: a verified e-mail whose
domain is exactly one of ``CALIB_ALLOWED_DOMAINS`` (case-insensitive; no suffix
matching, so ``evil-example.com`` and ``example.com.evil.org`` are not
``example.com``; subdomains must be listed themselves).

Environment
-----------
``CALIB_PASSWORD``
    The shared password (or ``CALIB_PASSWORD`` in ``st.secrets``); unset = no password.
``CALIB_AUTH``
    ``oidc`` to require ``st.login``; unset or ``none`` = no login.
``CALIB_AUTH_PROVIDER``
    The ``[auth.<name>]`` section to log in with; unset = the ``[auth]`` section itself.
``CALIB_ALLOWED_DOMAINS``
    Comma-separated e-mail domains allowed in with OIDC; ``*`` = any account the
    provider verifies. Required when ``CALIB_AUTH=oidc``.
``CALIB_LOGIN_MAX_FAILURES`` (5), ``CALIB_LOGIN_WINDOW_SECONDS`` (900),
``CALIB_LOGIN_GLOBAL_MAX_FAILURES`` (100)
    The lock-out rules above.
``CALIB_TRUSTED_PROXIES``
    Addresses or networks (``10.0.0.0/8, ::1``) of reverse proxies in front of the
    server, comma- or space-separated; unset = none. Failures are counted under the
    connection's peer address; only when the peer is one of these is
    ``X-Forwarded-For`` read, and then the right-most address in it that is not a
    trusted proxy is the client (:func:`client_address`): the left part of the header
    is whatever the client wrote.

Uploads
-------
The upload endpoint takes bytes before any page code runs, so the web server refuses
(403, :mod:`calib.hosting.webguard`) an upload for a session the page has not registered in
:data:`UPLOAD_SESSIONS`: a session is registered once it is allowed in (password
given, login accepted, or nothing configured) and not read-only.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import os
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from calib.errors import CalibError
from calib.limits import env_float, env_int

#: The ``.streamlit/secrets.toml`` that turns on ``st.login`` (Streamlit 1.67,
#: ``streamlit[auth]``). ``redirect_uri`` is the app's public address + ``/oauth2callback``
#: and must also be registered with the provider; ``cookie_secret`` signs the login
#: cookie (generate one: ``python -c "import secrets; print(secrets.token_hex(32))"``).
AUTH_SECRETS_EXAMPLE = """\
[auth]
redirect_uri = "https://calib.example.com/oauth2callback"
cookie_secret = "<64 random hex characters>"
client_id = "<client id issued by the provider>"
client_secret = "<client secret issued by the provider>"
server_metadata_url = "https://accounts.google.com/.well-known/openid-configuration"
"""

_DOMAIN_RE = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


# ---------------------------------------------------------------- config
@dataclass(frozen=True)
class AccessConfig:
    """How a server is protected (all off by default: local use).

    Attributes
    ----------
    password:
        The shared password, or ``None`` for no password.
    oidc:
        Require ``st.login``.
    oidc_provider:
        Name of the ``[auth.<name>]`` section, or ``None`` for ``[auth]``.
    allowed_domains:
        Lower-case e-mail domains let in after login; ``("*",)`` = any verified e-mail.
    max_failures, window_s, global_max_failures:
        Lock-out rules (see the module docstring).
    """

    password: str | None = None
    oidc: bool = False
    oidc_provider: str | None = None
    allowed_domains: tuple[str, ...] = ()
    max_failures: int = 5
    window_s: float = 900.0
    global_max_failures: int = 100

    def __post_init__(self) -> None:
        if self.oidc and not self.allowed_domains:
            raise CalibError(
                "CALIB_AUTH=oidc needs CALIB_ALLOWED_DOMAINS (e.g. example.com,example.org), "
                "or '*' to let in every account the provider verifies"
            )

    @property
    def enabled(self) -> bool:
        """True when the server asks anything of its users."""
        return self.password is not None or self.oidc

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, password: str | None = None) -> AccessConfig:
        """Read the configuration from the environment.

        Parameters
        ----------
        env:
            The environment (default ``os.environ``).
        password:
            A password from ``st.secrets`` (the page reads it; this module never
            imports Streamlit). Takes precedence over ``CALIB_PASSWORD``.
        """
        env = os.environ if env is None else env
        pw = password if password not in (None, "") else env.get("CALIB_PASSWORD") or None
        auth = (env.get("CALIB_AUTH") or "none").strip().lower()
        if auth not in ("none", "oidc", ""):
            raise CalibError(f"CALIB_AUTH={auth!r}: use 'oidc' (log in with st.login) or leave it unset")
        provider = (env.get("CALIB_AUTH_PROVIDER") or "").strip() or None
        return cls(
            password=pw,
            oidc=auth == "oidc",
            oidc_provider=provider,
            allowed_domains=parse_domains(env.get("CALIB_ALLOWED_DOMAINS", "")),
            max_failures=env_int(env, "CALIB_LOGIN_MAX_FAILURES", 5, minimum=1),
            window_s=env_float(env, "CALIB_LOGIN_WINDOW_SECONDS", 900.0, minimum=1.0),
            global_max_failures=env_int(env, "CALIB_LOGIN_GLOBAL_MAX_FAILURES", 100, minimum=1),
        )


#: What ``st.login`` reads from ``[auth]`` itself, and from the provider's section
#: (``[auth]`` again when no ``CALIB_AUTH_PROVIDER`` is named).
AUTH_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
SECRETS_FILE = ".streamlit/secrets.toml"


def check_auth_secrets(auth: object, provider: str | None) -> None:
    """Raise :class:`CalibError` naming what ``st.login`` would miss in the secrets'
    ``[auth]`` section (``auth``: that section, ``None`` when there is none), so that the
    page says which setting to write instead of failing in ``st.login`` with Streamlit's
    generic error. The keys are those of :data:`AUTH_SECRETS_EXAMPLE`."""
    if not isinstance(auth, Mapping):
        raise CalibError(
            f"CALIB_AUTH=oidc needs an [auth] section in {SECRETS_FILE} "
            f"({', '.join(AUTH_KEYS + PROVIDER_KEYS)}; see the README's login section); there is none"
        )
    missing = [f"{k} in [auth]" for k in AUTH_KEYS if not auth.get(k)]
    name = "[auth]" if provider is None else f"[auth.{provider}]"
    section = auth if provider is None else auth.get(provider)
    if not isinstance(section, Mapping):
        missing.append(f"the section {name} (CALIB_AUTH_PROVIDER={provider})")
    else:
        missing += [f"{k} in {name}" for k in PROVIDER_KEYS if not section.get(k)]
    if missing:
        raise CalibError(f"CALIB_AUTH=oidc: {SECRETS_FILE} is missing {', '.join(missing)}")


def parse_domains(text: str) -> tuple[str, ...]:
    """Parse an allow-list such as ``"example.com, @Example.org"`` into
    ``("example.com", "example.org")``.

    Entries are exact domains (a leading ``@`` and a trailing dot are dropped, case is
    folded); ``*`` allows every verified e-mail. Wildcards like ``*.example.com`` are
    refused rather than guessed at: list each subdomain.
    """
    out: list[str] = []
    for raw in re.split(r"[,\s]+", text or ""):
        item = raw.strip().lower().lstrip("@").rstrip(".")
        if not item:
            continue
        if item == "*":
            out.append("*")
            continue
        if _DOMAIN_RE.fullmatch(item) is None:
            raise CalibError(
                f"CALIB_ALLOWED_DOMAINS: {raw!r} is not a domain like example.com "
                "(exact domains only; list subdomains one by one, or '*' for any)"
            )
        out.append(item)
    return tuple(dict.fromkeys(out))


# --------------------------------------------------------------- OIDC
def email_domain(email: object) -> str | None:
    """The lower-case domain of an e-mail address, or ``None`` if it is not one.

    The domain is what follows the *last* ``@`` (a quoted local part may contain
    ``@``); it must be a plain ASCII host name."""
    if not isinstance(email, str) or "@" not in email:
        return None
    local, _, domain = email.strip().rpartition("@")
    domain = domain.lower().rstrip(".")
    if not local or _DOMAIN_RE.fullmatch(domain) is None:
        return None
    return domain


def email_allowed(email: object, allowed_domains: Iterable[str]) -> bool:
    """True when ``email``'s domain is exactly one of ``allowed_domains`` (case-insensitive).

    Exact comparison, never a suffix test: ``alice@evil-example.com``,
    ``alice@example.com.evil.org`` and ``alice@sub.example.com`` are all refused for
    ``example.com``. ``"*"`` in the list allows any well-formed address."""
    domain = email_domain(email)
    if domain is None:
        return False
    allowed = {d.strip().lower().lstrip("@").rstrip(".") for d in allowed_domains}
    if "*" in allowed:
        return True
    return any(hmac.compare_digest(domain.encode(), d.encode()) for d in allowed)


@dataclass(frozen=True)
class Decision:
    """Whether a user may in, and what to tell them."""

    allowed: bool
    message: str = ""


def user_allowed(user: Mapping[str, Any], allowed_domains: Iterable[str]) -> Decision:
    """Decide on a logged-in user from their ``st.user`` record (``st.user.to_dict()``).

    Requires ``is_logged_in``, an ``email`` claim, that the provider says the e-mail is
    verified, and an allowed domain (:func:`email_allowed`). Verified means the claim
    ``email_verified`` is the JSON boolean ``true`` (OpenID Connect Core 1.0, 5.1); the
    string ``"false"``, a number or no claim at all are not: an unverified address is one
    anyone can type into some providers, and a domain allow-list on it checks nothing
    (providers that send no ``email_verified``, such as Microsoft Entra ID by default,
    are refused with a message saying so)."""
    if not user.get("is_logged_in"):
        return Decision(False, "Please log in.")
    email = user.get("email")
    if not isinstance(email, str) or not email:
        return Decision(False, "Your login did not share an e-mail address, so this server cannot check it.")
    verified = user.get("email_verified")
    if verified is False:
        return Decision(False, "Your login provider says your e-mail address is not verified.")
    if verified is not True:
        return Decision(False, "Your login provider did not confirm that your e-mail address is verified "
                               "(its email_verified claim is not true), so this server cannot check your domain.")
    if not email_allowed(email, allowed_domains):
        return Decision(False, f"Accounts of {email_domain(email) or 'this address'} are not allowed on this server.")
    return Decision(True)


# ------------------------------------------------------------ password
@dataclass(frozen=True)
class Verdict:
    """The answer to one password attempt.

    ``ok``: let the session in. ``locked``: refused without checking, for
    ``retry_after_s`` more seconds. ``message``: what to show (empty when ``ok``).
    """

    ok: bool
    locked: bool = False
    retry_after_s: float = 0.0
    message: str = ""


def password_matches(attempt: str, password: str) -> bool:
    """Constant-time comparison: SHA-256 of both, compared with :func:`hmac.compare_digest`
    (hashing first makes the comparison independent of the lengths, too)."""
    a = hashlib.sha256(attempt.encode("utf-8")).digest()
    b = hashlib.sha256(password.encode("utf-8")).digest()
    return hmac.compare_digest(a, b)


class FailureSession(Protocol):
    """The failures a :class:`PasswordGate` counts, seen inside one atomic step (a lock or
    a database transaction) that already dropped those at or before the window's start."""

    def latest(self, client: str | None, n: int) -> list[float]:
        """The times of the ``n`` latest failures of ``client`` (``None``: of everyone), oldest first."""
        ...

    def record(self, client: str, now: float) -> None:
        """Count a failure of ``client`` at ``now``."""
        ...

    def forget(self, client: str) -> None:
        """Drop ``client``'s failures (the right password was given)."""
        ...


class FailureLog(Protocol):
    """Where a :class:`PasswordGate` keeps its failures: this process's memory
    (:class:`MemoryFailures`, the default) or the catalog every replica shares
    (:class:`calib.hosting.lockout.CatalogFailures`)."""

    def session(self, cutoff: float) -> contextlib.AbstractContextManager[FailureSession]:
        """One atomic step over the failures after ``cutoff``."""
        ...


class MemoryFailures:
    """The failures in this process's memory (thread-safe): per client the latest
    ``max_failures`` times, and everyone's within the window."""

    def __init__(self, max_failures: int) -> None:
        self.max_failures = int(max_failures)
        self._lock = threading.Lock()
        self._by_client: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    @contextlib.contextmanager
    def session(self, cutoff: float) -> Iterator[MemoryFailures]:
        with self._lock:
            while self._all and self._all[0] <= cutoff:
                self._all.popleft()
            for key in [k for k, q in self._by_client.items() if not q or q[-1] <= cutoff]:
                del self._by_client[key]
            for q in self._by_client.values():
                while q and q[0] <= cutoff:
                    q.popleft()
            yield self

    def latest(self, client: str | None, n: int) -> list[float]:
        q = self._all if client is None else self._by_client.get(client, ())
        return list(q)[-n:] if n > 0 else []

    def record(self, client: str, now: float) -> None:
        self._by_client.setdefault(client, deque(maxlen=self.max_failures)).append(now)
        self._all.append(now)

    def forget(self, client: str) -> None:
        self._by_client.pop(client, None)


class PasswordGate:
    """Checks password attempts with per-client and global lock-out (thread-safe).

    Parameters
    ----------
    password:
        The shared password.
    max_failures, window_s, global_max_failures:
        See the module docstring.
    clock:
        Time source in seconds (tests inject a fake one): monotonic for the process's own
        counters, Unix time for counters shared by replicas (their clocks must agree).
    failures:
        Where the failures are kept: this process's memory by default; the catalog the
        replicas share (:class:`calib.hosting.lockout.CatalogFailures`), so that a client
        cannot reset its lock-out by landing on another replica.
    """

    def __init__(
        self,
        password: str,
        *,
        max_failures: int = 5,
        window_s: float = 900.0,
        global_max_failures: int = 100,
        clock: Callable[[], float] = time.monotonic,
        failures: FailureLog | None = None,
    ) -> None:
        if not password:
            raise CalibError("the shared password is empty; unset CALIB_PASSWORD to turn the password off")
        self._password = password
        self.max_failures = int(max_failures)
        self.window_s = float(window_s)
        self.global_max_failures = int(global_max_failures)
        self.clock = clock
        self.failures: FailureLog = MemoryFailures(self.max_failures) if failures is None else failures

    @classmethod
    def from_config(cls, config: AccessConfig, *, clock: Callable[[], float] | None = None,
                    failures: FailureLog | None = None) -> PasswordGate:
        """The gate ``config`` describes; with shared ``failures`` its clock is Unix time."""
        if config.password is None:
            raise CalibError("no password is configured (CALIB_PASSWORD)")
        if clock is None:
            clock = time.monotonic if failures is None else time.time
        return cls(
            config.password,
            max_failures=config.max_failures,
            window_s=config.window_s,
            global_max_failures=config.global_max_failures,
            clock=clock,
            failures=failures,
        )

    def check(self, client: str, attempt: object) -> Verdict:
        """Check one attempt from ``client`` (an IP address or a session key). When the
        failures cannot be read (a shared catalog that fails), the attempt is refused
        unchecked with the reason."""
        try:
            return self._check(client, attempt)
        except CalibError as exc:
            return Verdict(False, message=str(exc))

    def _check(self, client: str, attempt: object) -> Verdict:
        now = self.clock()
        with self.failures.session(now - self.window_s) as seen:
            everyone = seen.latest(None, self.global_max_failures)
            if len(everyone) >= self.global_max_failures:
                wait = everyone[0] + self.window_s - now
                return Verdict(False, True, wait, _locked_message(wait, everyone=True))
            mine = seen.latest(client, self.max_failures)
            if len(mine) >= self.max_failures:
                wait = mine[0] + self.window_s - now
                return Verdict(False, True, wait, _locked_message(wait, everyone=False))
            if not isinstance(attempt, str) or attempt == "":
                return Verdict(False, message="Enter the password.")
            if password_matches(attempt, self._password):
                seen.forget(client)
                return Verdict(True)
            seen.record(client, now)
            mine = [*mine, now][-self.max_failures:]
            left = self.max_failures - len(mine)
            if left <= 0:
                wait = mine[0] + self.window_s - now
                return Verdict(False, True, wait, _locked_message(wait, everyone=False))
            return Verdict(False, message=f"Wrong password ({left} more tr{'y' if left == 1 else 'ies'} before a pause).")


def _locked_message(wait_s: float, *, everyone: bool) -> str:
    minutes = max(1, int(-(-wait_s // 60)))
    when = f"{minutes} minute{'s' if minutes != 1 else ''}"
    if everyone:
        return f"Too many wrong passwords on this server recently; sign-in is paused. Try again in {when}."
    return f"Too many wrong passwords; try again in {when}."


# ------------------------------------------------------------- proxies
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TrustedProxies:
    """The reverse proxies whose ``X-Forwarded-For`` is believed (``CALIB_TRUSTED_PROXIES``).

    Attributes
    ----------
    networks:
        Addresses (as /32 or /128 networks) and networks; empty = trust no proxy.
    """

    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """Parse ``"10.0.0.0/8, 192.168.1.5 ::1"``; anything that is not an address or
        a network raises :class:`CalibError` naming it (a typo must not silently trust
        nobody, or everybody)."""
        nets: list[IPNetwork] = []
        for item in re.split(r"[,\s]+", text or ""):
            if not item:
                continue
            try:
                nets.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise CalibError(
                    f"CALIB_TRUSTED_PROXIES: {item!r} is not an IP address or network (e.g. 10.0.0.5, 10.0.0.0/8)"
                ) from None
        return cls(tuple(nets))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TrustedProxies:
        env = os.environ if env is None else env
        return cls.parse(env.get("CALIB_TRUSTED_PROXIES", ""))

    def contains(self, address: str) -> bool:
        """True when ``address`` (an IP, possibly IPv4-mapped IPv6) is a trusted proxy."""
        ip = _ip(address)
        if ip is None:
            return False
        return any(ip.version == n.version and ip in n for n in self.networks)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address from a peer or a header entry (``[::1]:443``, ``1.2.3.4:5`` and
    IPv4-mapped IPv6 are reduced to the address), or ``None``."""
    s = text.strip()
    if s.startswith("[") and "]" in s:
        s = s[1:s.index("]")]
    elif s.count(":") == 1:
        s = s.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def client_address(peer: str, forwarded_for: str | None, trusted: TrustedProxies) -> str:
    """The address password failures are counted under.

    The connection's ``peer`` unless it is a trusted proxy; then ``X-Forwarded-For``
    is read from the right (each proxy appends the address it saw) and the first
    address that is not a trusted proxy is the client. An entry that is not an
    address stops the walk there: the proxy (the last hop believed) is the client
    then, so garbage cannot choose a bucket. All hops trusted: the left-most.
    """
    if not trusted.contains(peer) or not forwarded_for:
        return peer
    current = peer
    for item in reversed([h for h in forwarded_for.split(",") if h.strip()]):
        ip = _ip(item)
        if ip is None:
            return current
        current = str(ip)
        if not trusted.contains(current):
            return current
    return current


# ------------------------------------------------------------- uploads
class SessionRegistry:
    """The Streamlit session ids that may upload (thread-safe; plain Python).

    The page adds a session once it is allowed in (:func:`ui.access`); the web
    server's guard (:class:`calib.hosting.webguard.GuardMiddleware`) asks before it reads an
    upload's body. At most ``max_size`` ids are kept; when full, the oldest are
    dropped (a session that lost its place is added again by its next rerun).
    """

    def __init__(self, max_size: int = 100_000) -> None:
        self.max_size = int(max_size)
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session_id: str) -> None:
        with self._lock:
            self._ids[session_id] = None
            self._ids.move_to_end(session_id)
            while len(self._ids) > self.max_size:
                self._ids.popitem(last=False)

    def discard(self, session_id: str) -> None:
        with self._lock:
            self._ids.pop(session_id, None)

    def contains(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._ids

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)


#: The process's registry: shared by the pages and the web server's guard (one
#: module object per process, whichever imports it first).
UPLOAD_SESSIONS = SessionRegistry()
