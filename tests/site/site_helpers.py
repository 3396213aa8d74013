"""Helpers of the site tests (``tests/site/``): build the site, serve it, find Chromium, check links.

Nothing here needs a browser; the browser's visits live in ``survey.py``.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import posixpath
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import site_server
from gatherbook.editions import CODES

ROOT = Path(__file__).resolve().parents[2]
EDITIONS = CODES  # the book's editions (gatherbook/editions.py)
HTML_LANG = {"en": "en", "zh": "zh-CN"}

# Debian's Chromium; GATHERBOOK_CHROMIUM points elsewhere (or at a missing file, to test the skip).
CHROMIUM_ENV = "GATHERBOOK_CHROMIUM"
CHROMIUM_DEFAULT = "/usr/bin/chromium"
# Chromium's headless shell first (Debian's chromium-headless-shell: Chromium's old headless mode, a
# program of its own built from the same source and version as chromium; what Playwright itself
# launches for headless tests). The same pages and tests cost about a third less CPU in it than in
# chromium's headless mode (measured on 2 cores: tests/site 131 -> 86 core-seconds). Else chromium,
# whose layout it matches with --font-render-hinting=none (below).
CHROMIUM_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic",
                 # by default the headless shell rounds each Chinese character's width to a whole
                 # pixel (ten characters at 14.4 px: 140 px, 14 each; in chromium 143.9), so
                 # Chinese lines broke elsewhere than in chromium (a zh chapter 71 px taller at
                 # 390 px). Without font hinting it lays them out as chromium does (the same page
                 # heights, measured; tests/site/test_pages.py holds the widths).
                 "--font-render-hinting=none",
                 # no host name resolves: a request for a CDN fails here instead of leaving
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]

# What the build needs when git cannot list the working tree.
_NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "_build", "_generated", "__pycache__",
                                      ".ipynb_checkpoints", ".pytest_cache", "*.egg-info")


# ---------------------------------------------------------------------------------------------
# Chromium
# ---------------------------------------------------------------------------------------------
def chromium_path() -> str:
    """The Chromium executable the tests launch: ``$GATHERBOOK_CHROMIUM``, else the first of
    CHROMIUM_NAMES on PATH."""
    if os.environ.get(CHROMIUM_ENV):
        return os.environ[CHROMIUM_ENV]
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return CHROMIUM_DEFAULT


def browser_unavailable_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return (f"no Chromium at {path} (install Debian's chromium-headless-shell or chromium, "
                f"or set {CHROMIUM_ENV} to a Chromium executable)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"the playwright package cannot be imported ({exc}); pip install -r requirements.txt"
    return None


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


# ---------------------------------------------------------------------------------------------
# Build, once per test session
# ---------------------------------------------------------------------------------------------
# What the build never reads: the tests (_config.yml's ``exclude_patterns``), their pytest hooks,
# the contributor's Makefile (the reader's zip ships book/reader/Makefile) and CI's script.
NOT_READ_BY_THE_BUILD = ("tests/", "conftest.py", "Makefile", ".ci/")


def source_files() -> list[str]:
    """The working tree's files that the build sees (tracked, and untracked that git does not
    ignore), as sorted POSIX paths relative to the root; None when git cannot list them.
    The files of NOT_READ_BY_THE_BUILD are not among them, so a session after an edit to a test
    or to the lanes reuses the last build."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True).stdout.decode("utf8").split("\0")
    except (OSError, subprocess.CalledProcessError):
        return None
    # a tracked file deleted in the working tree is listed too
    return sorted({rel for rel in listed if rel and not rel.startswith(NOT_READ_BY_THE_BUILD)
                   and (ROOT / rel).is_file()})


def copy_sources(dest: Path, files: list[str] | None = None) -> None:
    """Copy the working tree (``files``, by default :func:`source_files`) to ``dest``."""
    files = source_files() if files is None else files
    if files is None:
        shutil.copytree(ROOT, dest, ignore=_NOT_SOURCES, dirs_exist_ok=True)
        return
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


# A build is kept in _build/test-site/ with the fingerprint of what it was built from: the source
# files (paths and bytes: the build runs in a copy of exactly these), the Python and every installed
# distribution's version. A session whose fingerprint matches reuses it (its site, its log) instead
# of building again; GATHERBOOK_SITE_REUSE=0 (make test-all, CI) always builds afresh.
CACHE = ROOT / "_build" / "test-site"
REUSE_ENV = "GATHERBOOK_SITE_REUSE"


def reuse_allowed() -> bool:
    return os.environ.get(REUSE_ENV, "").strip().lower() not in ("0", "no", "false")


@functools.lru_cache(maxsize=None)
def _environment() -> bytes:
    """The Python and every installed distribution's version (listing them takes a second).

    Read from the environment's site-packages alone, not from ``sys.path``: with the checkout on
    ``sys.path`` (pytest puts it there when it imports the root conftest.py), its
    ``gatherbook.egg-info`` of an editable install counts once more, and the key of an unchanged
    tree would depend on when in the session this runs (a rebuild at random)."""
    import sysconfig
    from importlib import metadata

    where = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    names = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions(path=where)})
    return "\0".join([sys.version, sys.executable, *names, ""]).encode("utf8")


def fingerprint(files: list[str]) -> str:
    """What a build depends on, as one hash (see :data:`CACHE`)."""
    digest = hashlib.sha256(_environment())
    for rel in files:
        digest.update(rel.encode("utf8") + b"\0" + hashlib.sha256((ROOT / rel).read_bytes()).digest())
    return digest.hexdigest()


def _cached_build(key: str) -> dict | None:
    try:
        info = json.loads((CACHE / "build.json").read_text(encoding="utf8"))
    except (OSError, ValueError):
        return None
    return info if info.get("fingerprint") == key and (CACHE / "site" / "index.html").is_file() else None


def _keep_build(key: str, info: dict, site: Path) -> None:
    if CACHE.exists():
        shutil.rmtree(CACHE)
    shutil.copytree(site, CACHE / "site.partial")
    os.replace(CACHE / "site.partial", CACHE / "site")
    (CACHE / "build.json").write_text(json.dumps({**info, "fingerprint": key}), encoding="utf8")


def build_site_once(shared: Path) -> dict:
    """Build the site with ``book/build.py`` (strict) into ``shared/site``, once per session.

    ``shared`` is the same folder for every pytest-xdist worker of the session; a lock makes
    the first process to get here build (the root ``conftest.py`` starts it as the session starts,
    beside the tests that need no site) and the others wait and reuse it. Each session appends a
    line to ``shared/builds.jsonl``, so a test can check that there was exactly one build.

    The build runs in a fresh copy of the working tree: a fresh Sphinx environment reports every
    warning (an incremental build re-reports only the pages it re-reads), and the test never
    touches ``_build/`` or ``book/_generated/`` of the checkout while ``make book`` may be using them.
    When nothing it depends on changed since the last session's build (:data:`CACHE`), that build
    is the session's build: its site and its log.
    """
    shared.mkdir(parents=True, exist_ok=True)
    done = shared / "build.json"
    with open(shared / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if done.is_file():
                return json.loads(done.read_text(encoding="utf8"))
            src, site = shared / "src", shared / "site"
            start = time.perf_counter()
            files = source_files()
            key = fingerprint(files) if files is not None and reuse_allowed() else None
            kept = _cached_build(key) if key else None
            who = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "pid": os.getpid()}
            if kept:
                shutil.copytree(CACHE / "site", site)
                info = {**kept, **who, "site": str(site), "reused": True,
                        "reuse_seconds": round(time.perf_counter() - start, 2)}
            else:
                copy_sources(src, files)
                before = _tree(src)
                result = subprocess.run([sys.executable, str(src / "book" / "build.py"), "--out", str(site)],
                                        cwd=src, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
                info = {"site": str(site), "returncode": result.returncode,
                        "log": result.stdout.decode("utf8", "replace"),
                        # files the build made in the source tree outside _build/ (issue 10: none)
                        "made_outside_build": sorted(_tree(src) - before),
                        "seconds": round(time.perf_counter() - start, 2), **who, "reused": False}
                if key and result.returncode == 0:
                    _keep_build(key, info, site)
            with open(shared / "builds.jsonl", "a", encoding="utf8") as builds:
                builds.write(json.dumps({k: info[k] for k in ("worker", "pid", "seconds", "reused")}) + "\n")
            done.write_text(json.dumps(info), encoding="utf8")
            return info
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def publish_once(site: Path, out: Path, shared: Path) -> None:
    """Copy the tested ``site`` to ``out`` (``_build/site``: what ``make book`` makes), once per
    session (the first worker of pytest-xdist to get here)."""
    with open(shared / "publish.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            done = shared / "published"
            if done.is_file() and done.read_text(encoding="utf8") == str(out):
                return
            if out.exists():
                shutil.rmtree(out)
            shutil.copytree(site, out)
            done.write_text(str(out), encoding="utf8")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _tree(root: Path) -> set[str]:
    """The files under ``root`` outside ``_build/`` and Python caches, as relative paths."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[0] != "_build"
            and "__pycache__" not in p.parts}


# ---------------------------------------------------------------------------------------------
# The built site
# ---------------------------------------------------------------------------------------------
def site_pages(site: Path) -> list[str]:
    """Every HTML page of the site (POSIX paths relative to it): ``index.html`` and both editions.

    Files under a ``_static`` folder are theme template fragments, not pages.
    """
    pages = ["index.html"]
    for edition in EDITIONS:
        pages += sorted(p.relative_to(site).as_posix() for p in (site / edition).rglob("*.html")
                        if "_static" not in p.relative_to(site).parts)
    return pages


def other_edition(path: str) -> str:
    """``en/notebooks/en/x.html`` -> ``zh/notebooks/zh/x.html`` (and back)."""
    swap = {"en": "zh", "zh": "en"}
    return "/".join(swap.get(part, part) for part in path.split("/"))


def edition_of(path: str) -> str | None:
    first = path.split("/", 1)[0]
    return first if first in EDITIONS else None


def is_chapter(path: str) -> bool:
    return "/notebooks/" in f"/{path}"


class PageParser(HTMLParser):
    """The references (``a``/``img``/``script``/``link``/``source``), ids, switch links and
    meta refresh of one HTML page."""

    REF_ATTRS = {"a": "href", "img": "src", "script": "src", "link": "href", "source": "src",
                 "iframe": "src", "video": "src", "audio": "src"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []  # (tag, rel, url)
        self.ids: set[str] = set()
        self.switches: list[str] = []
        self.refresh: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        attr = self.REF_ATTRS.get(tag)
        if attr and a.get(attr) is not None:
            self.refs.append((tag, (a.get("rel") or "").lower(), a[attr]))
            if tag == "a" and "gatherbook-language-switch" in (a.get("class") or "").split():
                self.switches.append(a[attr])
        if tag == "img" and a.get("srcset"):
            for part in a["srcset"].split(","):
                if part.strip():
                    self.refs.append(("img", "", part.split()[0]))
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            content = a.get("content") or ""
            if "url=" in content.lower():
                self.refresh = content[content.lower().index("url=") + 4:].strip().strip("'\"")


@functools.lru_cache(maxsize=None)
def parse_page(file: Path) -> PageParser:
    parser = PageParser()
    parser.feed(file.read_text(encoding="utf8", errors="replace"))
    parser.close()
    return parser


def resolve(page: str, url: str) -> tuple[str, str] | None:
    """Site path and fragment that ``url`` on ``page`` points to (None: outside the site or not a file)."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    if not parts.path:
        return page, parts.fragment
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path)))
    if joined.startswith("../") or joined == "..":
        return "", parts.fragment  # escapes the site root
    if parts.path.endswith("/"):
        joined += "/index.html"
    return joined, parts.fragment


def is_external(url: str) -> bool:
    return bool(urlsplit(url).scheme in ("http", "https") or url.startswith("//"))


def link_problems(site: Path, pages: list[str]) -> list[str]:
    """Internal references that do not resolve to a file of the site (or to an id on the page)."""
    problems = []
    for page in pages:
        parsed = parse_page(site / page)
        for tag, rel, url in parsed.refs:
            scheme = urlsplit(url).scheme
            if scheme in ("mailto", "javascript", "data", "tel") or is_external(url):
                continue
            if url.strip() in ("", "#"):
                continue
            target = resolve(page, url)
            if target is None:
                problems.append(f"{page}: <{tag}> {url!r} has an unknown scheme")
                continue
            path, fragment = target
            file = site / path if path else None
            if file is None or not file.is_file():
                problems.append(f"{page}: <{tag}> {url!r} -> {path or '(outside the site)'} does not exist")
                continue
            if fragment and path.endswith(".html") and unquote(fragment) not in parse_page(file).ids:
                problems.append(f"{page}: <{tag}> {url!r} -> no id {fragment!r} on {path}")
    return problems


def external_loads(site: Path, pages: list[str]) -> list[str]:
    """References that a browser loads by itself (not links a reader clicks) and that leave the site."""
    found = []
    for page in pages:
        for tag, rel, url in parse_page(site / page).refs:
            loads = tag != "a" and not (tag == "link" and rel in ("canonical", "alternate", "author",
                                                                    "license", "next", "prev"))
            if loads and is_external(url):
                found.append(f"{page}: <{tag} rel={rel!r}> {url}")
    return found


# ---------------------------------------------------------------------------------------------
# A local web server: the one book/pdf/build.py prints from (book/ext/site_server.py)
# ---------------------------------------------------------------------------------------------
serve = site_server.serve


def site_path(base: str, url: str) -> str:
    """``http://127.0.0.1:port/en/x.html?q=1#y`` -> ``en/x.html``."""
    return PurePosixPath(urlsplit(url).path).as_posix().lstrip("/") if url.startswith(base) else url


READING_FIXTURE = ROOT / "tests" / "site" / "reading_fixture"

# `python -m sphinx ...` for the tests' own small builds, without rfc3987_syntax: myst-nb's nbformat
# imports jsonschema, which imports it to check IRIs and compiles its grammars on import (2 s of
# every such build; the root conftest.py keeps it out of the test processes for the same reason).
SPHINX_BUILD = [sys.executable, "-c", "import sys; sys.modules['rfc3987_syntax'] = None; "
                "from sphinx.cmd.build import main; sys.exit(main(sys.argv[1:]))"]


def build_reading_fixture(out: Path) -> Path:
    """Build the two-notebook book of the reading-path conventions (deep-dives, predict answers,
    a link to an anchor in another notebook) into ``out`` with -W; returns ``out``."""
    run = subprocess.run([*SPHINX_BUILD, "-b", "html", "-q", "-W", str(READING_FIXTURE), str(out)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"the reading fixture did not build:\n{run.stderr[-3000:]}")
    return out


# The browser tests visit every page with GATHERBOOK_SITE_PAGES=all (CI: make test-all), and a
# sample otherwise (make test): the landing page; in each edition its Start-here page, chapter 1
# and the search page (what every edition must have: its chapter's math and figures, its own
# search); and each other kind of page once, the editions taking turns: "Run it yourself" and the
# explorer in English, the glossary and a Practice page in Chinese.
# The checks that read the built files (links, headings, sizes, ...) read every page either way.
PAGES_ENV = "GATHERBOOK_SITE_PAGES"
SAMPLE = ("index.html",
          *(f"{e}/book/{e}/intro.html" for e in EDITIONS),
          *(f"{e}/notebooks/{e}/01_gather_basics.html" for e in EDITIONS),
          *(f"{e}/search.html" for e in EDITIONS),
          "en/book/en/run.html", "en/book/en/explorer.html",
          "zh/book/glossary.html", "zh/notebooks/zh/08_practice_2_3d.html")


def every_page() -> bool:
    return os.environ.get(PAGES_ENV, "").strip().lower() == "all"


def browser_pages(pages: list[str]) -> list[str]:
    """``pages`` for a browser test: all of them with GATHERBOOK_SITE_PAGES=all, else the sample."""
    if every_page():
        return list(pages)
    return [p for p in pages if p in SAMPLE]
