// The profile report: the kernels of a profile as a call tree (or a flat list), sortable by the
// predicted value at the target configuration, by growth, error or band width; a click on a kernel
// draws its model, its band and its measurements as SVG from the page's data (automodel/report/profile.py).
"use strict";
{  // a block: its names stay out of the page's global scope
  const D = JSON.parse(document.getElementById("profile-data").textContent);
  const P = D.params, S = D.samples, ROWS = 500, SVGNS = "http://www.w3.org/2000/svg";
  const kernels = D.kernels.map(function (r, i) {
    r.i = i;
    r.label = r.name || (r.path + (r.metric ? " [" + r.metric + "]" : ""));
    r.low = r.label.toLowerCase();
    return r;
  });
  const metrics = Array.from(new Set(kernels.map(function (r) { return r.metric; })));
  const state = { metric: metrics[0], view: kernels.some(function (r) { return r.path.indexOf("->") >= 0; }) ?
    "tree" : "flat", sort: "at", desc: true, filter: "", limit: ROWS, closed: new Set(), open: -1 };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "";
    const a = Math.abs(v);
    const text = (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toExponential((digits || 4) - 1) : v.toPrecision(digits || 4);
    return text.indexOf("e") >= 0 ? text.replace(/\.?0+e/, "e") : (text.indexOf(".") >= 0 ? text.replace(/\.?0+$/, "") : text);
  }
  function growthHtml(g, q) {
    if (!g) return "";
    const e = g[0], l = g[1], name = esc(P[q]);
    if (e === 0 && l === 0) return "1";
    let out = e === 0 ? "" : name + (e === 1 ? "" : "<sup>" + fmt(e, 3) + "</sup>");
    if (l) out += (out ? " " : "") + "log<sub>2</sub>" + (l > 1 ? "<sup>" + l + "</sup>" : "") + name;
    return out;
  }
  // -- the model, evaluated here (the factors of automodel/report/terms.py) -----------------------
  function factor(f, v) {
    const x = v[f[1]];
    if (f[0] === "w") return (f[2] ? Math.pow(x + f[4], f[2]) : 1) * (f[3] ? Math.pow(Math.log2(x), f[3]) : 1);
    if (f[0] === "s") {
      const z = x - f[2] - (f[3] >= 0 ? f[4] * v[f[3]] : 0), ez = Math.exp(-Math.abs(z));
      return x * (z >= 0 ? 1 / (1 + ez) : ez / (1 + ez));
    }
    if (f[0] === "c") return Math.ceil(Math.log2(x) - 1e-12);
    return Math.min(1, x - 1);
  }
  function evaluate(model, v) {
    let total = 0;
    for (let k = 0; k < model.length; k += 2) {
      let t = model[k + 1];
      D.terms[model[k]].forEach(function (f) { t *= factor(f, v); });
      total += t;
    }
    return total;
  }
  // -- sorting, the tree, the rows ------------------------------------------------------------------
  function value(r) {
    if (state.sort === "name") return r.label;
    if (state.sort.indexOf("growth") === 0) {
      const g = r.growth && r.growth[+state.sort.slice(6)];
      return g ? g[0] + g[1] * 1e-3 : -Infinity;
    }
    const v = r[state.sort];
    return (v === null || v === undefined) ? -Infinity : v;
  }
  function compare(a, b) {
    const x = a.key, y = b.key;
    const order = x < y ? -1 : (x > y ? 1 : 0);
    return state.desc ? -order : order;
  }
  function tree(list) {
    const roots = [], index = new Map();
    list.forEach(function (r) {
      let parent = null, path = "";
      r.path.split("->").forEach(function (part, depth) {
        path = depth ? path + "->" + part : part;
        let node = index.get(path);
        if (!node) {
          node = { id: path, part: part, depth: depth, children: [], kernels: [] };
          index.set(path, node);
          (parent ? parent.children : roots).push(node);
        }
        parent = node;
      });
      parent.kernels.push(r);
    });
    function keyOf(node) {  // a node sorts by the most of its subtree (name: its own)
      node.children.forEach(keyOf);
      const keys = node.kernels.map(value).concat(node.children.map(function (c) { return c.key; }));
      node.key = state.sort === "name" ? node.part : keys.reduce(function (a, b) { return a > b ? a : b; }, -Infinity);
    }
    roots.forEach(keyOf);
    return roots;
  }
  function visibleRows() {
    const list = kernels.filter(function (r) {
      return r.metric === state.metric && (!state.filter || r.low.indexOf(state.filter) >= 0);
    });
    if (state.view === "flat" || state.filter) {
      list.forEach(function (r) { r.key = value(r); });
      return list.sort(compare).map(function (r) { return { kernel: r, depth: 0, node: null }; });
    }
    const out = [];
    (function walk(nodes) {
      nodes.sort(compare).forEach(function (node) {
        const own = node.kernels.length === 1 ? node.kernels[0] : null;
        out.push({ kernel: own, depth: node.depth, node: node });
        if (state.closed.has(node.id)) return;
        if (!own) node.kernels.forEach(function (r) { out.push({ kernel: r, depth: node.depth + 1, node: null }); });
        walk(node.children);
      });
    })(tree(list));
    return out;
  }
  const columns = [["name", "kernel"], ["", "formula"]].concat(P.map(function (q, i) {
    return ["growth" + i, "growth in " + q];
  })).concat([["error", "error (" + D.metric + ")"], ["band", Math.round(100 * D.level) + " % band at target"],
    ["at", "at " + P.map(function (q, i) { return q + " = " + fmt(D.at[i]); }).join(", ") +
      " [" + D.unit + "]"]]);
  function head() {
    document.querySelector("#kernels thead").innerHTML = "<tr>" + columns.map(function (c) {
      const mark = c[0] === state.sort ? (state.desc ? " desc" : " asc") : "";
      return '<th data-sort="' + c[0] + '" class="' + mark + '"' + (c[0] ? ' title="sort"' : "") + ">" + esc(c[1]) + "</th>";
    }).join("") + "</tr>";
  }
  function row(item, most) {
    const r = item.kernel, node = item.node;
    const toggle = node && node.children.length ? '<span class="toggle">' + (state.closed.has(node.id) ? "\u25B8" : "\u25BE") + "</span>" :
      '<span class="toggle"></span>';
    const name = node ? node.part : (r.path.split("->").pop() + (r.metric ? " [" + r.metric + "]" : ""));
    const label = '<td class="name" style="padding-left:' + (8 + 16 * item.depth) + 'px">' + toggle + esc(state.view === "flat" || state.filter ? r.label : name) + "</td>";
    if (!r) return '<tr data-node="' + esc(node.id) + '">' + label + '<td colspan="' + (columns.length - 1) + '"></td></tr>';
    const cls = (r.i === state.open ? "open" : "") + (r.at === undefined ? " failed" : "");
    const width = r.at > 0 && most > 0 ? Math.max(1, Math.round(40 * r.at / most)) : 0;
    return '<tr data-i="' + r.i + '" class="' + cls + '"' + (node ? ' data-node="' + esc(node.id) + '"' : "") + ">" + label +
      "<td><code>" + esc(r.formula ? "T = " + r.formula : "no model: " + r.note) + "</code></td>" +
      P.map(function (q, i) { return "<td>" + growthHtml(r.growth && r.growth[i], i) + "</td>"; }).join("") +
      '<td data-v="1">' + fmt(r.error) + '</td><td data-v="1">' + (isFinite(r.band) && r.band !== null ? "\u00D7/\u00F7 " + fmt(r.band, 3) : "") +
      '</td><td data-v="1"><span class="bar" style="width:' + width + 'px"></span>' + fmt(r.at) + "</td></tr>";
  }
  function render() {
    head();
    const rows = visibleRows();
    const most = rows.reduce(function (m, it) { return it.kernel && it.kernel.at > m ? it.kernel.at : m; }, 0);
    document.querySelector("#kernels tbody").innerHTML = rows.slice(0, state.limit).map(function (it) {
      return row(it, most);
    }).join("");
    const more = document.getElementById("more");
    more.hidden = rows.length <= state.limit;
    more.textContent = "show all " + rows.length + " rows (" + state.limit + " shown)";
    document.body.setAttribute("data-ready", "1");
  }
  // -- the plot of one kernel ------------------------------------------------------------------------
  function el(tag, attrs, parent, text) {
    const node = document.createElementNS(SVGNS, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function geom(lo, hi, n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(lo > 0 ? lo * Math.pow(hi / lo, i / (n - 1)) : lo + (hi - lo) * i / (n - 1));
    return out;
  }
  function interp(xs, ys, x, log) {
    const t = log ? Math.log(x) : x, a = xs.map(function (v) { return log ? Math.log(v) : v; });
    let j = 1;
    while (j < a.length - 1 && a[j] < t) j++;
    const w = (t - a[j - 1]) / (a[j] - a[j - 1] || 1);
    return ys[j - 1] === null || ys[j] === null ? NaN : ys[j - 1] + w * (ys[j] - ys[j - 1]);
  }
  function ticks(lo, hi, log) {
    if (!log) { const step = (hi - lo) / 5; return [0, 1, 2, 3, 4, 5].map(function (i) { return lo + i * step; }); }
    const base = Math.log2(hi / lo) <= 14 ? 2 : 10, out = [];
    for (let e = Math.floor(Math.log(lo) / Math.log(base)); Math.pow(base, e) <= hi * 1.0001; e++) {
      if (Math.pow(base, e) >= lo * 0.9999) out.push(Math.pow(base, e));
    }
    const every = Math.ceil(out.length / 8);
    return out.filter(function (t, i) { return i % every === 0; });
  }
  function panel(r, q) {
    const W = 560, H = 300, L = 64, R = 12, T = 22, B = 40;
    const lo = r.ranges[q][0], trained = r.ranges[q][1], hi = Math.max(D.reach * trained, D.at[q]);
    const logX = lo > 0, xs = geom(lo, hi, 120), sx = geom(lo, hi, S);
    const fixed = r.ranges.map(function (g) { return g[1]; });
    const curve = xs.map(function (x) {
      if (!r.model) return interp(sx, r.pred.slice(q * S, q * S + S), x, logX);
      const v = fixed.slice(); v[q] = x; return evaluate(r.model, v);
    });
    const lower = xs.map(function (x, i) { return curve[i] * interp(sx, r.lo.slice(q * S, q * S + S), x, logX); });
    const upper = xs.map(function (x, i) { return curve[i] * interp(sx, r.hi.slice(q * S, q * S + S), x, logX); });
    const pts = [];
    if (r.y) {
      const m = r.y.length;
      for (let i = 0; i < m; i++) {
        let here = true;
        for (let j = 0; j < P.length; j++) if (j !== q && Math.abs(r.x[j * m + i] - fixed[j]) > 1e-6 * Math.abs(fixed[j])) here = false;
        if (here) pts.push([r.x[q * m + i], r.y[i]]);
      }
    }
    const all = curve.concat(lower, upper, pts.map(function (p) { return p[1]; })).filter(function (v) { return isFinite(v); });
    let ymin = Math.min.apply(null, all), ymax = Math.max.apply(null, all);
    const logY = ymin > 0 && ymax / ymin > 10;
    if (!logY) { const pad = 0.06 * (ymax - ymin || Math.abs(ymax) || 1); ymin -= pad; ymax += pad; }
    const X = function (x) { return L + (W - L - R) * (logX ? Math.log(x / lo) / Math.log(hi / lo) : (x - lo) / (hi - lo)); };
    const Y = function (y) { return T + (H - T - B) * (1 - (logY ? Math.log(y / ymin) / Math.log(ymax / ymin) : (y - ymin) / (ymax - ymin))); };
    const svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img" });
    ticks(lo, hi, logX).forEach(function (t) {
      el("line", { x1: X(t), x2: X(t), y1: T, y2: H - B, class: "gridline" }, svg);
      el("text", { x: X(t), y: H - B + 15, "text-anchor": "middle" }, svg, fmt(t, 5));
    });
    ticks(ymin, ymax, logY).forEach(function (t) {
      el("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "gridline" }, svg);
      el("text", { x: L - 5, y: Y(t) + 4, "text-anchor": "end" }, svg, fmt(t, 3));
    });
    el("rect", { x: X(trained), y: T, width: W - R - X(trained), height: H - T - B, fill: "#eef0f4" }, svg);
    const ok = function (i) { return isFinite(lower[i]) && isFinite(upper[i]) && (!logY || (lower[i] > 0 && upper[i] > 0)); };
    const band = xs.map(function (x, i) { return ok(i) ? X(x) + "," + Y(Math.max(lower[i], ymin)) : null; }).filter(Boolean)
      .concat(xs.map(function (x, i) { return ok(i) ? X(x) + "," + Y(Math.min(upper[i], ymax)) : null; }).filter(Boolean).reverse());
    if (band.length) el("polygon", { points: band.join(" "), fill: "#2f6fb3", "fill-opacity": 0.16, class: "band" }, svg);
    [[true, ""], [false, "6 4"]].forEach(function (part) {
      const line = xs.map(function (x, i) { return (x <= trained * 1.0001) === part[0] && isFinite(curve[i]) && (!logY || curve[i] > 0) ? X(x) + "," + Y(curve[i]) : null; }).filter(Boolean);
      if (line.length > 1) el("polyline", { points: line.join(" "), fill: "none", stroke: "#2f6fb3", "stroke-width": 2, "stroke-dasharray": part[1], class: "curve" }, svg);
    });
    pts.forEach(function (p) {
      const c = el("circle", { cx: X(p[0]), cy: Y(p[1]), r: 4, fill: "#1d2330", class: "point" }, svg);
      el("title", {}, c, P[q] + " = " + fmt(p[0]) + ": " + fmt(p[1]) + " " + D.unit + " (measured)");
    });
    if (D.at[q] >= lo && D.at[q] <= hi) {
      el("line", { x1: X(D.at[q]), x2: X(D.at[q]), y1: T, y2: H - B, stroke: "#b3402f", "stroke-dasharray": "3 3" }, svg);
      if (P.length === 1 && isFinite(r.at) && (!logY || r.at > 0)) {
        const star = el("circle", { cx: X(D.at[q]), cy: Y(r.at), r: 5, fill: "#b3402f" }, svg);
        el("title", {}, star, "target " + P[q] + " = " + fmt(D.at[q]) + ": " + fmt(r.at) + " " + D.unit);
      }
    }
    el("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#888" }, svg);
    el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#888" }, svg);
    el("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, svg, P[q] + (P.length > 1 ? " (others at their largest measured value)" : ""));
    el("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, svg, D.unit);
    return svg;
  }
  function open(i) {
    const r = kernels[i], box = document.getElementById("kplot");
    state.open = i;
    document.querySelectorAll("#kernels tr.open").forEach(function (t) { t.classList.remove("open"); });
    const tr = document.querySelector('#kernels tr[data-i="' + i + '"]');
    if (tr) tr.classList.add("open");
    box.innerHTML = "<h3>" + esc(r.label) + "</h3><p><code>" + esc(r.formula ? "T = " + r.formula : "no model") + "</code></p>" +
      (r.note ? '<p class="warn">' + esc(r.note) + "</p>" : "") +
      (r.at !== undefined ? "<p>predicted at the target: <b>" + fmt(r.at) + " " + esc(D.unit) + "</b>; " + Math.round(100 * D.level) +
        " % band \u00D7/\u00F7 " + fmt(r.band, 3) + " (between " + fmt(r.at / r.band) + " and " + fmt(r.at * r.band) + "); error (" + esc(D.metric) + ") " + fmt(r.error) + "</p>" : "");
    if (r.at === undefined) return;
    P.forEach(function (q, j) { box.appendChild(panel(r, j)); });
    const legend = document.createElement("p");
    legend.className = "legend";
    legend.textContent = "solid: inside the measured range; dashed, grey background: beyond it; shaded: the " +
      Math.round(100 * D.level) + " % band of one run; dots: measured (median of the repetitions; hover for values); red: the target";
    box.appendChild(legend);
  }
  // -- controls --------------------------------------------------------------------------------------
  const controls = document.getElementById("controls");
  controls.innerHTML = (metrics.length > 1 ? '<label>metric <select id="metric">' + metrics.map(function (m) {
    return '<option value="' + esc(m) + '">' + esc(m || "(no metric)") + "</option>"; }).join("") + "</select></label>" : "") +
    '<label>view <select id="view"><option value="tree">call tree</option><option value="flat">flat list</option></select></label>' +
    '<label>filter <input type="search" id="filter" placeholder="kernel name"></label>' +
    '<span class="muted">click a heading to sort, a kernel to draw it</span>';
  document.getElementById("view").value = state.view;
  controls.addEventListener("change", function (ev) {
    if (ev.target.id === "metric") state.metric = ev.target.value;
    if (ev.target.id === "view") state.view = ev.target.value;
    state.limit = ROWS; render();
  });
  document.getElementById("filter").addEventListener("input", function (ev) {
    state.filter = ev.target.value.toLowerCase(); state.limit = ROWS; render();
  });
  document.querySelector("#kernels thead").addEventListener("click", function (ev) {
    const key = ev.target.closest("th") && ev.target.closest("th").getAttribute("data-sort");
    if (!key) return;
    state.desc = key === state.sort ? !state.desc : key !== "name";
    state.sort = key; render();
  });
  document.querySelector("#kernels tbody").addEventListener("click", function (ev) {
    const tr = ev.target.closest("tr");
    if (!tr) return;
    const node = tr.getAttribute("data-node");
    if (node && (ev.target.classList.contains("toggle") || !tr.hasAttribute("data-i"))) {
      if (state.closed.has(node)) state.closed.delete(node); else state.closed.add(node);
      render(); return;
    }
    if (tr.hasAttribute("data-i")) open(+tr.getAttribute("data-i"));
  });
  document.getElementById("more").addEventListener("click", function () { state.limit = Infinity; render(); });
  render();
}
