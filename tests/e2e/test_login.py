"""OIDC login in a real browser, against a local mock provider (oidc-provider-mock).

The dashboard runs with ``CALIB_AUTH=oidc`` and ``CALIB_ALLOWED_DOMAINS=example.com``;
its ``[auth]`` secrets point ``st.login`` at the mock provider. A user of an allowed
domain gets in after the provider's form, shares a link, finds it in the list of her
links and revokes it there (the link then opens on nothing); a user of a look-alike domain
(``evil-example.com``) is refused with a message and a Log out button, and sees no
data controls; nobody sees the app before logging in.
"""

from __future__ import annotations

import hashlib
import warnings

import pytest

from tests.e2e.conftest import screenshot, start_server
from tests.e2e.hosting import JUDGE, SLOW, assert_unavailable, share, sidebar, upload, wait_text
from tests.test_access import auth_secrets


@pytest.fixture
def oidc_app(tmp_path):
    import authlib.deprecate  # noqa: F401 - installs its own warning filter; must come first

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from oidc_provider_mock import User, run_server_in_thread

    users = [
        User(sub="alice", claims={"email": "alice@example.com", "email_verified": True}),
        User(sub="mallory", claims={"email": "mallory@evil-example.com", "email_verified": True}),
    ]
    secret = hashlib.sha256(b"calib browser login test").hexdigest()
    secrets_file = tmp_path / "secrets.toml"
    secrets_file.write_text("")  # filled in once the app's port is known, before any visit
    with run_server_in_thread(port=0, user_claims=users) as provider:
        srv = start_server(tmp_path, env={
            "CALIB_AUTH": "oidc", "CALIB_ALLOWED_DOMAINS": "example.com",
            "STREAMLIT_SECRETS_FILES": str(secrets_file),
        })
        try:
            secrets_file.write_text(auth_secrets(srv.port, provider.server_port, secret))
            yield srv, f"http://localhost:{srv.port}"
        finally:
            srv.stop()


def log_in(page, app_url: str, sub: str) -> None:
    page.goto(app_url)
    page.get_by_role("button", name="Log in").click(timeout=SLOW)
    page.locator('input[name="sub"][placeholder="sub"]').fill(sub, timeout=SLOW)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{app_url}/**", timeout=SLOW)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_login_lets_in_allowed_domains_only(oidc_app, browser):
    srv, app_url = oidc_app
    contexts = []
    try:
        # before logging in: a login button and nothing else
        c = browser.new_context()
        contexts.append(c)
        anon = c.new_page()
        anon.goto(app_url)
        anon.get_by_role("button", name="Log in").wait_for(timeout=SLOW)
        wait_text(anon, "Log in to continue")
        assert anon.get_by_test_id("stFileUploader").count() == 0

        # alice@example.com gets in and can use the app
        c = browser.new_context()
        contexts.append(c)
        alice = c.new_page()
        log_in(alice, app_url, "alice")
        alice.get_by_test_id("stHeading").filter(has_text="Data").first.wait_for(timeout=SLOW)
        upload(alice, str(JUDGE))
        screenshot(alice, "login_allowed")
        # her links, from any session: listed with Revoke / Delete, no owner key needed
        link, _key = share(alice)
        bar = sidebar(alice)
        bar.get_by_role("button", name="Your shared links").click()
        listing = bar.get_by_test_id("stText").filter(has_text=JUDGE.stem)
        listing.first.wait_for(timeout=SLOW)
        assert "\nok" in listing.first.inner_text()
        screenshot(alice, "login_owned_links")
        bar.locator("[class*=st-key-calib_rev_]").get_by_role("button", name="Revoke").click()
        wait_text(alice, "revoked")
        bar.get_by_test_id("stText").filter(has_text="revoked").first.wait_for(timeout=SLOW)
        v = alice.context.new_page()  # logged in (this server lets no one in without a login)
        v.goto(link)
        assert_unavailable(v)

        # mallory@evil-example.com proves who she is, but her domain is not allowed
        c = browser.new_context()
        contexts.append(c)
        mallory = c.new_page()
        log_in(mallory, app_url, "mallory")
        wait_text(mallory, "Accounts of evil-example.com are not allowed on this server.")
        assert mallory.get_by_test_id("stFileUploader").count() == 0
        assert mallory.get_by_test_id("stMetric").count() == 0
        screenshot(mallory, "login_refused")
        # logging out (confirmed on the provider's end-session page) leads back to the login screen
        mallory.get_by_role("button", name="Log out").click(timeout=SLOW)
        mallory.get_by_role("button", name="End session").click(timeout=SLOW)
        mallory.get_by_role("button", name="Log in").wait_for(timeout=SLOW)
    finally:
        for c in contexts:
            c.close()
    assert "Traceback" not in srv.log()
