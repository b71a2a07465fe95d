"""_StrEnum: enum.StrEnum, or its Python 3.10 equivalent (str(member) is its value)."""

import enum

if hasattr(enum, "StrEnum"):
    _StrEnum = enum.StrEnum
else:  # Python 3.10: the same behaviour (str(member) is its value)

    class _StrEnum(str, enum.Enum):
        def __str__(self) -> str:
            return str(self.value)
