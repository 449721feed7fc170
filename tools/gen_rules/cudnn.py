"""cuDNN rule table (`rules/cudnn/`): every cuDNN name and header as `unsupported`.

muDNN is a C++ API (`::musa::dnn::Handle`, ...); renaming the `cudnnXxx` C calls to `mudnnXxx`
does not give working code (MUSA_FACTS section 2), so each use raises MU2030, the diagnostic
that explains the manual port, instead of being renamed.
Run: `python -m tools.gen_rules.cudnn --include DIR [--include OLDER_DIR]`.
"""

from __future__ import annotations

import re

from tools.gen_rules.libraries_a import LibrarySpec, main

SPEC = LibrarySpec(
    module="cudnn",
    package="nvidia-cudnn-cu13",
    headers=("cudnn*.h",),
    owns=re.compile(r"(?i)(?:^|_)cudnn"),
    default_library="cudnn",
    status="unsupported",
    diag="MU2030",
    version_macros=("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"),
)

if __name__ == "__main__":
    raise SystemExit(main(SPEC))
