"""The documentation site: it builds offline with warnings as errors (the gallery executed), every
internal link and image resolves, the configuration reference lists every field of every
registered part, every module has an API page, and the main page types render in headless
Chromium (no blank page, no missing image, no dead in-page link). One build serves every test.

CI installs Sphinx and the theme with the ``test`` extra and Chromium with ``.ci/run``; without
them the tests are skipped.
"""
from __future__ import annotations

import dataclasses
import html
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The pages the browser test renders: the index, a gallery page, the configuration reference, an API page.
BROWSER_PAGES = ("index.html", "auto_examples/plot_own_population.html", "configuration.html",
                 "api/generated/simstudy.registry.html")


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory) -> Path:
    """The site built once: ``-E -W --keep-going``, the gallery executed."""
    pytest.importorskip("sphinx")
    pytest.importorskip("pydata_sphinx_theme")
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("numpydoc")
    out = tmp_path_factory.mktemp("docs") / "html"
    env = {**os.environ, "MPLBACKEND": "Agg", "SIMSTUDY_CACHE": str(out.parent / "cache")}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-j", "2", "-b", "html",
                           str(DOCS), str(out)], capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"the docs build failed:\n{proc.stderr[-6000:]}"
    return out


class _Page(HTMLParser):
    """The ids, links and image sources of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _local(target: str) -> bool:
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc and not target.startswith(("mailto:", "javascript:"))


def test_docs_build_offline_without_warnings(built_docs):
    for page in ("index.html", "getting_started/index.html", "user_guide/index.html", "configuration.html",
                 "reproductions/index.html", "statistics/index.html", "auto_examples/index.html", "api/index.html",
                 "benchmarks.html", "changelog.html", "developer/index.html"):
        assert (built_docs / page).is_file(), page
    text = (built_docs / "index.html").read_text()
    assert "<math" not in text or "mathjax" not in text.lower()        # MathML, no script from a CDN
    for page in built_docs.rglob("*.html"):
        assert "cdn.jsdelivr" not in page.read_text(encoding="utf-8"), page


def test_every_internal_link_and_image_resolves(built_docs):
    """Crawl the built site: every local link points at an existing file, every #anchor at an id."""
    pages = {p.resolve(): _parse(p) for p in built_docs.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for target in page.links + page.images:
            if not _local(target) or target.startswith("data:"):
                continue
            parts = urlsplit(target)
            file = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not file.exists():
                broken.append(f"{path.relative_to(built_docs.resolve())}: {target}")
                continue
            if parts.fragment and file.suffix == ".html":
                ids = pages[file].ids if file in pages else _parse(file).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(built_docs.resolve())}: {target} (no such anchor)")
    assert not broken, "\n".join(broken[:40])


def _registry_parts():
    """(group, name, field names, defaults) of every registered part and runner preset, read
    independently of the page generator."""
    from hydra.core.config_store import ConfigStore
    from omegaconf import OmegaConf

    from simstudy.cli.hydra import register_configs
    from simstudy.engine.config import RunnerConfig
    from simstudy.registry import LEARNERS, POPULATIONS, STUDIES

    for group, registry in (("study", STUDIES), ("population", POPULATIONS), ("learner", LEARNERS)):
        for name, entry in registry.items():
            config = entry.load_config()
            if isinstance(config, dict):
                yield group, name, list(config), [None] * len(config)
            elif isinstance(config, type):
                fields = dataclasses.fields(config)
                yield group, name, [f.name for f in fields], [None] * len(fields)
            else:
                values = [getattr(config, f.name) for f in dataclasses.fields(config)]
                # a group of fields (a study's targets) as a mapping: its row shows its fields' defaults below it
                yield group, name, [f.name for f in dataclasses.fields(config)], [
                    dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for v in values]
    register_configs()
    for file_name, node in ConfigStore.instance().repo["runner"].items():
        values = [node.node[f.name] for f in dataclasses.fields(RunnerConfig)]
        # a group of settings (runner.submitit) as a mapping: its fields have rows of their own
        values = [OmegaConf.to_container(v) if OmegaConf.is_config(v) else v for v in values]
        yield "runner", file_name.removesuffix(".yaml"), [f.name for f in dataclasses.fields(RunnerConfig)], values


def _sections(page_html: str) -> dict[str, str]:
    """The HTML of each ``<section id=...>`` of the configuration page, by id."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'<section id="([^"]+)"', page_html)]
    return {sid: page_html[start:(starts[i + 1][0] if i + 1 < len(starts) else len(page_html))]
            for i, (start, sid) in enumerate(starts)}


def _fresh_registry_parts() -> list:
    """:func:`_registry_parts` as a fresh process sees them (as the docs build did): other tests
    register parts of their own in this process."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from test_docs import _registry_parts; "
            "print(json.dumps(list(_registry_parts()), default=str))")
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_configuration_reference_lists_every_field_of_every_part(built_docs):
    page = (built_docs / "configuration.html").read_text(encoding="utf-8")
    sections = _sections(page)
    checked = 0
    for group, name, fields, defaults in _fresh_registry_parts():
        sid = f"{group}-{name}".replace("_", "-").lower()
        assert sid in sections, f"{group}={name} has no section in the configuration reference"
        body = sections[sid]
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
        cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
                 for r in rows]
        by_field = {c[0]: c for c in cells if c}
        for field, default in zip(fields, defaults):
            assert field in by_field, f"{group}={name}: field {field} missing"
            _, type_name, shown, role, meaning = by_field[field]
            assert type_name and role and len(meaning) > 10, f"{group}={name}.{field}: {by_field[field]}"
            if isinstance(default, (int, float, str)) and not isinstance(default, bool) and default != "???":
                assert shown == str(default), f"{group}={name}.{field}: default {shown!r}, registry {default!r}"
            checked += 1
    assert checked > 100


def test_every_module_has_an_api_page(built_docs):
    import simstudy

    modules = [m.name for m in pkgutil.walk_packages(simstudy.__path__, "simstudy.")
               if not any(part.startswith("_") for part in m.name.split("."))]
    missing = [m for m in modules if not (built_docs / "api" / "generated" / f"{m}.html").is_file()]
    assert not missing, missing
    protocols = (built_docs / "api" / "protocols.html").read_text(encoding="utf-8")
    for name in ("Population", "Learner", "Loss", "Study", "Registry", "KFold"):
        assert name in protocols, name


def test_gallery_examples_ran_and_show_their_output(built_docs):
    gallery = built_docs / "auto_examples"
    pages = sorted(p for p in gallery.glob("plot_*.html"))
    assert len(pages) >= 8
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "sphx-glr-script-out" in text or "sphx-glr-single-img" in text or "<table" in text, page.name


def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _render(browser: str, url: str, *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                               "--disable-extensions", "--no-first-run", f"--user-data-dir={profile}",
                               "--virtual-time-budget=8000", *extra, url], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("page", BROWSER_PAGES)
def test_page_renders_in_a_browser(built_docs, page, tmp_path):
    """Chromium loads the page offline: text shown, every image decoded, every #anchor present,
    and the screenshot is not blank."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium (apt-get install -y chromium)")
    url = (built_docs / page).resolve().as_uri()
    dom = _render(browser, url, "--dump-dom")
    match = re.search(r'data-docs-check="([^"]*)"', dom.stdout)
    assert match, f"{page}: the page did not load or its check did not run ({dom.stderr[-500:]})"
    check = json.loads(html.unescape(match.group(1)))
    assert check["text"] > 300, f"{page}: almost no text ({check})"
    assert not check["broken"], f"{page}: images that did not decode: {check['broken']}"
    assert not check["bad_anchors"], f"{page}: links to missing anchors: {check['bad_anchors']}"
    if page.startswith(("index", "auto_examples")):
        assert check["images"] >= 1, f"{page}: no image"
    shot = tmp_path / "page.png"
    _render(browser, url, f"--screenshot={shot}", "--window-size=1280,1000", "--hide-scrollbars")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.std() > 0.05, f"{page}: the screenshot is blank"
