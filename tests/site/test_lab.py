"""Chapter 1 in JupyterLab, in English and in Chinese, as `make lab` opens it: the book's notes,
warnings and math render (jupyterlab-myst), no MyST markup shows as raw text, no directive only
the site knows shows as an error, solution cells start collapsed, and after Run All the solutions'
explanations are still folded. JupyterLab's checkpoints go
to a temporary folder, never into the source tree.

Starts `make lab`'s command (read from the Makefile) headless, without a token, on a free port of
127.0.0.1, and opens the chapter in the shared headless Chromium of the browser tests. Skipped
with the reason when there is no Chromium (a failure with CI=true, as in test_site.py).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402

ROOT = sh.ROOT
# (make test-all and CI run this file; make test leaves it out: conftest.py's CI_ONLY)
CHAPTERS = ["en/01_gather_basics.ipynb", "zh/01_gather_basics.ipynb"]
# what jupyterlab-myst writes where it meets a directive or role it does not know
UNKNOWN = re.compile(r"Unknown (Directive|Role|directive|role)")
START_SECONDS = 60  # the server answers in ~7 s on a quiet 2-core machine
RUN_ALL_SECONDS = 240  # chapter 1 run in JupyterLab's kernel, on a busy machine
# MyST markup that must not reach the reader as text
RAW_MYST = re.compile(r":::\{|````\{|```\{|\{download\}|^:label:|^:class: dropdown", re.M)


def lab_command() -> list[str]:
    """The command of the Makefile's ``lab`` target, with ``$(VENV)`` the project's .venv."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf8")
    recipe = re.search(r"^lab:.*\n\t(.+)$", makefile, flags=re.M)
    assert recipe, "the Makefile has no `lab` target"
    venv = re.search(r"^VENV\s*\?=\s*(\S+)", makefile, flags=re.M).group(1)
    return shlex.split(recipe.group(1).replace("$(VENV)", str(ROOT / venv)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = sh.browser_unavailable_reason()
    if reason:
        if sh.on_ci():
            pytest.fail(f"CI=true, but the JupyterLab browser test cannot run: {reason}.", pytrace=False)
        pytest.skip(f"JupyterLab browser test skipped: {reason} (with CI=true this is a failure)")
    tmp = tmp_path_factory.mktemp("lab")
    # every cell rendered at once (JupyterLab otherwise renders only the cells near the screen)
    settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # no autosave: Run All changes the notebook, and JupyterLab would write it into the source tree
    docmanager = tmp / "settings" / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    port = free_port()
    cmd = lab_command() + ["--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                           "--IdentityProvider.token=", "--ServerApp.password=",
                           f"--LabApp.user_settings_dir={tmp / 'settings'}",
                           f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
                           # checkpoints (.ipynb_checkpoints/) in the temporary folder, not beside the notebooks
                           f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers and CI run as root; JupyterLab refuses otherwise
    log = open(tmp / "lab.log", "w")
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp / "runtime")})
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"`{' '.join(cmd)}` exited ({server.returncode}):\n"
                            + (tmp / "lab.log").read_text()[-3000:], pytrace=False)
            try:
                urllib.request.urlopen(url + "api/status", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {START_SECONDS} s:\n"
                                + (tmp / "lab.log").read_text()[-3000:], pytrace=False)
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module", params=CHAPTERS)
def chapter_in_lab(lab, browser, request):
    """What the opened chapter shows: per cell, its kind, rendered text and collapsed state."""
    CHAPTER = request.param

    stored = (ROOT / "notebooks" / CHAPTER).read_bytes()
    notebook = json.loads(stored)
    # the session's one browser (tests/site/conftest.py): a second Playwright in this process fails
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        outside = []
        page.on("request", lambda r: r.url.startswith(("http://", "https://")) and not r.url.startswith(lab)
                and outside.append(r.url))
        # a workspace of its own: the other chapter, opened before, does not come back
        workspace = CHAPTER.split("/")[0]
        page.goto(f"{lab}lab/workspaces/{workspace}/tree/{CHAPTER}", wait_until="load")
        page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n",
                               arg=len(notebook["cells"]), timeout=120_000)  # a busy machine
        # every markdown cell rendered (jupyterlab-myst renders asynchronously), except the
        # collapsed ones (a solution's opening cell shows only its placeholder)
        page.wait_for_function("""() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell')]
            .every(c => c.querySelector('.myst, .jp-MarkdownOutput, .jp-InputPlaceholder'))""",
            timeout=120_000)  # a busy machine
        page.wait_for_timeout(500)
        cells = page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(c => {
            const visible = e => !!e && e.offsetParent !== null && !e.classList.contains('lm-mod-hidden');
            return {markdown: c.classList.contains('jp-MarkdownCell'),
                    text: c.classList.contains('jp-MarkdownCell')
                          ? (c.querySelector('.myst, .jp-MarkdownOutput') || c).innerText : '',
                    admonitions: [...c.querySelectorAll('aside[class*="admonition"], .admonition')]
                          .map(a => a.className),
                    math: c.querySelectorAll('.katex, mjx-container').length,
                    placeholder: visible(c.querySelector('.jp-InputPlaceholder')),
                    output: [...c.querySelectorAll('.jp-OutputArea-output')].some(visible),
                    shown: c.checkVisibility ? c.checkVisibility() : c.offsetParent !== null,
                    editor: visible(c.querySelector('.jp-InputArea-editor'))};
        })""")
        SCREENSHOT = ROOT / "_build" / "screenshots"
        SCREENSHOT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT / f"lab-chapter1-{CHAPTER.split('/')[0]}.png"))
        # Run All, as a reader does (the menu's "Run All Cells"), until every code cell has run
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(r"""() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
                .every(p => p.textContent === '' || /\[\d+\]/.test(p.textContent))""",  # (a hidden cell's is empty)
                timeout=RUN_ALL_SECONDS * 1000)
        except Exception:
            page.screenshot(path=str(SCREENSHOT / f"lab-chapter1-run-all-{CHAPTER.split('/')[0]}-stuck.png"))
            prompts = page.eval_on_selector_all(".jp-Notebook .jp-CodeCell .jp-InputPrompt", "ps => ps.map(p => p.textContent)")
            pytest.fail(f"Run All did not finish in {RUN_ALL_SECONDS} s: prompts {prompts}", pytrace=False)
        page.wait_for_timeout(1000)
        after = page.evaluate(AFTER_RUN_JS)
        page.screenshot(path=str(SCREENSHOT / f"lab-chapter1-run-all-{CHAPTER.split('/')[0]}.png"))
    finally:
        context.close()
    return {"notebook": notebook, "cells": cells, "outside": outside, "chapter": CHAPTER, "after": after,
            "saved": (ROOT / "notebooks" / CHAPTER).read_bytes() != stored}


# After Run All, per cell: the words it shows (drawn, outside a closed fold), whether its source
# editor or placeholder shows, and its <details> folds (open or not)
AFTER_RUN_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(c => {
  const shown = (e) => e.checkVisibility ? e.checkVisibility() : e.offsetParent !== null;
  const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
  const words = [];
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    if (n.data.trim() && shown(n.parentElement) && !n.parentElement.closest('details:not([open]) > :not(summary)')
        && !n.parentElement.closest('.jp-InputPrompt, .jp-OutputPrompt')) words.push(n.data.trim());
  const editor = c.querySelector('.jp-InputArea-editor');
  return {text: words.join(' '), editor: !!editor && shown(editor),
          output: [...c.querySelectorAll('.jp-OutputArea-output')].some(shown),
          folds: [...c.querySelectorAll('details')].map(d => d.open)};
})"""


def test_jupyterlab_calls_every_extension_compatible():
    """``jupyter labextension list`` marks no extension "not compatible" (jupyterlab-myst 2.7.0
    was, with JupyterLab 4.6.6: issue 38; requirements.txt pins the JupyterLab it was built for)."""
    listed = subprocess.run([str(ROOT / ".venv" / "bin" / "jupyter"), "labextension", "list"],
                            capture_output=True, text=True, timeout=120)
    said = listed.stdout + listed.stderr
    assert listed.returncode == 0 and "jupyterlab-myst" in said, said[-2000:]
    assert "not compatible" not in said, said[-2000:]


def test_lab_renders_the_books_markup(chapter_in_lab):
    cells = chapter_in_lab["cells"]
    assert len(cells) == len(chapter_in_lab["notebook"]["cells"])
    # a collapsed cell (a solution) shows JupyterLab's placeholder with its first source line, by design
    raw = [f"cell {i}: {c['text'][:120]!r}" for i, c in enumerate(cells)
           if c["markdown"] and not c["placeholder"] and RAW_MYST.search(c["text"])]
    assert not raw, "MyST markup shown as text in JupyterLab (is jupyterlab-myst installed?):\n" + "\n".join(raw[:10])
    warnings = [i for i, c in enumerate(cells) if any("warning" in a for a in c["admonitions"])]
    sources = [i for i, c in enumerate(chapter_in_lab["notebook"]["cells"])
               if c["cell_type"] == "markdown" and re.search(r"\{warning\}|^:class: warning$", "".join(c["source"]), re.M)]
    assert sources, f"{chapter_in_lab['chapter']} has no warning admonition: this test checks nothing"
    assert warnings == sources, f"warnings rendered in cells {warnings}, written in cells {sources}"
    # titled in the notebook's language (the Chinese ones are {admonition} 警告 with :class: warning:
    # jupyterlab-myst titles a {warning} "Warning" whatever the language, issue 38)
    if chapter_in_lab["chapter"].startswith("zh/"):
        english = [i for i in warnings if re.search(r"\bWarning\b", cells[i]["text"])]
        assert not english, f"warnings titled in English in the Chinese notebook: cells {english}"


def test_lab_renders_math(chapter_in_lab):
    nb = chapter_in_lab["notebook"]["cells"]
    with_math = [i for i, c in enumerate(nb) if c["cell_type"] == "markdown"
                 and re.search(r"\$[^$\s][^$]*\$", "".join(c["source"]))]
    assert with_math, f"{chapter_in_lab['chapter']} has no math: this test checks nothing"
    missing = [i for i in with_math if not chapter_in_lab["cells"][i]["math"]]
    assert not missing, f"math not typeset in cells {missing}"
    raw = [i for i in with_math if re.search(r"\$[^$\s][^$]{0,40}\$", chapter_in_lab["cells"][i]["text"])]
    assert not raw, f"TeX shown as text in cells {raw}"


def test_lab_loads_nothing_from_outside(chapter_in_lab):
    assert not chapter_in_lab["outside"], chapter_in_lab["outside"]


def test_lab_solution_cells_start_collapsed(chapter_in_lab):
    """Cells stored with ``"jupyter": {"source_hidden": true}`` (the solutions) show JupyterLab's
    placeholder instead of their code until the reader opens them."""
    nb = chapter_in_lab["notebook"]["cells"]
    hidden = [i for i, c in enumerate(nb) if c.get("metadata", {}).get("jupyter", {}).get("source_hidden")]
    if not hidden:
        pytest.skip(f"no cell of {chapter_in_lab['chapter']} carries jupyter.source_hidden yet")
    shown = [i for i in hidden if chapter_in_lab["cells"][i]["editor"] or not chapter_in_lab["cells"][i]["placeholder"]]
    assert not shown, f"cells {shown} carry source_hidden but JupyterLab shows their code"
    others = [i for i, c in enumerate(nb) if c["cell_type"] == "code" and i not in hidden
              and chapter_in_lab["cells"][i]["placeholder"]]
    assert not others, f"cells {others} are collapsed without source_hidden"


def test_lab_shows_no_unknown_directive(chapter_in_lab):
    """A widget only the site has ({gather-explorer}) shows its JupyterLab fallback, not an error."""
    unknown = [f"cell {i}: {c['text'][:120]!r}" for i, c in enumerate(chapter_in_lab["cells"])
               if c["markdown"] and UNKNOWN.search(c["text"])]
    assert not unknown, "\n".join(unknown)


def test_lab_leaves_the_notebook_as_it_was(chapter_in_lab):
    """Run All changed the open notebook; JupyterLab must not have saved it (autosave is off)."""
    assert not chapter_in_lab["saved"], f"JupyterLab wrote notebooks/{chapter_in_lab['chapter']}"


def test_lab_leaves_no_checkpoints_in_the_source_tree(chapter_in_lab):
    left = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").rglob(".ipynb_checkpoints"))
    assert not left, left


def test_lab_solutions_stay_folded_after_run_all(chapter_in_lab):
    """After Run All, each solution's explanation is still folded (JupyterLab shows a hidden
    markdown cell again when it runs it: every explanation lay open under its check, issue 38):
    its cell shows its label and the fold's line, not the explanation's words; its code stays
    hidden."""
    nb = chapter_in_lab["notebook"]["cells"]
    after = chapter_in_lab["after"]
    starts = [i for i, c in enumerate(nb) if c["cell_type"] == "markdown"
              and "{solution-start}" in ((c.get("metadata", {}).get("gatherbook") or {}).get("lab") or {}).get("header", "")]
    assert starts, f"{chapter_in_lab['chapter']} has no solutions: this test checks nothing"
    problems = []
    for i in starts:
        source = "".join(nb[i]["source"])
        body = re.sub(r"<[^>]+>", " ", source.split("</summary>", 1)[-1])
        label = source.split("\n", 1)[0]  # (its words show: they name the solution)
        words = [w for w in re.findall(r"[A-Za-z]{6,}|[\u4e00-\u9fff]{4,}", body) if w not in label][:3]
        if after[i]["folds"] != [False]:
            problems.append(f"cell {i}: its folds after Run All: {after[i]['folds']}")
        shown = [w for w in words if w in after[i]["text"]]
        if shown:
            problems.append(f"cell {i}: the explanation shows after Run All ({shown})")
    code = [i for i, c in enumerate(nb) if c["cell_type"] == "code"
            and c.get("metadata", {}).get("jupyter", {}).get("source_hidden") and after[i]["editor"]]
    if code:
        problems.append(f"solution code shown after Run All in cells {code}")
    assert not problems, "\n".join(problems)


def test_lab_predict_answers_stay_folded_with_their_output_after_run_all(chapter_in_lab):
    """The cell under a Predict question prints its answer, and JupyterLab shows a cell's output
    again each time it runs, whatever its metadata: Run All laid every answer open (issue 38).
    That cell prints through ``gb.folded()``, so its output is itself a closed fold: after Run
    All, the Predict's answer and that output are both still folded, the output's line starts
    with a marker (JupyterLab draws none), and none of the words the output holds shows."""
    nb = chapter_in_lab["notebook"]["cells"]
    after = chapter_in_lab["after"]
    predicts = [i for i, c in enumerate(nb[:-1]) if c["cell_type"] == "markdown"
                and 'class="predict"' in "".join(c["source"])]
    assert predicts, f"{chapter_in_lab['chapter']} has no Predict question: this test checks nothing"
    problems = []
    for i in predicts:
        if after[i]["folds"] != [False]:
            problems.append(f"cell {i}: the Predict answer's folds after Run All: {after[i]['folds']}")
        out = nb[i + 1]
        printed = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in out["outputs"])
        if not printed or after[i + 1]["folds"] != [False]:
            problems.append(f"cell {i + 1}: its output is not one closed fold (stored: {printed[:40]!r}, "
                            f"folds after Run All: {after[i + 1]['folds']})")
        elif "▸" not in after[i + 1]["text"]:  # JupyterLab draws no marker on an output's <summary>
            problems.append(f"cell {i + 1}: its fold's line shows no marker: it does not look clickable")
        # the output's longer tokens (a tensor's numbers, a message's words) must not show
        tokens = {t for t in re.findall(r"[A-Za-z_]{5,}|\d{2,}", printed)} - set(re.findall(r"[A-Za-z_]{5,}|\d{2,}", "".join(out["source"])))
        seen = [t for t in sorted(tokens) if re.search(rf"(?<![\w]){re.escape(t)}(?![\w])", after[i + 1]["text"])]
        if seen:
            problems.append(f"cell {i + 1}: its output shows after Run All ({seen[:5]})")
    assert not problems, "\n".join(problems)


def test_lab_shows_fold_markers_and_opens_deep_dives_folded(chapter_in_lab):
    """A Predict answer's line starts with a marker (jupyterlab-myst draws none: it did not look
    clickable), and each deep-dive opens folded, its heading collapsed as the site folds it
    (it opened unfolded, issue 38)."""
    nb = chapter_in_lab["notebook"]["cells"]
    cells = chapter_in_lab["cells"]
    predicts = [i for i, c in enumerate(nb) if c["cell_type"] == "markdown" and 'class="predict"' in "".join(c["source"])]
    unmarked = [i for i in predicts if "▸" not in cells[i]["text"]]
    assert predicts and not unmarked, f"Predict answers without a marker in cells {unmarked}"
    dives = [i for i, c in enumerate(nb) if c.get("metadata", {}).get("jp-MarkdownHeadingCollapsed")]
    assert dives, f"{chapter_in_lab['chapter']} has no deep-dive heading collapsed"
    open_ = [i for i in dives if cells[i + 1]["shown"]]
    assert not open_, f"deep-dives open as the notebook opens, under the headings of cells {open_}"
