"""`pi update` of a pi installed from its wheel (as users have it, not this checkout): pip decides whether there
is anything newer, `--force` reinstalls it all the same (pi 1.6's flag)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from wheelhouse import FreshPi, pip_env

from pi_core import __version__


def _pi(bare_pi: FreshPi, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the wheel folder stands in for PyPI; pi's pip runs with this environment
    env = {**pip_env(PIP_FIND_LINKS=str(bare_pi.wheelhouse)), "PI_PACKAGE_INSTALLER": "pip",
           "PI_CODING_AGENT_DIR": str(cwd / "agent")}
    return subprocess.run([str(bare_pi.script("pi")), *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300)


def test_update_leaves_an_up_to_date_pi_alone_and_force_reinstalls_it(tmp_path: Path, bare_pi: FreshPi) -> None:
    plain = _pi(bare_pi, tmp_path, "update")
    assert plain.returncode == 0, plain.stderr
    assert f"pi-core-agent is already up to date ({__version__})" in plain.stdout
    assert "Requirement already satisfied: pi-core-agent" in plain.stderr  # pip's output goes to stderr
    assert "Successfully installed" not in plain.stderr

    forced = _pi(bare_pi, tmp_path, "update", "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"Reinstalled pi-core-agent {__version__}" in forced.stdout
    assert re.search(rf"Successfully installed .*pi-core-agent-{re.escape(__version__)}", forced.stderr)
    assert _pi(bare_pi, tmp_path, "--version").stdout.strip() == __version__  # and it still runs
