"""Plays the browser in sign-in tests (``BROWSER="python browser.py %s"``): GETs the authorization URL,
which the test authorization server approves at once, then follows its redirect to pi's loopback
callback. With ``--print-redirect`` it prints the redirected URL instead of visiting it (for pasting)."""

from __future__ import annotations

import sys

import httpx


def main() -> None:
    url = sys.argv[-1]
    answer = httpx.get(url, follow_redirects=False, timeout=30)
    location = answer.headers.get("location")
    if answer.status_code not in (302, 303, 307) or not location:
        print(f"authorization failed: {answer.status_code} {answer.text}", file=sys.stderr)
        sys.exit(1)
    if "--print-redirect" in sys.argv:
        print(location)
        return
    page = httpx.get(location, timeout=30)
    print(page.status_code, page.text)


if __name__ == "__main__":
    main()
