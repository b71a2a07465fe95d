"""What unpickling calls to rebuild nanocuda objects (ObjectCode: from its bytes and code type)."""

from __future__ import annotations


def object_code(code_type: str, code: bytes, name: str, symbol_mapping: dict):
    """An ObjectCode from what ObjectCode.__reduce__ saved; it loads again on first use."""
    from ._nanocuda import ObjectCode

    make = getattr(ObjectCode, "from_" + code_type, None)
    if make is None:
        raise ValueError(f"ObjectCode (unpickling): unknown code_type {code_type!r}")
    return make(code, name=name, symbol_mapping=symbol_mapping or None)
