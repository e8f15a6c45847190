"""``rescue``: what upstream needed after a moved or lost database, and why nothing does here.

The index lives in the git dir, moves with the repository and rebuilds itself from git, so
``rescue`` says so and runs ``doctor``, which finds anything else wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elfmem.care.doctor import DoctorResult, doctor
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result

RESCUE_NOTE = (
    "Nothing to rescue: the index lives in the git directory ({index}), moves with the "
    "repository and rebuilds itself from git when it is missing, stale or damaged. A moved or "
    "copied repository keeps its memory; a lost one comes back from a clone or a backup "
    "(`elfmem restore FILE`)."
)


@dataclass(frozen=True)
class RescueResult(Result):
    note: str
    doctor: DoctorResult

    @property
    def ok(self) -> bool:
        return self.doctor.ok

    @property
    def summary(self) -> str:
        return f"{self.note}\n\n{self.doctor.summary}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "note": self.note,
            "doctor": self.doctor.to_dict(),
            "summary": self.summary,
        }


def rescue(core: Core) -> RescueResult:
    return RescueResult(RESCUE_NOTE.format(index=core.index_path), doctor(core))
