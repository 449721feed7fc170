"""JSON Schemas for what musify writes: the run record (`musify-run/2`, docs/record.md).

The schema ships in the package so other tools (and our tests) can validate a record without a
checkout; `validate_record` needs the optional `jsonschema` package.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

RUN_RECORD = Path(__file__).with_name("run-record-2.schema.json")


@lru_cache(maxsize=1)
def run_record_schema() -> dict:
    return json.loads(RUN_RECORD.read_text(encoding="utf-8"))


def validate_record(doc: dict) -> None:
    """Raise `jsonschema.ValidationError` when `doc` is not a valid `musify-run/2` record."""
    import jsonschema

    validator = _validator()
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        raise error


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(run_record_schema())
