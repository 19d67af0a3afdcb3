// The profile report: the kernels of a profile as a call tree (or a flat list), sortable by the
// predicted value at the target configuration, by growth, error or band width; a click on a kernel
// draws its model, its band and its measurements as SVG from the page's data (automodel/output/report/profile.py).
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
  const deep = kernels.some(function (r) { return r.path.indexOf("->") >= 0; });
  const state = { metric: metrics[0], view: deep ? "tree" : "flat", sort: "at", desc: true, filter: "", limit: ROWS,
    closed: new Set(), open: -1 };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "";
    const a = Math.abs(v);
    const n = digits || 4;
    const text = (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toExponential(n - 1) : v.toPrecision(n);
    if (text.indexOf("e") >= 0) return text.replace(/\.?0+e/, "e");
    return text.indexOf(".") >= 0 ? text.replace(/\.?0+$/, "") : text;
  }
  function growthHtml(g, q) {
    if (!g) return "";
    const e = g[0], l = g[1], name = esc(P[q]);
    if (e === 0 && l === 0) return "1";
    let out = e === 0 ? "" : name + (e === 1 ? "" : "<sup>" + fmt(e, 3) + "</sup>");
    if (l) out += (out ? " " : "") + "log<sub>2</sub>" + (l > 1 ? "<sup>" + l + "</sup>" : "") + name;
    return out;
  }
  // -- the model, evaluated here (the factors of automodel/output/report/terms.py) -----------------------
  function factor(f, v) {
    const x = v[f[1]];
    if (f[0] === "w") return (f[2] ? Math.pow(x + f[4], f[2]) : 1) * (f[3] ? Math.pow(Math.log2(x), f[3]) : 1);
    if (f[0] === "s") {
      const z = x - f[2] - (f[3] >= 0 ? f[4] * v[f[3]] : 0), ez = Math.exp(-Math.abs(z));
      return x * (z >= 0 ? 1 / (1 + ez) : ez / (1 + ez));
    }
    if (f[0] === "c") return Math.ceil(Math.log2(x) - 1e-12);
    if (f[0] === "k") return Math.pow(Math.min(x, f[2]), f[3]);
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
      const mark = c[0] === state.sort ? (state.desc ? "desc" : "asc") : "";
      return '<th data-sort="' + c[0] + '" class="' + mark + '"' + (c[0] ? ' title="sort"' : "") + ">" +
        esc(c[1]) + "</th>";
    }).join("") + "</tr>";
  }
  function nameCell(item) {
    const r = item.kernel, node = item.node;
    const open = node && node.children.length ? (state.closed.has(node.id) ? "\u25B8" : "\u25BE") : "";
    const own = r ? r.path.split("->").pop() + (r.metric ? " [" + r.metric + "]" : "") : "";
    const text = state.view === "flat" || state.filter ? r.label : (node ? node.part : own);
    return '<td class="name" style="padding-left:' + (8 + 16 * item.depth) + 'px"><span class="toggle">' + open +
      "</span>" + esc(text) + "</td>";
  }
  function row(item, most) {
    const r = item.kernel, node = item.node;
    const where = node ? ' data-node="' + esc(node.id) + '"' : "";
    if (!r) return "<tr" + where + ">" + nameCell(item) + '<td colspan="' + (columns.length - 1) + '"></td></tr>';
    const cls = (r.i === state.open ? "open" : "") + (r.at === undefined ? " failed" : "");
    const width = r.at > 0 && most > 0 ? Math.max(1, Math.round(40 * r.at / most)) : 0;
    const band = isFinite(r.band) && r.band !== null ? "\u00D7/\u00F7 " + fmt(r.band, 3) : "";
    return '<tr data-i="' + r.i + '" class="' + cls + '"' + where + ">" + nameCell(item) +
      "<td><code>" + esc(r.formula ? "T = " + r.formula : "no model: " + r.note) + "</code></td>" +
      P.map(function (q, i) { return "<td>" + growthHtml(r.growth && r.growth[i], i) + "</td>"; }).join("") +
      '<td class="num">' + fmt(r.error) + '</td><td class="num">' + band + '</td><td class="num">' +
      '<span class="bar" style="width:' + width + 'px"></span>' + fmt(r.at) + "</td></tr>";
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
  function curves(r, q) {
    // the model (or a template's samples) over parameter q, its band, and the measurements where the
    // other parameters are at their largest measured value
    const lo = r.ranges[q][0], trained = r.ranges[q][1], hi = Math.max(D.reach * trained, D.at[q]);
    const logX = lo > 0, xs = geom(lo, hi, 120), sx = geom(lo, hi, S), part = [q * S, q * S + S];
    const fixed = r.ranges.map(function (g) { return g[1]; });
    const curve = xs.map(function (x) {
      if (!r.model) return interp(sx, r.pred.slice(part[0], part[1]), x, logX);
      const v = fixed.slice();
      v[q] = x;
      return evaluate(r.model, v);
    });
    const ratio = function (ends) {
      return xs.map(function (x, i) { return curve[i] * interp(sx, ends.slice(part[0], part[1]), x, logX); });
    };
    const points = [], m = r.y ? r.y.length : 0;
    for (let i = 0; i < m; i++) {
      const here = P.every(function (_, j) {
        return j === q || Math.abs(r.x[j * m + i] - fixed[j]) <= 1e-6 * Math.abs(fixed[j]);
      });
      if (here) points.push([r.x[q * m + i], r.y[i]]);
    }
    return { lo: lo, hi: hi, trained: trained, logX: logX, xs: xs, curve: curve, lower: ratio(r.lo),
      upper: ratio(r.hi), points: points };
  }
  function scales(c, box) {
    // the axes' ranges and the maps from data to the picture
    const all = c.curve.concat(c.lower, c.upper, c.points.map(function (p) { return p[1]; }))
      .filter(function (v) { return isFinite(v); });
    let ymin = Math.min.apply(null, all), ymax = Math.max.apply(null, all);
    const logY = ymin > 0 && ymax / ymin > 10;
    if (!logY) { const pad = 0.06 * (ymax - ymin || Math.abs(ymax) || 1); ymin -= pad; ymax += pad; }
    const share = function (v, a, b, log) { return log ? Math.log(v / a) / Math.log(b / a) : (v - a) / (b - a); };
    return { ymin: ymin, ymax: ymax, logY: logY,
      X: function (x) { return box.L + (box.W - box.L - box.R) * share(x, c.lo, c.hi, c.logX); },
      Y: function (y) { return box.T + (box.H - box.T - box.B) * (1 - share(y, ymin, ymax, logY)); } };
  }
  function grid(svg, c, s, box) {
    ticks(c.lo, c.hi, c.logX).forEach(function (t) {
      el("line", { x1: s.X(t), x2: s.X(t), y1: box.T, y2: box.H - box.B, class: "gridline" }, svg);
      el("text", { x: s.X(t), y: box.H - box.B + 15, "text-anchor": "middle" }, svg, fmt(t, 5));
    });
    ticks(s.ymin, s.ymax, s.logY).forEach(function (t) {
      el("line", { x1: box.L, x2: box.W - box.R, y1: s.Y(t), y2: s.Y(t), class: "gridline" }, svg);
      el("text", { x: box.L - 5, y: s.Y(t) + 4, "text-anchor": "end" }, svg, fmt(t, 3));
    });
    const beyond = s.X(c.trained);
    el("rect", { x: beyond, y: box.T, width: box.W - box.R - beyond, height: box.H - box.T - box.B, fill: "#eef0f4" },
      svg);
  }
  function model(svg, c, s) {
    const shown = function (v) { return isFinite(v) && (!s.logY || v > 0); };
    const edge = function (ends, clip) {
      return c.xs.map(function (x, i) {
        return shown(c.lower[i]) && shown(c.upper[i]) ? s.X(x) + "," + s.Y(clip(ends[i])) : null;
      }).filter(Boolean);
    };
    const band = edge(c.lower, function (v) { return Math.max(v, s.ymin); })
      .concat(edge(c.upper, function (v) { return Math.min(v, s.ymax); }).reverse());
    if (band.length) {
      el("polygon", { points: band.join(" "), fill: "#2f6fb3", "fill-opacity": 0.16, class: "band" }, svg);
    }
    [[true, ""], [false, "6 4"]].forEach(function (part) {  // solid on the data, dashed beyond
      const line = c.xs.map(function (x, i) {
        return (x <= c.trained * 1.0001) === part[0] && shown(c.curve[i]) ? s.X(x) + "," + s.Y(c.curve[i]) : null;
      }).filter(Boolean);
      if (line.length > 1) {
        el("polyline", { points: line.join(" "), fill: "none", stroke: "#2f6fb3", "stroke-width": 2,
          "stroke-dasharray": part[1], class: "curve" }, svg);
      }
    });
  }
  function marks(svg, r, q, c, s, box) {
    c.points.forEach(function (p) {
      const dot = el("circle", { cx: s.X(p[0]), cy: s.Y(p[1]), r: 4, fill: "#1d2330", class: "point" }, svg);
      el("title", {}, dot, P[q] + " = " + fmt(p[0]) + ": " + fmt(p[1]) + " " + D.unit + " (measured)");
    });
    const at = D.at[q];
    if (!(at >= c.lo && at <= c.hi)) return;
    el("line", { x1: s.X(at), x2: s.X(at), y1: box.T, y2: box.H - box.B, stroke: "#b3402f", "stroke-dasharray": "3 3" },
      svg);
    if (P.length === 1 && isFinite(r.at) && (!s.logY || r.at > 0)) {
      const star = el("circle", { cx: s.X(at), cy: s.Y(r.at), r: 5, fill: "#b3402f" }, svg);
      el("title", {}, star, "target " + P[q] + " = " + fmt(at) + ": " + fmt(r.at) + " " + D.unit);
    }
  }
  function panel(r, q) {
    const box = { W: 560, H: 300, L: 64, R: 12, T: 22, B: 40 };
    const c = curves(r, q), s = scales(c, box);
    const svg = el("svg", { viewBox: "0 0 " + box.W + " " + box.H, width: box.W, height: box.H, role: "img" });
    grid(svg, c, s, box);
    model(svg, c, s);
    marks(svg, r, q, c, s, box);
    el("line", { x1: box.L, x2: box.L, y1: box.T, y2: box.H - box.B, stroke: "#888" }, svg);
    el("line", { x1: box.L, x2: box.W - box.R, y1: box.H - box.B, y2: box.H - box.B, stroke: "#888" }, svg);
    const label = P[q] + (P.length > 1 ? " (others at their largest measured value)" : "");
    el("text", { x: (box.L + box.W - box.R) / 2, y: box.H - 6, "text-anchor": "middle" }, svg, label);
    const middle = (box.T + box.H - box.B) / 2;
    el("text", { x: 14, y: middle, "text-anchor": "middle", transform: "rotate(-90 14 " + middle + ")" }, svg, D.unit);
    return svg;
  }
  function summary(r) {
    if (r.at === undefined) return "";
    const level = Math.round(100 * D.level) + " % band \u00D7/\u00F7 " + fmt(r.band, 3);
    return "<p>predicted at the target: <b>" + fmt(r.at) + " " + esc(D.unit) + "</b>; " + level + " (between " +
      fmt(r.at / r.band) + " and " + fmt(r.at * r.band) + "); error (" + esc(D.metric) + ") " + fmt(r.error) + "</p>";
  }
  function open(i) {
    const r = kernels[i], box = document.getElementById("kplot");
    state.open = i;
    document.querySelectorAll("#kernels tr.open").forEach(function (t) { t.classList.remove("open"); });
    const tr = document.querySelector('#kernels tr[data-i="' + i + '"]');
    if (tr) tr.classList.add("open");
    box.innerHTML = "<h3>" + esc(r.label) + "</h3><p><code>" + esc(r.formula ? "T = " + r.formula : "no model") +
      "</code></p>" + (r.note ? '<p class="warn">' + esc(r.note) + "</p>" : "") + summary(r);
    if (r.at === undefined) return;
    P.forEach(function (q, j) { box.appendChild(panel(r, j)); });
    const legend = document.createElement("p");
    legend.className = "legend";
    legend.textContent = "solid: inside the measured range; dashed, grey background: beyond it; shaded: the " +
      Math.round(100 * D.level) + " % band of one run; dots: measured (median of the repetitions; hover for " +
      "values); red: the target";
    box.appendChild(legend);
  }
  // -- controls --------------------------------------------------------------------------------------
  const controls = document.getElementById("controls");
  const options = metrics.map(function (m) {
    return '<option value="' + esc(m) + '">' + esc(m || "(no metric)") + "</option>";
  }).join("");
  const choose = metrics.length > 1 ? '<label>metric <select id="metric">' + options + "</select></label>" : "";
  controls.innerHTML = choose +
    '<label>view <select id="view"><option value="tree">call tree</option><option value="flat">flat list</option>' +
    "</select></label>" +
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
