"""pi packages: extensions, skills, prompt templates and themes shared as one installable unit.

``sources`` reads what users write (``pi install SOURCE``, the settings ``packages`` list), ``layout``
what a package holds, ``filters`` pi's filter syntax, ``resolve`` which packages a session has,
``install`` puts them in place (pip/uv, git) and ``cli`` holds the commands. Nothing here is imported
at start-up unless settings list packages or installed distributions declare pi resources.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .resolve import PackageSet


def package_set_for(host: Any) -> PackageSet:
    """The packages a plugin host was built with (resolved now when it was built without them)."""
    packages = getattr(host, "packages", None)
    if packages is None:
        from .resolve import resolve_packages

        packages = resolve_packages(host.cwd, host.agent_dir, trusted=bool(getattr(host, "project_trusted", False)))
        host.packages = packages
    return packages


__all__ = ["package_set_for"]
