/* The gather book: the interactive gather explorer (book/_ext/gather_explorer.py adds this file
 * to the pages that hold a <div class="gather-explorer">).
 *
 * window.gatherExplorer.compute(spec) is the pure model of torch.gather and Tensor.scatter on the
 * CPU, as torch 2.13 checks and words them (tests/test_explorer.py compares it with torch):
 *   spec = {op: "gather" | "scatter", inputShape: [3, 4], dim: 1, indexShape: [3, 2],
 *           index: [row-major entries], input: [values] (gather), src: [values] (scatter)}
 *   -> {ok: true, shape, values, links, writes}  or  {ok: false, type, message, bad}
 * The rest draws it: input, index and out as grids of cells, coloured like the book's figures
 * (gatherbook/draw.py, gatherbook/style.py). Plain JavaScript and SVG, nothing fetched.
 */
"use strict";
(() => {
  // ------------------------------------------------------------------------------------------
  // The model
  // ------------------------------------------------------------------------------------------
  const prod = (shape) => shape.reduce((a, b) => a * b, 1);
  const strides = (shape) => {
    const s = shape.map(() => 1);
    for (let d = shape.length - 2; d >= 0; d--) s[d] = s[d + 1] * shape[d + 1];
    return s;
  };
  const flatOf = (pos, shape) => pos.reduce((acc, p, d) => acc * shape[d] + p, 0);
  const posOf = (flat, shape) => {
    const pos = new Array(shape.length);
    for (let d = shape.length - 1; d >= 0; d--) { pos[d] = flat % shape[d]; flat = Math.floor(flat / shape[d]); }
    return pos;
  };
  const list = (shape) => "[" + shape.join(", ") + "]";
  const tuple = (shape) => "(" + shape.join(", ") + (shape.length === 1 ? ",)" : ")");

  // All positions of `shape` along `dims` (row-major), as arrays of coordinates.
  function positions(shape, dims) {
    let out = [[]];
    for (const d of dims) {
      const next = [];
      for (const p of out) for (let v = 0; v < shape[d]; v++) next.push(p.concat([v]));
      out = next;
    }
    return out;
  }

  /* The order in which the CPU kernel visits the index entries (and so which bad entry it
   * reports first, and which write of a repeated scatter target comes last). TensorIterator runs
   * over the index's shape with `dim` squashed to 1: size-1 dims vanish, neighbouring dims merge
   * when the strides of every operand allow (out and index: contiguous of the index's shape;
   * the tensor read or written along dim: contiguous of its own shape). Along the last dim the
   * kernel loops over dim innermost; otherwise, for each outer position it loops over dim, and
   * inside that over the merged innermost block. */
  function visitOrder(indexShape, inputShape, dim) {
    const n = indexShape.length;
    if (dim === n - 1) return positions(indexShape, [...Array(n).keys()]);
    const shape = indexShape.slice();
    shape[dim] = 1;
    const ops = [strides(indexShape), strides(inputShape)];
    const groups = [];  // innermost first: {size, st: strides per operand, dims}
    for (let d = n - 1; d >= 0; d--) {
      const g = {size: shape[d], st: ops.map((o) => o[d]), dims: [d]};
      const prev = groups[groups.length - 1];
      if (!prev) groups.push(g);
      else if (prev.size === 1) groups[groups.length - 1] = {size: g.size, st: g.st, dims: prev.dims.concat([d])};
      else if (g.size === 1 || g.st.every((s, k) => s === prev.size * prev.st[k])) {
        prev.size *= g.size; prev.dims.push(d);
      } else groups.push(g);
    }
    const inner = groups[0].dims.filter((d) => d !== dim).sort((a, b) => a - b);
    const outer = [...Array(n).keys()].filter((d) => d !== dim && !inner.includes(d));
    const order = [];
    for (const o of positions(indexShape, outer)) {
      for (let i = 0; i < indexShape[dim]; i++) {
        for (const e of positions(indexShape, inner)) {
          const p = new Array(n);
          outer.forEach((d, k) => { p[d] = o[k]; });
          inner.forEach((d, k) => { p[d] = e[k]; });
          p[dim] = i;
          order.push(p);
        }
      }
    }
    return order;
  }

  const fail = (type, message, extra) => Object.assign({ok: false, type, message}, extra || {});

  function compute(spec) {
    const scatter = spec.op === "scatter";
    const xshape = spec.inputShape.slice(), ishape = spec.indexShape.slice();
    const n = xshape.length, index = spec.index;
    if (index.length !== prod(ishape)) throw new Error("index has " + index.length + " entries for shape " + list(ishape));
    if (!Number.isInteger(spec.dim) || spec.dim < -n || spec.dim >= n) {
      return fail("IndexError", `Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${spec.dim})`, {stage: "dim"});
    }
    const dim = spec.dim < 0 ? spec.dim + n : spec.dim;
    const input = spec.input || [...Array(prod(xshape)).keys()].map((k) => 10 * k);
    const src = spec.src || [...Array(prod(ishape)).keys()].map((k) => 10 * (k + 1));
    if (prod(ishape) === 0) {  // nothing to read: no check at all
      return scatter ? {ok: true, dim, shape: xshape, values: new Array(prod(xshape)).fill(0).map((_, k) => (spec.self ? spec.self[k] : 0)), links: [], writes: []}
        : {ok: true, dim, shape: ishape, values: [], links: [], writes: []};
    }
    if (ishape.length !== n) {
      return fail("RuntimeError", `Index tensor must have the same number of dimensions as ${scatter ? "self" : "input"} tensor`, {stage: "ndim"});
    }
    for (let d = 0; d < n; d++) {
      if (d !== dim && ishape[d] > xshape[d]) {
        const message = scatter
          ? `Expected index ${list(ishape)} to be no larger than self ${list(xshape)} apart from dimension ${dim} and to be no larger size than src ${list(ishape)}`
          : `Size does not match at dimension ${d} expected index ${list(ishape)} to be no larger than self ${list(xshape)} apart from dimension ${dim}`;
        return fail("RuntimeError", message, {stage: "size", sizeDim: d});
      }
    }
    const size = xshape[dim];
    const order = visitOrder(ishape, xshape, dim);
    const links = new Array(index.length);  // flat index position -> flat input/out position
    const bad = [];
    for (let k = 0; k < index.length; k++) {
      const v = index[k];
      if (!(Number.isInteger(v) && v >= 0 && v < size)) { bad.push(k); links[k] = -1; continue; }
      const p = posOf(k, ishape);
      p[dim] = v;
      links[k] = flatOf(p, xshape);
    }
    if (bad.length) {
      for (const p of order) {
        const k = flatOf(p, ishape);
        if (links[k] < 0) {
          return fail("RuntimeError", `index ${index[k]} is out of bounds for dimension ${dim} with size ${size}`,
            {stage: "value", dim, first: k, bad, links});
        }
      }
    }
    if (!scatter) return {ok: true, dim, shape: ishape, values: links.map((s) => input[s]), links, writes: []};
    const values = new Array(prod(xshape)).fill(0).map((_, k) => (spec.self ? spec.self[k] : 0));
    const writes = new Array(values.length).fill(0).map(() => []);  // out position -> index positions, in write order
    for (const p of order) {
      const k = flatOf(p, ishape);
      values[links[k]] = src[k];
      writes[links[k]].push(k);
    }
    return {ok: true, dim, shape: xshape, values, links, writes};
  }

  // ------------------------------------------------------------------------------------------
  // Words, in the page's language
  // ------------------------------------------------------------------------------------------
  // The words come with the page, in its language: data-words, from book/words/<code>.yml
  // (explorer:). The ones below take values: "size of dim {d}".
  const PLACES = {size: ["d"], edit: ["name"], cell: ["name", "v"], range: ["v", "d", "s"],
                  rangeScatter: ["v", "d", "s"], writtenTwice: ["cells"], notWhole: ["v"]};
  function wordsOf(root) {
    const words = JSON.parse(root.dataset.words || "{}");
    for (const [key, names] of Object.entries(PLACES)) {
      const text = words[key];
      words[key] = (...values) => text.replace(/\{(\w+)\}/g, (m, name) => String(values[names.indexOf(name)]));
    }
    return words;
  }

  // ------------------------------------------------------------------------------------------
  // The look of the book's figures (gatherbook/style.py)
  // ------------------------------------------------------------------------------------------
  const CATEGORICAL = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"];
  const lighten = (hex, amount) => "rgb(" + [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return Math.round((c + (1 - c) * amount) * 255);
  }).join(", ") + ")";
  const PALETTE = CATEGORICAL.map((c) => lighten(c, 0.55));
  const INK = "#222222", MUTED = "#6b6b6b", EDGE = "#4a4a4a", MARK = "#d62728";
  const QUIET_FACE = "#f1f1f1", QUIET_INK = "#7a7a7a", PAPER = "#ffffff";
  const CELL_H = 30, CELL_W_MIN = 36, CHAR_W = 8.6, PAD = 14, NUM_W = 16, HEAD = 18, LABEL_H = 18;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const MAX_SIZE = 6, MAX_VALUE = 99;

  function el(tag, attrs, parent, text) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  const cellName = (name, pos) => name + pos.map((p) => `[${p}]`).join("");

  // ------------------------------------------------------------------------------------------
  // One explorer
  // ------------------------------------------------------------------------------------------
  const ints = (text) => (text || "").split(",").filter((s) => s.trim() !== "").map((s) => parseInt(s, 10));

  class Explorer {
    constructor(root) {
      this.root = root;
      this.t = wordsOf(root);
      this.compact = root.dataset.compact === "1";
      this.id = "gx" + (Explorer.count = (Explorer.count || 0) + 1);
      const inputShape = ints(root.dataset.shape);
      this.state = {
        op: root.dataset.op === "scatter" && !this.compact ? "scatter" : "gather",
        inputShape: inputShape.length ? inputShape : [3, 4],
        dim: root.dataset.dim !== undefined ? parseInt(root.dataset.dim, 10) : 1,
      };
      const ishape = ints(root.dataset.indexShape);
      this.state.indexShape = ishape.length ? ishape : this.defaultIndexShape();
      const entries = ints(root.dataset.index);
      this.state.index = entries.length === prod(this.state.indexShape) ? entries : this.fillIndex(this.state.indexShape, null, null);
      this.focus = null;  // flat index position under keyboard focus (or last tapped)
      this.hover = null;  // flat index position under the pointer
      this.build();
      this.render();
    }

    dimIndex() {
      const n = this.state.inputShape.length;
      return this.state.dim < 0 ? this.state.dim + n : this.state.dim;
    }

    defaultIndexShape() {
      const s = this.state.inputShape.slice(), d = this.dimIndex();
      if (d >= 0 && d < s.length) s[d] = Math.min(2, MAX_SIZE);
      return s;
    }

    // Entries for `shape`: the old entry where the position existed, else a valid one.
    fillIndex(shape, oldShape, old) {
      const d = this.dimIndex();
      const size = this.state.inputShape[d] || 1;
      return [...Array(prod(shape)).keys()].map((k) => {
        const pos = posOf(k, shape);
        if (old && oldShape.length === shape.length && pos.every((p, q) => p < oldShape[q])) return old[flatOf(pos, oldShape)];
        return (pos.reduce((a, b) => a + b, 0) * 3 + 1) % size;
      });
    }

    // --- the controls -------------------------------------------------------------------------
    build() {
      const t = this.t, root = this.root;
      root.textContent = "";
      root.setAttribute("role", "group");
      root.setAttribute("aria-label", t.region);
      const controls = el("div", {class: "gx-controls"}, root);
      if (!this.compact) {
        this.opSelect = this.select(controls, t.op, ["gather", "scatter"], (v) => { this.state.op = v; this.render(); });
        // a shape's dims and its sizes stay together (on a phone: one line each, with their label)
        const inputGroup = el("span", {class: "gx-group"}, controls);
        this.inputNdim = this.select(inputGroup, t.inputShape + " · " + t.ndim, ["1", "2", "3"], (v) => this.setInputNdim(+v));
        this.inputSizes = el("span", {class: "gx-sizes"}, inputGroup);
      }
      this.dimSelect = this.select(controls, t.dim, [], (v) => this.setDim(+v));
      if (!this.compact) {
        const indexGroup = el("span", {class: "gx-group"}, controls);
        this.indexNdim = this.select(indexGroup, t.indexShape + " · " + t.ndim, ["1", "2", "3"], (v) => this.setIndexNdim(+v));
        this.indexSizes = el("span", {class: "gx-sizes"}, indexGroup);
        const random = el("button", {type: "button", class: "gx-button"}, controls, t.random);
        random.addEventListener("click", () => this.randomIndex());
      }
      el("p", {class: "gx-help", id: this.id + "-help"}, root, t.help);
      this.figure = el("div", {class: "gx-figure", role: "group"}, root);
      const editor = el("div", {class: "gx-editor"}, root);
      this.editLabel = el("label", {for: this.id + "-edit", class: "gx-edit-label"}, editor);
      const minus = el("button", {type: "button", class: "gx-button gx-step", "aria-label": t.minus}, editor, "−");
      this.editInput = el("input", {id: this.id + "-edit", type: "number", inputmode: "numeric", min: -MAX_VALUE, max: MAX_VALUE, step: 1, class: "gx-edit"}, editor);
      const plus = el("button", {type: "button", class: "gx-button gx-step", "aria-label": t.plus}, editor, "+");
      minus.addEventListener("click", () => this.step(-1));
      plus.addEventListener("click", () => this.step(1));
      this.editInput.addEventListener("input", () => {
        // a number that is not whole (2.5) is not rounded: PyTorch refuses a float index, and so
        // does the explorer (it silently made 2.5 a 2)
        const raw = this.editInput.value.trim();
        const v = Number(raw);
        this.notWhole = raw !== "" && Number.isFinite(v) && !Number.isInteger(v) ? raw : null;
        this.editInput.toggleAttribute("aria-invalid", this.notWhole !== null);
        if (this.notWhole === null && raw !== "" && Number.isInteger(v) && this.selected() !== null) {
          this.setEntry(this.selected(), v, false);
        } else if (this.notWhole !== null) {
          this.render(false);
        }
      });
      this.formula = el("p", {class: "gx-formula", "aria-live": "polite"}, root);
      this.result = el("div", {class: "gx-result", "aria-live": "polite"}, root);
      this.note = el("p", {class: "gx-note"}, root);
      if (!this.compact) {
        const code = el("div", {class: "gx-code"}, root);
        el("div", {class: "gx-code-title"}, code, t.code);
        this.code = el("code", {class: "gx-code-text"}, code);
      }
    }

    select(parent, label, options, onChange) {
      const wrap = el("label", {class: "gx-field"}, parent);
      el("span", {class: "gx-field-label"}, wrap, label);
      const sel = el("select", {class: "gx-select"}, wrap);
      options.forEach((o) => el("option", {value: o}, sel, o));
      sel.addEventListener("change", () => onChange(sel.value));
      return sel;
    }

    sizeInputs(parent, shape, min, label, onChange) {
      parent.textContent = "";
      shape.forEach((s, d) => {
        const input = el("input", {type: "number", class: "gx-size", min, max: MAX_SIZE, step: 1, value: s,
          "aria-label": `${label}: ${this.t.size(d)}`, inputmode: "numeric"}, parent);
        input.addEventListener("change", () => {
          const v = Math.max(min, Math.min(MAX_SIZE, parseInt(input.value, 10) || min));
          input.value = v;
          onChange(d, v);
        });
      });
    }

    syncControls() {
      const st = this.state, n = st.inputShape.length;
      const dims = [];
      for (let d = -n - 1; d <= n; d++) dims.push(String(d));
      if (this.compact) dims.splice(0, dims.length, ...[...Array(n).keys()].map(String));
      this.dimSelect.textContent = "";
      dims.forEach((d) => el("option", {value: d}, this.dimSelect, d));
      this.dimSelect.value = String(st.dim);
      if (this.compact) return;
      this.opSelect.value = st.op;
      this.inputNdim.value = String(n);
      // scatter writes into zeros of this shape: the field names out, not input
      this.inputNdim.previousSibling.textContent = (st.op === "scatter" ? this.t.selfShape : this.t.inputShape) + " · " + this.t.ndim;
      this.indexNdim.value = String(st.indexShape.length);
      this.sizeInputs(this.inputSizes, st.inputShape, 1, st.op === "scatter" ? this.t.selfShape : this.t.inputShape,
        (d, v) => { st.inputShape[d] = v; this.render(); });
      this.sizeInputs(this.indexSizes, st.indexShape, 0, this.t.indexShape, (d, v) => {
        const old = st.indexShape.slice();
        st.indexShape[d] = v;
        st.index = this.fillIndex(st.indexShape, old, st.index);
        this.render();
      });
    }

    setInputNdim(n) {
      const st = this.state;
      st.inputShape = [[5], [3, 4], [2, 3, 4]][n - 1].slice();
      st.dim = n - 1;
      st.indexShape = this.defaultIndexShape();
      st.index = this.fillIndex(st.indexShape, null, null);
      this.focus = this.hover = null;
      this.render();
    }

    setIndexNdim(n) {
      const st = this.state, old = st.indexShape.slice();
      st.indexShape = [...Array(n).keys()].map((d) => (d < old.length ? old[d] : 1));
      st.index = this.fillIndex(st.indexShape, old, st.index);
      this.focus = this.hover = null;
      this.render();
    }

    // A new dim asks a new question: a fresh index of the default shape, keeping the old
    // entries that still fit.
    setDim(d) {
      const st = this.state, old = st.indexShape.slice(), entries = st.index;
      st.dim = d;
      const n = st.inputShape.length;
      if (d >= -n && d < n) {
        const size = st.inputShape[this.dimIndex()];
        st.indexShape = this.defaultIndexShape();
        const fresh = this.fillIndex(st.indexShape, null, null);
        st.index = this.fillIndex(st.indexShape, old, entries).map((v, k) => (v >= 0 && v < size ? v : fresh[k]));
        this.focus = this.hover = null;
      }
      this.render();
    }

    randomIndex() {
      const st = this.state, d = this.dimIndex(), size = st.inputShape[d] || 1;
      st.index = st.index.map(() => Math.floor(Math.random() * size));
      this.render();
    }

    selected() {
      const k = this.focus !== null ? this.focus : null;
      return k !== null && k < this.state.index.length ? k : (this.state.index.length ? 0 : null);
    }

    setEntry(k, v, refocus) {
      if (this.notWhole !== null && this.editInput) this.editInput.removeAttribute("aria-invalid");
      this.notWhole = null;
      this.state.index[k] = Math.max(-MAX_VALUE, Math.min(MAX_VALUE, v));
      this.focus = k;
      this.render(refocus);
    }

    step(delta) {
      const k = this.selected();
      if (k !== null) this.setEntry(k, this.state.index[k] + delta, false);
    }

    // --- keyboard on an index cell --------------------------------------------------------------
    onKey(event, k) {
      const v = this.state.index[k];
      const count = this.state.index.length;
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        this.typed = "";
        this.setEntry(k, v + (event.key === "ArrowUp" ? 1 : -1), true);
      } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        this.typed = "";
        const next = (k + (event.key === "ArrowRight" ? 1 : count - 1)) % count;
        this.focusCell(next);
      } else if (/^[0-9]$/.test(event.key) || event.key === "-") {
        const now = Date.now();
        this.typed = (this.typedAt && now - this.typedAt < 1200 && this.typedCell === k ? this.typed || "" : "") + event.key;
        if (event.key === "-") this.typed = "-";
        this.typedAt = now;
        this.typedCell = k;
        const parsed = parseInt(this.typed, 10);
        if (Number.isInteger(parsed)) this.setEntry(k, parsed, true);
      } else if (event.key === "Backspace") {
        this.typed = String(v).slice(0, -1);
        this.typedAt = Date.now();
        this.typedCell = k;
        this.setEntry(k, parseInt(this.typed, 10) || 0, true);
      } else {
        return;
      }
      event.preventDefault();
    }

    focusCell(k) {
      const cell = this.figure.querySelector(`[data-index-cell="${k}"]`);
      if (cell) cell.focus();
    }

    // --- drawing --------------------------------------------------------------------------------
    render(refocus) {
      const st = this.state;
      const active = document.activeElement;
      const hadFocus = refocus || (active && active.dataset && active.dataset.indexCell !== undefined && this.figure.contains(active));
      this.syncControls();
      const scatter = st.op === "scatter";
      const xvalues = [...Array(prod(st.inputShape)).keys()].map((k) => 10 * k);
      const svalues = [...Array(prod(st.indexShape)).keys()].map((k) => 10 * (k + 1));
      const r = this.notWhole === null || this.notWhole === undefined
        ? compute({op: st.op, inputShape: st.inputShape, dim: st.dim, indexShape: st.indexShape,
                   index: st.index, input: xvalues, src: svalues})
        // what torch says of a float index (the dtype is checked before any value)
        : {ok: false, stage: "dtype", type: "RuntimeError", message: `${st.op}(): Expected dtype int32/int64 for index`};
      this.last = r;
      // colour ids: every cell read (gather) or written (scatter) gets one, in row-major order
      const linked = r.links && (r.ok || r.stage === "value") ? r.links : null;
      const bigIds = new Array(prod(st.inputShape)).fill(-1);  // input (gather) or out (scatter)
      if (linked) {
        [...new Set(linked.filter((s) => s >= 0))].sort((a, b) => a - b).forEach((s, id) => { bigIds[s] = id; });
      }
      const smallIds = st.index.map((_, k) => (linked && linked[k] >= 0 ? bigIds[linked[k]] : -2));
      const tagged = bigIds.filter((i) => i >= 0).length > PALETTE.length;
      const badSet = new Set(r.stage === "value" ? r.bad : []);
      const dimLabel = `dim=${st.dim}`;
      const d = r.ok || r.stage === "value" || r.stage === "size" ? this.dimIndex() : null;
      this.figure.textContent = "";
      this.figure.setAttribute("aria-label", scatter ? this.t.figureScatter : this.t.figure);
      this.cells = {index: {}, big: {}, small: {}};
      if (!scatter) {
        this.panel("input", `input  ${tuple(st.inputShape)}`, st.inputShape, xvalues, bigIds, {arrow: d, arrowLabel: dimLabel, quiet: !!linked});
        this.panel("index", `index  ${tuple(st.indexShape)}`, st.indexShape, st.index, smallIds, {editable: true, bad: badSet, tagged});
        if (r.ok) this.panel("out", `out = input.gather(${st.dim}, index)  ${tuple(r.shape)}`, r.shape, r.values, smallIds, {tagged});
      } else {
        this.panel("src", `src  ${tuple(st.indexShape)}`, st.indexShape, svalues, smallIds, {tagged});
        this.panel("index", `index  ${tuple(st.indexShape)}`, st.indexShape, st.index, smallIds, {editable: true, bad: badSet, tagged});
        if (r.ok) {
          const twice = new Set(r.writes.map((w, s) => (w.length > 1 ? s : -1)).filter((s) => s >= 0));
          this.panel("out", `out = zeros.scatter(${st.dim}, index, src)  ${tuple(r.shape)}`, r.shape, r.values, bigIds,
            {arrow: d, arrowLabel: dimLabel, quiet: true, bad: twice, tagged});
        }
      }
      // the result line
      this.result.textContent = "";
      this.result.className = "gx-result" + (r.ok ? "" : " gx-error");
      if (r.ok) {
        el("code", {}, this.result, `out.shape = torch.Size(${list(r.shape)})`);
      } else {
        el("span", {class: "gx-error-label"}, this.result, this.t.error + " ");
        el("code", {class: "gx-error-text"}, this.result, `${r.type}: ${r.message}`);
      }
      const notes = [];
      if (prod(st.indexShape) === 0) notes.push(this.t.emptyNote);
      if (this.notWhole !== null && this.notWhole !== undefined) notes.push(this.t.notWhole(this.notWhole));
      if (scatter && r.ok) {
        const twice = r.writes.map((w, s) => (w.length > 1 ? cellName("out", posOf(s, r.shape)) : null)).filter(Boolean);
        if (twice.length) notes.push(this.t.writtenTwice(twice.join(", ")));
      }
      this.note.textContent = notes.join(" ");
      this.note.hidden = !notes.length;
      if (this.code) this.code.textContent = this.pythonCode();
      this.showFormula();
      this.syncEditor();
      if (hadFocus && this.focus !== null) this.focusCell(this.focus);
    }

    pythonCode() {
      const st = this.state;
      const nest = (values, shape) => {
        if (shape.length === 0) return String(values[0]);
        if (shape.length === 1) return "[" + values.join(", ") + "]";
        const step = prod(shape.slice(1)), parts = [];
        for (let i = 0; i < shape[0]; i++) parts.push(nest(values.slice(i * step, (i + 1) * step), shape.slice(1)));
        return "[" + parts.join(", ") + "]";
      };
      const view = (shape) => (shape.length > 1 ? `.view(${shape.join(", ")})` : "");
      const idx = prod(st.indexShape) === 0
        ? `index = torch.empty(${st.indexShape.join(", ")}, dtype=torch.long)`
        : `index = torch.tensor(${nest(st.index, st.indexShape)})`;
      if (st.op === "scatter") {
        const m = prod(st.indexShape);
        return [`src = torch.arange(10, ${10 * (m + 1)}, 10)${view(st.indexShape)}`, idx,
          `zeros = torch.zeros(${st.inputShape.join(", ")}, dtype=torch.long)`,
          `out = zeros.scatter(${st.dim}, index, src)`].join("\n");
      }
      return [`input = torch.arange(0, ${10 * prod(st.inputShape)}, 10)${view(st.inputShape)}`, idx,
        `out = input.gather(${st.dim}, index)`].join("\n");
    }

    syncEditor() {
      const k = this.selected();
      const editable = k !== null;
      this.editInput.disabled = !editable;
      this.editLabel.textContent = editable ? cellName("index", posOf(k, this.state.indexShape)) + " =" : "index";
      if (editable && document.activeElement !== this.editInput) this.editInput.value = this.state.index[k];
    }

    // The formula of the index cell under the pointer (else under focus).
    showFormula() {
      const st = this.state, r = this.last, t = this.t;
      const k = this.hover !== null ? this.hover : this.focus;
      this.formula.textContent = "";
      Object.values(this.cells).forEach((group) => Object.values(group).forEach((c) => c.classList.remove("gx-hot")));
      if (k === null || k >= st.index.length || !(r.ok || r.stage === "value")) {
        this.formula.textContent = t.none;
        this.formula.classList.add("gx-quiet");
        return;
      }
      this.formula.classList.remove("gx-quiet");
      const d = this.dimIndex(), pos = posOf(k, st.indexShape), v = st.index[k];
      const at = (name, p) => cellName(name, p);
      const withIndex = pos.map((p, q) => (q === d ? `[${at("index", pos)}]` : `[${p}]`)).join("");
      const target = pos.slice();
      target[d] = v;
      const ok = r.links[k] >= 0;
      let text;
      if (st.op === "scatter") {
        text = `out${withIndex} = ${at("src", pos)}` + (ok ? `  →  ${at("out", target)} = ${this.valueOf("src", k)}` : `  →  ${at("out", target)}`);
        if (!ok) text += "  ✗ " + t.rangeScatter(v, d, st.inputShape[d]);
      } else {
        text = `${at("out", pos)} = input${withIndex} = ${at("input", target)}` + (ok ? ` = ${10 * r.links[k]}` : "");
        if (!ok) text += "  ✗ " + t.range(v, d, st.inputShape[d]);
      }
      el("code", {}, this.formula, text);
      const hot = [this.cells.index[k], this.cells.small[k]];
      if (ok) hot.push(this.cells.big[r.links[k]]);
      hot.filter(Boolean).forEach((c) => c.classList.add("gx-hot"));
    }

    valueOf(name, k) { return name === "src" ? 10 * (k + 1) : 10 * k; }

    /* One tensor: its title and its cells, a 2-d grid per slice (a 3-d tensor has several).
     * ids: colour id per cell (-1 quiet, -2 plain, else a palette entry). */
    panel(name, title, shape, values, ids, opts) {
      const panel = el("div", {class: "gx-panel"}, this.figure);
      el("div", {class: "gx-title"}, panel, title);
      const slices = el("div", {class: "gx-slices"}, panel);
      const editable = !!opts.editable;
      if (prod(shape) === 0) {
        const svg = el("svg:svg", {width: 80, height: CELL_H + 4, class: "gx-grid", role: "img", "aria-label": `${name} ${tuple(shape)} ${this.t.empty}`}, slices);
        el("svg:rect", {x: 2, y: 2, width: 76, height: CELL_H, fill: PAPER, stroke: EDGE, "stroke-dasharray": "4 3"}, svg);
        el("svg:text", {x: 40, y: 2 + CELL_H / 2, class: "gx-empty", "text-anchor": "middle", "dominant-baseline": "central"}, svg, this.t.empty);
        return;
      }
      const n = shape.length;
      const sshape = [1, 1, 1].slice(0, 3 - n).concat(shape);  // (slices, rows, cols)
      const width = Math.max(CELL_W_MIN, Math.max(...values.map((v) => String(v).length)) * CHAR_W + PAD);
      const rows = sshape[1], cols = sshape[2];
      const left = n >= 2 ? NUM_W : 2, top = HEAD + (n === 3 ? LABEL_H : 0);
      const arrowRoom = opts.arrow !== null && opts.arrow !== undefined;
      const arrowDir = !arrowRoom ? null : (opts.arrow === n - 1 ? "h" : (opts.arrow === n - 2 ? "v" : "slices"));
      const w = left + cols * width + (arrowDir === "v" ? 60 : 4);
      const h = top + rows * CELL_H + (arrowDir === "h" ? 30 : 4);
      for (let s = 0; s < sshape[0]; s++) {
        const svg = el("svg:svg", {width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "gx-grid"}, slices);
        if (!editable) svg.setAttribute("aria-hidden", "true");
        if (n === 3) el("svg:text", {x: left, y: 13, class: "gx-label"}, svg, `${name}[${s}]`);
        for (let j = 0; j < cols && n >= 1; j++) {
          el("svg:text", {x: left + (j + 0.5) * width, y: top - 5, class: "gx-number", "text-anchor": "middle"}, svg, String(j));
        }
        for (let i = 0; i < rows && n >= 2; i++) {
          el("svg:text", {x: left - 4, y: top + (i + 0.5) * CELL_H, class: "gx-number", "text-anchor": "end", "dominant-baseline": "central"}, svg, String(i));
        }
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            const k = (s * rows + i) * cols + j;
            const id = ids[k];
            const face = id >= 0 ? PALETTE[id % PALETTE.length] : (id === -1 && opts.quiet ? QUIET_FACE : PAPER);
            const ink = id === -1 && opts.quiet ? QUIET_INK : INK;
            const pos = posOf(k, shape);
            const g = el("svg:g", {class: "gx-cell", "data-pos": pos.join(",")}, svg);
            const x = left + j * width, y = top + i * CELL_H;
            el("svg:rect", {x, y, width, height: CELL_H, fill: face, stroke: EDGE, "stroke-width": 1, class: "gx-face"}, g);
            el("svg:text", {x: x + width / 2, y: y + CELL_H / 2, fill: ink, class: "gx-value", "text-anchor": "middle", "dominant-baseline": "central"}, g, String(values[k]));
            if (opts.tagged && id >= 0) el("svg:text", {x: x + 3, y: y + 9, class: "gx-tag"}, g, String(id));
            if (opts.bad && opts.bad.has(k)) el("svg:rect", {x: x + 5, y: y + 5, width: width - 10, height: CELL_H - 10, fill: "none", stroke: MARK, "stroke-width": 2.2, class: "gx-mark"}, g);
            el("svg:rect", {x: x + 1.5, y: y + 1.5, width: width - 3, height: CELL_H - 3, fill: "none", class: "gx-ring"}, g);
            if (name === "index") this.cells.index[k] = g;
            else if (name === "out" && this.state.op === "scatter") this.cells.big[k] = g;
            else if (name === "input") this.cells.big[k] = g;
            else this.cells.small[k] = g;
            if (name === "index" || ((name === "out" || name === "src") && this.cells.small[k] === g)) {
              g.addEventListener("pointerenter", () => { this.hover = k; this.showFormula(); });
              g.addEventListener("pointerleave", () => { if (this.hover === k) { this.hover = null; this.showFormula(); } });
            }
            if (editable) {
              g.setAttribute("tabindex", "0");
              g.setAttribute("role", "spinbutton");
              g.setAttribute("data-index-cell", String(k));
              g.setAttribute("aria-label", cellName("index", pos));
              g.setAttribute("aria-valuenow", String(values[k]));
              g.setAttribute("aria-valuemin", String(-MAX_VALUE));
              g.setAttribute("aria-valuemax", String(MAX_VALUE));
              g.setAttribute("aria-describedby", this.id + "-help");
              g.addEventListener("focus", () => { this.focus = k; this.showFormula(); this.syncEditor(); });
              g.addEventListener("keydown", (e) => this.onKey(e, k));
              g.addEventListener("click", () => g.focus());
            }
          }
        }
        if (arrowDir === "h") this.arrow(svg, left, top + rows * CELL_H + 12, left + cols * width, top + rows * CELL_H + 12, opts.arrowLabel, "h");
        if (arrowDir === "v") this.arrow(svg, left + cols * width + 12, top, left + cols * width + 12, top + rows * CELL_H, opts.arrowLabel, "v");
      }
      if (arrowDir === "slices") {
        const svg = el("svg:svg", {width: 200, height: 26, class: "gx-grid gx-slice-arrow", "aria-hidden": "true"}, panel);
        this.arrow(svg, 4, 10, 120, 10, opts.arrowLabel, "h");
      }
    }

    arrow(svg, x1, y1, x2, y2, label, dir) {
      const mid = dir === "h" ? [(x1 + x2) / 2, y1] : [x1, (y1 + y2) / 2];
      const span = dir === "h" ? Math.min(x2 - x1, 90) : Math.min(y2 - y1, 60);
      const a = dir === "h" ? [mid[0] - span / 2, y1, mid[0] + span / 2, y1] : [x1, mid[1] - span / 2, x1, mid[1] + span / 2];
      el("svg:line", {x1: a[0], y1: a[1], x2: a[2], y2: a[3], stroke: MUTED, "stroke-width": 1.4}, svg);
      const [ex, ey] = [a[2], a[3]];
      const head = dir === "h" ? `${ex},${ey} ${ex - 7},${ey - 4} ${ex - 7},${ey + 4}` : `${ex},${ey} ${ex - 4},${ey - 7} ${ex + 4},${ey - 7}`;
      el("svg:polygon", {points: head, fill: MUTED}, svg);
      if (dir === "h") el("svg:text", {x: mid[0], y: y1 + 15, class: "gx-number", "text-anchor": "middle"}, svg, label);
      else el("svg:text", {x: x1 + 7, y: mid[1], class: "gx-number", "dominant-baseline": "central"}, svg, label);
    }
  }

  function mountAll() {
    document.querySelectorAll("div.gather-explorer").forEach((root) => {
      if (!root.gatherExplorer) root.gatherExplorer = new Explorer(root);
    });
  }

  window.gatherExplorer = {compute, visitOrder, mountAll};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
