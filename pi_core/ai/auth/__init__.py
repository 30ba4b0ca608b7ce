"""Sign-in and credentials: the ``auth.json`` store, the provider-auth interface, OAuth building blocks.

Public names are re-exported from :mod:`pi_core.ai`; import them from there.
"""
