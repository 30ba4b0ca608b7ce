"""``python -m pi_core`` is ``pi``."""

from .cli import main

main()
