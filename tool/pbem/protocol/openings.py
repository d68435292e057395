"""A withheld sealed set opened without its owner (DESIGN §4.7 "withholding must never pay"; docs/dow.md).

A power's sealed orders carry its key split among the other powers (crypto/shares.py: `threshold`, `shares`).
Once every power has sealed, any of the others may publish his share in his own press file:
`{by: russia, open: {secret: turkey-0001, share: HEX}}` (`pbem open turkey`). Each published share is checked
against the commitment its dealer sealed with it (`share.forged`; one taken from another set: `share.wrong-set`),
and only while the set's owner owes its reveal, every power having sealed (`share.early`). The commit that
completes the nmr against the owner writes `withheld` and, when at least `threshold` checked shares are
published, `opened`: the key they rebuild, which must open the box to its commitment (`share.bad-opening`).
A set opened so stands as its owner sealed it; the withholding is recorded (`withheld`) and counts as a missed
phase. Pure functions of the secrets and the press.
"""

from __future__ import annotations

import base64
import hmac
from collections.abc import Mapping, Sequence
from typing import Any, Collection, Iterable

from pbem.crypto import seal, shares
from pbem.errors import Finding, PbemError
from pbem.protocol.model import Inputs, Message, PressFile
from pbem.protocol.secrets import Secret

OPEN = "open"


def share_of(message: Message | Mapping[str, Any]) -> tuple[str, str, bytes] | None:
    """(publisher, secret id, share) of an `open` message, or None for any other message (or a malformed one)."""
    body = message.body if isinstance(message, Message) else message
    value = body.get(OPEN)
    if not isinstance(value, Mapping) or not isinstance(value.get("secret"), str):
        return None
    try:
        share = bytes.fromhex(str(value.get("share", "")))
    except ValueError:
        return None
    return str(body.get("by")), value["secret"], share


def _check(secret: Secret, by: str, share: bytes) -> bool:
    dealt = (secret.raw.get("shares") or {}).get(by)
    if not isinstance(dealt, str):
        return False
    index, _box, commit = shares.parse(dealt)
    return hmac.compare_digest(shares.commitment(secret.id, by, index, share), commit)


def share_findings(secrets: Mapping[str, Secret], added: Iterable[Message],
                   owing_reveal: Collection[str]) -> list[Finding]:
    """Every share a commit published, checked: it opens a set that exists and was dealt to its publisher
    (share.forged), by his share of that very set (a share of another set: share.wrong-set), while that set's
    owner owes its reveal (`owing_reveal`: the secret ids whose reveal is owed now; share.early)."""
    out: list[Finding] = []
    for message in added:
        found = share_of(message)
        if found is None:
            continue
        by, sid, share = found
        where: dict[str, Any] = {"file": message.file, "line": message.line}
        secret = secrets.get(sid)
        if secret is None or by not in (secret.raw.get("shares") or {}):
            out.append(Finding("share.forged", f"{by} publishes a share of {sid}, but no share of such a set was "
                               "dealt to him", **where))
            continue
        if not _check(secret, by, share):
            other = next((s.id for s in secrets.values() if s.id != sid and _check(s, by, share)), None)
            out.append(Finding("share.wrong-set", f"{by}'s share for {sid} is his share of {other}: a share opens "
                               "only the set it was dealt for", **where) if other else
                       Finding("share.forged", f"{by}'s share for {sid} is not the one its owner dealt him (it "
                               "does not match the commitment sealed with the set)", **where))
            continue
        if sid not in owing_reveal:
            out.append(Finding("share.early", f"{by} publishes his share of {sid}, but its reveal is not owed now: "
                               "shares are published only once every power has sealed, while the owner withholds",
                               **where))
    return out


def published(secret: Secret, press: Mapping[str, PressFile]) -> list[tuple[int, bytes]]:
    """The checked shares of `secret` published so far, one per publisher, as (index, share)."""
    seen: dict[str, tuple[int, bytes]] = {}
    for press_file in press.values():
        for message in press_file.messages:
            found = share_of(message)
            if found is None or found[1] != secret.id or found[0] in seen or not _check(secret, found[0], found[2]):
                continue
            seen[found[0]] = (shares.parse(secret.raw["shares"][found[0]])[0], found[2])
    return [seen[p] for p in sorted(seen)]


def opening(secret: Secret, press: Mapping[str, PressFile]) -> bytes | None:
    """The key the published shares rebuild, if enough are published and it opens the set; else None."""
    dealt = secret.raw.get("shares") or {}
    threshold = secret.raw.get("threshold")
    got = published(secret, press)
    if not dealt or not isinstance(threshold, int) or len(got) < threshold:
        return None
    key = shares.combine(got[:threshold], len(dealt))
    try:
        seal.open_sealed(base64.b64decode(secret.raw["box"]), key, bytes.fromhex(secret.raw["commit"]))
    except PbemError:
        return None
    return key


def opening_findings(before: Mapping[str, Secret], after: Mapping[str, Secret],
                     press: Mapping[str, PressFile]) -> list[Finding]:
    """`opened` is written only with `withheld`, by the commit that completes the nmr, and only as the key the
    published shares rebuild (share.bad-opening)."""
    out = []
    for sid, new in sorted(after.items()):
        old = before.get(sid)
        key = new.raw.get("opened")
        if key is None or (old is not None and old.raw.get("opened") == key):
            continue
        rebuilt = opening(new, press)
        if old is None or old.withheld or not new.withheld or rebuilt is None or rebuilt.hex() != key:
            out.append(Finding("share.bad-opening", f"secret {sid}: `opened` is the key its published shares "
                               "rebuild, written with `withheld` by the commit completing the nmr (pbem sign does)",
                               file=new.file, line=new.line_of("opened")))
    return out


def opened_value(secret: Secret) -> Any:
    """The content of a withheld set opened by its shares, or None (also for an `opened` key that does not open
    it: `opening_findings` names that commit)."""
    key = secret.raw.get("opened")
    if not key or not secret.withheld:
        return None
    try:
        return Secret({**secret.raw, "key": key}, secret.file).value()
    except PbemError:
        return None


def recipients(players: Sequence[str], owner: str, keys: Mapping[str, Any]) -> dict[str, Any]:
    """The players a power's set is shared among: every other seated player with a key."""
    return {p: keys[p] for p in players if p != owner and p in keys}


def gives_input(inputs: Inputs, when: str, power: str, excused: bool) -> bool:
    """Whether a power owing orders at `when` gives them, as replay decides: not when an nmr excused him or his
    set was withheld, unless the other powers' shares opened it (then it stands as sealed)."""
    sealed = inputs.sealed.get((when, power))
    if sealed is not None and sealed.withheld:
        return sealed.revealed
    return not excused
