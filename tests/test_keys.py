"""Keys in OpenSSH formats (DESIGN §3, §8): byte-for-byte what ssh-keygen reads and writes."""

from __future__ import annotations

import base64
import contextlib
import stat
from pathlib import Path

import nacl.public
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitutil import Sandbox, fixed_key
from pbem.crypto import wire
from pbem.crypto.keys import (
    PrivateKey,
    PublicKey,
    allowed_signers_line,
    find_key,
    load_private_key,
    write_keypair,
)
from pbem.errors import PbemError


def rule_of(excinfo: pytest.ExceptionInfo[PbemError]) -> str:
    return excinfo.value.finding.rule


# -- private key files ----------------------------------------------------------------------------------------


def test_generated_key_round_trips_through_openssh_text() -> None:
    key = PrivateKey.generate("me@host")
    text = key.to_openssh()
    again = PrivateKey.from_openssh(text)
    assert again == key and again.to_openssh() == text
    lines = text.split("\n")
    assert lines[0] == "-----BEGIN OPENSSH PRIVATE KEY-----"
    assert lines[-2:] == ["-----END OPENSSH PRIVATE KEY-----", ""]
    assert all(len(line) == 70 for line in lines[1:-3]) and 0 < len(lines[-3]) <= 70


def test_ssh_keygen_key_reads_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = box.ssh_keygen_key("bob")
    key = load_private_key(path)
    assert key.to_openssh() == path.read_text()
    assert key.public.to_line() == Path(f"{path}.pub").read_text().strip()
    assert key.comment == "bob@ssh-keygen"


def test_write_keypair_makes_0600_private_file_and_pub_line(tmp_path: Path) -> None:
    key = fixed_key("alice")
    path = tmp_path / "new" / "id_ed25519"
    write_keypair(path, key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Path(f"{path}.pub").read_text() == key.public.to_line() + "\n"
    assert load_private_key(path) == key


def test_write_keypair_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "id_ed25519"
    Path(f"{path}.pub").write_text("keep me")
    with pytest.raises(PbemError) as exc:
        write_keypair(path, fixed_key())
    assert rule_of(exc) == "key.exists"
    assert Path(f"{path}.pub").read_text() == "keep me" and not path.exists()


def test_ssh_keygen_reads_our_private_key_and_prints_our_public_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path, key = box.new_key("carol")
    printed = box.run("ssh-keygen", "-y", "-f", path).stdout.decode().strip()
    assert PublicKey.from_line(printed).same_key(key.public)
    assert printed.split()[:2] == key.public.to_line().split()[:2]


def test_fingerprint_matches_ssh_keygen(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path, key = box.new_key("dave")
    listed = box.run("ssh-keygen", "-l", "-f", f"{path}.pub").stdout.decode().split()
    assert listed[1] == key.public.fingerprint()


def test_encrypted_key_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = Sandbox(tmp_path).ssh_keygen_key("eve", "-N", "secret", "-a", "1")
    with pytest.raises(PbemError) as exc:
        load_private_key(path)
    assert rule_of(exc) == "key.encrypted"
    assert "ssh-agent" in (exc.value.finding.hint or "")


def test_non_ed25519_private_key_is_unsupported(tmp_path: Path) -> None:
    path = Sandbox(tmp_path).ssh_keygen_key("ecc", kind="ecdsa")
    with pytest.raises(PbemError) as exc:
        load_private_key(path)
    assert rule_of(exc) == "key.unsupported"


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("", "key.unsupported"),
        ("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n", "key.unsupported"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\n!!!\n-----END OPENSSH PRIVATE KEY-----\n", "key.malformed"),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEG/TcQmg5De6Y/2qNbL6zEiM52QJOAwlcPVHXlzL8y/", "key.malformed"),
    ],
)
def test_bad_private_key_files(tmp_path: Path, content: str, rule: str) -> None:
    path = tmp_path / "key"
    path.write_text(content)
    with pytest.raises(PbemError) as exc:
        load_private_key(path)
    assert rule_of(exc) == rule and exc.value.finding.file == str(path)


def test_corrupted_private_section_is_malformed() -> None:
    key = fixed_key()
    data = wire.unarmor_lenient(key.to_openssh(), "OPENSSH PRIVATE KEY")
    broken = data[:-1] + b"\x09"  # last padding byte out of sequence
    text = wire.armor("OPENSSH PRIVATE KEY", broken)
    with pytest.raises(PbemError) as exc:
        PrivateKey.from_openssh(text)
    assert rule_of(exc) == "key.malformed"


def test_missing_key_file() -> None:
    with pytest.raises(PbemError) as exc:
        load_private_key(Path("/nonexistent/id_ed25519"))
    assert rule_of(exc) == "key.missing" and exc.value.exit_code == 2


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.binary().map(
            lambda b: (
                "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                + base64.b64encode(b"openssh-key-v1\x00" + b).decode()
                + "\n-----END OPENSSH PRIVATE KEY-----\n"
            )
        ),
    )
)
def test_private_key_parser_raises_only_pbem_errors(text: str) -> None:
    with contextlib.suppress(PbemError):
        PrivateKey.from_openssh(text)


# -- public keys --------------------------------------------------------------------------------------------


def test_public_line_round_trip_and_identity() -> None:
    key = fixed_key("alice").public
    assert PublicKey.from_line(key.to_line()) == key
    bare = PublicKey.from_line(key.to_line().rsplit(" ", 1)[0])
    assert bare.comment == "" and bare.same_key(key) and bare != key
    assert bare.to_line() == key.to_line().rsplit(" ", 1)[0]
    assert PublicKey.from_line(key.to_line() + " with spaces").comment == "alice@pbem.test with spaces"


def _line(blob: bytes, kind: str = "ssh-ed25519") -> str:
    return f"{kind} {base64.b64encode(blob).decode()}"


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ", "key.unsupported"),
        ("ecdsa-sha2-nistp256 AAAA", "key.unsupported"),
        ("sk-ssh-ed25519@openssh.com AAAA", "key.unsupported"),
        ("hello", "key.malformed"),
        ("hello world", "key.malformed"),
        (
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEG/TcQmg5De6Y/2qNbL6zEiM52QJOAwlcPVHXlzL8y/ a\nssh-ed25519 AAAA",
            "key.malformed",
        ),
        ("ssh-ed25519 not*base64", "key.malformed"),
        (_line(wire.string(b"ssh-ed25519") + wire.string(b"x" * 31)), "key.malformed"),
        (_line(wire.string(b"ssh-ed25519") + wire.string(b"x" * 32) + b"extra"), "key.malformed"),
        (_line(wire.string(b"ssh-rsa") + wire.string(b"x" * 32)), "key.unsupported"),
    ],
)
def test_bad_public_lines(line: str, rule: str) -> None:
    with pytest.raises(PbemError) as exc:
        PublicKey.from_line(line)
    assert rule_of(exc) == rule


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_public_line_parser_raises_only_pbem_errors(text: str) -> None:
    with contextlib.suppress(PbemError):
        PublicKey.from_line(text)


def test_curve25519_halves_belong_together() -> None:
    key = fixed_key("bob")
    private = nacl.public.PrivateKey(key.to_curve25519_private())
    assert bytes(private.public_key) == key.public.to_curve25519()
    sealed = nacl.public.SealedBox(nacl.public.PublicKey(key.public.to_curve25519())).encrypt(b"speed 12")
    assert nacl.public.SealedBox(private).decrypt(sealed) == b"speed 12"


def test_allowed_signers_line() -> None:
    key = fixed_key("alice").public
    line = allowed_signers_line("fed", key)
    assert line == f'fed namespaces="git" {key.to_line().rsplit(" ", 1)[0]}'
    with pytest.raises(PbemError) as exc:
        allowed_signers_line("fed,*", key)
    assert rule_of(exc) == "key.principal"


# -- which key (DESIGN §8) ----------------------------------------------------------------------------------


def _config(values: dict[str, str]):  # type: ignore[no-untyped-def]
    return values.get


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    paths = {}
    for name, where in [
        ("explicit", tmp_path / "k1"),
        ("env", tmp_path / "k2"),
        ("git", tmp_path / "k3"),
        ("default", home / ".ssh" / "id_ed25519"),
    ]:
        write_keypair(where, PrivateKey.generate(name))
        paths[name] = where
    return home, paths


def test_find_key_order(homes: tuple[Path, dict[str, Path]]) -> None:
    home, p = homes
    ssh = {"gpg.format": "ssh", "user.signingkey": str(p["git"])}
    env = {"PBEM_KEY": str(p["env"])}
    assert find_key(str(p["explicit"]), env, _config(ssh), home) == p["explicit"]
    assert find_key(None, env, _config(ssh), home) == p["env"]
    assert find_key(None, {}, _config(ssh), home) == p["git"]
    assert find_key(None, {}, _config({"user.signingkey": str(p["git"])}), home) == p["default"]  # gpg.format unset
    assert find_key(None, {"PBEM_KEY": ""}, _config({}), home) == p["default"]
    assert find_key("~/.ssh/id_ed25519", {}, _config({}), home) == p["default"]  # ~ is the given home


def test_find_key_git_config_forms(homes: tuple[Path, dict[str, Path]]) -> None:
    home, p = homes

    def via(value: str) -> Path:
        return find_key(None, {}, _config({"gpg.format": "ssh", "user.signingkey": value}), home)

    assert via(f"{p['git']}.pub") == p["git"]
    assert via("~/.ssh/id_ed25519") == p["default"]
    literal = PublicKey.from_line((home / ".ssh" / "id_ed25519.pub").read_text()).to_line()
    assert via(f"key::{literal}") == p["default"]
    assert via(literal) == p["default"]
    with pytest.raises(PbemError) as exc:
        via(f"key::{fixed_key('dave').public.to_line()}")
    assert rule_of(exc) == "key.missing"


def test_find_key_agent_only_pub_is_returned_as_is(tmp_path: Path) -> None:
    pub = tmp_path / "agent_key.pub"
    pub.write_text(fixed_key().public.to_line() + "\n")
    assert find_key(None, {}, _config({"gpg.format": "ssh", "user.signingkey": str(pub)}), tmp_path) == pub


def test_find_key_explicit_missing_is_an_error_not_a_fallback(homes: tuple[Path, dict[str, Path]]) -> None:
    home, _ = homes
    for explicit, env in [("/nope/key", {}), (None, {"PBEM_KEY": "/nope/key"})]:
        with pytest.raises(PbemError) as exc:
            find_key(explicit, env, _config({}), home)
        assert rule_of(exc) == "key.missing" and "/nope/key" in exc.value.finding.message


def test_find_key_nothing_found_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(PbemError) as exc:
        find_key(None, {}, _config({}), tmp_path)
    err = exc.value
    assert rule_of(exc) == "key.missing" and err.exit_code == 2
    assert "\n" not in err.finding.message
    for place in ("--key", "PBEM_KEY", "user.signingkey", "id_ed25519"):
        assert place in err.finding.message
