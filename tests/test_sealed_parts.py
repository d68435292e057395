"""A sealed allocation's speeds opened alone (DESIGN §4.7, §6; seed 000 §2.C; docs/tactical.md "Secret speeds"):
the part commitment's vector (crypto/part.py, re-derived here with hashlib alone), the part a tactical allocation
opens (energy.speeds_part), and what protocol/secrets.py accepts when a part or a box is opened, as data vectors
on real sealed files: opened early (secret.early-open, secret.early-reveal), to another value
(secret.part-commit), changed (secret.changed), or a box that does not hold the speeds opened
(secret.part-mismatch). The flows through the CLI are in test_tactical_secret_speeds.py, the attacks in
test_attacks.py.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from pbem.crypto import part as parts
from pbem.crypto import seal
from pbem.crypto.keys import PrivateKey
from pbem.formats.canonical import dumps
from pbem.protocol import secrets
from pbem.protocol.secrets import Secret
from pbem.rulesets.tactical.energy import speeds_part
from pbem.rulesets.tactical.ruleset import TacticalRuleset

KEY = bytes(range(32))
SALT = "b8858e0a3170b7feaed81b5337680e04b795734649f4e0f89130cc0cf29540cd"
PART = {"units": {"CA": {"speed": 12}}}
COMMIT = "bee901f32f37f373fce95b670c7d5603e01b85234671452ab2f7ef3a6b4f9f4c"


def test_the_part_vector_rederives_with_hashlib_alone() -> None:
    """salt = BLAKE2b-256(key=b"pbem-part-salt-v1", data = box key); commit = BLAKE2b-256(key=b"pbem-part-v1",
    data = salt || canonical JSON of the part): written out so a player's own script can check it."""
    salt = hashlib.blake2b(KEY, digest_size=32, key=b"pbem-part-salt-v1").digest()
    assert salt.hex() == SALT == parts.part_salt(KEY).hex()
    canonical = b'{"units":{"CA":{"speed":12}}}'
    assert dumps(PART) == canonical
    commit = hashlib.blake2b(salt + canonical, digest_size=32, key=b"pbem-part-v1").digest()
    assert commit.hex() == COMMIT == parts.part_commitment(salt, canonical).hex()
    assert parts.opens(commit, salt, canonical)
    assert not parts.opens(commit, salt, dumps({"units": {"CA": {"speed": 13}}}))
    assert not parts.opens(commit, salt[:31], canonical)


SPEEDS = [
    # (allocation, the part its step opens)
    ({"turn": 1, "units": {"CA": {"speed": 12, "weapons": 3, "reserve": 2}}}, {"units": {"CA": {"speed": 12}}}),
    ({"turn": 2, "units": {"CA": {"speed": 8}, "F1": {"speed": 20, "het": 5}}},
     {"units": {"CA": {"speed": 8}, "F1": {"speed": 20}}}),
    ({"turn": 1, "units": {"CA": {"weapons": 3}}}, {"units": {}}),  # no speed line: the ship plots nothing
    ({"turn": 1, "units": {}}, {"units": {}}),
    ("not an allocation", None),
]


@pytest.mark.parametrize("allocation, part", SPEEDS)
def test_an_allocation_opens_its_speeds_alone(allocation: Any, part: Any) -> None:
    assert speeds_part(allocation) == part
    assert TacticalRuleset().sealed_part("allocation", allocation) == part
    assert TacticalRuleset().sealed_part("target", allocation) is None


OWNER = PrivateKey.from_seed(bytes(range(32, 64)))


def _sealed(value: dict[str, Any], shown: Any = "same", step: str = "1.0.alloc") -> tuple[Secret, bytes]:
    """A sealed allocation as `pbem seal` writes it (with `shown` as the part committed beside the box), and
    its box key."""
    sealed = seal.seal(dumps(value), OWNER.public)
    raw: dict[str, Any] = {"id": "fed-0001", "owner": "fed", "kind": "allocation", "step": step, "end": "end",
                           "box": base64.b64encode(sealed.box).decode(), "commit": sealed.commit.hex(),
                           "owner_box": base64.b64encode(sealed.owner_box).decode()}
    part = speeds_part(value) if shown == "same" else shown
    raw["part_commit"] = parts.part_commitment(parts.part_salt(sealed.key), dumps(part)).hex()
    return Secret(raw, "secrets/fed-0001.yaml"), sealed.key


def _opened(secret: Secret, key: bytes, part: Any = None) -> Secret:
    shown = speeds_part(_value(secret, key)) if part is None else part
    return Secret({**secret.raw, "part": shown, "part_salt": parts.part_salt(key).hex()}, secret.file)


def _value(secret: Secret, key: bytes) -> Any:
    return Secret({**secret.raw, "key": key.hex()}, secret.file).value()


def _revealed(secret: Secret, key: bytes) -> Secret:
    return Secret({**secret.raw, "key": key.hex()}, secret.file)


def rules(before: Secret, after: Secret, asked: set = frozenset(), over: bool = False) -> list[str]:
    """The rules the verifier finds for one commit that turns `before` into `after` (its owner's commit)."""
    found = secrets.secret_findings({"fed-0001": before}, {"fed-0001": after}, "fed", ["fed", "kli"],
                                    TacticalRuleset().parse_time)
    found += secrets.reveal_findings({"fed-0001": before}, {"fed-0001": after}, TacticalRuleset(), asked, over)
    return sorted(f.rule for f in found)


ASKED = {("1.0.alloc", "fed")}
ALLOCATION = {"turn": 1, "units": {"CA": {"speed": 8, "weapons": 3}}}


def test_the_speeds_opened_when_asked_are_accepted_and_nothing_else_shows() -> None:
    sealed, key = _sealed(ALLOCATION)
    opened = _opened(sealed, key)
    assert rules(sealed, opened, ASKED) == []
    assert opened.opened_part() == {"units": {"CA": {"speed": 8}}} and not opened.revealed
    assert rules(opened, _revealed(opened, key), over=True) == []  # the box at the end holds them


OPENINGS = [
    # (name, what the commit does to the sealed secret, asked, over, the rules found)
    ("speeds-before-all-sealed", "open", set(), False, ["secret.early-open"]),
    ("box-before-the-end", "reveal", ASKED, False, ["secret.early-reveal"]),
    ("box-at-the-end", "reveal", set(), True, []),
    ("speeds-not-committed", "open-other", ASKED, False, ["secret.part-commit"]),
    ("salt-without-part", "salt-only", ASKED, False, ["secret.part-commit"]),
    ("sealed-and-opened-at-once", "new-opened", ASKED, False, ["secret.bad-secret"]),
]


@pytest.mark.parametrize("name, act, asked, over, found", OPENINGS, ids=[o[0] for o in OPENINGS])
def test_when_a_part_or_a_box_may_be_opened(name: str, act: str, asked: set, over: bool, found: list[str]) -> None:
    sealed, key = _sealed(ALLOCATION)
    if act == "open":
        before, after = sealed, _opened(sealed, key)
    elif act == "reveal":
        before, after = sealed, _revealed(sealed, key)
    elif act == "open-other":
        before, after = sealed, _opened(sealed, key, {"units": {"CA": {"speed": 20}}})
    elif act == "salt-only":
        before, after = sealed, Secret({**sealed.raw, "part_salt": parts.part_salt(key).hex()}, sealed.file)
    else:
        found_new = secrets.secret_findings({}, {"fed-0001": _opened(sealed, key)}, "fed", ["fed", "kli"],
                                            TacticalRuleset().parse_time)
        assert sorted(f.rule for f in found_new) == found
        return
    assert rules(before, after, asked, over) == found


def test_an_opened_part_never_changes() -> None:
    sealed, key = _sealed(ALLOCATION)
    opened = _opened(sealed, key)
    changed = Secret({**opened.raw, "part": {"units": {"CA": {"speed": 20}}}}, opened.file)
    assert rules(opened, changed, ASKED) == ["secret.changed"]


def test_secret_part_mismatch__a_box_that_does_not_hold_the_speeds_opened_is_found_at_the_end() -> None:
    """A speed that differs from the sealed one: committed by hand beside a box holding another, opened (the
    commitment holds: it is what was committed), played with; the box opened at the end shows it."""
    sealed, key = _sealed(ALLOCATION, shown={"units": {"CA": {"speed": 20}}})
    opened = _opened(sealed, key, {"units": {"CA": {"speed": 20}}})
    assert rules(sealed, opened, ASKED) == []
    assert rules(opened, _revealed(opened, key), over=True) == ["secret.part-mismatch"]


def test_a_box_sealed_without_a_part_has_an_empty_one_to_open() -> None:
    """Sealed by hand with no part_commit: the step never waits for a part that cannot come (an empty part:
    the ships plot no speed and stop); its box is opened whole at the end like any other."""
    sealed, key = _sealed(ALLOCATION)
    bare = Secret({k: v for k, v in sealed.raw.items() if k != "part_commit"}, sealed.file)
    assert bare.opened_part() == {} and sealed.opened_part() is None
    assert rules(bare, _revealed(bare, key), over=True) == []
