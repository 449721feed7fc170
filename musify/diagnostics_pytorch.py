"""Diagnostics MU6000-MU6199: PyTorch (C++ and Python) and build files (setup.py, CMake, Make).

Registered into the catalogue when `musify.diagnostics` is imported; each ID has its page in
docs/diagnostics/. A best guess (a rewrite no public MUSA source documents) always carries one.
"""

from __future__ import annotations

from musify.diagnostics import DiagSpec, register

SPECS = [
    # --- Python front end -----------------------------------------------------------------------
    DiagSpec("MU6001", "warning", "low", "Python file not parsed",
             "not migrated: the file does not parse as Python 3 ({cause}); it is left exactly as it was"),
    DiagSpec("MU6004", "warning", "low", "import kept: names not known in the MUSA module",
             "'from {module} import' kept as written: {musa} is not known to provide {names}; import "
             "those from {module} and the rest from {musa} by hand"),
    DiagSpec("MU6006", "note", "low", "import split between torch and torch_musa",
             "'from {module} import' split in two: {module} keeps {names}; the rest is imported from {musa}"),
    DiagSpec("MU6005", "warning", "low", "imported name is a best guess",
             "'{name}' imported from {musa} instead of {module}: this project's best guess, check that "
             "your torch_musa provides it"),
    DiagSpec("MU6010", "note", "low", "device check now asks for MUSA",
             "'{call}()' rewritten to ask torch.musa: on a MUSA machine the CUDA form is always false, so "
             "check that the code it guards is right for a MUSA device"),
    DiagSpec("MU6011", "note", "low", "device-type comparison now compares with musa",
             "comparison with {value} rewritten to compare with the MUSA device type; the CUDA form is "
             "never true on a MUSA machine"),
    DiagSpec("MU6012", "warning", "low", "\"cuda\" string left as is",
             "string {value} is left as is: musify cannot tell that it is used as a device; if it is, "
             "write \"musa\" (or pass it through torch.device)"),
    DiagSpec("MU6013", "warning", "medium", "inline CUDA sources not migrated",
             "'{call}' compiles CUDA source text held in Python strings, which musify does not migrate; "
             "move the kernels into a .cu file and migrate it, or port the strings by hand"),
    DiagSpec("MU6014", "warning", "low", "PyTorch construct not rewritten",
             "'{construct}' not rewritten: {why}"),
    # --- build words shared by setup.py, CMake and Make --------------------------------------------
    DiagSpec("MU6020", "note", "low", "nvcc flag dropped",
             "'{flag}' dropped: {why}"),
    DiagSpec("MU6021", "warning", "low", "build rewrite is a best guess",
             "'{flag}' rewritten to '{musa}': this project's best guess, no public MUSA source documents it"),
    DiagSpec("MU6022", "note", "low", "arch flag translated",
             "'{flag}' rewritten to '{musa}': {policy}"),
    DiagSpec("MU6023", "warning", "low", "arch flag not translated",
             "'{flag}' kept: it names no sm_XX/compute_XX architecture that the arch policy can translate; "
             "set --offload-arch=mp_XX by hand"),
    DiagSpec("MU6025", "warning", "low", "arch list not translated",
             "'{flag}' kept as the value of {variable}: {why}; list the MUSA architectures to build for by hand "
             "(their mp_XX numbers, e.g. \"21;22\")"),
    DiagSpec("MU6024", "warning", "low", "names a CUDA file that is not renamed",
             "'{ref}' names a .cu/.cuh file that this migration does not rename (not in the input tree); "
             "the reference is kept as written"),
    DiagSpec("MU6030", "warning", "medium", "CUDA-only package pin",
             "'{pin}' pins a CUDA-only package or index; it has no MUSA build: drop it or use the MUSA "
             "counterpart (torch_musa, the MUSA SDK)"),
    # --- CMake ----------------------------------------------------------------------------------
    DiagSpec("MU6040", "warning", "low", "CUDA language replaced by FindMUSA",
             "{what}: MUSA has no CMake language, so its sources build through FindMUSA "
             "(find_package(MUSA), musa_add_executable/musa_add_library); this project's best guess at the "
             "equivalent, configure with -DMUSA_HOME=<MUSA install>"),
    DiagSpec("MU6042", "warning", "medium", "CMake setting with no MUSA form",
             "'{name}' kept as written: it has no known MUSA counterpart; remove it or express it with "
             "MUSA_MCC_FLAGS"),
    DiagSpec("MU6043", "warning", "low", "CUDA architectures setting",
             "'{name}' {done}"),
    DiagSpec("MU6045", "note", "low", "CUDA version requirement dropped",
             "version {version} dropped from find_package({package} ...): it is a CUDA version, which a MUSA "
             "SDK does not have; require a MUSA SDK version instead if the project needs one"),
    DiagSpec("MU6044", "warning", "low", "CMake file not migrated",
             "not migrated: {cause}; the file is left exactly as it was"),
    # --- PyTorch C++ ------------------------------------------------------------------------------
    DiagSpec("MU6050", "warning", "low", "CUDA case label kept",
             "'case {name}:' kept as written: renamed it would duplicate the switch's existing PrivateUse1 "
             "label; remove the CUDA case or merge it by hand"),
    DiagSpec("MU6052", "warning", "medium", "PyTorch CUDA header with no known torch_musa path",
             "<{name}> is a header of PyTorch's CUDA backend with no known torch_musa counterpart; kept as "
             "written: find the torch_musa header (under torch_musa/csrc/, or the ported PyTorch headers under "
             "torch_musa/share/generated_cuda_compatible/) that declares what the file uses"),
]

register(*SPECS)
