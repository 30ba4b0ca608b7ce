"""The pi process's cache of compiled dataclass methods: a second run compiles nothing, and the classes
behave exactly as the standard library makes them (annotations, defaults, factories, ordering, frozen,
slots, __post_init__, InitVar, ClassVar)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAM = r'''
import json, sys
from pathlib import Path
if sys.argv[1] == "cached":
    from pi_core import dataclass_code
    dataclass_code.install(Path(sys.argv[2]))
import dataclasses
from dataclasses import InitVar, dataclass, field
from typing import ClassVar

@dataclass(order=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    scale: InitVar[int] = 1
    kind: ClassVar[str] = "point"

    def __post_init__(self, scale: int) -> None:
        self.x *= scale

@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    name: str
    size: float = 1.5

p, q = Point(2, tags=["a"], scale=3), Point(1)
f = Frozen(name="n")
try:
    f.name = "m"
    frozen = "mutable"
except dataclasses.FrozenInstanceError:
    frozen = "frozen"
report = {"repr": [repr(p), repr(q), repr(f)], "eq": p == Point(6, 0, ["a"]), "lt": q < p, "hash": hash(f) == hash(Frozen(name="n")),
          "frozen": frozen, "slots": hasattr(f, "__dict__"),
          "annotations": {k: str(v) for k, v in Point.__init__.__annotations__.items()},
          "fields": [x.name for x in dataclasses.fields(Point)]}
if sys.argv[1] == "cached":
    report["compiled"] = dataclass_code.compiled_this_run()
print(json.dumps(report))
'''


def _run(tmp_path: Path, mode: str, cache: Path) -> dict[str, object]:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(program), mode, str(cache)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_second_run_compiles_nothing_and_the_classes_behave_as_the_standard_librarys(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "dataclass-code.marshal"
    (tmp_path / "cache").mkdir()
    plain = _run(tmp_path, "plain", cache)
    first = _run(tmp_path, "cached", cache)
    assert first.pop("compiled") > 0 and cache.exists()
    second = _run(tmp_path, "cached", cache)
    assert second.pop("compiled") == 0
    assert plain == first == second
    assert plain["annotations"] == {"x": "<class 'int'>", "y": "<class 'int'>", "tags": "list[str]",
                                    "scale": "dataclasses.InitVar[int]", "return": "None"}


def test_a_damaged_cache_file_only_means_compiling(tmp_path: Path) -> None:
    cache = tmp_path / "dataclass-code.marshal"
    cache.write_bytes(b"\x00not marshal at all")
    report = _run(tmp_path, "cached", cache)
    assert report.pop("compiled") > 0
    assert report == _run(tmp_path, "plain", cache)
