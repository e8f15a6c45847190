"""``doctor --secrets``: credentials already in the memory's history, and how to purge each.

Only a rewrite of history removes a committed secret, and a rewrite changes every later commit id
for everyone who cloned: a decision for a person, so elfmem reports and explains but never
rewrites. The advice is the same for every finding (rotate first, then replace the text in every
blob and message), with the exact paths and refs to check afterwards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store.secretscan import HistoryFinding, scan_history

PURGE_STEPS = (
    "1. Rotate the credential now: once pushed, assume it is public; purging does not un-leak it.",
    "2. Put the value in a file outside the repository, one line per secret: "
    "`literal:THE-VALUE==>***REMOVED***` (git filter-repo) or `THE-VALUE` (BFG).",
    "3. Rewrite every ref, the notes included: `git filter-repo --sensitive-data-removal "
    "--replace-text ../secrets.txt --replace-message ../secrets.txt` "
    "(or `bfg --replace-text ../secrets.txt` then `git reflog expire --expire=now --all "
    "&& git gc --prune=now --aggressive`).",
    "4. Force-push every rewritten branch and `refs/notes/elfmem`; ask collaborators to re-clone.",
    "5. Run `elfmem index rebuild` and `elfmem doctor --secrets` again: it should find nothing.",
)


@dataclass(frozen=True)
class SecretAudit(Result):
    findings: list[HistoryFinding] = field(default_factory=list)
    """Each as ``{kind, path, line, commit, ref}``; the value itself is never reported."""
    purge: list[str] = field(default_factory=list)
    """The steps that remove them (elfmem never rewrites history itself); empty when clean."""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def summary(self) -> str:
        if self.ok:
            return "ok   secrets      none in the memory's history or in refs/notes/elfmem"
        lines = [f"FAIL secrets      {len(self.findings)} credential(s) in history:"]
        lines += [
            f"     {f.path}:{f.line}: {f.kind} (since commit {f.commit[:12]} on {f.ref})"
            for f in self.findings
        ]
        return "\n".join(
            [
                *lines,
                "     To purge (elfmem never rewrites history itself):",
                *[f"       {step}" for step in self.purge],
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "findings": [asdict(f) for f in self.findings],
            "purge": list(self.purge),
            "summary": self.summary,
        }


def audit(core: Core) -> SecretAudit:
    """Scan every memory blob on the branch's history, elfmem's messages and the notes ref."""
    found = scan_history(core.store.repo, core.store.branch)
    # A bucket holds a secret in every later version of the file: report where it came in.
    oldest: dict[tuple[str, ...], HistoryFinding] = {}
    for f in found:
        key = (f.kind, f.path, str(f.line), f.commit if f.path == "commit message" else "")
        oldest.setdefault(key, f)
    unique = list(oldest.values())
    return SecretAudit(unique, list(PURGE_STEPS) if unique else [])
