"""What a CUDA parse with libclang needs: the library, clang's resource headers, the CUDA headers,
and empty stand-ins for headers clang's CUDA wrapper asks for that CUDA 13 no longer ships
(MUSA_FACTS section 7)."""

from __future__ import annotations

import atexit
import glob
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache

# clang 19's __clang_cuda_runtime_wrapper.h includes these; CUDA 13 removed them.
STAND_INS = ("texture_fetch_functions.h", "curand_mtgp32_kernel.h")
BASE_ARGS = ("-x", "cuda", "--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version")


class Unavailable(Exception):
    """Precise mode cannot run; the message is the cause shown in MU3001."""


@dataclass(frozen=True)
class Toolchain:
    cindex: object  # the clang.cindex module
    index: object
    resource_dir: str
    cuda_path: str
    stand_in_dir: str

    def args(self, flags: list[str]) -> list[str]:
        std = [] if any(f.startswith("-std=") for f in flags) else ["-std=c++17"]
        return [*BASE_ARGS, f"--cuda-path={self.cuda_path}", "-resource-dir", self.resource_dir,
                "-isystem", self.stand_in_dir, *std, *flags]


@lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    """Find everything once per process; raise Unavailable with the reason otherwise."""
    try:
        from clang import cindex  # optional: pip install 'musify[semantic]'
    except ImportError:
        raise Unavailable("libclang is not installed (pip install 'musify[semantic]')") from None
    try:
        index = cindex.Index.create()
    except Exception as exc:  # noqa: BLE001 -- a broken libclang install: precise mode is off
        raise Unavailable(f"libclang cannot load: {exc}") from None
    return Toolchain(cindex, index, resource_dir(), cuda_path(), stand_in_dir())


# free the libclang index while clang.cindex is still importable (avoids noise at interpreter exit)
atexit.register(toolchain.cache_clear)


def resource_dir() -> str:
    env = os.environ.get("MUSIFY_CLANG_RESOURCE_DIR")
    found = [env] if env else sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*"), key=_version_key)
    for d in reversed(found):
        if os.path.isfile(os.path.join(d, "include", "__clang_cuda_runtime_wrapper.h")):
            return d
    raise Unavailable("clang resource headers not found (Debian: apt-get install libclang-common-19-dev, "
                      "or set MUSIFY_CLANG_RESOURCE_DIR)")


def cuda_path() -> str:
    for d in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and os.path.isfile(os.path.join(d, "include", "cuda_runtime.h")):
            return d
    raise Unavailable("CUDA headers not found (set CUDA_PATH)")


def stand_in_dir() -> str:
    d = os.path.join(tempfile.gettempdir(), f"musify-clang-stand-ins-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    for name in STAND_INS:
        path = os.path.join(d, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("/* empty stand-in written by musify: CUDA 13 no longer ships this header */\n")
    return d


def _version_key(path: str) -> tuple[int, ...]:
    parts = [p for p in path.replace("-", "/").split("/") if p.isdigit()]
    return tuple(int(p) for p in parts)
