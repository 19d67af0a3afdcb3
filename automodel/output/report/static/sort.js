// Sortable tables: a click on a heading of a table.sortable sorts its rows by that column
// (numbers by their data-v value, text alphabetically); a second click reverses the order.
(function () {
  "use strict";
  function key(cell) {
    if (!cell) return "";
    const v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim().toLowerCase() : parseFloat(v);
  }
  function sortBy(table, column, th) {
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const descending = th.classList.contains("asc");
    table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(descending ? "desc" : "asc");
    rows.sort(function (a, b) {
      const x = key(a.cells[column]), y = key(b.cells[column]);
      const order = (typeof x === "number" && typeof y === "number") ? x - y :
        (typeof x === "number" ? -1 : (typeof y === "number" ? 1 : (x < y ? -1 : (x > y ? 1 : 0))));
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.from(table.tHead.rows[0].cells).forEach(function (th, i) {
      th.addEventListener("click", function () { sortBy(table, i, th); });
    });
  });
})();
