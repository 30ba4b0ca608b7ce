"""Helpers for tool authors: output truncation, process supervision, edit matching, ignore files,
file mutation locks, image sniffing and file search.

The built-in tools are made from these pieces, and so can any plugin's tools. Import them from
``pi_core`` (``from pi_core import truncate_head, run_shell``); the modules here stay importable on
their own but are not the public path. Nothing is imported eagerly, so importing this package is free.
"""
