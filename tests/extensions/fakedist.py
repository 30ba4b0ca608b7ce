"""Build real (tiny) installed distributions in a directory, so entry-point discovery sees them."""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_dist(site: Path, name: str, *, modules: dict[str, str], entry_points: dict[str, str],
              version: str = "1.0") -> Path:
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{ep} = {target}\n" for ep, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[pi]\n{lines}")
    return site
