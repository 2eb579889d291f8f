// For the docs' browser test (tests/test_docs.py): once the page has loaded, record on <body> how
// many images it has and how many did not decode, how much text it shows, and which in-page
// links (#anchor) point nowhere. Readers never see it.
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var broken = images.filter(function (img) { return !(img.complete && img.naturalWidth > 0); })
    .map(function (img) { return img.getAttribute("src"); });
  var main = document.querySelector("main") || document.body;
  var badAnchors = Array.prototype.slice.call(document.querySelectorAll('a[href^="#"]'))
    .map(function (a) { return decodeURIComponent(a.getAttribute("href").slice(1)); })
    .filter(function (id) { return id && !document.getElementById(id); });
  document.body.setAttribute("data-docs-check", JSON.stringify({
    images: images.length, broken: broken, text: (main.innerText || "").trim().length,
    tables: document.querySelectorAll("table").length, bad_anchors: badAnchors
  }));
});
