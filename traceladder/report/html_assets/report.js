// traceladder HTML report: sorting, filtering and opening linked cases. The numbers are all in the
// HTML already; this only rearranges what is there. Data is read from the JSON block and written
// with textContent only — never as markup.
(function () {
  "use strict";
  var dataNode = document.getElementById("report-data");
  var table = document.getElementById("case-table");
  if (!dataNode || !table) return;
  var index = JSON.parse(dataNode.textContent).index;
  var bodies = Array.prototype.slice.call(table.tBodies);
  var form = document.getElementById("filters");
  var search = document.getElementById("f-search");
  var count = document.getElementById("f-count");
  var selects = Array.prototype.slice.call(form.querySelectorAll("select[data-filter]"));
  var VERDICT_ORDER = { FAIL: 0, AGENT_ERROR: 1, NOT_EVALUATED: 2, SKIP: 3, PASS: 4 };

  function matches(row) {
    for (var i = 0; i < selects.length; i++) {
      var key = selects[i].getAttribute("data-filter");
      var want = selects[i].value;
      if (!want) continue;
      if (key === "tool" ? row.tools.indexOf(want) < 0 : row[key] !== want) return false;
    }
    var q = search.value.trim().toLowerCase();
    return !q || row.case.toLowerCase().indexOf(q) >= 0 || row.trace_id.indexOf(q) >= 0;
  }

  function apply() {
    var shown = 0;
    bodies.forEach(function (body) {
      var ok = matches(index[Number(body.getAttribute("data-i"))]);
      body.hidden = !ok;
      if (ok) shown += 1;
    });
    count.textContent = "showing " + shown + " of " + bodies.length;
  }

  function value(row, key) {
    if (key === "verdict") return VERDICT_ORDER.hasOwnProperty(row.verdict) ? VERDICT_ORDER[row.verdict] : 9;
    if (key === "tools") return row.tools.join(", ");
    return row[key];
  }

  function sortBy(th) {
    var key = th.getAttribute("data-key");
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    bodies.sort(function (a, b) {
      var ia = Number(a.getAttribute("data-i")), ib = Number(b.getAttribute("data-i"));
      var x = value(index[ia], key), y = value(index[ib], key);
      var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return (c || ia - ib) * dir;
    });
    bodies.forEach(function (body) { table.appendChild(body); });
  }

  table.querySelectorAll("thead th[data-key]").forEach(function (th) {
    if (th.getAttribute("data-key") === "explanation") return;
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = th.textContent;
    button.title = "sort by " + th.textContent.toLowerCase();
    th.textContent = "";
    th.appendChild(button);
    button.addEventListener("click", function () { sortBy(th); });
  });

  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var body = id ? document.getElementById(id) : null;
    if (!body || !body.classList.contains("case")) return;
    body.hidden = false;
    var details = body.querySelector("details");
    if (details) details.open = true;
  }

  var printed = [];
  window.addEventListener("beforeprint", function () {
    printed = bodies.filter(function (b) {
      var d = b.querySelector("details");
      return !b.hidden && d && !d.open && b.getAttribute("data-verdict") !== "PASS";
    });
    printed.forEach(function (b) { b.querySelector("details").open = true; });
  });
  window.addEventListener("afterprint", function () {
    printed.forEach(function (b) { b.querySelector("details").open = false; });
    printed = [];
  });

  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  window.addEventListener("hashchange", openHash);
  form.hidden = false;
  apply();
  openHash();
})();
