"""The compiled validator (fastjsonschema) and jsonschema agree on what is valid (formats/schemas.py, issue 7).

The compiled one is the fast path for valid data; if it ever accepted what jsonschema refuses, a file would
pass unchecked. So every schema and every `$defs` part is fed values made from the schemas' own vocabulary
(field names, enum and const values, numbers at the bounds), and the two must give the same answer. The whole
suite also runs with PBEM_CROSSCHECK=1 (conftest), checking both on every file any test reads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastjsonschema import JsonSchemaValueException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.formats import resources, schemas


def _parts() -> list[str]:
    out = []
    for path in sorted(resources.schemas_dir().glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        out.append(raw["$id"])
        out.extend(f"{raw['$id']}#/$defs/{name}" for name in raw.get("$defs", {}))
    return out


def _vocabulary() -> tuple[list[str], list[Any]]:
    names: set[str] = set()
    values: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("properties", "patternProperties", "dependentSchemas"):
                    names.update(k for k in value if key == "properties" or key == "dependentSchemas")
                if key == "const":
                    values.append(value)
                elif key == "enum":
                    values.extend(value)
                elif key in ("minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength"):
                    values.extend([value, value - 1, value + 1])
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in sorted(resources.schemas_dir().glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    strings = sorted({v for v in values if isinstance(v, str)} | names)
    return sorted(names), strings + [v for v in values if not isinstance(v, str)]


NAMES, VALUES = _vocabulary()
EXTRA = ["1.12.move", "S1901M", "fed", "kli", "CA", "1015", "A", "b0001", "s0001", "",
         "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl x"]
scalars = st.one_of(st.sampled_from(VALUES + EXTRA), st.integers(-3, 40), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(NAMES + ["x-note", "zz"]), inner, max_size=6)), max_leaves=20)


def _jsonschema_valid(schema_id: str, data: Any) -> bool:
    return not any(True for _ in schemas._validator(schema_id).iter_errors(data))


def _fast_valid(schema_id: str, data: Any) -> bool:
    try:
        schemas._fast(schema_id)(data)
    except JsonSchemaValueException:
        return False
    return True


PARTS = _parts()


def test_every_schema_and_part_is_checked() -> None:
    assert len(PARTS) > 50 and len(set(PARTS)) == len(PARTS)


# Each value drawn is judged by every schema and part: the same checks as a test per part drawing the same values
# (derandomized in CI, one seed for all), without drawing them again for each part.
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=values)
def test_compiled_and_jsonschema_agree(data: Any) -> None:
    disagree = [part for part in PARTS if _fast_valid(part, data) != _jsonschema_valid(part, data)]
    assert disagree == []


@pytest.mark.parametrize("data,ok", [
    ({"through": "1.2.move"}, True),
    ({"through": True}, False),         # bool is not a string
    ({"through": "1.2.move", "zz": 1}, False),
])
def test_players_vectors(data: Any, ok: bool) -> None:
    assert _fast_valid("pbem/players/1", data) is ok
    assert _jsonschema_valid("pbem/players/1", data) is ok


@pytest.mark.parametrize("value,ok", [(3, True), (True, False), (3.5, False), ("3", False)])
def test_integer_vectors(value: Any, ok: bool) -> None:
    """YAML's `true` is no number in either validator (an easy place for two implementations to differ)."""
    data = {"speed": value}
    assert _fast_valid("pbem/tactical/action/1", data) is ok
    assert _jsonschema_valid("pbem/tactical/action/1", data) is ok
