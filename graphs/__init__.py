"""Mentor graph definitions. Copy them with `mentor graph copy DIR`, edit the copy, and point the config's `graph:`
at it (`path.py:variable`; the copy's mentor.yaml already does).

The files of a graph import one another by path, `sibling(__file__, "nodes")` (mentor.runtime.graph_files), so a
copy, made by `mentor graph copy` or by `cp -r`, runs its own files, and loads the same way under `mentor`, as a
package module (`mentor.graphs.mentor.graph`) and by file path (`langgraph dev`).
"""
