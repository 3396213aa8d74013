/* The gather book: small behaviours of every page (added to every page by book/ext/gatherbook_sphinx).
 *
 * - The language switch keeps the reader's place: a click adds the id of the section in view.
 *   Sections carry position ids that are the same in both editions ("gb-s3" is the third
 *   section of the page in English and in Chinese; book/ext/gatherbook_sphinx/editions.py).
 * - The words of the search that led to the page are highlighted.
 * - Folded deep-dive sections (details.deep-dive-fold) open when the address's #id or a
 *   highlighted search word lies inside one, or the language switch came from inside an open one
 *   (?fold=1), and every fold (deep-dives, predict answers) is
 *   open while the page prints (book/ext/gatherbook_sphinx/deepdives.py).
 * - A button's tooltip goes away after a click (Bootstrap shows it on hover and focus; after a
 *   tap on a touch screen the colour-mode tooltip stayed on screen).
 * - The page contents on the right ("On this page") highlight the section the reader is in: the
 *   last heading that has reached the top of the window. The theme's own highlighting (an
 *   IntersectionObserver in pydata-sphinx-theme.js) reacts only when a heading enters the top 30%
 *   of the window and then picks the lowest heading there: with folded deep-dives (a heading and
 *   one line each) two or three headings share that band and the one below the reader's section
 *   won; scrolling up, or arriving in the middle of a section (a link to an exercise, the language
 *   switch), left the old entry highlighted. Its observer is cut off from the page contents (they
 *   are replaced by a copy) and the highlight follows the scroll position instead.
 */
"use strict";
(() => {
  const SECTION_IDS = /^gb-[se]\d+$/;  // sections, and exercises (gb-e3: the page's third)
  const FOLDS = "details.deep-dive-fold";
  const OPEN_PARAM = "fold";  // ?fold=1: the deep-dive at the address's #id was open (the switch)
  const HEADER_OFFSET = 80;  // px hidden under the theme's sticky header

  // The position id of the section the reader is in: the last section whose start is above
  // the top of the window (below the sticky header).
  function sectionInView() {
    let current = null;
    document.querySelectorAll("article.bd-article span[id^='gb-'], article.bd-article section[id^='gb-s']")
      .forEach((marker) => {
        if (!SECTION_IDS.test(marker.id)) return;
        if (marker.closest("details:not([open])")) return;  // folded: not on screen
        // an exercise's id is an empty span just before it: its own place
        const section = marker.tagName === "SECTION" || marker.id.startsWith("gb-e") ? marker
          : marker.closest("section") || marker;
        if (section.getBoundingClientRect().top <= HEADER_OFFSET + 1) current = marker.id;
      });
    return current;
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a.gatherbook-language-switch");
    if (link) {
      const id = sectionInView();
      const url = new URL(link.href, location.href);
      url.hash = id ? "#" + id : "";
      // a deep-dive read with its fold open stays open in the other language (the position id
      // of a deep-dive is its heading's, outside the fold): the address says so
      const dive = id && document.getElementById(id) && document.getElementById(id).closest("section.deep-dive");
      const fold = dive && dive.querySelector(":scope > " + FOLDS);
      if (fold && fold.open) url.searchParams.set(OPEN_PARAM, "1");
      else url.searchParams.delete(OPEN_PARAM);
      link.href = url.toString();
    }
    const button = event.target.closest && event.target.closest("[data-bs-toggle='tooltip']");
    if (button) {
      // Bootstrap shows the tooltip on hover and on focus; a tap on a touch screen is a hover
      // that never ends, and the tooltip appears just after the click: hide it then, too.
      if (typeof button.blur === "function") button.blur();
      const hide = () => {
        const tip = window.bootstrap && bootstrap.Tooltip && bootstrap.Tooltip.getInstance(button);
        if (tip) tip.hide();
      };
      hide();
      // (Bootstrap ignores hide() while the tooltip is still fading in)
      button.addEventListener("shown.bs.tooltip", hide, {once: true});
      setTimeout(() => button.removeEventListener("shown.bs.tooltip", hide), 2000);
    }
  }, true);

  // Highlight the words of the search that led here. sphinx_highlight.js does it only on pages
  // without searchtools.js, and the theme puts searchtools.js on every page (for its search
  // box), so it never did.
  document.addEventListener("DOMContentLoaded", () => {
    if (document.getElementById("search-results")) return;  // the search page itself
    if (typeof SphinxHighlight !== "undefined" && localStorage.getItem("sphinx_highlight_terms")) {
      SphinxHighlight.highlightSearchWords();
    }
    // a highlighted word inside a folded deep-dive opens it (sphinx_highlight.js highlights
    // after a timeout of its own)
    [0, 50, 300, 1000].forEach((ms) => setTimeout(
      () => openFoldsAround(document.querySelectorAll("span.highlighted")), ms));
  });



  // Open every deep-dive fold that holds one of `elements` (and the one a section's heading
  // starts, when the element is that section).
  function openFoldsAround(elements) {
    elements.forEach((el) => {
      const inner = el.matches && el.matches("section.deep-dive") ? el.querySelector(FOLDS) : null;
      for (let d = inner || el.closest(FOLDS); d; d = d.parentElement && d.parentElement.closest(FOLDS)) {
        d.open = true;
      }
    });
  }

  function openFoldAtHash() {
    if (!location.hash) return;
    let target = null;
    try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { return; }
    if (!target) return;
    const dive = new URLSearchParams(location.search).has(OPEN_PARAM) && target.closest("section.deep-dive");
    const folded = target.closest(FOLDS + ":not([open])") || target.matches("section.deep-dive") || dive;
    openFoldsAround([dive || target]);
    if (folded) target.scrollIntoView();  // the fold was closed when the browser scrolled to it
  }
  document.addEventListener("DOMContentLoaded", openFoldAtHash);
  window.addEventListener("hashchange", openFoldAtHash);

  // ---- the page contents ("On this page") follow the reader ----------------------------------
  const TOC_NAV = "#pst-page-toc-nav";
  const READING_SLACK = 24;  // px: a heading this far below where a click puts it has been reached

  // The heading a page-contents link points at (the theme's rule: the first heading of the
  // target section, or the target itself).
  function headingOf(link) {
    const href = link.getAttribute("href") || "";
    if (!href.startsWith("#") || href.length < 2) return null;
    let target = null;
    try { target = document.getElementById(decodeURIComponent(href.slice(1))); } catch (e) { return null; }
    if (!target) return null;
    return target.querySelector("h1, h2, h3, h4, h5, h6") || target;
  }

  // Where a heading sits after a click in the page contents: the page's scroll-padding-top
  // (the theme's sticky article header and 1rem), a little lower for a heading scrolled by hand.
  function readingLine() {
    const padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop);
    return (Number.isFinite(padding) ? padding : 64) + READING_SLACK;
  }

  // Whether an element is drawn: not inside a closed fold. (Chromium, 156 at least, lays out a
  // closed <details>'s content with content-visibility: hidden: its headings still have client
  // rects, placed over what follows; checkVisibility() knows.)
  function drawn(el) {
    return el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0;
  }

  // The link of the section in view: the last heading on screen or above it whose top has
  // reached the reading line. A heading inside a closed fold is not drawn and does not count.
  // At the end of the page, where the last sections cannot scroll up to the line, the section
  // the address points at wins if its heading is on screen (a click in the page contents).
  function linkInView(entries) {
    const line = readingLine();
    let current = null;
    for (const [link, heading] of entries) {
      if (!drawn(heading)) continue;
      if (heading.getBoundingClientRect().top <= line) current = link;
    }
    const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
    if (atEnd && location.hash) {
      const index = entries.findIndex(([link]) => link.hash === location.hash);
      const chosen = entries.findIndex(([link]) => link === current);
      if (index > chosen) {
        const box = entries[index][1].getBoundingClientRect();
        if (drawn(entries[index][1]) && box.top < window.innerHeight) current = entries[index][0];
      }
    }
    return current;
  }

  function followTheReader() {
    const old = document.querySelector(TOC_NAV);
    if (!old) return;
    // A copy without the theme's observer behind it (its callbacks now move the highlight in
    // the old, detached list).
    const nav = old.cloneNode(true);
    old.replaceWith(nav);
    const links = [...nav.querySelectorAll("a")];
    const items = [...nav.querySelectorAll(".toc-entry")];
    const entries = links.map((link) => [link, headingOf(link)]).filter(([, heading]) => heading);
    if (!entries.length) return;
    let shown;
    const update = () => {
      const link = linkInView(entries);
      if (link === shown) return;
      shown = link;
      links.forEach((el) => {
        el.classList.toggle("active", el === link);
        if (el === link) el.setAttribute("aria-current", "true"); else el.removeAttribute("aria-current");
      });
      items.forEach((el) => el.classList.toggle("active", !!link && el.contains(link)));
    };
    let queued = false;
    const schedule = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; update(); });
    };
    window.addEventListener("scroll", schedule, {passive: true});
    window.addEventListener("resize", schedule);
    window.addEventListener("hashchange", schedule);
    document.addEventListener("toggle", schedule, true);  // a fold opened or closed
    window.addEventListener("load", schedule);
    update();
  }
  // (the theme's script is deferred: it has set up its observer before DOMContentLoaded)
  document.addEventListener("DOMContentLoaded", followTheReader);

  // Print with every fold open, and close again the ones that were closed.
  let openedForPrint = [];
  window.addEventListener("beforeprint", () => {
    openedForPrint = [...document.querySelectorAll(FOLDS + ":not([open]), details.predict:not([open])")];
    openedForPrint.forEach((d) => { d.open = true; });
  });
  window.addEventListener("afterprint", () => {
    openedForPrint.forEach((d) => { d.open = false; });
    openedForPrint = [];
  });
})();
