// musify report: search, filters, sorting and paging for the diagnostics table, lazy diffs, doc links.
// Plain DOM code, no library and no network; it reads only the page's own attributes and text.
(function () {
  "use strict";
  var table = document.getElementById("diags");
  var rows = table ? Array.prototype.slice.call(table.tBodies[0].rows) : [];
  var q = document.getElementById("q");
  var selects = Array.prototype.slice.call(document.querySelectorAll("#diagnostics select"));
  var shown = document.getElementById("shown");
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  // Only the first `limit` matching rows are laid out; "show more" raises it (a big run has
  // tens of thousands of rows, and the browser lays out every visible one).
  var more = document.getElementById("more");
  var page = more ? Number(more.getAttribute("data-page")) : Infinity;
  var limit = page;

  function applyFilters() {
    var words = (q.value || "").toLowerCase().split(/\s+/).filter(Boolean);
    var want = selects.map(function (s) { return [s.getAttribute("data-key"), s.value]; })
      .filter(function (kv) { return kv[1]; });
    var n = 0;
    rows.forEach(function (r, i) {
      var ok = words.every(function (w) { return texts[i].indexOf(w) >= 0; }) &&
        want.every(function (kv) { return r.getAttribute("data-" + kv[0]) === kv[1]; });
      var visible = ok && n < limit;
      if (r.hidden === visible) { r.hidden = !visible; }  // touch only the rows that change
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length;
    if (more) {
      document.getElementById("more-row").hidden = n <= limit;
      document.getElementById("not-shown").textContent = Math.max(0, n - limit) + " more match";
    }
  }
  function refilter() { limit = page; applyFilters(); }

  function sortBy(th) {
    var key = th.getAttribute("data-sort");
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    function val(r) {
      if (key === "rank") { return [Number(r.getAttribute("data-rank")), ""]; }
      if (key === "path") { return [0, r.getAttribute("data-file") + "\u0000" + ("00000000" + r.getAttribute("data-line")).slice(-8)]; }
      return [0, r.cells[col].textContent];
    }
    var keyed = rows.map(function (r, i) { return [val(r), i, r]; });
    keyed.sort(function (a, b) {
      if (a[0][0] !== b[0][0]) { return dir * (a[0][0] - b[0][0]); }
      if (a[0][1] !== b[0][1]) { return dir * (a[0][1] < b[0][1] ? -1 : 1); }
      return a[1] - b[1];
    });
    var body = table.tBodies[0];
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) { frag.appendChild(k[2]); });
    body.appendChild(frag);
    rows = keyed.map(function (k) { return k[2]; });
    texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
    applyFilters();  // the first rows of the new order are the ones laid out
  }

  if (table) {
    // typing a word filters once, not once per key: a run can have tens of thousands of rows
    var pending = null;
    q.addEventListener("input", function () {
      clearTimeout(pending);
      pending = setTimeout(refilter, rows.length > 2000 ? 150 : 0);
    });
    selects.forEach(function (s) { s.addEventListener("change", refilter); });
    if (more) { more.addEventListener("click", function () { limit += page; applyFilters(); }); }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(th); } });
    });
  }

  // Diffs are strings in a JSON data block (escaped by musify when the report was written):
  // parsed on the first opening, each built into the page only when its file is opened. A unified
  // diff comes as compact rows (musify/report/diffs.py, `unified_rows`: "@old,new" starts a hunk,
  // then a tag and the highlighted code a line), built into its table here (`table_html`
  // there is the same, in Python); an edits table comes as HTML.
  var diffs = null;
  function diffTable(rows) {
    if (rows.charAt(0) !== "@") { return rows; }
    var out = ["<table class='diff'>"], oldNo = 0, newNo = 0;
    rows.split("\n").forEach(function (row) {
      var tag = row.charAt(0), code = row.slice(1);
      if (tag === "@") {
        var n = code.split(",");
        oldNo = +n[0];
        newNo = +n[1];
        out.push("<tr class='hunk'><td colspan='3'>@@ line " + oldNo + " @@</td></tr>");
        return;
      }
      var cls = tag === "+" ? "add" : (tag === "-" ? "del" : "ctx");
      out.push("<tr class='" + cls + "'><td>" + (tag === "+" ? newNo : oldNo) + "</td><td>" + tag + "</td><td>" +
        code + "</td></tr>");
      if (tag !== "+") { oldNo += 1; }
      if (tag !== "-") { newNo += 1; }
    });
    out.push("</table>");
    return out.join("");
  }
  function openDiff(d) {
    var key = d.getAttribute("data-diff");
    if (key === null || d.querySelector(":scope > .diffbox")) { return; }
    if (diffs === null) { diffs = JSON.parse(document.getElementById("diffs").textContent); }
    var box = document.createElement("div");
    box.className = "diffbox scroll";
    box.innerHTML = diffTable(diffs[key] || "");
    d.appendChild(box);
  }
  document.querySelectorAll("details.file").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) { openDiff(d); } });
  });
  var fq = document.getElementById("fq");
  var fr = document.getElementById("f-ready");
  function filterFiles() {
    var w = (fq.value || "").toLowerCase();
    document.querySelectorAll("details.file").forEach(function (d) {
      d.hidden = (w && d.getAttribute("data-path").toLowerCase().indexOf(w) < 0) ||
        (fr.value && d.getAttribute("data-readiness") !== fr.value);
    });
  }
  if (fq) { fq.addEventListener("input", filterFiles); fr.addEventListener("change", filterFiles); }

  // A link to an explanation opens it.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; openDiff(el); el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
}());
