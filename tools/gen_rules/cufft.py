"""cuFFT rule table (`rules/cufft/`): `cufft.h`, `cufftXt.h`, `cufftw.h`, `cudalibxt.h` and
the device-callback header `cufft_device.h`.

`cufft*` -> `mufft*`, `CUFFT*` -> `MUFFT*` (MUSA_FACTS section 1; `cufftw.h` -> `mufftw.h`).
The FFTW interface of `cufftw.h` (`fftw_plan_dft_1d`, `FFTW_FORWARD`) and the `libFormat`
names of `cudalibxt.h` carry no vendor word and keep their spelling under `mufftw.h` /
`musalibxt.h`.  The `NVFFT_PLAN_PROPERTY_*` plan properties (CUDA 12) have no MUSA spelling in
any public source and no pattern name; they are reported as unsupported.  Run: `python -m tools.gen_rules.cufft --include DIR`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="cufft",
    package="nvidia-cufft",
    headers=("cufft*.h", "cudalibxt.h"),
    owns=re.compile(r"(?i)(?:^|_)cufft|^cudaLibXt|^CUDA_?LIB_?XT|^cudalibxt"),
    default_library="cufft",
    keep=re.compile(r"fftwf?_\w+|FFTW_[A-Z_]+|libFormat(?:_t)?|LIB_(?:XT_COPY|FORMAT)_\w+"),
    unsupported=re.compile(r"NVFFT_\w+"),
    version_macros=("CUFFT_VER_MAJOR", "CUFFT_VER_MINOR", "CUFFT_VER_PATCH"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
