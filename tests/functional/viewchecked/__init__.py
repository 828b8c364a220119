"""A site whose content declares no security, as Grok's models do,
served by view-checked chains (tests/functional/test_view_checked.py)."""
