"""Mentor graph definitions. Edit a copy and point the config's `graph:` at it (`path.py:variable`).

The files here import one another as `mentor.graphs.<graph>.<module>`: the one name they have both installed (the
wheel puts this folder at mentor/graphs) and in a checkout (`mentor/__init__.py` finds the folder beside the
package). Relative imports would not do: `langgraph dev` loads graph.py by file path, outside any package.
"""
