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
 *
 * Readers type questions, not keywords. The words that phrase a question ("how do I",
 * "difference between", 的, 怎么, 有什么区别) are not searched; a word that no page holds
 * ("tensorflow") asks nothing; and when fewer than three pages hold every other word, the
 * pages that hold half of them or more follow (more of them first; rarer words weigh more). Pages rank by how much of the
 * query their best section heading holds, so the answer's heading comes before a page that
 * merely mentions the words.
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

  // Words that phrase a question rather than say what it is about ("how do I", "difference
  // between", 怎么, 有什么区别): neither a page nor a heading needs to hold them. A comparison's
  // words go too: the book compares under "vs" and "which one?", not under "difference".
  const QUESTION_STOP = new Set(["a", "an", "the", "to", "of", "in", "at", "on", "for", "is", "are",
    "do", "does", "did", "i", "me", "my", "how", "what", "why", "when", "which", "where", "can",
    "could", "should", "would", "vs", "versus", "and", "or", "with", "it", "from", "per", "by",
    "difference", "differences", "differ", "between", "compare", "comparison", "work", "works",
    "understand", "meaning", "explain", "explained"]);
  // The same in Chinese: question words and particles, longest first. A run of Chinese is cut at
  // them (有什么区别, 怎么, 的); what is left of one character is no word of the index.
  const CJK_QUESTION_STOP = ["有什么区别", "有什么不同", "有何区别", "什么区别", "怎么回事", "为什么",
    "怎么办", "怎么样", "有什么", "是什么", "是不是", "能不能", "有没有", "怎么", "怎样", "如何",
    "什么", "为何", "到底", "究竟", "请问", "一下", "是否", "能否", "可否", "可以", "区别", "差别",
    "差异", "对比", "理解", "意思", "含义", "的", "吗", "呢", "吧", "啊", "呀", "嘛"];
  const CJK_STOP_SPLIT = new RegExp(CJK_QUESTION_STOP.join("|"), "g");

  // The Chinese words of a query: its runs of Chinese cut at the question words, pieces of two
  // characters or more ("gather 的 dim 到底怎么理解" -> 理解). A query of question words alone
  // ("为什么", "是什么意思") is searched as typed.
  function chinesePieces(query) {
    const runs = (query.match(CJK_RUNS) || []).filter((run) => run.length > 1);
    const pieces = runs.flatMap((run) => run.split(CJK_STOP_SPLIT)).filter((piece) => piece.length > 1);
    const other = typedNames(query).size || (query.replace(CJK_RUNS, " ").match(NUMBER) || []).length;
    return [...new Set(pieces.length || other ? pieces : runs)];
  }

  // The words of a heading or of a typed question, stemmed and without a trailing underscore, so
  // that "stops" meets "stop", "counting" "count" and scatter_add scatter_add_.
  function questionWords(text) {
    const stemmer = new Stemmer();
    return (text.toLowerCase().match(/[a-z_][a-z0-9_]*/g) || [])
      .filter((w) => !QUESTION_STOP.has(w))
      .map((w) => stemmer.stemWord(w.replace(/_+$/, "")));
  }

  // The API names and words as typed (scatter_ and scatter are two of them), lower case.
  function typedNames(text) {
    return new Set((text.toLowerCase().match(/[a-z_][a-z0-9_]*/g) || [])
      .filter((w) => w.length > 1 && !QUESTION_STOP.has(w)));
  }

  // Section titles that hold every word of a typed question of two or more words (a word, or a
  // name it begins: scatter for scatter_reduce; Chinese words as they are), or every name as typed
  // when the names alone tell the question apart ("scatter_ 和 scatter": the heading that holds
  // both). The questions page heads each answer with the question in readers' words. Not for a
  // pasted message (messageTitles). Best last: [title, closeness], closeness from the share of
  // names held as typed and from how few other words the heading holds.
  function questionTitles(query, allTitles) {
    const pieces = chinesePieces(query);
    const words = new Set(questionWords(query));
    const names = typedNames(query);
    if (words.size + pieces.length < 2 && names.size < 2) return [];
    if (messageTitles(query, allTitles).length) return [];
    const found = [];
    for (const title of Object.keys(allTitles)) {
      const own = [...new Set(questionWords(title))];
      const ownNames = typedNames(title);
      const holds = (w) => own.some((o) => o === w || o.startsWith(w + "_"));
      if (![...words].every(holds) || !pieces.every((r) => title.includes(r))) continue;
      const exact = [...names].filter((n) => ownNames.has(n)).length;
      if (words.size + pieces.length < 2 && exact < names.size) continue;
      found.push([title, (names.size ? exact / names.size : 0) / 2 + 1 / (2 + 2 * own.length)]);
    }
    return found.sort((a, b) => a[1] - b[1]);
  }

  // The query's Chinese words (chinesePieces), its numbers as typed ("-100").
  function queryParts(query) {
    const runs = chinesePieces(query);
    const numbers = (query.replace(CJK_RUNS, " ").match(NUMBER) || []);
    return {runs, numbers};
  }

  // Where the index words of each file cover a Chinese word of the query: Map(file -> {score,
  // full, share}). full: the file's words cover it (an uncovered character allowed only where no
  // index word covers it, or where it stands alone: jieba may have cut it off in this page, and a
  // single character is not indexed); share: the part of its characters they cover (at least half).
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
      let full = true;
      for (let i = 0; i < run.length && full; i++) {
        if (covered[i] || !coverable[i]) continue;
        const single = (i === 0 || covered[i - 1] || !coverable[i - 1])
          && (i === run.length - 1 || covered[i + 1] || !coverable[i + 1]);
        if (!single) full = false;
      }
      const share = covered.filter(Boolean).length / run.length;
      if (full || share >= 0.5) found.set(file, {score, full, share: full ? 1 : share});
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
      files.forEach((file) => found.set(file, {score: Math.max((found.get(file) || {score: 0}).score, score),
                                               full: true, share: 1}));
    }
    return found;
  }

  // Each page's section titles: Map(file -> [title, ...]), made once.
  let pageTitles = null;
  function titlesOf(index) {
    if (pageTitles) return pageTitles;
    pageTitles = new Map();
    for (const [title, places] of Object.entries(index.alltitles))
      for (const [file] of places) pageTitles.set(file, [...(pageTitles.get(file) || []), title]);
    return pageTitles;
  }

  // Whether a section title holds a word of the query ({key, kind}: a stemmed Latin word, a
  // Chinese word, a number).
  const titleWords = new Map();  // title -> its questionWords, made once
  function titleHolds(title, word) {
    if (word.kind !== "latin") return title.toLowerCase().includes(word.key);
    const key = word.key.replace(/_+$/, "");
    if (!titleWords.has(title)) titleWords.set(title, questionWords(title));
    return titleWords.get(title).some((o) => o === key || o.startsWith(key + "_"));
  }

  // The pages for the words of a query (each {key, kind, files: Map(file -> {score, full,
  // share})}). A page that holds every word the book has anywhere comes first (a word of no page
  // asks nothing: "tensorflow"); when fewer than FEW pages hold them all, the pages that hold
  // half of them or more follow, those that hold more of them first. A word weighs the more the
  // fewer pages hold it ("gather" is in every page, "unravel_index" in one). Within each group a
  // page ranks by the weight of the words its best section title holds, then by the words in
  // its titles at all.
  // -> [[file, score]]
  const FEW = 3;
  function rankPages(words, index) {
    const counted = words.filter((w) => w.files.size);
    if (!counted.length) return [];
    const fileCount = index.docnames.length;
    const weight = new Map(counted.map((w) => [w, Math.log(1 + fileCount / w.files.size)]));
    const total = counted.reduce((sum, w) => sum + weight.get(w), 0);
    const required = counted.filter((w) => [...w.files.values()].some((m) => m.full));
    const files = new Set(counted.flatMap((w) => [...w.files.keys()]));
    const titles = titlesOf(index);
    const complete = [], partial = [];
    for (const file of files) {
      let held = 0, inTitles = 0, count = 0;
      counted.forEach((w) => {
        const m = w.files.get(file);
        if (!m) return;
        count += m.share;
        held += weight.get(w) * m.share;
        inTitles += weight.get(w) * m.share * Math.min(m.score, Scorer.title) / Scorer.title;
      });
      // the section title that holds the most of the query's weight: [weight, words]
      const [best, bestWords] = (titles.get(file) || []).map((title) => counted
        .filter((w) => w.files.has(file) && titleHolds(title, w))
        .reduce(([sum, n], w) => [sum + weight.get(w), n + 1], [0, 0]))
        .reduce((a, b) => (b[0] > a[0] ? b : a), [0, 0]);
      const rank = (4 * best + inTitles) / (5 * total);  // 0..1
      // a page ranks with those that hold every word when one of its headings holds three of
      // the words, or two and half the query's weight ("scatter_add counts wrong for big numbers
      // float32": a heading holds scatter_add, count and float32, and the page no "big")
      const headed = bestWords >= 3 || (bestWords >= 2 && best >= total / 2);
      if (headed || required.every((w) => (w.files.get(file) || {}).full)) complete.push([file, 10 + 5 * rank]);
      else if (count >= counted.length / 2)
        partial.push([file, 3 * count / counted.length + 3 * held / total + 3 * rank]);
    }
    return complete.length >= FEW ? complete : [...complete, ...partial];
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
      // the words that phrase the question (how, what, difference) are not searched, unless
      // nothing else is left
      const asking = new Set([...QUESTION_STOP].map((w) => stemmer.stemWord(w)));
      const about = [...searchTerms].filter((t) => !asking.has(t));
      if (about.length || lastParts.runs.length || lastParts.numbers.length)
        [...searchTerms].forEach((t) => asking.has(t) && searchTerms.delete(t));
      [...highlightTerms].forEach((t) => QUESTION_STOP.has(t) && highlightTerms.delete(t));
      // a query of Chinese words only still needs one term, or Sphinx searches nothing
      if (!searchTerms.size && (lastParts.runs.length || lastParts.numbers.length)) searchTerms.add("\u0000");
      if (typeof SPHINX_HIGHLIGHT_ENABLED !== "undefined" && SPHINX_HIGHLIGHT_ENABLED)
        localStorage.setItem("sphinx_highlight_terms", [...highlightTerms].join(" "));
      return parsed;
    };

    // Each word on its own (Sphinx's search for one word: its stem, in the text or a title, or
    // inside a longer word), Chinese words by their cover (filesForRun), numbers as typed; then
    // the pages ranked by rankPages.
    const performTermsSearch = Search.performTermsSearch;
    Search.performTermsSearch = (searchTerms, excludedTerms) => {
      const index = Search._index;
      const words = [];
      // (one letter is never in the index: Sphinx keeps words of two or more)
      [...searchTerms].filter((t) => t !== "\u0000" && t.length > 1).forEach((key) => {
        const files = new Map();
        performTermsSearch(new Set([key]), new Set()).forEach((r) => {
          const file = index.docnames.indexOf(r[0]);
          files.set(file, {score: Math.max((files.get(file) || {score: 0}).score, r[4]), full: true, share: 1});
        });
        words.push({key, kind: "latin", files});
      });
      lastParts.runs.forEach((key) => words.push({key, kind: "chinese", files: filesForRun(key, index)}));
      lastParts.numbers.forEach((key) => words.push({key, kind: "number", files: filesForNumber(key, index)}));
      const excluded = new Set([...excludedTerms].flatMap((t) => [index.terms[t], index.titleterms[t]])
        .filter((f) => f !== undefined).flatMap((f) => (f.length === undefined ? [f] : f)));
      return rankPages(words, index)
        .filter(([file]) => !excluded.has(file))
        .map(([file, score]) => result(file, score));
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
      // the page-level hits of the same pages go (their section is listed), and so does any hit
      // of a section already added (Sphinx's own title hit of it: one section listed twice read
      // "2 pages" for one); a section added twice stays once, at its best score
      const place = (r) => `${r[0]}${r[2]}`;
      const added = new Map();
      first.forEach((r) => (!added.has(place(r)) || added.get(place(r))[4] < r[4]) && added.set(place(r), r));
      return [...results.filter((r) => !(pages.has(r[0]) && !r[2]) && !added.has(place(r))),
              ...added.values()];
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
