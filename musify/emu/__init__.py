"""Build and run CUDA and MUSA programs on the reference emulator (shims/emu, docs/emulator.md)."""
