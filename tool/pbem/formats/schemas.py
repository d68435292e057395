"""JSON Schema validation of game files (DESIGN §2): one schema file per kind, looked up by its `$id`.

Every `*.json` in `schemas_dir()` is loaded once, checked against the 2020-12 meta-schema, and compiled into a
Draft 2020-12 validator. That validator words the errors; checking valid data, the verifier's common case at
every commit, goes through a validator fastjsonschema compiles to Python code (about 20 times faster).
The compiled one only answers "valid or not": when it says not, jsonschema decides and explains, so jsonschema
stays the single authority on what is valid (tests check the two agree).

Schemas refer to each other by id (`"$ref": "pbem/common/1#/$defs/time"`). Ids are relative URIs, which JSON
Schema would resolve against the referring schema's own id ("pbem/game/pbem/common/1"); so for jsonschema, ids
and references to known ids are made absolute under one private base before they are registered. The compiled
validators need no resolving: every reference is inlined.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import re
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastjsonschema
from fastjsonschema import JsonSchemaValueException

if TYPE_CHECKING:  # jsonschema is imported when an error needs wording: a clean verification never loads it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from pbem.errors import ILLEGAL, USAGE, PbemError
from pbem.formats.resources import fold_file_stats, schemas_dir
from pbem.formats.yamlsafe import Document

_CROSSCHECK = os.environ.get("PBEM_CROSSCHECK") == "1"  # the test suite's: both validators, every new value
# The values both validators already agreed on (bounded: cleared when full). The suite's other cross-checks read
# whole games again at every commit (verify/history.py `_agree`); without this the plain validator would check
# the same files again each time, most of the suite's time, and find nothing new.
_AGREED: set[tuple[str, str]] = set()
_AGREED_MAX = 65536
_VALID: set[tuple[str, str]] = set()  # values found valid, with `memo` (bounded: cleared when full)
_VALID_MAX = 4096
_BASE = "https://schemas.pbem.invalid/"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_MAX_MESSAGE = 300


def schema_ids() -> list[str]:
    """The ids of all schemas shipped with pbem, sorted (e.g. `pbem/game/1`), each checked against the
    2020-12 meta-schema (rule `schema.broken`)."""
    return sorted(_catalog()[0])


def known(schema_id: str) -> bool:
    """Whether pbem ships a schema with this id. Only reads the schema files: cheap enough for every commit,
    where `schema_ids` loads jsonschema to check every schema against the meta-schema."""
    return schema_id in _files()


def _agree_once(schema_id: str, data: Any) -> None:
    """Both validators agree on `data` (`_agree`), checked once per value (tests only)."""
    try:
        seen = (schema_id, json.dumps(data, sort_keys=True, default=repr))
    except (TypeError, ValueError):  # keys of mixed types: not worth a key, check it every time
        _agree(schema_id, data)
        return
    if seen in _AGREED:
        return
    _agree(schema_id, data)
    if len(_AGREED) >= _AGREED_MAX:
        _AGREED.clear()
    _AGREED.add(seen)


def reset() -> None:
    """Forget every loaded and compiled schema (tests that swap the schema folder)."""
    for cached in (_files, _catalog, _part_validator, _fast, _stamp):
        cached.cache_clear()
    _VALID.clear()
    _AGREED.clear()


def validate(schema_id: str, data: Any, *, file: str, doc: Document | None = None, base: tuple[str | int, ...] = (),
             memo: bool = False) -> None:
    """Check `data` against schema `schema_id`; raise `PbemError("schema.invalid")` for the best error.

    `schema_id` is a schema's `$id`, optionally with a JSON pointer (`pbem/report/1#/$defs/entry`) to check one
    part. `base` is the path of `data` inside `doc` (when checking one entry of a larger file), so the reported
    line and field path are those of the whole file. `memo`: remember values found valid (for small values
    that recur, like the `do` of report entries, under a schema slow to check).
    """
    key = None
    if memo:
        key = (schema_id, json.dumps(data, sort_keys=True))
        if key in _VALID:
            return
    try:
        _fast(schema_id)(data)
        if _CROSSCHECK:
            _agree_once(schema_id, data)
        if key is not None:
            if len(_VALID) >= _VALID_MAX:
                _VALID.clear()
            _VALID.add(key)
        return
    except JsonSchemaValueException:
        pass
    error = _best_error(schema_id, data)
    if error is None:
        return
    path = base + tuple(error.absolute_path)
    message, line_path = _explain(error, path)
    line = doc.line_of(line_path) if doc is not None else None
    raise PbemError("schema.invalid", message, file=file, line=line, exit_code=ILLEGAL,
                    hint=f"see schema {schema_id.split('#')[0]}")


def _validator(schema_id: str) -> Draft202012Validator:
    validators, registry = _catalog()
    found = validators.get(schema_id)
    if found is not None:
        return found
    root, _, pointer = schema_id.partition("#")
    if root not in validators or not pointer:
        raise PbemError("schema.unknown", f"no schema with id {schema_id!r} (known: {', '.join(sorted(validators))})",
                        exit_code=USAGE)
    return _part_validator(schema_id)


@lru_cache(maxsize=None)
def _part_validator(schema_id: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator
    from referencing.exceptions import Unresolvable

    registry = _catalog()[1]
    try:
        registry.resolver().lookup(_BASE + schema_id)  # fail now, not on first use, if the pointer is wrong
    except Unresolvable:
        raise PbemError("schema.unknown", f"no schema part {schema_id!r}", exit_code=USAGE) from None
    return Draft202012Validator({"$ref": _BASE + schema_id}, registry=registry)


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, Draft202012Validator], Registry]:
    """Check every schema file against the meta-schema and compile it for jsonschema, once."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    raw = _files()
    for schema_id, schema in raw.items():
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise _broken(f"{_FILE_OF.get(schema_id, schema_id)}: {exc}") from None
    ids = frozenset(raw)
    resources = [(_BASE + sid, Resource.from_contents(_absolute(s, ids), default_specification=DRAFT202012))
                 for sid, s in raw.items()]
    registry: Registry = Registry().with_resources(resources).crawl()
    validators = {sid: Draft202012Validator(_absolute(s, ids), registry=registry) for sid, s in raw.items()}
    return validators, registry


@lru_cache(maxsize=1)
def _files() -> dict[str, Any]:
    """Every schema file by its `$id` (the set is fixed for the life of the process)."""
    raw: dict[str, Any] = {}
    for path in sorted(schemas_dir().glob("*.json")):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _broken(f"{path.name}: {exc}") from None
        schema_id = schema.get("$id") if isinstance(schema, dict) else None
        if not isinstance(schema_id, str) or not schema_id or "#" in schema_id:
            raise _broken(f"{path.name} has no usable $id")
        if schema_id in raw:
            raise _broken(f"{path.name}: $id {schema_id!r} is used by two files")
        raw[schema_id] = schema
        _FILE_OF[schema_id] = path.name
    return raw


_FILE_OF: dict[str, str] = {}  # schema id -> its file's name, for messages


def _best_error(schema_id: str, data: Any) -> ValidationError | None:
    """jsonschema's verdict: the error that best explains why `data` is invalid, or None when it is valid."""
    from jsonschema.exceptions import best_match

    return best_match(_validator(schema_id).iter_errors(data))


def _agree(schema_id: str, data: Any) -> None:
    error = _best_error(schema_id, data)
    if error is not None:
        raise AssertionError(f"the compiled validator accepted what jsonschema refuses ({schema_id}): "
                             f"{error.message}")


@lru_cache(maxsize=None)
def _fast(schema_id: str) -> Any:
    """The compiled validator of one schema (or part), built on first use: a process compiles only what it reads.
    Once built, it is found again by the schema files' stats (`_stamped`), without reading any of them."""
    stamped = _stamped(schema_id)
    code = _kept(stamped)
    if code is None:
        root, _, pointer = schema_id.partition("#")
        try:
            part = _resolve(root, pointer)
        except (KeyError, TypeError, IndexError):
            _validator(schema_id)  # words the "unknown schema" error
            raise
        schema = {"$schema": _DRAFT7, **_inline(part, root)}
        try:
            code = _compiled(schema_id, schema)
        except fastjsonschema.JsonSchemaDefinitionException as exc:
            raise _broken(f"{schema_id}: {exc}") from None
        _keep(stamped, code)
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - code fastjsonschema generated from our own schema files
    return namespace["validate"]


def _compiled(schema_id: str, schema: Any) -> Any:
    """The validator's code object, kept under the user's cache folder by the hash of everything it depends
    on (schema, fastjsonschema and Python versions): generating and compiling it costs ~8 ms a schema, a
    tenth of verifying one new commit. Best effort: no cache folder, no harm."""
    text = json.dumps(schema, sort_keys=True)
    key = hashlib.sha256("\0".join((fastjsonschema.VERSION, sys.version, text)).encode()).hexdigest()[:32]
    path = _cache_dir() / f"{key}.marshal"
    code = _kept(path)
    if code is None:
        source = fastjsonschema.compile_to_code(schema, use_default=False, use_formats=False)
        code = compile(source, f"<pbem schema {schema_id}>", "exec")
        _keep(path, code)
    return code


def _stamped(schema_id: str) -> Path:
    """Where the compiled validator of `schema_id` is kept under the stats of the schema files (`_stamp`)."""
    key = hashlib.sha256(f"{_stamp()}\0{schema_id}".encode()).hexdigest()[:32]
    return _cache_dir() / f"stat-{key}.marshal"


@lru_cache(maxsize=1)
def _stamp() -> str:
    """fastjsonschema's and Python's versions and the name, size and modification time of every schema file: a
    validator inlines parts of other schemas, and any checkout or install that changes a file rewrites it (as
    verify/cache.py keys a kept verdict). A stat each instead of reading and inlining all 30 files and hashing
    the result: some 7 ms of one new commit. A file that changed is read whole again, and checked (`_files`)."""
    digest = hashlib.sha256("\0".join((fastjsonschema.VERSION, sys.version)).encode())
    fold_file_stats(digest, schemas_dir(), ".json", below=False)  # the files `_files` reads
    return digest.hexdigest()


def _kept(path: Path) -> Any:
    """The code object kept at `path`, or None."""
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _keep(path: Path, code: Any) -> None:
    """Keep a code object at `path`; best effort: no cache folder, no harm."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_bytes(marshal.dumps(code))
        os.replace(temp, path)
    except OSError:
        pass


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pbem" / "validators"


def _resolve(root: str, pointer: str) -> Any:
    node = _files()[root]
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


_DRAFT7 = "http://json-schema.org/draft-07/schema#"
_SKIP = frozenset({"$id", "$schema", "$defs", "title", "description", "$comment", "examples", "default"})
_DATA = frozenset({"const", "enum"})  # values, not schemas: copied as they are
_MAPS = frozenset({"properties", "patternProperties", "dependencies"})  # name -> schema


def _inline(schema: Any, root: str, depth: int = 0) -> Any:
    """A self-contained draft-07 copy of a 2020-12 schema (of id `root`) for fastjsonschema: every `$ref`
    replaced by what it points to (pbem's schemas are not recursive), `dependentSchemas` spelt as draft-07
    `dependencies`."""
    if depth > 64:
        raise _broken(f"{root}: $ref nesting too deep (a cycle?)")
    if isinstance(schema, list):
        return [_inline(item, root, depth + 1) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SKIP:
            continue
        if key == "$ref":
            target_root, _, pointer = value.partition("#")
            target_root = target_root or root  # "#/$defs/x" points into the schema itself
            out.setdefault("allOf", []).append(_inline(_resolve(target_root, pointer), target_root, depth + 1))
        elif key in _DATA:
            out[key] = value
        elif key in _MAPS or key == "dependentSchemas":
            out["dependencies" if key == "dependentSchemas" else key] = {
                name: _inline(sub, root, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _inline(value, root, depth + 1)
    return out


def _broken(what: str) -> PbemError:
    return PbemError("schema.broken", f"pbem's schema files are broken: {what}", hint="reinstall pbem",
                     exit_code=USAGE)


def _absolute(node: Any, ids: frozenset[str]) -> Any:
    """A copy of a schema with `$id` and references to known ids made absolute (see module docstring)."""
    if isinstance(node, list):
        return [_absolute(item, ids) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$id" and isinstance(value, str) and value in ids:
            value = _BASE + value
        elif key == "$ref" and isinstance(value, str) and value.partition("#")[0] in ids:
            value = _BASE + value
        else:
            value = _absolute(value, ids)
        out[key] = value
    return out


# --- messages: which field, expected vs got -------------------------------------------------------------------

def format_path(path: Iterable[str | int]) -> str:
    """`entries[2].do.move` for ("entries", 2, "do", "move"); "top level" for the root."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _IDENT.match(step):
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return out or "top level"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _explain(error: ValidationError, path: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """The message for one error and the path whose line best shows it."""
    kind, expected, got, schema = error.validator, error.validator_value, error.instance, error.schema
    where = format_path(path)
    line_path = path
    if kind == "additionalProperties" and isinstance(got, dict) and isinstance(schema, dict):
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = [k for k in got if k not in props and not any(re.search(p, k) for p in patterns)]
        if extra:
            allowed = ", ".join(props) or "no fields"
            more = " (and x-… extension fields)" if "^x-" in patterns else ""
            line_path = path + (extra[0],)
            text = f"unknown field {_short(extra[0])}; allowed: {allowed}{more}"
            return _cap(f"{format_path(line_path)}: {text}"), line_path
    if kind == "required" and isinstance(got, dict):
        missing = [k for k in expected if k not in got]
        text = f"missing required field {_short(missing[0] if missing else expected)}"
    elif kind == "pattern":
        described = schema.get("description") if isinstance(schema, dict) else None
        text = f"{_short(got)} does not match {expected!r}"
        if described:
            text = f"{_short(got)} is not {described}"
    elif kind == "type":
        text = f"{_short(got)} is not of type {_types(expected)}"
    elif kind == "const":
        text = f"expected {expected!r}, got {_short(got)}"
    elif kind == "enum":
        text = f"expected one of {', '.join(map(repr, expected))}; got {_short(got)}"
    elif kind in ("maxItems", "minItems", "maxProperties", "minProperties", "maxLength", "minLength"):
        text = _count_message(kind, expected, got, schema)
    else:
        text = error.message
    return _cap(f"{where}: {text}"), line_path


def _types(expected: Any) -> str:
    if isinstance(expected, list):
        return " or ".join(repr(t) for t in expected)
    return repr(expected)


def _count_message(kind: str, limit: int, got: Any, schema: Any) -> str:
    unit = {"Items": "items", "Properties": "fields", "Length": "characters"}[kind[3:]]
    if isinstance(schema, dict) and schema.get("minProperties") == schema.get("maxProperties") == 1:
        names = ", ".join(map(_short, got)) if isinstance(got, dict) and got else "none"
        return f"has {len(got)} fields ({names}); expected exactly one"
    bound = "at most" if kind.startswith("max") else "at least"
    return f"has {len(got)} {unit}; expected {bound} {limit}"


def _cap(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"
