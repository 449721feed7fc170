"""Generate musify's rule tables from the CUDA headers installed with the toolkit.

Run `python -m tools.gen_rules [--cuda-include DIR] [--out rules]`.  `headers` scans declarations
out of header text and `naming` holds the CUDA -> MUSA naming pattern; both are shared by every
per-domain emitter (runtime, driver, device, fp, and the library emitters).
"""
