/* The gather book: search that finds Chinese words and phrases, and hits that lead to the match.
 *
 * Loaded on search.html only, before Sphinx's searchtools.js (book/ext/gatherbook_sphinx/search.py).
 *
 * Sphinx cuts the Chinese pages into words with jieba when it builds the index, but the browser
 * does not cut the query: "对数概率" is one query word, and the index holds "对数" and "概率".
 * Here each run of Chinese characters in the query is matched against the index's own words:
 * a page matches the run when the index words of that page that occur inside the run cover it
 * (a single character that jieba left alone is not indexed, so it may stay uncovered). This
 * finds a page by any phrase it contains however jieba cut it there, needs no dictionary, and
 * works offline. Latin words, numbers ("-100") and mixed queries work as well.
 *
 * A hit links to the section that holds the match (its id), the words are highlighted there
 * (Sphinx's sphinx_highlight.js; never a single character, nor a pasted message's numbers), and
 * the snippet quotes the article, not the page chrome, where the most words of the query are
 * together (inside the hit's section when the hit is one). When nothing matches, the page says so
 * in the book's words (book/words/<code>.yml: search_no_match).
 *
 * A pasted error message ("IndexError: index 5 is out of bounds for dimension 1 with size 5")
 * puts first the sections whose heading is that message (chapter 6's error decoder), whatever
 * numbers it carries: the words of the query and of each section title are compared with every
 * number as one placeholder. A typed question ("gather vs index_select") puts first the sections
 * whose heading holds all its words (the questions page's headings are questions in readers'
 * words). Words readers type for an API name the book writes in English
 * (散射 for scatter) are searched as that name.
 */
"use strict";
(() => {
  // what the page says when nothing matches (book/words/<code>.yml: search_no_match)
  const NO_MATCH = (document.currentScript && document.currentScript.dataset.noMatch) || "";
  const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
  const CJK_RUNS = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g;
  // a number standing alone ("-100", "16777216"), not the digits of a word ("float32", "int64")
  const NUMBER = /(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])/g;
  // article text, without what is not the page's text
  const CHROME = ".headerlink, script, style, button, .copybtn, .toggle-button, .tooltip, #searchbox";

  // Names a reader may type for what the book calls by its API name (the glossary lists them).
  const SYNONYMS = [[/散射/g, " scatter "], [/聚集/g, " gather "]];

  function withSynonyms(query) {
    return SYNONYMS.reduce((q, [from, to]) => q.replace(from, to), query);
  }

  // The words of an error message, every number one placeholder ("size 5" = "size 4"), without
  // the exception's name ("RuntimeError:" is in what readers paste, not in the headings).
  function messageWords(text) {
    const words = text.toLowerCase().replace(/\d+/g, "#").match(/[a-z_#]+/g) || [];
    return new Set(words.filter((w) => !/(error|exception|warning)$/.test(w)));
  }

  // Section titles that are (nearly) the pasted message, best last: [title, similarity].
  function messageTitles(query, allTitles) {
    const asked = messageWords(query);
    if (asked.size < 4) return [];
    const found = [];
    for (const title of Object.keys(allTitles)) {
      const words = messageWords(title);
      if (words.size < 4) continue;
      let shared = 0;
      asked.forEach((w) => { if (words.has(w)) shared += 1; });
      const union = asked.size + words.size - shared;
      if (shared >= 4 && shared / asked.size >= 0.75) found.push([title, shared / union]);
    }
    return found.sort((a, b) => a[1] - b[1]);
  }

  // Words a typed question leaves out of nothing: they are not what it asks about.
  const QUESTION_STOP = new Set(["a", "an", "the", "to", "of", "in", "at", "on", "for", "is", "are",
    "do", "does", "i", "how", "what", "why", "vs", "and", "or", "with", "my", "it", "from", "per"]);

  // The words of a heading or of a typed question, stemmed and without a trailing underscore, so
  // that "stops" meets "stop", "counting" "count" and scatter_add scatter_add_.
  function questionWords(text) {
    const stemmer = new Stemmer();
    return (text.toLowerCase().match(/[a-z_][a-z0-9_]*/g) || [])
      .filter((w) => !QUESTION_STOP.has(w))
      .map((w) => stemmer.stemWord(w.replace(/_+$/, "")));
  }

  // Section titles that hold every word of a typed question of two or more English words (a
  // word, or a name it begins: scatter for scatter_reduce), and each of its Chinese runs as it
  // is: the questions page heads each answer with the question in readers' words. Not for a
  // pasted message (messageTitles). Best (the fewest other words) last: [title, closeness].
  function questionTitles(query, allTitles) {
    const runs = query.match(CJK_RUNS) || [];
    const words = new Set(questionWords(query));
    if (words.size < 2 || messageTitles(query, allTitles).length) return [];
    const found = [];
    for (const title of Object.keys(allTitles)) {
      const own = [...new Set(questionWords(title))];
      const holds = (w) => own.some((o) => o === w || o.startsWith(w + "_"));
      if ([...words].every(holds) && runs.every((r) => title.includes(r)))
        found.push([title, 1 / (1 + own.length)]);
    }
    return found.sort((a, b) => a[1] - b[1]);
  }

  // The query's Chinese runs, its numbers as typed ("-100"), and everything else.
  function queryParts(query) {
    const runs = query.match(CJK_RUNS) || [];
    const numbers = (query.replace(CJK_RUNS, " ").match(NUMBER) || []);
    return {runs, numbers};
  }

  // Where the index words of each file cover a Chinese run: Map(file -> score).
  function filesForRun(run, index) {
    const sources = [[index.terms, Scorer.term], [index.titleterms, Scorer.title]];
    const coverable = new Array(run.length).fill(false);
    const perFile = new Map();  // file -> {covered: bool[], score}
    for (let start = 0; start < run.length; start++) {
      for (let end = start + 2; end <= run.length; end++) {
        const word = run.slice(start, end);
        for (const [table, score] of sources) {
          if (!Object.prototype.hasOwnProperty.call(table, word)) continue;
          for (let i = start; i < end; i++) coverable[i] = true;
          let files = table[word];
          if (files.length === undefined) files = [files];
          for (const file of files) {
            if (!perFile.has(file)) perFile.set(file, {covered: new Array(run.length).fill(false), score: 0});
            const entry = perFile.get(file);
            for (let i = start; i < end; i++) entry.covered[i] = true;
            entry.score = Math.max(entry.score, score + (end - start === run.length ? 10 : 0));
          }
        }
      }
    }
    const found = new Map();
    for (const [file, {covered, score}] of perFile) {
      // an uncovered stretch is allowed only where no index word covers it at all, or where it
      // is a single character (jieba may have cut it off alone in this page: not indexed)
      let ok = true;
      for (let i = 0; i < run.length && ok; i++) {
        if (covered[i] || !coverable[i]) continue;
        const single = (i === 0 || covered[i - 1] || !coverable[i - 1])
          && (i === run.length - 1 || covered[i + 1] || !coverable[i + 1]);
        if (!single) ok = false;
      }
      if (ok) found.set(file, score);
    }
    return found;
  }

  function filesForNumber(number, index) {
    const digits = number.replace(/^-/, "");
    const found = new Map();
    for (const [table, score] of [[index.terms, Scorer.term], [index.titleterms, Scorer.title]]) {
      if (!Object.prototype.hasOwnProperty.call(table, digits)) continue;
      let files = table[digits];
      if (files.length === undefined) files = [files];
      files.forEach((file) => found.set(file, Math.max(found.get(file) || 0, score)));
    }
    return found;
  }

  function intersect(maps) {
    if (!maps.length) return null;
    const out = new Map(maps[0]);
    for (const map of maps.slice(1)) {
      for (const file of [...out.keys()]) {
        if (!map.has(file)) out.delete(file);
        else out.set(file, Math.max(out.get(file), map.get(file)));
      }
    }
    return out;
  }

  function result(file, score) {
    const index = Search._index;
    return [index.docnames[file], index.titles[file], "", null, score, index.filenames[file]];
  }

  // The words to highlight: what the reader typed, run by run (the phrase as a whole).
  let lastParts = {runs: [], numbers: []};

  function install() {
    if (typeof Search === "undefined" || Search.gatherbookInstalled) return;
    Search.gatherbookInstalled = true;

    const parseQuery = Search._parseQuery;
    Search._parseQuery = (typed) => {
      const query = withSynonyms(typed);
      const parsed = parseQuery(query);
      const [, searchTerms, , highlightTerms] = parsed;
      lastParts = queryParts(query);
      // Chinese runs are matched by performTermsSearch below, numbers too (Sphinx drops them)
      // a word that mixes Latin and Chinese ("log概率") keeps its Latin part as a word of its own
      const stemmer = new Stemmer();
      [...searchTerms].filter((t) => CJK.test(t)).forEach((t) => {
        searchTerms.delete(t);
        (t.match(/[A-Za-z_][A-Za-z0-9_]+/g) || []).forEach((w) => searchTerms.add(stemmer.stemWord(w.toLowerCase())));
      });
      [...highlightTerms].forEach((t) => CJK.test(t) && highlightTerms.delete(t));
      lastParts.runs.forEach((run) => highlightTerms.add(run));
      lastParts.numbers.forEach((n) => highlightTerms.add(n));
      // nothing of one character is highlighted, and a pasted error message's numbers are its
      // tensors' sizes, not the book's: highlighted, every "1" and "5" of the page lit up
      const pasted = messageTitles(query, (Search._index || {}).alltitles || {}).length > 0;
      [...highlightTerms].forEach((t) => {
        if (t.length < 2 || (pasted && /^-?\d+(?:\.\d+)?$/.test(t))) highlightTerms.delete(t);
      });
      // a query of Chinese words only still needs one term, or Sphinx searches nothing
      if (!searchTerms.size && (lastParts.runs.length || lastParts.numbers.length)) searchTerms.add("\u0000");
      if (typeof SPHINX_HIGHLIGHT_ENABLED !== "undefined" && SPHINX_HIGHLIGHT_ENABLED)
        localStorage.setItem("sphinx_highlight_terms", [...highlightTerms].join(" "));
      return parsed;
    };

    const performTermsSearch = Search.performTermsSearch;
    Search.performTermsSearch = (searchTerms, excludedTerms) => {
      // (one letter is never in the index: Sphinx keeps words of two or more)
      const latin = new Set([...searchTerms].filter((t) => t !== "\u0000" && t.length > 1));
      const index = Search._index;
      const maps = [];
      if (latin.size) {
        const m = new Map();
        performTermsSearch(latin, excludedTerms).forEach((r) => {
          const file = index.docnames.indexOf(r[0]);
          m.set(file, Math.max(m.get(file) || 0, r[4]));
        });
        maps.push(m);
      }
      lastParts.runs.forEach((run) => {
        const m = filesForRun(run, index);
        if (m.size || run.length > 1) maps.push(m);
      });
      lastParts.numbers.forEach((n) => {
        const m = filesForNumber(n, index);
        if (m.size) maps.push(m);
      });
      const files = intersect(maps);
      if (files === null) return [];
      return [...files].map(([file, score]) => result(file, score));
    };

    // A pasted error message: the sections headed by it first; a typed question: the sections
    // whose heading holds all its words, next.
    const performSearch = Search._performSearch;
    Search._performSearch = (query, ...rest) => {
      const results = performSearch(query, ...rest);
      const index = Search._index;
      const first = [];
      const headed = (found, base) => found.forEach(([title, similarity]) => {
        for (const [file, id] of index.alltitles[title]) {
          const name = index.titles[file] !== title ? `${index.titles[file]} > ${title}` : title;
          first.push([index.docnames[file], name, id !== null ? "#" + id : "", null,
                      base + Math.round(1000 * similarity), index.filenames[file]]);
        }
      });
      headed(questionTitles(query, index.alltitles), 1e5);
      headed(messageTitles(query, index.alltitles), 1e6);
      if (!first.length) return results;
      const pages = new Set(first.map((r) => r[0]));
      // the page-level hits of the same pages go (their section is listed), the others stay
      return [...results.filter((r) => !(pages.has(r[0]) && !r[2])), ...first];
    };

    // The article's text only (not the sidebars, buttons and header of the page).
    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      let root = doc.querySelector("article.bd-article");
      if (!root) return htmlToText(htmlString, anchor);
      if (anchor) root = root.querySelector(anchor) || root;
      root.querySelectorAll(CHROME).forEach((el) => el.remove());
      return root.textContent.replace(/\s+/g, " ").trim();
    };

    // A snippet where the most words of the query are together (within the hit's section when
    // the hit is one), and a link to the section that holds it.
    Search.makeSearchSummary = (htmlText, keywords, anchor) => {
      const doc = new DOMParser().parseFromString(htmlText, "text/html");
      const article = doc.querySelector("article.bd-article");
      if (!article) return null;
      article.querySelectorAll(CHROME).forEach((el) => el.remove());
      const root = (anchor && article.querySelector(anchor)) || article;
      const wanted = [...new Set([...lastParts.runs, ...lastParts.numbers,
                                  ...[...keywords].filter((k) => k !== "\u0000")].map((k) => k.toLowerCase()))]
        .filter((k) => k.length > 1);
      const raw = root.textContent;
      const lower = raw.toLowerCase();
      const found = [];  // [position, word]
      wanted.forEach((w) => {
        for (let at = lower.indexOf(w); at > -1; at = lower.indexOf(w, at + 1)) found.push([at, w]);
      });
      found.sort((a, b) => a[0] - b[0]);
      // the window of SPAN characters that holds the most different words of the query, earliest first
      const SPAN = 160;
      let best = found.length ? found[0][0] : 0, most = 0;
      for (let i = 0, j = 0; i < found.length; i++) {
        while (j < found.length && found[j][0] < found[i][0] + SPAN) j++;
        const words = new Set(found.slice(i, j).map((f) => f[1])).size;
        if (words > most) { most = words; best = found[i][0]; }
      }
      // the text node where that window starts
      const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      let hit = null;
      for (let node = walker.nextNode(), seen = 0; node; node = walker.nextNode()) {
        if (seen + node.data.length > best) { hit = node; break; }
        seen += node.data.length;
      }
      const start = Math.max(best - 60, 0);
      const quote = raw.slice(start, start + 260).replace(/\s+/g, " ").trim();
      if (!quote) return null;
      const summary = document.createElement("p");
      summary.classList.add("context");
      summary.textContent = (start ? "…" : "") + quote + (start + 260 < raw.length ? "…" : "");
      const section = found.length && hit && hit.parentElement && hit.parentElement.closest("section[id]");
      if (section && !anchor) {
        const id = section.id;
        // after _displayItem has appended the summary to its list item
        setTimeout(() => {
          const link = summary.parentElement && summary.parentElement.querySelector("a");
          if (link && !new URL(link.href).hash) link.href = link.href.split("#")[0] + "#" + id;
        }, 0);
      }
      return summary;
    };

    // Nothing found: the book's words, not Sphinx's (which ask for "enough categories")
    if (typeof Documentation !== "undefined" && NO_MATCH) {
      const gettext = Documentation.gettext;
      Documentation.gettext = (text, ...rest) =>
        String(text).startsWith("Your search did not match any documents") ? NO_MATCH : gettext(text, ...rest);
    }
  }

  // before Search.init (searchtools.js registers it later, so this listener runs first)
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", install);
  else install();
})();
