"""Press raced by a phase change (DESIGN §2, §4.9, §7.2; docs/dow.md "Press raced by the end of a phase").

A power writes press for the phase open now; before his push lands, another power's commit closes the phase (the
last reveal, an nmr). `pbem push` replays his press onto the new tip: a message the new phase still takes is
dated again with the phase open now and lands (press is not bound to orders); one the new phase refuses is not
sent, is kept on a branch, and one line quotes it and says how to send it again, with his clone back at the
shared game.

Every power has his own clone of one hooked bare hub (tests/test_sync.py), built once per module; the moves of
the powers not under test are made through the services in austria's clone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gitutil import clean_env
from conftest import PBEM
from pbem.services import whisper as dow_whisper
from pbem.services.dow import openings as dow_openings, orders as dow_orders, press as dow_press
from test_sync import POWERS, Seat, clone, copy_seats, dow_game, dow_keys, hub_for, hub_head, hub_verifies

EMPTY = json.dumps({"orders": []}).encode()
RACERS = ("france", "germany")  # france closes the phase, germany writes press


def _hub(root: Path) -> tuple[dict[str, Seat], Path]:
    """S1901M on a hooked hub: every power sealed, all but france revealed; austria's, france's and germany's
    clones up to date."""
    keys = dow_keys(root)
    founder = Seat(root / "austria", keys["austria"])
    dow_game(founder, "dow-press-race", keys)
    for power in POWERS:
        dow_orders.seal_orders(founder.ws(), keys[power], EMPTY, "o")
    for power in POWERS:
        if power != "france":
            dow_orders.reveal_orders(founder.ws(), keys[power])
    hub = hub_for(founder, root)
    return {"austria": founder, **{p: clone(hub, root / p, keys[p]) for p in RACERS}}, hub


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Seat], Path]:
    return _hub(tmp_path_factory.mktemp("press-race"))


@pytest.fixture
def seats(base: tuple[dict[str, Seat], Path], tmp_path: Path) -> tuple[dict[str, Seat], Path]:
    return copy_seats(*base, tmp_path / "race")


def firm(seat: Seat) -> str:
    head = seat.ws().head()
    assert head is not None and head.status is not None and head.status.firm is not None
    return head.status.firm


def posted(seat: Seat, power: str) -> list[dict[str, object]]:
    """The messages of `power`'s press file at `seat`'s HEAD."""
    head = seat.ws().head()
    assert head is not None
    file = head.game.press.get(f"press/{power}.yaml")
    return [dict(m.body) for m in file.messages] if file is not None else []


def push_at_once(seats: dict[str, Seat]) -> dict[str, tuple[int, str]]:
    """Every seat runs the installed `pbem push` at the same moment; (exit code, what it said) per seat."""
    running = {power: subprocess.Popen([str(PBEM), "push"], cwd=seat.repo_dir, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True,
                                       env=clean_env(seat.home, {"PBEM_KEY": str(seat.me.path)}))
               for power, seat in seats.items()}
    said = {power: r.communicate(timeout=300)[0] for power, r in running.items()}
    return {power: (r.returncode, said[power]) for power, r in running.items()}


def close_the_phase(france: Seat) -> None:
    """France's reveal, the phase's last: pushed, it resolves S1901M (the next phase open is F1901M)."""
    dow_orders.reveal_orders(france.ws(), france.me)
    assert france.push().code == 0
    assert firm(france) == "F1901M"


def test_press_written_for_a_phase_that_closed_meanwhile_is_dated_again_and_lands(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """Germany says something and whispers to england during S1901M; france's last reveal lands first. Germany's
    `pbem push` dates both again with F1901M, says so, and lands them; the whisper still opens for its recipient
    (its signature covers the whisper, not its date), and the hub verifies."""
    clones, hub = seats
    germany = clones["germany"]
    dow_press.post(germany.ws(), germany.me, {"say": "Peace in the north?"})
    dow_whisper.whisper(germany.ws(), germany.me, ["england"], "Keep the Channel empty.")
    close_the_phase(clones["france"])
    done = germany.pbem("push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "written for S1901M" in done.stdout and "dated F1901M" in done.stdout, done.stdout
    assert germany.head() == hub_head(hub)
    said = posted(germany, "germany")[1:]  # after his `ready` of S1901P
    assert [(m["at"], "say" in m, "whisper" in m) for m in said] == [("F1901M", True, False),
                                                                    ("F1901M", False, True)], said
    hub_verifies(hub, tmp_path)
    england = clone(hub, tmp_path / "england", dow_keys(tmp_path / "race")["england"])
    read = [(w.sender, w.at, w.text) for w in dow_whisper.inbox(england.ws(), england.me)]
    assert read == [("germany", "F1901M", "Keep the Channel empty.")], read


def test_press_raced_by_an_nmr_that_closes_the_phase_is_dated_again_and_lands(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """France withholds his reveal past the deadline (eight days at the gate's clock): the others' nmr, pushed
    from austria's clone, closes S1901M. Germany's press, written before it, lands dated F1901M."""
    from test_hook import age_record
    from pbem.services import agreements

    clones, hub = seats
    germany, founder = clones["germany"], clones["austria"]
    dow_press.post(germany.ws(), germany.me, {"say": "France is silent."})
    keys = dow_keys(hub.parent)
    signers = [p for p in POWERS if p != "france"]
    aid = agreements.agree(founder.ws(), keys[signers[0]], "nmr", player="france").agreement
    for power in signers[1:]:
        agreements.sign(founder.ws(), keys[power], aid)
    assert firm(founder) == "F1901M"
    age_record(hub, 8)  # the gate's own clock: france's reveal is overdue there
    landed = founder.pbem("push")
    assert landed.returncode == 0, landed.stdout + landed.stderr
    done = germany.pbem("push")
    assert done.returncode == 0 and "went out dated F1901M" in done.stdout, done.stdout + done.stderr
    assert posted(germany, "germany")[-1] == {"by": "germany", "at": "F1901M", "say": "France is silent."}
    hub_verifies(hub, tmp_path)


def test_press_and_the_last_reveal_pushed_at_the_same_moment_both_land(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """The race itself: germany's press and france's last reveal, each committed on the same tip, pushed with
    the real `pbem push` at the same moment. Both land whichever wins; the message is dated with the phase it
    landed in; the hub verifies."""
    clones, hub = seats
    france, germany = clones["france"], clones["germany"]
    tip = germany.head()
    dow_press.post(germany.ws(), germany.me, {"say": "Who moves first?"})
    dow_orders.reveal_orders(france.ws(), france.me)
    assert france.ws().repo.parents(france.head()) == [tip] == germany.ws().repo.parents(germany.head())
    done = push_at_once({"france": france, "germany": germany})
    said = {power: out for power, (_code, out) in done.items()}
    assert all(code == 0 for code, _out in done.values()), said
    hub_verifies(hub, tmp_path)
    for seat in (france, germany):
        seat.pbem("pull")
    assert firm(germany) == "F1901M"
    message = [m for m in posted(germany, "germany") if m.get("say") == "Who moves first?"]
    assert len(message) == 1 and message[0]["at"] in ("S1901M", "F1901M"), message
    assert ("dated F1901M" in said["germany"]) == (message[0]["at"] == "F1901M"), said


def test_press_the_new_phase_refuses_is_not_sent_quoted_with_how_to_send_it_again_and_the_clone_goes_on(
        seats: tuple[dict[str, Seat], Path], tmp_path: Path) -> None:
    """Germany publishes his share of france's set while france withholds his reveal (`pbem open france`);
    france reveals after all and lands first. The share is refused in F1901M (`share.early`: no reveal is owed
    there), so germany's `pbem push` does not send it: exit 1, one line naming the message, why, the branch it is
    kept on and how to send it again; his clone is back at the shared game, nothing stuck: his next press lands."""
    clones, hub = seats
    germany = clones["germany"]
    dow_openings.open_share(germany.ws(), germany.me, "france")
    mine = germany.head()
    close_the_phase(clones["france"])
    done = germany.pbem("push")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "not sent" in out and "written for S1901M" in out and "share.early" in out, out
    assert f"pbem-saved-{mine[:10]}" in out and "pbem open france" in out, out
    assert germany.git("rev-parse", f"pbem-saved-{mine[:10]}").stdout.strip() == mine
    assert germany.head() == hub_head(hub) and germany.git("status", "--porcelain").stdout == ""
    dow_press.post(germany.ws(), germany.me, {"say": "Never mind."})
    again = germany.pbem("push")
    assert again.returncode == 0, again.stdout + again.stderr
    hub_verifies(hub, tmp_path)


@pytest.mark.parametrize("body", [{"say": "He said \"no\" & it's 'fine' — über; rm -rf $HOME `x`"},
                                  {"propose": {"to": "england", "state": "ALLIED"}},
                                  {"declare": {"to": "russia", "state": "HOSTILE"}},
                                  {"whisper": "Meet me in 'Tyrolia' at \"dawn\""}])
def test_the_command_told_to_send_a_message_again_posts_that_message(
        base: tuple[dict[str, Seat], Path], tmp_path: Path, body: dict[str, object]) -> None:
    """What a player is told to run when his message was not sent (services/dow/press.resend_command), run as he
    would (split as his shell splits it, through the real CLI), posts the same message: quotes, shell syntax and
    a whisper's text (opened with his own key) come through as written."""
    import shlex

    from pbem.services.dow.press import resend_command
    from test_dow_flow import Dow

    clones, _hub = copy_seats(*base, tmp_path / "again")
    austria = clones["austria"]
    (austria.root / "keys").symlink_to(austria.root.parent / "keys")
    text = body.get("whisper")
    message = {"by": "austria", "at": "S1901M", **({"whisper": {"to": ["england"]}} if text else body)}
    command = resend_command(message, str(text) if text else None)
    assert command is not None and command.startswith("pbem ")
    done = Dow(austria.root).cli(*shlex.split(command)[1:], who="austria")
    assert done.exit_code == 0, done.output
    if text:
        assert [w.text for w in dow_whisper.inbox(austria.ws(), austria.me)] == [text]
    else:
        last = posted(austria, "austria")[-1]
        assert {k: v for k, v in last.items() if k not in ("by", "at")} == body


@settings(max_examples=30)
@given(texts=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40),
                      min_size=1, max_size=3),
       sent=st.integers(min_value=0, max_value=2))
def test_redating_gives_the_file_written_with_the_phase_open_now(texts: list[str], sent: int) -> None:
    """services/left_out.redate on any text: the messages this commit appends are exactly those written dated
    with the phase open now, the ones sent before stay byte for byte, and every line reads back."""
    from pbem.formats import yamlsafe
    from pbem.formats.writer import dump_flow
    from pbem.services import left_out

    def file(*messages: dict[str, str]) -> bytes:
        return ("messages:\n" + "".join(f"  - {dump_flow(m)}\n" for m in messages)).encode()

    before = [{"by": "germany", "at": "S1901M", "say": f"old {i}"} for i in range(sent)]
    mine = [{"by": "germany", "at": "S1901M", "say": text} for text in texts]
    parent = {"press/germany.yaml": file(*before)} if before else {}
    files, written, added = left_out.redate(parent, {"press/germany.yaml": file(*before, *mine)}, "F1901M")
    assert (written, [dict(m) for m in added]) == ("S1901M", [{**m, "at": "F1901M"} for m in mine])
    assert files["press/germany.yaml"] == file(*before, *({**m, "at": "F1901M"} for m in mine))
    read = yamlsafe.load(files["press/germany.yaml"], "press/germany.yaml").data["messages"]
    assert [m["say"] for m in read] == [m["say"] for m in before] + texts
