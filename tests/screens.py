"""Screenshots in the tests: a PNG decoded with the standard library only, and two screenshots compared with a
tolerance (the share of pixels that differ visibly). No image library: the suite installs none, and this is all
the browser tests need (Chromium writes non-interlaced 8-bit RGB or RGBA PNGs).

Two screenshots are compared in the browser the tests drive anyway (`diff_ratio`): decoding PNGs in Python is
slow. To review new references after a change to the pictures on purpose: `PBEM_UPDATE_SCREENSHOTS=1 .venv/bin/python
-m pytest -n 0 tests/test_site_browser.py`, then look at every PNG under tests/screens/ before committing them.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

Pixels = list[list[tuple[int, int, int]]]

def decode_png(data: bytes) -> tuple[int, int, Pixels]:
    """A non-interlaced 8-bit RGB or RGBA PNG (what Chromium writes) as rows of RGB pixels, with the standard
    library only (PNG spec: chunks, zlib stream, per-row filters None/Sub/Up/Average/Paeth)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    assert header is not None
    width, height, depth, colour, _comp, _filter, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([(line[i], line[i + 1], line[i + 2]) for i in range(0, stride, bpp)])
        previous = line
    return width, height, rows


COMPARE_JS = """async ([a, b, threshold]) => {
  const load = (url) => new Promise((done, fail) => {
    const img = new Image(); img.onload = () => done(img); img.onerror = fail; img.src = url; });
  const [x, y] = [await load(a), await load(b)];
  if (x.width !== y.width || x.height !== y.height) { return 1; }
  const pixels = (img) => { const c = document.createElement("canvas"); c.width = img.width;
    c.height = img.height; const g = c.getContext("2d"); g.drawImage(img, 0, 0);
    return g.getImageData(0, 0, img.width, img.height).data; };
  const [p, q] = [pixels(x), pixels(y)];
  let differ = 0;
  for (let i = 0; i < p.length; i += 4) {
    if (Math.max(Math.abs(p[i] - q[i]), Math.abs(p[i + 1] - q[i + 1]), Math.abs(p[i + 2] - q[i + 2])) > threshold) {
      differ++;
    }
  }
  return differ / (x.width * x.height);
}"""


def diff_ratio(page: Any, a: bytes, b: bytes, threshold: int = 48) -> float:
    """The share of pixels of two PNGs that differ by more than `threshold` in some channel (anti-aliasing and
    hinting move a channel by less than that); 1.0 when their sizes differ. Counted by the browser the test
    already drives (a canvas of each image), so the suite needs no image library."""
    urls = ["data:image/png;base64," + base64.b64encode(png).decode() for png in (a, b)]
    return float(page.evaluate(COMPARE_JS, [*urls, threshold]))
