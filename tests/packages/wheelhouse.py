"""A bare virtual environment with pi installed from its own wheel, offline.

No index is reachable in the tests and pip's cache holds no wheels, so the dependencies come from this
environment: each installed distribution that pi (and pytest, pip, hatchling for building plugins)
needs is packed back into a wheel — its files as installed, a fresh RECORD — and pip installs from that
folder with ``--no-index``. pip resolves pi's declared dependencies against it, so a dependency pi
forgot to declare is missing in the new environment, as it would be for a user.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
#: What the bare environment is built from besides pi: pytest runs a plugin's tests, pip installs,
#: hatchling builds a generated plugin (pip's build isolation takes it from the wheel folder).
ROOTS = ("pi-core-agent", "pytest", "pip", "hatchling")
_SKIPPED_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependency_closure(roots: tuple[str, ...]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``roots`` need, by normalised name (markers evaluated here)."""
    found: dict[str, metadata.Distribution] = {}
    extras: dict[str, set[str]] = {}
    todo = [Requirement(r) for r in roots]
    while todo:
        requirement = todo.pop()
        key = normalise(requirement.name)
        if key in found and set(requirement.extras) <= extras[key]:
            continue
        found[key] = metadata.distribution(requirement.name)
        extras[key] = extras.get(key, set()) | set(requirement.extras)
        for text in found[key].requires or []:
            dependency = Requirement(text)
            marker = dependency.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in extras[key] | {""}):
                todo.append(dependency)
    return found


def _wheel_tag(dist: metadata.Distribution) -> str:
    """``py2.py3-none-any`` style: every tag the distribution's WHEEL file names, compressed."""
    tags = [line.split(":", 1)[1].strip().split("-") for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]
    if not tags:
        raise LookupError(f"{dist.metadata['Name']} was not installed from a wheel")
    return "-".join(".".join(dict.fromkeys(tag[i] for tag in tags)) for i in range(3))


def repack(dist: metadata.Distribution, out: Path) -> Path:
    """A wheel of an installed distribution: the files it installed into site-packages (no byte code)."""
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    target = out / f"{name}-{dist.version}-{_wheel_tag(dist)}.whl"
    records, info_dir = [], ""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for file in dist.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts or file.name in _SKIPPED_FILES:
                # scripts outside site-packages are made again from entry_points.txt
                info_dir = file.parts[0] if file.name == "RECORD" else info_dir
                continue
            source = Path(str(dist.locate_file(file)))
            if not source.is_file():
                continue
            data = source.read_bytes()
            wheel.writestr(file.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{file.as_posix()},sha256={digest},{len(data)}")
        records.append(f"{info_dir}/RECORD,,")
        wheel.writestr(f"{info_dir}/RECORD", "\n".join(records) + "\n")
    return target


def pip_env(**extra: str) -> dict[str, str]:
    """pip without this machine's configuration (its indexes, find-links, constraints) and without an index."""
    env = bare_env()
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_CACHE_DIR": "1", **extra}


def bare_env() -> dict[str, str]:
    """This process's environment without what could lead a child back to the dev environment or pi's test
    settings (``PYTHONPATH``, ``PI_*``, ``PIP_*``, an active venv)."""
    drop = ("PI_", "PIP_", "PYTHON", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def build_pi_wheel(out: Path) -> Path:
    """pi's wheel from this checkout, built as a release would be (hatchling, no dependencies)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(REPO)], check=True, env=pip_env(), timeout=300)
    [wheel] = out.glob("pi_core_agent-*.whl")
    return wheel


@dataclass(frozen=True)
class FreshPi:
    """A venv that has only what pi's wheel declares (plus pytest, pip), and where its wheels came from."""

    root: Path
    wheelhouse: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def script(self, name: str) -> Path:
        return self.root / "bin" / name

    def pip(self, *args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.python), "-m", "pip", *args, "--find-links", str(self.wheelhouse)], cwd=cwd,
                              capture_output=True, text=True, env=pip_env(), timeout=timeout)


def fresh_pi(root: Path) -> FreshPi:
    """Build the wheels and the bare venv under ``root``."""
    wheelhouse = root / "wheels"
    wheelhouse.mkdir(parents=True)
    pi_wheel = build_pi_wheel(wheelhouse)
    for key, dist in dependency_closure(ROOTS).items():
        if key != "pi-core-agent":  # this checkout's own (editable) install is not what users get
            repack(dist, wheelhouse)
    target = root / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    # this environment's pip installs into the new one (pip >= 22.3: --python), pip itself included
    subprocess.run([sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), "install", "-q",
                    "--no-compile", "--find-links", str(wheelhouse), "pip", "pytest", str(pi_wheel)],
                   check=True, env=pip_env(), timeout=600)
    return FreshPi(target, wheelhouse)


__all__ = ["FreshPi", "bare_env", "build_pi_wheel", "dependency_closure", "fresh_pi", "pip_env", "repack"]
