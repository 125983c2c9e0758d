"""Mentor graph definitions. Edit a copy and point the config's `graph:` at it (`path.py:variable`)."""
