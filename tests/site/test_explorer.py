"""The gather explorer (book/en/explorer.md, book/zh/explorer.md; book/_explorer/*.js|css).

Its model, ``window.gatherExplorer.compute``, is checked against torch in a real browser: random
cases (1D to 3D, every dim, negative and out-of-range dims, the ``<=`` rule, larger indices,
wrong ndim, empty indices, negative and too-large entries, repeated scatter targets) are run
through torch here and through the page's JavaScript there, and must give the same output,
shape, error type and error message. Then the page is used as a reader uses it: keyboard edits
redraw the output, the formula follows the pointer, both languages, a phone's width, ``file://``.

The site is built once per session; the build, the server and the browser's contexts are the
fixtures of tests/site/conftest.py. Without Chromium or Playwright the browser tests are skipped,
and fail when ``CI=true``.
"""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_helpers as sh  # noqa: E402

PAGES = {"en": "en/book/en/explorer.html", "zh": "zh/book/zh/explorer.html"}
CJK = re.compile(r"[\u4e00-\u9fff]")
CHAPTER_1 = {e: f"{e}/notebooks/{e}/01_gather_basics.html" for e in sh.EDITIONS}


# ---------------------------------------------------------------------------------------------
# Cases, from torch
# ---------------------------------------------------------------------------------------------
def torch_case(op: str, xshape: list[int], dim: int, ishape: list[int], entries: list[int]) -> dict:
    """What torch 2.13 does on the CPU: the explorer's inputs and torch's answer."""
    index = torch.tensor(entries, dtype=torch.long).reshape(ishape)
    case = {"op": op, "inputShape": xshape, "dim": dim, "indexShape": ishape, "index": entries}
    try:
        if op == "gather":
            x = (torch.arange(int(torch.tensor(xshape).prod())) * 10).reshape(xshape)
            out = x.gather(dim, index)
        else:
            src = ((torch.arange(index.numel()) + 1) * 10).reshape(ishape)
            out = torch.zeros(xshape, dtype=torch.long).scatter(dim, index, src)
        case["want"] = {"ok": True, "shape": list(out.shape), "values": out.reshape(-1).tolist()}
    except (RuntimeError, IndexError) as exc:
        case["want"] = {"ok": False, "type": type(exc).__name__, "message": str(exc)}
    return case


def random_cases(count: int = 700, seed: int = 15) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        op = rng.choice(["gather", "gather", "scatter"])
        n = rng.randint(1, 3)
        xshape = [rng.randint(1, 5) for _ in range(n)]
        roll = rng.random()
        dim = rng.randrange(-n, n) if roll < 0.95 else rng.choice([-n - 1, n])
        d = dim % n
        kind = rng.random()
        ishape = [rng.randint(1, xshape[k]) if k != d else rng.randint(1, 6) for k in range(n)]
        if kind < 0.12:  # larger than input in a dim other than dim
            others = [k for k in range(n) if k != d]
            if others:
                ishape[rng.choice(others)] += rng.randint(1, 2)
        elif kind < 0.2:  # another number of dims
            ishape = [rng.randint(1, 4) for _ in range(rng.choice([m for m in (1, 2, 3) if m != n]))]
        elif kind < 0.3:  # empty, possibly breaking every other rule
            ishape = [rng.randint(0, 6) for _ in range(rng.randint(1, 3))]
            ishape[rng.randrange(len(ishape))] = 0
        size = xshape[d]
        bad = rng.random() < 0.35
        numel = 1
        for s in ishape:
            numel *= s
        entries = [rng.randrange(-3, size + 3) if bad and rng.random() < 0.3 else rng.randrange(size)
                   for _ in range(numel)]
        cases.append(torch_case(op, xshape, dim, ishape, entries))
    return cases


HAND_CASES = [
    # the messages the book quotes
    ("gather", [3, 4], 1, [1, 1], [4]), ("gather", [3, 4], 1, [1, 1], [-1]),
    ("gather", [3, 4], 1, [2], [1, 2]), ("gather", [3, 4], 1, [4, 1], [0, 0, 0, 0]),
    ("gather", [3, 4], 2, [1, 1], [0]), ("gather", [3, 4], -3, [1, 1], [0]),
    ("gather", [3, 4], 1, [5, 0], []), ("gather", [3, 4], 1, [5, 0, 2], []),
    ("gather", [5], 0, [7], [0, 4, 4, 1, 0, 2, 3]), ("gather", [2, 3, 4], 0, [2, 2, 2], [1, 0, 9, 0, 0, 7, 0, 0]),
    ("scatter", [3, 4], 1, [1, 3], [1, 1, 1]), ("scatter", [3, 4], 1, [4, 1], [0, 0, 0, 0]),
    ("scatter", [3, 4], 1, [2], [0, 1]), ("scatter", [3, 4], 1, [5, 0, 2], []),
    ("scatter", [3, 4], -1, [3, 4], [3, 2, 1, 0, 0, 1, 2, 3, 1, 1, 1, 1]),
]


@pytest.fixture(scope="module")
def cases():
    return [torch_case(*c) for c in HAND_CASES] + random_cases()


def test_the_cases_cover_every_kind_of_answer(cases):
    """The random cases reach every branch the explorer has to get right."""
    def has(pattern):
        return sum(1 for c in cases if not c["want"]["ok"] and re.search(pattern, c["want"]["message"]))
    assert sum(c["want"]["ok"] for c in cases) > 250
    assert sum(c["want"]["ok"] and 0 in c["indexShape"] for c in cases) > 20  # empty
    assert has(r"^index -\d+ is out of bounds") > 20 and has(r"^index \d+ is out of bounds") > 20
    assert has("^Size does not match") > 10 and has("^Expected index") > 5
    assert has("same number of dimensions as input") > 5 and has("same number of dimensions as self") > 3
    assert has("^Dimension out of range") > 10
    # several bad entries at once: which one torch names depends on the order it visits them
    several = [c for c in cases if not c["want"]["ok"] and "out of bounds" in c["want"]["message"]
               and sum(not 0 <= v < c["inputShape"][c["dim"] % len(c["inputShape"])] for v in c["index"]) > 1]
    assert len(several) > 40
    # scatter writing the same cell twice (torch: the last write on the CPU)
    assert sum(c["op"] == "scatter" and c["want"]["ok"] and writes_twice(c) for c in cases) > 10


def writes_twice(case) -> bool:
    """Whether two entries of a scatter's index name the same cell of out."""
    n, d = len(case["inputShape"]), case["dim"] % len(case["inputShape"])
    targets = []
    for k, value in enumerate(case["index"]):
        pos = []
        for size in reversed(case["indexShape"]):
            pos.insert(0, k % size)
            k //= size
        pos[d] = value
        targets.append(tuple(pos))
    return n == len(case["indexShape"]) and len(set(targets)) < len(targets)


# ---------------------------------------------------------------------------------------------
# The site in a browser (the fixtures: conftest.py)
# ---------------------------------------------------------------------------------------------
from survey import VIEWPORTS, Watch  # noqa: E402  (the fixtures: conftest.py)


def test_the_explorer_script_is_on_the_explorer_pages_only(site):
    site = site["path"]
    for edition, page in PAGES.items():
        html = (site / page).read_text(encoding="utf8")
        assert "gather-explorer.js" in html and "gather-explorer.css" in html, page
        assert 'class="gather-explorer"' in html and f'data-lang="{edition}"' in html, page
        assert any((site / folder / "_static" / "gather-explorer.js").is_file()
                   for folder in (edition, "_shared"))  # (kept once when the editions' are the same)
        intro = (site / edition / "book" / edition / "intro.html").read_text(encoding="utf8")
        assert "gather-explorer" not in intro, f"the intro page of {edition} loads the explorer"


class Visit:
    """One page in its own tab (of the process's context for ``options``: conftest.py's
    ``contexts``), with everything that goes wrong on it (survey.Watch)."""

    def __init__(self, contexts, url, site_prefix, **options):
        self.page = contexts(**options).new_page()
        self.watch = Watch(self.page, site_prefix)
        self.page.goto(url, wait_until="load")
        self.page.wait_for_selector(".gather-explorer [data-index-cell]")

    def close(self):
        self.page.close()

    def problems(self):
        return self.watch.problems() + [f"request outside the site: {u}" for u in self.watch.outside]


@pytest.fixture
def visit(contexts, base_url):
    opened = []

    def open_(edition="en", path=None, **options):
        v = Visit(contexts, base_url + (path or PAGES[edition]), base_url, **options)
        opened.append(v)
        return v

    yield open_
    for v in opened:
        v.close()


# ---------------------------------------------------------------------------------------------
# The model against torch
# ---------------------------------------------------------------------------------------------
COMPUTE_ALL = """cases => cases.map(c => {
  const r = window.gatherExplorer.compute(c);
  return r.ok ? {ok: true, shape: r.shape, values: r.values} : {ok: false, type: r.type, message: r.message};
})"""


def test_compute_matches_torch(visit, cases):
    v = visit("en")
    got = v.page.evaluate(COMPUTE_ALL, [{k: c[k] for k in ("op", "inputShape", "dim", "indexShape", "index")}
                                        for c in cases])
    wrong = [f"{c['op']} input {c['inputShape']} dim={c['dim']} index {c['indexShape']} {c['index']}:\n"
             f"    torch    {c['want']}\n    explorer {g}" for c, g in zip(cases, got) if g != c["want"]]
    assert not wrong, f"{len(wrong)} of {len(cases)} cases differ from torch:\n" + "\n".join(wrong[:10])
    assert not v.problems(), v.problems()


# ---------------------------------------------------------------------------------------------
# Using the page
# ---------------------------------------------------------------------------------------------
def texts(page, selector):
    return page.eval_on_selector_all(selector, "els => els.map(e => e.textContent)")


def out_values(page):
    return page.eval_on_selector_all(
        ".gather-explorer .gx-panel:last-child g.gx-cell .gx-value", "els => els.map(e => e.textContent)")


def test_editing_an_index_entry_redraws_the_output(visit):
    v = visit("en")
    page = v.page
    # the default: input (3, 4), dim=1, index (3, 2)
    assert texts(page, ".gx-title")[0] == "input  (3, 4)"
    before = out_values(page)
    entries = page.eval_on_selector_all("[data-index-cell]", "els => els.map(e => +e.getAttribute('aria-valuenow'))")
    want = torch_case("gather", [3, 4], 1, [3, 2], entries)["want"]
    assert [int(x) for x in before] == want["values"]

    # Tab reaches the first index cell; the up arrow adds one to it
    page.focus(".gx-controls select")
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.indexCell") == "0":
            break
    assert page.evaluate("document.activeElement.dataset.indexCell") == "0", "Tab does not reach index[0][0]"
    first = entries[0]
    page.keyboard.press("ArrowUp" if first < 3 else "ArrowDown")
    changed = first + (1 if first < 3 else -1)
    assert page.evaluate("document.activeElement.getAttribute('aria-valuenow')") == str(changed)
    assert page.evaluate("document.activeElement.dataset.indexCell") == "0", "focus lost after an edit"
    entries[0] = changed
    assert [int(x) for x in out_values(page)] == torch_case("gather", [3, 4], 1, [3, 2], entries)["want"]["values"]
    assert "out[0][0] = input[0][index[0][0]] = input[0][%d] = %d" % (changed, 10 * changed) in \
        page.inner_text(".gx-formula")

    # typing 9: out of range, and torch's message replaces the output
    page.keyboard.press("9")
    entries[0] = 9
    error = page.inner_text(".gx-result")
    assert "RuntimeError: index 9 is out of bounds for dimension 1 with size 4" in error
    assert torch_case("gather", [3, 4], 1, [3, 2], entries)["want"]["message"] in error
    assert len(texts(page, ".gx-title")) == 2, "an out panel is drawn next to an error"
    # the right arrow moves to index[0][1]; typing - then 1 gives -1, also an error
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.indexCell") == "1"
    page.keyboard.press("Minus")
    page.keyboard.press("1")
    assert page.evaluate("document.activeElement.getAttribute('aria-valuenow')") == "-1"
    # the first bad entry in torch's order is still index[0][0]
    assert "index 9 is out of bounds" in page.inner_text(".gx-result")

    # the editor's field and buttons (a phone has no keyboard arrows)
    page.locator("[data-index-cell='0']").click()
    page.fill(".gx-edit", "2")
    page.click(".gx-step >> nth=1")  # +
    entries[0], entries[1] = 3, -1
    assert "index -1 is out of bounds for dimension 1 with size 4" in page.inner_text(".gx-result")
    assert page.get_attribute("[data-index-cell='0']", "aria-valuenow") == "3"
    assert not v.problems(), v.problems()


def test_a_float_index_is_refused_as_torch_refuses_it(visit):
    """2.5 typed into the editor's field is not made a 2 (it silently was, issue 38): the result
    is torch's error for a float index, a note says why, and a whole number clears it."""
    v = visit("en")
    page = v.page
    page.locator("[data-index-cell='0']").click()
    before = page.get_attribute("[data-index-cell='0']", "aria-valuenow")
    page.fill(".gx-edit", "2.5")
    assert "RuntimeError: gather(): Expected dtype int32/int64 for index" in page.inner_text(".gx-result")
    assert "2.5 is not a whole number" in page.inner_text(".gx-note")
    assert page.get_attribute("[data-index-cell='0']", "aria-valuenow") == before, "2.5 changed the entry"
    assert page.get_attribute(".gx-edit", "aria-invalid") is not None
    page.fill(".gx-edit", "2")
    assert page.get_attribute("[data-index-cell='0']", "aria-valuenow") == "2"
    assert "Expected dtype" not in page.inner_text(".gx-result") and page.is_hidden(".gx-note")
    assert not v.problems(), v.problems()


def test_shape_controls_and_scatter(visit):
    v = visit("en")
    page = v.page
    page.select_option(".gx-controls select >> nth=1", "3")  # input dims: 3 -> (2, 3, 4), dim=2
    titles = texts(page, ".gx-title")
    assert titles[0] == "input  (2, 3, 4)" and titles[2].startswith("out = input.gather(2, index)")
    page.select_option(".gx-controls select >> nth=2", "0")  # dim=0
    assert texts(page, ".gx-title")[2].startswith("out = input.gather(0, index)")
    # the index one larger than input in dim 1: torch's size message
    sizes = page.locator(".gx-sizes >> nth=1").locator("input")
    sizes.nth(1).fill("4")
    sizes.nth(1).dispatch_event("change")
    ishape = [int(x) for x in page.eval_on_selector_all(".gx-sizes >> nth=1 >> input", "e => e.map(i => i.value)")]
    entries = page.eval_on_selector_all("[data-index-cell]", "els => els.map(e => +e.getAttribute('aria-valuenow'))")
    want = torch_case("gather", [2, 3, 4], 0, ishape, entries)["want"]
    assert not want["ok"] and want["message"] in page.inner_text(".gx-result"), (want, page.inner_text(".gx-result"))
    # scatter
    page.select_option(".gx-controls select >> nth=0", "scatter")
    assert page.inner_text(".gx-field-label >> nth=1") == "out shape · dims"  # zeros of that shape
    want = torch_case("scatter", [2, 3, 4], 0, ishape, entries)["want"]
    assert want["message"] in page.inner_text(".gx-result")
    sizes.nth(1).fill("2")
    sizes.nth(1).dispatch_event("change")
    ishape[1] = 2
    entries = page.eval_on_selector_all("[data-index-cell]", "els => els.map(e => +e.getAttribute('aria-valuenow'))")
    want = torch_case("scatter", [2, 3, 4], 0, ishape, entries)["want"]
    assert want["ok"]
    assert [int(x) for x in out_values(page)] == want["values"]
    assert texts(page, ".gx-title")[2] == "out = zeros.scatter(0, index, src)  (2, 3, 4)"
    # an empty index: an empty out, no error
    page.select_option(".gx-controls select >> nth=0", "gather")
    sizes.nth(0).fill("0")
    sizes.nth(0).dispatch_event("change")
    assert "out.shape = torch.Size([0, 2, 4])" in page.inner_text(".gx-result")
    assert not v.problems(), v.problems()


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_both_languages_pointer_formula_and_no_request_outside(visit, edition):
    v = visit(edition)
    page = v.page
    assert page.evaluate("document.documentElement.lang") == sh.HTML_LANG[edition]
    help_text = page.inner_text(".gx-help")
    assert bool(CJK.search(help_text)) == (edition == "zh"), help_text
    assert bool(CJK.search(page.inner_text(".gx-formula"))) == (edition == "zh")
    # the formula follows the pointer
    page.hover("[data-index-cell='3']")
    v_ = int(page.get_attribute("[data-index-cell='3']", "aria-valuenow"))
    assert page.inner_text(".gx-formula").strip() == f"out[1][1] = input[1][index[1][1]] = input[1][{v_}] = {10 * (4 + v_)}"
    hot = page.eval_on_selector_all("g.gx-hot", "els => els.map(e => e.closest('.gx-panel').firstChild.textContent.split(' ')[0] + e.dataset.pos)")
    assert sorted(hot) == sorted(["input1," + str(v_), "index1,1", "out1,1"]), hot
    labels = page.eval_on_selector_all("[data-index-cell]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels[:2] == ["index[0][0]", "index[0][1]"]
    assert not v.problems(), v.problems()


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_no_sideways_scroll_on_a_phone(visit, edition):
    v = visit(edition, **VIEWPORTS["phone"])
    page = v.page
    widths = []
    for setup in ("default", "3d-large"):
        if setup == "3d-large":
            page.select_option(".gx-controls select >> nth=1", "3")
            for group in (0, 1):
                for box in range(3):
                    field = page.locator(f".gx-sizes >> nth={group}").locator("input").nth(box)
                    field.fill("6")
                    field.dispatch_event("change")
            page.select_option(".gx-controls select >> nth=0", "scatter")
        widths.append(page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]"))
        wide = page.evaluate("""() => [...document.querySelectorAll('.gather-explorer *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .map(e => e.tagName + '.' + (e.getAttribute('class') || '')).slice(0, 5)""")
        assert not wide, f"{setup}: wider than the screen: {wide}"
    for scroll, inner in widths:
        assert scroll <= inner, f"the page scrolls sideways: {widths}"
    # value text in a cell is still readable: 14 px
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.gx-value')).fontSize)")
    assert size >= 12
    assert not v.problems(), v.problems()


def test_works_from_file_urls(contexts, site):
    site = site["path"]
    url = (site / PAGES["en"]).resolve().as_uri()
    v = Visit(contexts, url, site.resolve().as_uri())
    try:
        assert v.page.evaluate("typeof window.gatherExplorer.compute") == "function"
        assert v.page.locator("[data-index-cell]").count() == 6
        assert not v.problems(), v.problems()
    finally:
        v.close()


@pytest.mark.parametrize("edition", sh.EDITIONS)
def test_chapter_1_embeds_the_small_explorer_and_links_the_page(site, visit, edition):
    html = (site["path"] / CHAPTER_1[edition]).read_text(encoding="utf8")
    if "data-gather-explorer" not in html:
        pytest.skip(f"{CHAPTER_1[edition]} does not embed the explorer (yet): "
                    "the {gather-explorer} snippet goes into chapter 1's notebooks")
    v = visit(edition, path=CHAPTER_1[edition], **VIEWPORTS["phone"])
    page = v.page
    root = page.locator(".gather-explorer").first
    assert root.get_attribute("data-compact") == "1"
    assert root.locator("select").count() == 1, "the small explorer offers dim only"
    entries = page.eval_on_selector_all(".gather-explorer [data-index-cell]",
                                        "els => els.map(e => +e.getAttribute('aria-valuenow'))")
    want = torch_case("gather", [3, 4], 1, [3, 2], entries)["want"]
    assert [int(x) for x in out_values(page)] == want["values"]
    page.locator(".gather-explorer [data-index-cell='0']").focus()
    page.keyboard.press("ArrowDown" if entries[0] else "ArrowUp")
    entries[0] += -1 if entries[0] else 1
    assert [int(x) for x in out_values(page)] == torch_case("gather", [3, 4], 1, [3, 2], entries)["want"]["values"]
    wide = page.evaluate("""() => [...document.querySelectorAll('.gather-explorer *')]
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length""")
    assert not wide, "the small explorer is wider than a phone"
    explorer = PAGES[edition].split("/", 1)[1]
    links = page.eval_on_selector_all("article a[href]", "els => els.map(a => a.href)")
    assert any(link.split("#")[0].endswith(explorer) for link in links), "chapter 1 does not link the explorer page"
    assert not v.problems(), v.problems()


# ---------------------------------------------------------------------------------------------
# The directive's options (no browser)
# ---------------------------------------------------------------------------------------------
def test_directive_options_are_checked():
    from gatherbook_sphinx import explorer as gather_explorer

    shape = gather_explorer._ints("shape")
    assert shape(" 3, 4 ") == "3,4" and shape("-1") == "-1" and shape("") == ""
    for bad in ("3x4", "3,,4", "a", "3.5"):
        with pytest.raises(ValueError, match=r":shape: must be integers separated by commas"):
            shape(bad)
    assert gather_explorer._op("scatter") == "scatter"
    with pytest.raises(ValueError):
        gather_explorer._op("take")
