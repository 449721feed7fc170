"""The engine: edits, the per-file runner, and the project-level facts passes share."""
