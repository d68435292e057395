"""One error base for everything a user can get wrong, and the finding it carries.

A `Finding` is what the verifier collects (many per history); a `PbemError` is a finding raised because the
current command cannot go on. The CLI turns either into one clear line and an exit code, in one place.
Exit codes (DESIGN §8): 1 = illegal / verification failed, 2 = usage or environment error.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field, replace
from typing import Any

from pbem.text import terminal

ILLEGAL = 1
USAGE = 2


@dataclass(frozen=True)
class Finding:
    """One problem with a stable rule id, located as precisely as we can (commit, file, line)."""

    rule: str
    message: str
    file: str | None = None
    line: int | None = None
    commit: str | None = None
    hint: str | None = None

    def at(self, **where: Any) -> "Finding":
        """The same finding with more location filled in (never overwrites what is known)."""
        known = {k: v for k, v in where.items() if getattr(self, k) is None}
        return replace(self, **known)

    def location(self) -> str:
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def text(self) -> str:
        """`file:line: [rule] message (commit abc1234)` — the one line a player reads. Paths and messages may
        hold anything a repository does: control characters are shown escaped (DESIGN §9, output is data)."""
        parts = []
        loc = self.location()
        if loc:
            parts.append(f"{terminal(loc)}:")
        parts.append(f"[{terminal(self.rule)}] {terminal(self.message)}")
        if self.commit:
            parts.append(f"(commit {terminal(self.commit[:10])})")
        out = " ".join(parts)
        if self.hint:
            out += f"\n  hint: {terminal(self.hint)}"
        return out

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def as_record(self) -> dict[str, Any]:
        """Every field, None included: the stable keys of `--format json` (schemas/output/common.json)."""
        return dict(self.__dict__)


class PbemError(Exception):
    """A user-facing problem. `exit_code` 1 means illegal, 2 means usage/environment."""

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        commit: str | None = None,
        hint: str | None = None,
        exit_code: int = USAGE,
    ) -> None:
        super().__init__(message)
        self.finding = Finding(rule, message, file=file, line=line, commit=commit, hint=hint)
        self.exit_code = exit_code

    @classmethod
    def from_finding(cls, finding: Finding, exit_code: int = ILLEGAL) -> "PbemError":
        err = cls(finding.rule, finding.message, exit_code=exit_code)
        err.finding = finding
        return err

    def __str__(self) -> str:
        return self.finding.text()


@dataclass
class Findings:
    """An ordered collection of findings; truthy when any were found."""

    items: list[Finding] = field(default_factory=list)

    def add(self, finding: Finding) -> None:
        self.items.append(finding)

    def extend(self, findings: "list[Finding] | Findings") -> None:
        self.items.extend(findings.items if isinstance(findings, Findings) else findings)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)



# What the machine refused (DESIGN §8: an environment error, exit 2): the rule id by errno, and what to do.
_OS_RULES: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("system.disk-full", "free some space on that disk, then run the command again"),
    getattr(errno, "EDQUOT", errno.ENOSPC): ("system.disk-full", "free some space on that disk, then run the command again"),
    errno.ENOENT: ("system.no-such-file", "create the folder first, or give a path that exists"),
    errno.ENOTDIR: ("system.no-such-file", "create the folder first, or give a path that exists"),
    errno.EACCES: ("system.permission", "check the permissions, or choose a path you may write to"),
    errno.EPERM: ("system.permission", "check the permissions, or choose a path you may write to"),
    errno.EROFS: ("system.permission", "choose a path on a disk you may write to"),
}


def os_error(exc: OSError, where: str | None = None) -> PbemError:
    """An error the operating system raised (a full disk, a missing folder, a permission denied) as one clear
    line: what failed, on which file (`where` when the error names none, e.g. "standard output"), and what to do."""
    rule, hint = _OS_RULES.get(exc.errno or 0, (None, None))
    what = exc.filename if exc.filename is not None else where
    reason = exc.strerror or str(exc) or type(exc).__name__
    message = f"{what}: {reason}" if what is not None else reason
    if exc.filename2 is not None:
        message += f" (and {exc.filename2})"
    if rule is None:
        return PbemError("system.os-error", message,
                         hint="check the file or device the message names, then run the command again")
    return PbemError(rule, message, hint=hint)
