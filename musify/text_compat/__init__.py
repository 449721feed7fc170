"""`musify-text`: a drop-in for Moore Threads' musify-text command line over musify's engine.

Same flags, same flat JSON tables, same exclusion markers, same output files (`<file>.mt`, in
place, or stdout); underneath, the context-aware engine, so comments and strings stay as written
unless `--text-mode` asks for the old everything-is-text replacement. See docs/musify-text.md.
"""
