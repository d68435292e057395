"""`pbem watch` e-mail through a real SMTP server with STARTTLS and a login (docs/watch.md "E-mail").

Each test starts a local aiosmtpd server on 127.0.0.1 with a self-signed certificate made here (with the
`cryptography` package when it is installed, else the `openssl` binary); the client trusts it through
PBEM_SMTP_CAFILE / `cafile`. A mail goes through with STARTTLS and the right password; a wrong password is one
line and the watch goes on; a server without STARTTLS, when the settings demand it, never sees the password.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import Table
from pbem.services import watch
from test_push import Race, base_race  # noqa: F401 (a fixture)
from test_watch import Lines, lines, run_watch

controller_module = pytest.importorskip("aiosmtpd.controller")
from aiosmtpd.smtp import AuthResult, LoginPassword  # noqa: E402

USER, PASSWORD = "player@pbem.test", "correct horse"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, signing itself (it is its own CA): (certificate, key)."""
    cert, key = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl binary is here")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True)
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    public = private.public_key()
    built = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
             .serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
             .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                         x509.DNSName("localhost")]), critical=False)
             .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
             .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                          content_commitment=False, key_encipherment=False, data_encipherment=False,
                                          key_agreement=False, encipher_only=False, decipher_only=False),
                            critical=True)
             .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
             .sign(private, hashes.SHA256()))
    cert.write_bytes(built.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, key


@dataclass
class Server:
    """A running local SMTP server: its port, the CA file a client must trust, what it received and every
    login it was offered (whether it came over TLS)."""

    port: int
    cafile: Path
    received: list[Any] = field(default_factory=list)
    logins: list[tuple[str, str, bool]] = field(default_factory=list)  # (user, password, over TLS)

    def config(self, password: str = PASSWORD, starttls: bool = True) -> watch.SmtpConfig:
        return watch.SmtpConfig("127.0.0.1", "me@pbem.test", self.port, USER, password, None, starttls,
                                str(self.cafile))

    def env(self, password: str = PASSWORD) -> dict[str, str]:
        return {"PBEM_SMTP_HOST": "127.0.0.1", "PBEM_SMTP_PORT": str(self.port), "PBEM_SMTP_TO": "me@pbem.test",
                "PBEM_SMTP_USER": USER, "PBEM_SMTP_PASSWORD": password, "PBEM_SMTP_STARTTLS": "1",
                "PBEM_SMTP_CAFILE": str(self.cafile)}


def _free_port() -> int:
    with socket.socket() as probe:  # aiosmtpd cannot be told port 0
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(tmp_path: Path, with_tls: bool) -> Iterator[Server]:
    import ssl

    from aiosmtpd.handlers import Message

    cert, key = self_signed(tmp_path)
    server = Server(_free_port(), cert)

    class Keep(Message):
        def handle_message(self, message: Any) -> None:
            server.received.append(message)

    def authenticator(smtp: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        if isinstance(data, LoginPassword):
            user, password = data.login.decode(), data.password.decode()
            server.logins.append((user, password, session.ssl is not None))
            ok = (user, password) == (USER, PASSWORD)
            return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd sends the 535 itself
        return AuthResult(success=False, handled=False)

    options: dict[str, Any] = {"authenticator": authenticator}
    if with_tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        options.update(tls_context=context, require_starttls=True, auth_require_tls=True)
    else:
        options.update(auth_require_tls=False)  # a careless server: it would take a password in the clear
    controller = controller_module.Controller(Keep(), hostname="127.0.0.1", port=server.port, ready_timeout=10,
                                              **options)
    controller.start()
    try:
        yield server
    finally:
        controller.stop()


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[Server]:
    """STARTTLS required, login only over TLS."""
    yield from _serve(tmp_path, with_tls=True)


@pytest.fixture
def plain_server(tmp_path: Path) -> Iterator[Server]:
    """No STARTTLS offered; it would accept a login in the clear."""
    yield from _serve(tmp_path, with_tls=False)


def test_a_mail_goes_through_with_starttls_and_login(tls_server: Server) -> None:
    watch.send_mail(tls_server.config(), "pbem g: your decision", "orders owed for S1901M")
    assert tls_server.logins == [(USER, PASSWORD, True)]
    assert len(tls_server.received) == 1
    assert tls_server.received[0]["To"] == "me@pbem.test" and "orders owed" in tls_server.received[0].get_payload()


def copy_race(source: Path, root: Path) -> Race:
    """A private copy of a race folder (as test_push's `race` fixture makes one), its clones pushing to its own
    server."""
    shutil.copytree(source, root, symlinks=True)  # the keys links point into base_race: read only
    tables = [Table(root / name) for name in ("fed", "kli", "escrow")]
    for table in tables:
        table.git("remote", "set-url", "origin", root / "server.git")
    return tables[0], tables[1], tables[2], root / "server.git"


@pytest.fixture(scope="module")
def base_told(base_race: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: the race after every seat's watch ran once (dice settled), and what the watch of the seat
    holding control told forgotten: his next round tells him again (test_watch.py's mail test does the same)."""
    root = tmp_path_factory.mktemp("told") / "race"
    fed, kli, escrow, _server = copy_race(base_race, root)
    for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed"), (kli, "kli")):
        assert run_watch(table, who, "--once").returncode == 0
    holder = fed if fed.data("status.yaml")["control"] == "fed" else kli
    (holder.repo_dir / ".git" / watch.STATE_FILE).unlink(missing_ok=True)
    return root


@pytest.fixture
def told(base_told: Path, tmp_path: Path) -> tuple[Table, str]:
    """A private copy of `base_told`: the seat holding control, and his seat."""
    fed, kli, _escrow, _server = copy_race(base_told, tmp_path / "race")
    who = fed.data("status.yaml")["control"]
    return (fed if who == "fed" else kli), who


def test_the_real_watch_mails_a_decision_with_starttls_and_login(told: tuple[Table, str], tls_server: Server) -> None:
    """The settings from the environment (PBEM_SMTP_*, PBEM_SMTP_CAFILE) as a player would set them."""
    holder, who = told
    done = run_watch(holder, who, "--once", extra=tls_server.env())
    assert done.returncode == 0, lines(done)
    assert "e-mail not sent" not in done.stdout
    assert len(tls_server.received) == 1 and "you hold control" in tls_server.received[0].get_payload()
    assert tls_server.logins == [(USER, PASSWORD, True)]


def test_a_wrong_password_is_one_line_and_the_watch_goes_on(told: tuple[Table, str], tls_server: Server) -> None:
    said = Lines()
    notifier = watch.Notifier(said, tls_server.config(password="wrong"), desktop=False)
    notifier.decision("g", "orders owed for S1901M")
    assert said.said[0] == "your decision: orders owed for S1901M"
    assert len(said.said) == 2 and "\n" not in said.said[1]
    assert said.said[1].startswith("e-mail not sent: ") and "refused the login" in said.said[1]
    assert "535" in said.said[1] and "wrong" not in said.said[1]  # the password is never echoed
    assert tls_server.received == [] and tls_server.logins == [(USER, "wrong", True)]
    # the real command: the decision is told, the mail refused in one line, the round ends well (exit 0)
    holder, who = told
    done = run_watch(holder, who, "--once", extra=tls_server.env(password="wrong"))
    assert done.returncode == 0 and "Traceback" not in lines(done), lines(done)
    assert "your decision: you hold control" in done.stdout
    refused = [line for line in done.stdout.splitlines() if line.startswith("e-mail not sent")]
    assert len(refused) == 1 and "refused the login" in refused[0]


def test_the_loop_goes_on_after_a_refused_mail(told: tuple[Table, str], tls_server: Server) -> None:
    """The decision told in the first round cannot be mailed (wrong password): said, and the next round runs."""
    from test_push import identity

    holder, who = told
    said = Lines()
    notifier = watch.Notifier(said, tls_server.config(password="wrong"), desktop=False)
    waits: list[float] = []
    code = watch.watch(holder.repo_dir, identity(holder, who), notifier, interval=5, sleep=waits.append, rounds=2)
    assert code == 0 and waits == [5]
    assert sum(line.startswith("e-mail not sent") for line in said.said) == 1, said.said


def test_no_starttls_offered_when_demanded_is_refused_before_the_password(plain_server: Server) -> None:
    said = Lines()
    notifier = watch.Notifier(said, plain_server.config(), desktop=False)
    notifier.decision("g", "orders owed for S1901M")
    assert len(said.said) == 2 and "offers no STARTTLS" in said.said[1] and "\n" not in said.said[1]
    assert plain_server.logins == [] and plain_server.received == []  # no password in the clear, no mail


def test_a_certificate_nobody_vouches_for_is_refused_before_the_password(tls_server: Server) -> None:
    """Without the CA file, the self-signed certificate does not verify: the line says what to set."""
    said = Lines()
    config = tls_server.config()
    config.cafile = None
    watch.Notifier(said, config, desktop=False).decision("g", "orders owed")
    assert "does not verify" in said.said[1] and "PBEM_SMTP_CAFILE" in said.said[1]
    assert tls_server.logins == [] and tls_server.received == []


def test_the_ca_file_comes_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "watch.toml"
    path.write_text('[smtp]\nhost = "mail.example.org"\nto = "a@b"\nstarttls = true\ncafile = "/etc/my-ca.pem"\n')
    assert watch.smtp_config({}, path).cafile == "/etc/my-ca.pem"
    assert watch.smtp_config({"PBEM_SMTP_CAFILE": "/other.pem"}, path).cafile == "/other.pem"
