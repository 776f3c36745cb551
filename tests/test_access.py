"""Access control: constant-time password check, lock-out (checked against a
brute-force model), configuration, the e-mail domain allow-list, and Streamlit's
``st.login`` flow against a local mock OIDC provider."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import calib.hosting.access as access
from calib.errors import CalibError
from calib.hosting.access import (
    AccessConfig,
    PasswordGate,
    email_allowed,
    email_domain,
    parse_domains,
    password_matches,
    user_allowed,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def spy_compare(monkeypatch):
    """Records the arguments of every hmac.compare_digest call made by calib.hosting.access."""
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    return calls


# ------------------------------------------------------------------ password
def test_password_compare_is_constant_time_over_fixed_length_digests(spy_compare) -> None:
    assert password_matches("correct horse", "correct horse")
    assert not password_matches("correct hors", "correct horse")
    assert not password_matches("", "correct horse")
    assert not password_matches("correct horse" * 100, "correct horse")
    assert password_matches("pässwörd", "pässwörd")
    assert len(spy_compare) == 5
    # both sides are SHA-256 digests, so neither a prefix nor the length can leak
    assert all(len(a) == len(b) == 32 for a, b in spy_compare)
    assert spy_compare[0] == (hashlib.sha256(b"correct horse").digest(),) * 2


def test_lockout_after_n_failures_and_release_after_window(spy_compare) -> None:
    clock = Clock()
    gate = PasswordGate("s3cret", max_failures=3, window_s=600, global_max_failures=100, clock=clock)
    v1 = gate.check("10.0.0.1", "a")
    assert (v1.ok, v1.locked, v1.message) == (False, False, "Wrong password (2 more tries before a pause).")
    clock.t += 10
    assert gate.check("10.0.0.1", "b").message == "Wrong password (1 more try before a pause)."
    clock.t += 10
    v3 = gate.check("10.0.0.1", "c")
    assert v3.locked and v3.retry_after_s == pytest.approx(580)
    assert v3.message == "Too many wrong passwords; try again in 10 minutes."
    calls = len(spy_compare)
    clock.t += 100
    v4 = gate.check("10.0.0.1", "s3cret")  # right password, but locked: refused unchecked
    assert (v4.ok, v4.locked) == (False, True) and v4.retry_after_s == pytest.approx(480)
    assert len(spy_compare) == calls
    assert gate.check("10.0.0.2", "s3cret").ok  # another client is not affected
    clock.t += 480 - 0.001
    assert gate.check("10.0.0.1", "s3cret").locked
    clock.t += 0.001  # the first failure is now 600 s old: one try opens up
    assert gate.check("10.0.0.1", "s3cret").ok


def test_success_clears_the_clients_failures_and_empty_attempts_do_not_count() -> None:
    clock = Clock()
    gate = PasswordGate("pw", max_failures=2, window_s=60, clock=clock)
    assert gate.check("s", "").message == "Enter the password."
    assert gate.check("s", None).message == "Enter the password."
    assert not gate.check("s", "x").locked
    assert gate.check("s", "pw").ok
    assert not gate.check("s", "x").locked  # counting starts again
    assert gate.check("s", "y").locked


def test_global_throttle_stops_a_guesser_who_changes_key() -> None:
    clock = Clock()
    gate = PasswordGate("pw", max_failures=5, window_s=300, global_max_failures=4, clock=clock)
    for i in range(4):
        clock.t += 1
        assert not gate.check(f"session-{i}", "guess").locked
    v = gate.check("fresh-session", "pw")
    assert (v.ok, v.locked) == (False, True)
    assert v.message == "Too many wrong passwords on this server recently; sign-in is paused. Try again in 5 minutes."
    assert v.retry_after_s == pytest.approx(300 - 3)
    clock.t += 297
    assert gate.check("fresh-session", "pw").ok


def reference_gate(events, n: int, g: int, window: float, password: str):
    """Brute-force model of the lock-out rules: recompute everything from the full
    history at every attempt."""
    failures: list[tuple[float, str]] = []  # every checked wrong attempt
    cleared: dict[str, float] = {}  # time of each client's last success
    out = []
    for t, client, attempt in events:
        recent = sorted(ft for ft, _ in failures if ft > t - window)
        mine = sorted(ft for ft, c in failures if c == client and ft > t - window and ft > cleared.get(client, -1e18))
        if len(recent) >= g:
            out.append((False, True, recent[-g] + window - t))
        elif len(mine) >= n:
            out.append((False, True, mine[-n] + window - t))
        elif attempt == "":
            out.append((False, False, 0.0))
        elif attempt == password:
            cleared[client] = t
            out.append((True, False, 0.0))
        else:
            failures.append((t, client))
            mine.append(t)
            locked = len(mine) >= n
            out.append((False, locked, mine[-n] + window - t if locked else 0.0))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_gate_matches_brute_force_model(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, g, window = 3, 7, 100.0
    clock = Clock()
    gate = PasswordGate("pw", max_failures=n, window_s=window, global_max_failures=g, clock=clock)
    events = []
    t = clock.t
    for _ in range(400):
        t += float(rng.exponential(6.0))
        client = f"c{rng.integers(0, 4)}"
        attempt = str(rng.choice(["pw", "wrong", "guess", ""], p=[0.2, 0.4, 0.35, 0.05]))
        events.append((t, client, attempt))
    want = reference_gate(events, n, g, window, "pw")
    got = []
    for t, client, attempt in events:
        clock.t = t
        v = gate.check(client, attempt)
        got.append((v.ok, v.locked, round(v.retry_after_s, 6)))
    assert got == [(ok, locked, round(wait, 6)) for ok, locked, wait in want]
    assert any(v[1] for v in got) and any(v[0] for v in got)  # the run exercised both


def test_concurrent_attempts_count_exactly(spy_compare) -> None:
    gate = PasswordGate("pw", max_failures=5, window_s=600, global_max_failures=1000)
    verdicts = []
    lock = threading.Lock()

    def hammer() -> None:
        for _ in range(50):
            v = gate.check("one-client", "wrong")
            with lock:
                verdicts.append(v)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spy_compare) == 5  # exactly N attempts were ever checked
    assert sum(not v.locked for v in verdicts) == 4


def test_gate_refuses_an_empty_password() -> None:
    with pytest.raises(CalibError, match="the shared password is empty"):
        PasswordGate("")


# -------------------------------------------------------------------- config
def test_config_defaults_to_off_and_reads_the_environment() -> None:
    off = AccessConfig.from_env({})
    assert not off.enabled and off.password is None and not off.oidc
    on = AccessConfig.from_env({
        "CALIB_PASSWORD": "pw", "CALIB_AUTH": "OIDC", "CALIB_ALLOWED_DOMAINS": "Example.com, @example.org",
        "CALIB_AUTH_PROVIDER": "google", "CALIB_LOGIN_MAX_FAILURES": "4", "CALIB_LOGIN_WINDOW_SECONDS": "60",
        "CALIB_LOGIN_GLOBAL_MAX_FAILURES": "30",
    })
    assert on == AccessConfig("pw", True, "google", ("example.com", "example.org"), 4, 60.0, 30)
    # a password from st.secrets wins over the environment
    assert AccessConfig.from_env({"CALIB_PASSWORD": "env"}, password="from-secrets").password == "from-secrets"
    assert AccessConfig.from_env({"CALIB_PASSWORD": "env"}, password="").password == "env"
    gate = PasswordGate.from_config(on)
    assert (gate.max_failures, gate.window_s, gate.global_max_failures) == (4, 60.0, 30)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CALIB_AUTH": "oidc"}, "CALIB_AUTH=oidc needs CALIB_ALLOWED_DOMAINS"),
        ({"CALIB_AUTH": "saml"}, "CALIB_AUTH='saml': use 'oidc'"),
        ({"CALIB_AUTH": "oidc", "CALIB_ALLOWED_DOMAINS": "*.example.com"},
         "CALIB_ALLOWED_DOMAINS: '*.example.com' is not a domain"),
        ({"CALIB_LOGIN_MAX_FAILURES": "0"}, "CALIB_LOGIN_MAX_FAILURES='0' must be at least 1"),
    ],
)
def test_config_errors_are_clear(env: dict[str, str], message: str) -> None:
    with pytest.raises(CalibError) as err:
        AccessConfig.from_env(env)
    assert str(err.value).startswith(message)


def test_parse_domains() -> None:
    assert parse_domains(" Example.COM,@example.org.\nsub.example.com  example.com ") == (
        "example.com", "example.org", "sub.example.com")
    assert parse_domains("*") == ("*",)
    assert parse_domains("") == ()
    for bad in ("exa_mple.com", "-example.com", "example", "ex@ample.com", "example..com", "http://example.com"):
        with pytest.raises(CalibError, match="is not a domain like example.com"):
            parse_domains(bad)


# ---------------------------------------------------------------- domains
ALLOWED = ("example.com",)


@pytest.mark.parametrize(
    ("email", "ok"),
    [
        ("alice@example.com", True),
        ("ALICE@EXAMPLE.COM", True),
        ("alice@Example.Com.", True),
        ("first.last+tag@example.com", True),
        ('"a@b"@example.com', True),  # a quoted local part: the domain follows the last @
        ("alice@evil-example.com", False),
        ("alice@example.com.evil.org", False),
        ("alice@sub.example.com", False),
        ("alice@example.co", False),
        ("alice@xample.com", False),
        ("alice@example.com@evil.org", False),
        ('"alice@example.com"@evil.org', False),
        ("alice@exаmple.com", False),  # Cyrillic а
        ("alice@example.com\x00.evil.org", False),
        ("alice@example.com/evil", False),
        ("alice@", False),
        ("@example.com", False),
        ("example.com", False),
        ("", False),
        (None, False),
        (42, False),
    ],
)
def test_email_domain_allow_list_is_exact(email, ok: bool) -> None:
    assert email_allowed(email, ALLOWED) is ok
    assert email_allowed(email, ("EXAMPLE.com", "other.org")) is ok


def test_star_allows_any_well_formed_address() -> None:
    assert email_allowed("x@anything.org", ("*",))
    assert not email_allowed("not-an-address", ("*",))
    assert email_domain("Bob@Example.ORG.") == "example.org"


def test_user_allowed_decisions() -> None:
    assert user_allowed({"is_logged_in": False}, ALLOWED) == access.Decision(False, "Please log in.")
    assert not user_allowed({"is_logged_in": True}, ALLOWED).allowed
    assert user_allowed({"is_logged_in": True, "email": "a@example.com", "email_verified": False}, ALLOWED).message == (
        "Your login provider says your e-mail address is not verified.")
    assert user_allowed({"is_logged_in": True, "email": "a@example.com", "email_verified": True}, ALLOWED).allowed


@pytest.mark.parametrize("verified", ["false", "False", "true", "", 0, 1, None, [], {}, "missing"])
def test_only_a_json_true_email_verified_counts(verified) -> None:
    """JSON has one true: a provider (or a proxy mapping claims) writing the string
    "false", a number or nothing has not said the address is verified."""
    user = {"is_logged_in": True, "email": "a@example.com"}
    if verified != "missing":
        user["email_verified"] = verified
    assert user_allowed(user, ALLOWED) == access.Decision(False, (
        "Your login provider did not confirm that your e-mail address is verified (its email_verified "
        "claim is not true), so this server cannot check your domain."))
    assert user_allowed({**user, "email_verified": True}, ALLOWED) == access.Decision(True)


def test_user_allowed_refuses_a_verified_address_of_another_domain() -> None:
    refused = user_allowed({"is_logged_in": True, "email": "m@evil-example.com", "email_verified": True}, ALLOWED)
    assert refused == access.Decision(False, "Accounts of evil-example.com are not allowed on this server.")


# ---------------------------------------------- st.login against a mock provider
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def provider_token(secret: str, provider: str = "default") -> str:
    """What ``st.login()`` puts in ``/auth/login?provider=``: an HS256 JWT over
    ``{"provider", "exp"}`` keyed by the cookie secret (built by hand here)."""

    def b64(raw: bytes) -> bytes:
        return base64.urlsafe_b64encode(raw).rstrip(b"=")

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"provider": provider, "exp": int(time.time()) + 120}).encode())
    sig = b64(hmac.new(secret.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def auth_secrets(app_port: int, provider_port: int, cookie_secret: str) -> str:
    """The ``[auth]`` section of ``.streamlit/secrets.toml`` (the README documents
    the same keys; see :data:`calib.hosting.access.AUTH_SECRETS_EXAMPLE`)."""
    return (
        "[auth]\n"
        f'redirect_uri = "http://localhost:{app_port}/oauth2callback"\n'
        f'cookie_secret = "{cookie_secret}"\n'
        'client_id = "calib-test"\n'
        'client_secret = "calib-test-secret"\n'
        f'server_metadata_url = "http://localhost:{provider_port}/.well-known/openid-configuration"\n'
    )


@pytest.fixture
def oidc_server(tmp_path: Path):
    """A mock OIDC provider (oidc-provider-mock) with three users, and a Streamlit
    server whose secrets.toml points ``st.login`` at it. Yields
    ``(app_url, cookie_secret)``. The browser tests can reuse this fixture with the
    real app.py by copying it next to the app instead of the one-line script."""
    import authlib.deprecate  # noqa: F401 - installs its own "always" filter; must come first

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # authlib's deprecation notices, raised on import
        from oidc_provider_mock import User, run_server_in_thread

    users = [
        User(sub="alice", claims={"email": "alice@example.com", "email_verified": True}),
        User(sub="mallory", claims={"email": "mallory@evil-example.com", "email_verified": True}),
        User(sub="eve", claims={"email": "eve@example.com", "email_verified": False}),
        User(sub="sam", claims={"email": "sam@example.com", "email_verified": "false"}),
        User(sub="nova", claims={"email": "nova@example.com"}),
    ]
    secret = hashlib.sha256(b"calib test cookie secret").hexdigest()
    with run_server_in_thread(port=0, user_claims=users) as provider:
        app_dir = tmp_path / "app"
        (app_dir / ".streamlit").mkdir(parents=True)
        (app_dir / "app.py").write_text("import streamlit as st\nst.write('calib')\n")
        port = free_port()
        (app_dir / ".streamlit" / "secrets.toml").write_text(auth_secrets(port, provider.server_port, secret))
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=app_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        try:
            import httpx

            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, proc.stdout.read().decode()
                try:
                    if httpx.get(f"http://localhost:{port}/_stcore/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "streamlit did not start"
                time.sleep(0.2)
            yield f"http://localhost:{port}", secret
        finally:
            proc.terminate()
            proc.communicate(timeout=20)


def login_over_http(app_url: str, cookie_secret: str, sub: str) -> dict:
    """Walk the OIDC authorization-code flow the way a browser would (login route ->
    provider's form -> callback), and return the user record Streamlit stored in its
    signed ``_streamlit_user`` cookie: what ``st.user`` shows the app."""
    import httpx
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    with httpx.Client(follow_redirects=False, timeout=20) as c:
        r = c.get(f"{app_url}/auth/login", params={"provider": provider_token(cookie_secret)})
        assert r.status_code == 302, r.text
        authorize = r.headers["location"]
        assert c.get(authorize).status_code == 200  # the provider's login form
        r = c.post(authorize, data={"sub": sub})
        assert r.status_code == 302 and r.headers["location"].startswith(f"{app_url}/oauth2callback?")
        r = c.get(r.headers["location"])
        assert r.status_code == 302 and r.headers["location"] == "/"
        raw = c.cookies.get("_streamlit_user")
        assert raw, "no login cookie"
        value = decode_signed_value(cookie_secret, "_streamlit_user", raw.encode("latin-1"))
        assert value is not None, "the login cookie is not signed with the cookie secret"
        return json.loads(value)


@pytest.mark.slow  # starts a mock OIDC provider: 6 s
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # authlib's, inside the mock provider
def test_st_login_flow_against_mock_provider(oidc_server) -> None:
    app_url, secret = oidc_server
    alice = login_over_http(app_url, secret, "alice")
    assert alice["is_logged_in"] is True and alice["email"] == "alice@example.com"
    assert user_allowed(alice, ("example.com",)).allowed
    mallory = login_over_http(app_url, secret, "mallory")
    assert mallory["email"] == "mallory@evil-example.com"
    assert not user_allowed(mallory, ("example.com",)).allowed
    eve = login_over_http(app_url, secret, "eve")
    assert eve["email_verified"] is False
    assert not user_allowed(eve, ("example.com",)).allowed
    # a string "false" reaches st.user as the provider wrote it, and does not count as verified
    sam = login_over_http(app_url, secret, "sam")
    assert sam["email_verified"] == "false"
    assert not user_allowed(sam, ("example.com",)).allowed
    nova = login_over_http(app_url, secret, "nova")  # no email_verified claim at all
    assert "email_verified" not in nova and not user_allowed(nova, ("example.com",)).allowed


def test_documented_auth_secrets_have_the_keys_the_login_test_uses() -> None:
    import tomllib

    documented = tomllib.loads(access.AUTH_SECRETS_EXAMPLE)["auth"]
    used = tomllib.loads(auth_secrets(8501, 9400, "x" * 64))["auth"]
    assert set(documented) == set(used) == {
        "redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url"}
    assert documented["redirect_uri"].endswith("/oauth2callback")


# ------------------------------------------- the login's settings, checked up front
FULL_AUTH = {"redirect_uri": "https://calib.example.com/oauth2callback", "cookie_secret": "s" * 64,
             "client_id": "id", "client_secret": "secret",
             "server_metadata_url": "https://accounts.example.com/.well-known/openid-configuration"}


@pytest.fixture()
def oidc_env(monkeypatch, tmp_path):
    from tests.apptest import clear_caches

    for var in ("CALIB_PASSWORD", "CALIB_AUTH_PROVIDER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CALIB_AUTH", "oidc")
    monkeypatch.setenv("CALIB_ALLOWED_DOMAINS", "example.com")
    monkeypatch.setenv("CALIB_DATA_DIR", str(tmp_path / "data"))
    clear_caches()
    yield monkeypatch
    clear_caches()


def page_errors(secrets: dict | None) -> tuple[list[str], object]:
    """Run the app with these secrets (none: no secrets at all): its error boxes, unescaped,
    and the app (which must have raised nothing)."""
    from tests.apptest import app, ok

    at = app()
    for k, v in (secrets or {}).items():
        at.secrets[k] = v
    at = ok(at.run())
    return [e.value.replace("\\", "") for e in at.error], at


def test_without_an_auth_section_the_page_names_the_missing_setting(oidc_env) -> None:
    errors, at = page_errors(None)
    assert errors == ["This server is not configured correctly: CALIB_AUTH=oidc needs an [auth] section in "
                      ".streamlit/secrets.toml (redirect_uri, cookie_secret, client_id, client_secret, "
                      "server_metadata_url; see the README's login section); there is none"]
    assert not at.button and not at.file_uploader


@pytest.mark.parametrize("drop", ["redirect_uri", "cookie_secret", "client_id", "client_secret",
                                  "server_metadata_url"])
def test_an_auth_section_missing_a_key_is_named(oidc_env, drop) -> None:
    errors, _ = page_errors({"auth": {k: v for k, v in FULL_AUTH.items() if k != drop}})
    assert errors == [f"This server is not configured correctly: CALIB_AUTH=oidc: .streamlit/secrets.toml "
                      f"is missing {drop} in [auth]"]


def test_a_named_provider_needs_its_own_section(oidc_env) -> None:
    oidc_env.setenv("CALIB_AUTH_PROVIDER", "google")
    errors, _ = page_errors({"auth": FULL_AUTH})
    assert errors == ["This server is not configured correctly: CALIB_AUTH=oidc: .streamlit/secrets.toml "
                      "is missing the section [auth.google] (CALIB_AUTH_PROVIDER=google)"]
    shared = {k: FULL_AUTH[k] for k in ("redirect_uri", "cookie_secret")}
    errors, _ = page_errors({"auth": {**shared, "google": {"client_id": "id", "client_secret": "x"}}})
    assert errors == ["This server is not configured correctly: CALIB_AUTH=oidc: .streamlit/secrets.toml "
                      "is missing server_metadata_url in [auth.google]"]


def test_complete_auth_settings_show_the_login(oidc_env) -> None:
    from tests.apptest import app, ok

    at = app()
    at.secrets["auth"] = FULL_AUTH
    # AppTest has no login cookie: st.user is logged out
    at = ok(at.run())
    assert [b.label for b in at.button] == ["Log in"] and not at.error
