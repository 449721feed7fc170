"""Precise mode (`--semantic -p BUILD_DIR`): libclang decides what a candidate name refers to.

The lexical engine renames every `cudaMalloc`; libclang, given the file's flags from the build's
`compile_commands.json`, can tell the CUDA SDK's `cudaMalloc` from a method of the user's own
allocator class, and see which macro expansions produce CUDA calls. libclang is optional (the
`semantic` extra): nothing here is imported unless precise mode is asked for, and any missing
piece (libclang, the CUDA headers, the file's flags, a failed parse) leaves the file to the lexical
engine with one MU3001 note. See docs/precise-mode.md.
"""
