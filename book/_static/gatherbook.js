/* The gather book: small behaviours of every page (added to every page by book/ext/gatherbook_sphinx).
 *
 * - The language switch keeps the reader's place: a click adds the id of the section in view.
 *   Sections carry position ids that are the same in both editions ("gb-s3" is the third
 *   section of the page in English and in Chinese; book/ext/gatherbook_sphinx/editions.py).
 * - The words of the search that led to the page are highlighted.
 * - Folded deep-dive sections (details.deep-dive-fold) open when the address's #id or a
 *   highlighted search word lies inside one, and every fold (deep-dives, predict answers) is
 *   open while the page prints (book/ext/gatherbook_sphinx/deepdives.py).
 * - A button's tooltip goes away after a click (Bootstrap shows it on hover and focus; after a
 *   tap on a touch screen the colour-mode tooltip stayed on screen).
 */
"use strict";
(() => {
  const SECTION_IDS = /^gb-[se]\d+$/;  // sections, and exercises (gb-e3: the page's third)
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

  const FOLDS = "details.deep-dive-fold";

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
    const folded = target.closest(FOLDS + ":not([open])") || target.matches("section.deep-dive");
    openFoldsAround([target]);
    if (folded) target.scrollIntoView();  // the fold was closed when the browser scrolled to it
  }
  document.addEventListener("DOMContentLoaded", openFoldAtHash);
  window.addEventListener("hashchange", openFoldAtHash);

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
