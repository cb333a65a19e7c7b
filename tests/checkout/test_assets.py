"""The checkout's own files: no glyph that needs an emoji font, and brand marks that are plain,
self-contained SVG drawn here (nothing fetched from elsewhere)."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.conf import settings

CHECKOUT_FILES_DIRS = ("templates/checkout", "static/checkout")
# Where emoji live, or glyphs that render as emoji: dingbats and miscellaneous symbols, the
# emoji-presentation characters of miscellaneous technical (⌚ ⌛ ⏰ …), geometric shapes
# (▶ ◀ ◼ …) and arrows/stars (⬛ ⭐ …), enclosed alphanumerics, the variation selectors and
# the zero-width joiner that build emoji sequences, and everything outside the Basic
# Multilingual Plane. Typographic punctuation (— · …), ₦ and the box-drawing characters are fine.
EMOJI_RANGES: tuple[tuple[int, int], ...] = (
    (0x200D, 0x200D),
    (0x20E3, 0x20E3),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x21AA),
    (0x2300, 0x23FF),
    (0x24C2, 0x24C2),
    (0x25A0, 0x25FF),
    (0x2600, 0x27BF),
    (0x2900, 0x297F),
    (0x2B00, 0x2BFF),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3299),
    (0xFE00, 0xFE0F),
    (0x10000, 0x10FFFF),
)
_JS_ESCAPE_RE = re.compile(r"\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})")
_CSS_ESCAPE_RE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?")


def checkout_files() -> list[Path]:
    base = Path(settings.BASE_DIR)
    found = [
        path
        for directory in CHECKOUT_FILES_DIRS
        for path in sorted((base / directory).rglob("*"))
        if path.is_file()
    ]
    # The error pages the checkout shows (404, CSRF failure) extend its base template.
    found += [base / "templates" / "404.html", base / "templates" / "403_csrf.html"]
    return found


def is_emoji_risk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in EMOJI_RANGES)


def text_as_rendered(path: Path) -> str:
    """The file's text with HTML character references, JavaScript ``\\u`` escapes and CSS
    escapes resolved, so ``&#8987;`` is caught as surely as the character itself."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".html", ".svg"):
        text = html.unescape(text)
    if path.suffix == ".js":
        text = _JS_ESCAPE_RE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)
    if path.suffix == ".css":
        text = _CSS_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text


def emoji_risks(path: Path) -> list[str]:
    found = []
    for number, line in enumerate(text_as_rendered(path).splitlines(), start=1):
        found += [f"{path.name}:{number}: U+{ord(c):04X}" for c in line if is_emoji_risk(c)]
    return found


def test_the_scan_covers_the_checkout_files() -> None:
    names = {path.name for path in checkout_files()}
    assert {"page.html", "base.html", "checkout.css", "checkout.js", "brand-visa.svg"} <= names


def test_no_checkout_file_needs_an_emoji_font() -> None:
    found = [risk for path in checkout_files() for risk in emoji_risks(path)]
    assert found == []


@pytest.mark.parametrize(
    ("sample", "risky"),
    [
        ("&#8987;", True),  # the hourglass the expired page once showed
        ("&#10003;", True),
        ("\u2715", True),
        ("\U0001f4b3", True),
        ("\u2764\ufe0f", True),
        ("₦7,205.00 — 2 attempts left · Reload…", False),
        ("“quoted” ‘text’ – Test mode", False),
    ],
)
def test_the_scan_tells_emoji_from_typography(tmp_path: Path, sample: str, risky: bool) -> None:
    page = tmp_path / "sample.html"
    page.write_text(f"<p>{sample}</p>", encoding="utf-8")
    assert bool(emoji_risks(page)) is risky


def test_a_js_escape_is_caught_too(tmp_path: Path) -> None:
    script = tmp_path / "sample.js"
    script.write_text('label.textContent = "\\u231B";', encoding="utf-8")
    assert emoji_risks(script) == ["sample.js:1: U+231B"]


# --- the SVG marks -------------------------------------------------------------------------------

SVG_NS = "{http://www.w3.org/2000/svg}"
SVG_FILES = ("brand-verve.svg", "brand-mastercard.svg", "brand-visa.svg", "lock.svg")
ALLOWED_SVG_TAGS = {"svg", "title", "rect", "circle", "path", "text"}


@pytest.mark.parametrize("name", SVG_FILES)
def test_svg_marks_are_simple_self_contained_drawings(name: str) -> None:
    path = Path(settings.BASE_DIR) / "static" / "checkout" / name
    source = path.read_text(encoding="utf-8")
    root = ET.fromstring(source)  # noqa: S314 - our own file
    assert root.tag == f"{SVG_NS}svg"
    assert root.get("viewBox")
    tags = {element.tag.removeprefix(SVG_NS) for element in root.iter()}
    assert tags <= ALLOWED_SVG_TAGS
    title = root.find(f"{SVG_NS}title")
    assert title is not None and title.text
    # Nothing fetched: no links, images, fonts, styles or scripts.
    for forbidden in ("href", "url(", "@import", "@font-face", "<image", "<script", "<style"):
        assert forbidden not in source
    assert re.findall(r"https?://[^\"']+", source) == ["http://www.w3.org/2000/svg"]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("brand-verve.svg", "verve"),
        ("brand-mastercard.svg", "mastercard"),
        ("brand-visa.svg", "VISA"),
    ],
)
def test_each_brand_mark_names_its_network_in_text(name: str, words: str) -> None:
    root = ET.parse(Path(settings.BASE_DIR) / "static" / "checkout" / name).getroot()  # noqa: S314
    texts = [element.text for element in root.iter(f"{SVG_NS}text")]
    assert texts == [words]
