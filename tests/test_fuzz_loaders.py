"""Property tests (issue 7, "no way in"): every reader of a game file, the strict YAML loader, the raw commit
parser and the SSHSIG verifier, fed arbitrary and mutated-valid input, either return or raise `PbemError`
(DESIGN §2 "every error names file and line", §8 exit codes, §11 "every bad input gets one clear message").
Anything else (KeyError, TypeError, AssertionError, RecursionError, …) would reach the player as a traceback.

Three kinds of input per reader (dulwich's hypothesis tests are the model, STYLE.md):
* arbitrary bytes, and YAML-looking text made of YAML's own punctuation;
* a valid sample file mutated at the byte level (flip, insert, delete, duplicate or drop a line, …);
* a valid sample file mutated at the data level (one node replaced, removed or added, with values drawn from the
  fields' own vocabulary so that many mutants pass the schema and reach the code behind it), written back with
  pbem's own writer (reports: one entry per line, the layout the line-by-line reader takes) or PyYAML.

Reports are read both ways, whole and line by line with a ParseCache, and the two must agree (DESIGN §2: the
line-by-line path is an optimisation, never a different reader).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gitutil import fixed_key
from pbem.crypto import sshsig, wire
from pbem.errors import PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.rulesets import get as get_ruleset
from pbem.store.commits import commit_payload, parse_commit, with_signature
from pbem.files import lines as line_reader
from pbem.files import readers
from pbem.files.parsecache import ParseCache
from pbem.files.readers import read_agreement
from pbem.protocol.erratum import of_agreement

GAMES = Path(__file__).resolve().parent.parent / "games"
TACTICAL = get_ruleset("tactical/1")
DOW = get_ruleset("dow/1")
ALICE, BOB, ESCROW_KEY = fixed_key("alice"), fixed_key("bob"), fixed_key("escrow")

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- valid samples, one per file kind (test_samples_are_valid proves them) ------------------------------------


def _seated(template: str) -> bytes:
    """A template's game.yaml with the first two seats claimed and a dice escrow key."""
    text = (GAMES / template / "game.yaml").read_text()
    lines = text.splitlines()
    seats = [i for i, line in enumerate(lines) if line.lstrip().startswith("- {id:")]
    for i, key in zip(seats[:2], (ALICE, BOB)):
        lines[i] = lines[i].rstrip().rstrip("}") + f', key: "{key.public.to_line()}"}}'
    out = "\n".join(lines) + "\n"
    return out.replace("dice: {mode: commit-reveal}",
                       f'dice: {{mode: commit-reveal, escrow_key: "{ESCROW_KEY.public.to_line()}"}}').encode()


GAME_SAMPLES = [(GAMES / t / "game.yaml").read_bytes() for t in ("tactical-duel", "tactical-melee", "dow-standard")]
GAME_SAMPLES += [_seated("tactical-duel"), _seated("dow-standard")]

PLAYERS_TACTICAL = b"""through: "1.16.damage"
breaks:
  - {range: 8}
  - {fire: {heavy: true}}
  - {damage: {kind: shield}}
  - {turn: {within: 12}}
  - {at: "1.16.move"}
plans:
  - {unit: CA, from: "1.9.move", until: "1.16.move", do: {pursue: D7}}
"""
PLAYERS_DOW = b"""through: "F1901M"
breaks:
  - {at: "S1902M"}
"""
REPORT_TACTICAL = b"""entries:
  - {at: "1.0.alloc", by: fed, unit: CA, do: {speed: 12}}
  - {at: "1.0.alloc", by: kli, unit: D7, do: {speed: 12}}
  - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}
  - {at: "1.4.activity", by: fed, unit: CA, do: {use: tractor, target: D7}}
  - {at: "1.4.fire", by: fed, unit: CA, do: {fire: {weapon: ph1, target: D7}}}
  - {at: "1.5.move", by: kli, unit: D7, do: {het: B}}
"""
REPORT_TACTICAL_WHOLE = b"""# a hand-edited file: block style, comments; parsed whole
entries:
  - at: "1.0.alloc"
    by: fed
    unit: CA
    do:
      speed: 12
  - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}
"""
STATUS = b"""control: fed
firm: "1.22.fire"
pending:
  - player: fed
    at: "1.22.activity"
    kind: condition
    why: "turn within 10: D7 made a high energy turn E to B at range 2 from CA (1.22.activity)"
  - {player: escrow, at: "2.1.move", kind: dice, why: "escrow signature owed for dice kli-0001"}
over: false
yielded_by: kli
note: "HET stands"
"""
DICE = b"""id: fed-0001
roller: fed
mode: commit-reveal
sides: 6
rolls:
  - {for: "CA sensor sweep: on a 6 we read the D7's power curve", ref: "1.4.fire/CA/ph1"}
commit: "5dc8b7a2407abc51ecc75deed1597aa6686aea325b921b8456d700b15b886033"
owner_box: "LOsgJ04atKZn1dZtJYSekp4eubJtF0ITdVvL+s0GcjeV0PNd0qXf7ft1nsqxq0h8aKTcJjgF3tUZIDrvKBjyoE6rLybB8yY5Ofqbp2tQygA="
contributions:
  kli: ef3cd0ef6eeb7e02f9ad5b442e530a8601fd663eb76acce79a39448ab9666f90
reveal: "41adbef266dbac2a91483db99dcbc93eaf660daa27efa501edc26c3832bc9b40"
results: [5]
"""
DICE_ESCROW = b"""id: kli-0001
roller: kli
mode: escrow
sides: 6
rolls:
  - {for: "Klingon crew morale, rolled by the neutral escrow"}
escrow: "RuPVovKogBQdPj+JoTHG5iWJKCNYvDFMg7rD6Q5JCbVF5dPFBAqH7hv6WLw/jBcD/CUWdwa3bc3b6PMdgcuPCg=="
results: [6]
"""
SECRET = b"""id: fed-0001
owner: fed
kind: note
concerns: "fed's plan for turn 1"
end: "2.0.alloc"
box: jynMMpTgbL0keY60waJK2talrUJ565UyKpYDTMad1XECWDyZikYsRdJIgAFrxIPvKNi7IhNjfiYnGQdRHejkk4Z59HGpmo52gd3mHEfF2dcqI7X39MQBPWpMIk2lm5DcXLS5
commit: "68cedc93e39e4ec86e570f059b2837f22fa6ea689d5a6403fadac3a150b9dd06"
owner_box: "pc+PVw8JHqhRA26e1Qo8kaD9j97Oid6jAQ7EiH67Oxm1M/5kyqvCFu4I198MKYvyMgXryDgiGNcxDUBWna4HU/Vq2cgm4elMuQp2pi7GCbU="
key: "1492ded935806db89577c0ec556f77c52fa2c738dc995fcf88a45d2228b40c98"
"""
PRESS_TACTICAL = b"""messages:
  - {by: fed, at: "1.9.move", say: "Good hunting, Klingon."}
  - {by: kli, at: "1.9.move", say: "Qapla'!"}
"""
PRESS_DOW = b"""messages:
  - {by: france, at: S1901P, propose: {to: germany, state: ALLIED}}
  - {by: germany, at: S1901P, accept: {from: france, state: ALLIED}}
  - {by: england, at: S1901P, declare: {to: france, state: WAR}}
  - {by: italy, at: S1901P, reaffirm: {france: ALLIED, germany: HOSTILE}}
  - {by: france, at: S1901P, gift: {to: germany, province: BEL}}
  - {by: russia, say: "hello", x-note: "free"}
  - {by: turkey, draw: true}
"""
ERRATUM = b"""id: fed-0002
kind: erratum
by: fed
content:
  reason: "CA was allocated speed 10"
  removed:
    - {at: "1.0.alloc", by: fed, unit: CA, do: {speed: 12}}
  added:
    - {at: "1.0.alloc", by: fed, unit: CA, do: {speed: 10}}
    - {at: "1.3.move", by: fed, unit: CA, do: {move: TL}}
signatures:
  fed: "-----BEGIN SSH SIGNATURE-----\\nU1NIU0lHAAAAAQ==\\n-----END SSH SIGNATURE-----"
"""


AGREEMENT = b"""id: fed-0001
kind: start
by: fed
content:
  game: "08eb80d1409c08088e878928d70948fa7beee51e178c8fbe50c467c7ca3ad258"
  first: fed
signatures:
  fed: "-----BEGIN SSH SIGNATURE-----\\nU1NIU0lHAAAAAQ==\\n-----END SSH SIGNATURE-----"
"""


def _agreement(data: bytes) -> Any:
    """An agreement read, then what the verifier derives from it (the bytes its signers sign the hash of)."""
    agreement = read_agreement(data, "agreements/fed-0001.yaml")
    return agreement.body(), agreement.kind, agreement.content, agreement.signatures


def _erratum(data: bytes) -> Any:
    """An erratum agreement read with its ruleset (its entries parsed as report entries), then what the verifier
    derives from it (its signed bytes, where it corrects from, in words)."""
    erratum = of_agreement(read_agreement(data, "agreements/fed-0002.yaml", TACTICAL))
    return erratum.removed, erratum.added, erratum.corrected_from(), erratum.terms()


# reader name -> (call on bytes, valid samples)
READERS: dict[str, tuple[Callable[[bytes], Any], list[bytes]]] = {
    "read_manifest": (readers.read_manifest, GAME_SAMPLES),
    "read_players/tactical": (lambda b: readers.read_players(b, "players/fed.yaml", TACTICAL), [PLAYERS_TACTICAL]),
    "read_players/dow": (lambda b: readers.read_players(b, "players/france.yaml", DOW), [PLAYERS_DOW]),
    "read_report/whole": (lambda b: line_reader.read_report(b, "report/turn-01.yaml", TACTICAL),
                          [REPORT_TACTICAL, REPORT_TACTICAL_WHOLE]),
    "read_report/lines": (lambda b: line_reader.read_report(b, "report/turn-01.yaml", TACTICAL, ParseCache(1 << 16, 1 << 17).lines),
                          [REPORT_TACTICAL, REPORT_TACTICAL_WHOLE]),
    "read_status": (readers.read_status, [STATUS]),
    "read_batch": (lambda b: readers.read_batch(b, "dice/fed-0001.yaml"), [DICE, DICE_ESCROW]),
    "read_secret": (lambda b: readers.read_secret(b, "secrets/fed-0001.yaml"), [SECRET]),
    "read_press/tactical": (lambda b: line_reader.read_press(b, "press/global.yaml", TACTICAL), [PRESS_TACTICAL]),
    "read_press/dow": (lambda b: line_reader.read_press(b, "press/global.yaml", DOW), [PRESS_DOW]),
    "read_agreement/erratum": (_erratum, [ERRATUM]),
    "read_agreement": (_agreement, [AGREEMENT]),
    "yamlsafe.load": (lambda b: yamlsafe.load(b, "any.yaml"), [STATUS, DICE, REPORT_TACTICAL_WHOLE]),
}


def only_pbem_errors(call: Callable[[], Any]) -> Any:
    """Run `call`; a PbemError is a clean refusal (it must carry a rule and a sane exit code); anything else
    propagates and fails the test with the input hypothesis found."""
    try:
        return call()
    except PbemError as exc:
        assert exc.finding.rule and "." in exc.finding.rule, exc.finding
        assert exc.exit_code in (1, 2)
        return None


@pytest.mark.parametrize("name", sorted(READERS))
def test_samples_are_valid(name: str) -> None:
    """The mutations below start from files every reader accepts."""
    call, samples = READERS[name]
    for sample in samples:
        call(sample)


def test_sample_report_in_pbem_s_layout_takes_the_line_by_line_path() -> None:
    lines = ParseCache(1 << 16, 1 << 17).lines
    line_reader.read_report(REPORT_TACTICAL, "report/turn-01.yaml", TACTICAL, lines)
    assert lines is not None and len(lines._items) == REPORT_TACTICAL.count(b"\n") - 1


# --- strategies ----------------------------------------------------------------------------------------------

YAML_ALPHABET = st.sampled_from(list("{}[]:,-&*!|>'\"#%@` \n\t?.~0123456789abcxyzé") + ["\n  ", ": ", "- ", "---"])
yaml_like = st.lists(YAML_ALPHABET, max_size=120).map("".join)

FIELDS = sorted({"format", "id", "title", "ruleset", "pbem", "players", "name", "key", "role", "dice", "mode",
                 "escrow_key", "setup", "rules", "through", "breaks", "plans", "at", "range", "fire", "heavy",
                 "damage", "kind", "turn", "within", "unit", "from", "until", "do", "pursue", "entries", "by",
                 "speed", "move", "het", "use", "target", "weapon", "launch", "as", "pass", "clarify", "control",
                 "firm", "pending", "player", "why", "over", "yielded_by", "note", "position", "options",
                 "roller", "sides", "rolls", "for", "ref", "commit", "owner_box", "contributions", "reveal",
                 "escrow", "results", "void", "reason", "cosign", "replaces", "owner", "concerns", "end", "box",
                 "step", "messages", "say", "propose", "accept", "declare", "reaffirm", "gift", "province",
                 "state", "warn", "lift", "draw", "units", "hex", "facing", "turn_mode", "shields", "hull",
                 "power", "weapons", "systems", "arcs", "type", "brackets", "map", "columns", "rows", "turns",
                 "max_speed", "costs", "start", "victory", "invite_hash", "director", "fed", "kli", "france",
                 "germany", "x-note", "orders", "CA", "D7"})
WORDS = st.sampled_from([
    "1.0.alloc", "1.9.move", "1.16.damage", "1.32.final", "2.32.final", "1.4.fire", "0.0.alloc", "9.99.move",
    "S1901P", "S1901M", "F1901R", "W1901A", "S2001M", "end", "fed", "kli", "escrow", "france", "germany", "carol",
    "CA", "D7", "ph1", "tp1", "phaser", "torpedo", "tractor", "A", "B", "F", "TL", "SL", "HET", "ALLIED", "WAR",
    "LIMBO", "BEL", "XYZ", "commit-reveal", "escrow", "note", "orders", "allocation", "tactical/1", "dow/1",
    "pbem/1", "0.1.0", "standard", "0510", "4201", "9999", "player", "director", "horizon", "dice", "secret",
    "condition", "clarify", "sealed", "a" * 64, "0" * 64, "ff" * 32, "AAAA", "=" * 4, "kli=x",
    ALICE.public.to_line(), ESCROW_KEY.public.to_line(), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA",
    base64.b64encode(bytes(64)).decode(), base64.b64encode(bytes(72)).decode(), "sha256:00:00", "\u0435", "",
])
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12)
SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.integers(-3, 40)
           | st.floats(allow_nan=False, allow_infinity=False) | WORDS | TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(FIELDS) | TEXT, inner, max_size=4),
                      max_leaves=10)


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # the strict loader refuses aliases: never write one
        return True


def dump(data: Any) -> bytes:
    """Write data the way pbem does where it can (reports one entry per line), else with PyYAML."""
    try:
        if isinstance(data, dict) and set(data) == {"entries"} and isinstance(data["entries"], list):
            return ("entries:\n" + dump_report(data["entries"]).split("entries:\n", 1)[-1]).encode()
        if isinstance(data, dict):
            return dump_mapping(data).encode()
    except (TypeError, ValueError):
        pass
    return yaml.dump(data, Dumper=_NoAliases, allow_unicode=True, sort_keys=False).encode()


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, path + (i,))
    return out


@st.composite
def data_mutant(draw: st.DrawFn, sample: bytes) -> bytes:
    """The sample's data with one or two nodes tweaked, replaced, removed, duplicated or added."""
    import copy

    data = copy.deepcopy(yamlsafe.load(sample, "sample").data)
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(_paths(data)))
        if not path:
            if draw(st.booleans()):
                data = draw(VALUES)
            continue
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        op = draw(st.sampled_from(["tweak", "tweak", "replace", "remove", "add", "duplicate"]))
        if op == "tweak":  # a value of the same kind: the mutant often still passes the schema
            old = parent[last]
            if isinstance(old, bool) or old is None:
                parent[last] = draw(st.none() | st.booleans())
            elif isinstance(old, int):
                parent[last] = old + draw(st.integers(-40, 40) | st.sampled_from([2**31, -2**63, 10**30]))
            elif isinstance(old, str):
                parent[last] = draw(WORDS | st.just(old[:-1]) | st.just(old + old[-1:]) | TEXT)
            else:
                parent[last] = draw(VALUES)
        elif op == "replace":
            parent[last] = draw(VALUES)
        elif op == "remove":
            del parent[last]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(FIELDS))] = draw(VALUES)
        elif op == "add":
            parent.insert(last, draw(VALUES))
        elif isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        else:
            parent[draw(st.sampled_from(FIELDS))] = copy.deepcopy(parent[last])
    return dump(data)


@st.composite
def byte_mutant(draw: st.DrawFn, sample: bytes) -> bytes:
    """The sample's bytes with one to four edits: flip a byte, insert or delete bytes, drop, duplicate or swap
    lines, or splice YAML punctuation in."""
    data = bytearray(sample)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "drop-line", "dup-line", "swap-lines", "splice"]))
        if not data:
            data = bytearray(draw(st.binary(max_size=8)))
            continue
        at = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[at] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=6))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 12))]
        elif op == "splice":
            data[at:at] = draw(yaml_like).encode()
        else:
            lines = bytes(data).split(b"\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "drop-line":
                del lines[i]
            elif op == "dup-line":
                lines.insert(i, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def any_input(samples: list[bytes]) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=300),
        yaml_like.map(str.encode),
        st.sampled_from(samples).flatmap(byte_mutant),
        st.sampled_from(samples).flatmap(data_mutant),
    )


# --- every reader: return or PbemError ------------------------------------------------------------------------

def _reader_test(name: str) -> Callable[..., None]:
    call, samples = READERS[name]

    @FUZZ
    @given(data=any_input(samples))
    def run(data: bytes) -> None:
        only_pbem_errors(lambda: call(data))

    return run


test_fuzz_read_manifest = _reader_test("read_manifest")
test_fuzz_read_players_tactical = _reader_test("read_players/tactical")
test_fuzz_read_players_dow = _reader_test("read_players/dow")
test_fuzz_read_report_whole = _reader_test("read_report/whole")
test_fuzz_read_report_line_by_line = _reader_test("read_report/lines")
test_fuzz_read_status = _reader_test("read_status")
test_fuzz_read_batch = _reader_test("read_batch")
test_fuzz_read_secret = _reader_test("read_secret")
test_fuzz_read_press_tactical = _reader_test("read_press/tactical")
test_fuzz_read_press_dow = _reader_test("read_press/dow")
test_fuzz_yamlsafe_load = _reader_test("yamlsafe.load")
test_fuzz_read_erratum = _reader_test("read_agreement/erratum")
test_fuzz_read_agreement = _reader_test("read_agreement")


def _entries(report: Any) -> list[tuple]:
    return [(e.at, e.at_text, e.by, e.unit, dict(e.do), e.file, e.line) for e in report.entries]


@FUZZ
@given(data=any_input([REPORT_TACTICAL, REPORT_TACTICAL_WHOLE]), warm=st.booleans())
@example(data=b"entries:", warm=False)  # the key alone is no list: both refuse it (the line reader once said empty)
@example(data=b"entries:\n", warm=True)
def test_fuzz_read_report_both_paths_agree(data: bytes, warm: bool) -> None:
    """DESIGN §2: reading line by line (with a warm or cold cache) and reading whole accept the same files and
    give the same entries on the same lines."""
    lines = ParseCache(1 << 16, 1 << 17).lines
    if warm:  # a cache already holding the sample's lines, as in a long history
        line_reader.read_report(REPORT_TACTICAL, "report/turn-01.yaml", TACTICAL, lines)
    whole = only_pbem_errors(lambda: line_reader._read_report_whole(data, "report/turn-01.yaml", TACTICAL))
    by_line = only_pbem_errors(lambda: line_reader.read_report(data, "report/turn-01.yaml", TACTICAL, lines))
    assert (whole is None) == (by_line is None), (whole, by_line)
    if whole is not None:
        assert _entries(whole) == _entries(by_line)


# --- the raw commit parser --------------------------------------------------------------------------------------

TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
IDENT = "Alice <alice@example.org> 1700000000 +0000"


def _signed_commit(parents: int = 1) -> bytes:
    payload = commit_payload(TREE, ["1" * 40, "2" * 40][:parents], IDENT, IDENT, "fed: straight on\n")
    return with_signature(payload, sshsig.sign(ALICE, payload))


COMMITS = [_signed_commit(0), _signed_commit(1), _signed_commit(2)]


@FUZZ
@given(raw=st.one_of(st.binary(max_size=400), st.sampled_from(COMMITS).flatmap(byte_mutant)))
def test_fuzz_parse_commit(raw: bytes) -> None:
    """store.commits.parse_commit: a commit or PbemError (commit.malformed, signature.missing)."""
    commit = only_pbem_errors(lambda: parse_commit(raw))
    if commit is not None and commit.signature is not None:
        only_pbem_errors(lambda: sshsig.verify(commit.signature, commit.signed_payload()))


# --- the SSHSIG verifier ---------------------------------------------------------------------------------------------

MESSAGE = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nturn\n"
GOOD = sshsig.sign(ALICE, MESSAGE)


@st.composite
def crafted_sshsig(draw: st.DrawFn) -> str:
    """An SSHSIG blob assembled field by field with random choices: the layout is right, the values are not."""
    key_type = draw(st.sampled_from([b"ssh-ed25519", b"ssh-rsa", b"ecdsa-sha2-nistp256", b"", b"ssh-ed25519\0"]))
    key_bytes = draw(st.sampled_from([ALICE.public.raw, BOB.public.raw, b"", bytes(31), bytes(33)]))
    key_blob = wire.string(key_type) + wire.string(key_bytes) + draw(st.sampled_from([b"", b"\0"]))
    namespace = draw(st.sampled_from([b"git", b"file", b"pbem", b"", b"git\0"]))
    hash_name = draw(st.sampled_from([b"sha512", b"sha256", b"md5", b""]))
    signed = (b"SSHSIG" + wire.string(namespace) + wire.string(b"") + wire.string(hash_name)
              + wire.string(hashlib.sha512(MESSAGE).digest()))
    sig = ALICE.sign_raw(signed) if draw(st.booleans()) else draw(st.binary(max_size=70))
    sig_type = draw(st.sampled_from([b"ssh-ed25519", b"rsa-sha2-512", b""]))
    blob = (draw(st.sampled_from([b"SSHSIG", b"SSHSIH", b""])) + wire.u32(draw(st.sampled_from([1, 0, 2, 2**32 - 1])))
            + wire.string(key_blob) + wire.string(namespace) + wire.string(draw(st.sampled_from([b"", b"x"])))
            + wire.string(hash_name) + wire.string(wire.string(sig_type) + wire.string(sig))
            + draw(st.sampled_from([b"", b"\0", b"trailing"])))
    width = draw(st.sampled_from([70, 70, 64, 76]))
    body = base64.b64encode(blob).decode()
    lines = [body[i:i + width] for i in range(0, len(body), width)]
    return "\n".join(["-----BEGIN SSH SIGNATURE-----", *lines, "-----END SSH SIGNATURE-----"])


@FUZZ
@given(armored=st.one_of(st.text(max_size=300), crafted_sshsig(),
                         st.just(GOOD.encode()).flatmap(byte_mutant).map(lambda b: b.decode("latin-1"))),
       message=st.one_of(st.just(MESSAGE), st.binary(max_size=60)))
def test_fuzz_sshsig_verify(armored: str, message: bytes) -> None:
    """crypto.sshsig.verify: the signer's key or PbemError (signature.*), for any text."""
    only_pbem_errors(lambda: sshsig.verify(armored, message))


# --- press files: read line by line (a commit's appended lines) and whole agree (DESIGN §2, §7.2) ----------------

def _messages(press: Any) -> list[tuple]:
    return [(m.by, m.at, dict(m.body), m.file, m.line) for m in press.messages]


@FUZZ
@given(data=any_input([PRESS_DOW]), tail=any_input([b"  - {by: france, at: S1901P, say: hi}\n"]))
def test_fuzz_read_press_line_by_line_appended_and_whole_agree(data: bytes, tail: bytes) -> None:
    """A press file read line by line, or as a valid earlier version plus appended bytes, gives what the whole-file
    reader gives (the same messages on the same lines), and refuses what it refuses."""
    file = "press/france.yaml"
    whole = only_pbem_errors(lambda: line_reader._read_press_whole(data, file, DOW))
    by_line = only_pbem_errors(lambda: line_reader.read_press(data, file, DOW))
    assert (whole is None) == (by_line is None), (whole, by_line)
    if whole is not None:
        assert _messages(whole) == _messages(by_line)
    previous = line_reader.read_press(PRESS_DOW, file, DOW)
    grown = PRESS_DOW + tail
    whole = only_pbem_errors(lambda: line_reader._read_press_whole(grown, file, DOW))
    appended = only_pbem_errors(lambda: line_reader.read_press(grown, file, DOW, previous))
    assert (whole is None) == (appended is None), (grown, whole, appended)
    if whole is not None:
        assert _messages(whole) == _messages(appended)
