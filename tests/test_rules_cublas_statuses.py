"""cuBLAS's status enumerators against muBLAS's own (rules/cublas/overrides.yaml)."""

from __future__ import annotations

import pytest

from musify.options import Options
from musify.rules.loader import load_ruleset
from musify.rules.model import RuleSet
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_ruleset()


def test_cublas_statuses_take_mublas_spellings_or_are_reported(rules: RuleSet) -> None:
    """muBLAS's status enum is rocBLAS-shaped: NOT_SUPPORTED is NOT_IMPLEMENTED, and a status it
    has no spelling for is left and reported (Moore Threads' table's MUBLAS_STATUS_NOT_INITIALIZED
    would not compile), never renamed to a nearest one that could duplicate a case label."""
    src = ("#include <cublas_v2.h>\nswitch (st) {\n  case CUBLAS_STATUS_SUCCESS: break;\n  case CUBLAS_STATUS_NOT_INITIALIZED: break;\n"
           "  case CUBLAS_STATUS_NOT_SUPPORTED: break;\n  case CUBLAS_STATUS_EXECUTION_FAILED: break;\n"
           "  case CUBLAS_STATUS_INTERNAL_ERROR: break;\n}\n")
    new, ctx, _ = migrate_text(src, "blas.cu", rules, Options())
    assert new == ("#include <mublas.h>\nswitch (st) {\n  case MUBLAS_STATUS_SUCCESS: break;\n  case CUBLAS_STATUS_NOT_INITIALIZED: break;\n"
                   "  case MUBLAS_STATUS_NOT_IMPLEMENTED: break;\n  case CUBLAS_STATUS_EXECUTION_FAILED: break;\n"
                   "  case MUBLAS_STATUS_INTERNAL_ERROR: break;\n}\n")
    assert [(d.id, d.name) for d in ctx.diagnostics] == [("MU1002", "CUBLAS_STATUS_NOT_INITIALIZED"),
                                                         ("MU1002", "CUBLAS_STATUS_EXECUTION_FAILED")]
