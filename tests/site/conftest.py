"""The site tests' shared fixtures: one build per test session, one server, one browser (its
contexts shared by the tests of a process, ``contexts``), and one visit of each sampled page per
viewport (``crawl`` at the desktop width, ``phone_survey`` on a phone: tests/site/survey.py), made
by one process of the session and read by all.

The build is ``book/build.py`` (strict), run once per session in a fresh copy of the working
tree (``site_helpers.build_site_once``: the root ``conftest.py`` starts it as the session starts,
beside the tests that need no site; every process that needs it waits for that one build). An
unchanged tree reuses the last session's build (``_build/test-site/``; not with
``GATHERBOOK_SITE_REUSE=0``, as ``make test-all`` sets). It is the build ``make book`` makes: with ``GATHERBOOK_SITE_OUT`` set (``make test``
sets it to ``_build/site``), the tested site is copied there, so CI publishes what it tested
and does not build twice.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import site_helpers as sh
import survey

SITE_OUT_ENV = "GATHERBOOK_SITE_OUT"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The built site (a dict from ``site_helpers.build_site_once``, with ``path`` and ``pages``)."""
    base = tmp_path_factory.getbasetemp()
    # the folder the root conftest.py's early build uses too (a worker's basetemp is inside the main one's)
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "gatherbook-site"
    info = sh.build_site_once(shared)
    if info["returncode"] != 0:
        pytest.fail("book/build.py failed (strict build: warnings are errors):\n"
                    + info["log"][-6000:], pytrace=False)
    info["path"] = Path(info["site"])
    info["pages"] = sh.site_pages(info["path"])
    info["builds"] = (shared / "builds.jsonl").read_text(encoding="utf8").splitlines()
    info["shared"] = shared
    out = os.environ.get(SITE_OUT_ENV, "").strip()
    if out:
        sh.publish_once(info["path"], Path(out), shared)
    return info


@pytest.fixture(scope="session")
def base_url(site):
    with sh.serve(site["path"]) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    reason = sh.browser_unavailable_reason()
    if reason:
        if sh.on_ci():
            pytest.fail(f"CI=true, but the browser tests cannot run: {reason}.", pytrace=False)
        pytest.skip(f"browser tests skipped: {reason} (with CI=true this is a failure)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        try:
            chromium = pw.chromium.launch(executable_path=sh.chromium_path(), headless=True,
                                          args=sh.CHROMIUM_ARGS)
        except Exception as exc:  # a Chromium that is there but does not start is a real failure
            pytest.fail(f"Chromium at {sh.chromium_path()} did not start: {exc}", pytrace=False)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def contexts(browser, base_url):
    """``contexts(**options)``: the browser context of this process for those options, shared by
    the tests (survey.Contexts); a test opens its tab there with survey.open_page and closes it."""
    shared = survey.Contexts(browser, base_url)
    yield shared
    shared.close()


@pytest.fixture(autouse=True)
def _site_storage_forgotten(request):
    """After a test that used the shared contexts, empty the site's storage there (Contexts.forget)."""
    yield
    if "contexts" in request.fixturenames:
        request.getfixturevalue("contexts").forget()


@pytest.fixture(scope="session")
def crawl(site, base_url, contexts):
    """Every sampled page at the desktop width, with what a reader does there (survey.crawl)."""
    return survey.once(site["shared"] / "crawl.json", lambda: survey.crawl(site, base_url, contexts))


@pytest.fixture(scope="session")
def phone_survey(site, base_url, contexts):
    """``{page: layout}`` of every sampled edition page on a phone (survey.survey)."""
    return survey.once(site["shared"] / "phone-survey.json",
                       lambda: survey.survey(contexts, base_url, survey.survey_pages(site), "phone"))
