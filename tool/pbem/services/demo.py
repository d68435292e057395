"""`pbem demo`: play a complete example game from games/<name>/demo.yaml with generated keys, through the
same services players use (init, join, start, yield), then verify it and print the log.

demo.yaml is data: the seats' names, who starts (`first: ID`, or `first: roll` to decide it by dice), whether
a dice escrow key is made (`escrow: true`), and the turns in order. Each turn names its player, his new horizon,
break conditions and plans (`through`, `breaks`, `plans`: what he writes in players/<id>.yaml), the entries he
adds (and from which game time he withdraws his own later entries; the answer to a special break is such an
entry, one of its options), dice he announces (`roll: {for: [...], ref: [...], sides, mode}`: each `ref` names
the shot its die resolves, e.g. "1.12.fire/CA/ph1"; `ref: [owed]` with one `for` text rolls every die the game
asks of him at that moment, as many as there are, e.g. one per internal point to allocate), the secrets he
seals (`seal:` one or a list of `{kind, text | value, reveal, concerns}`: a `note` holds `text`, other kinds
such as `allocation` a `value`),
whether he passes (`pass: true`: he adds no entry, e.g. when asked in an action auction), and his yield note.
A turn with none of these is a bare `pbem yield`: it settles what the player owes (a dice contribution or
reveal, a secret due). A turn `{escrow: sign}` is the escrow signing open batches. A turn that pbem judges
illegal stops the demo with that finding, and so does a turn whose `expect: KIND` (or list of kinds, in serving
order) does not match the breaks pending after it: the script fails loudly when the game takes another course.
After the last turn, where the ruleset audits energy allocations (tactical/1), every revealed `allocation`
secret is audited against the public record of its turn, and a failed audit fails the demo. Any script may
end with `see:`, the commands that show each rule at work in the game just played (printed last).

A Diplomacy script (games/dow-standard/demo.yaml, `pbem demo --game dow`) has `phases` instead of `turns`: for
each phase, the press posted (each message committed at once, as `pbem say`/`propose`/... do), then the orders
of every power that owes some, sealed in table order (`pbem orders FILE`) and revealed once all have sealed
(`pbem orders --reveal`); the demo prints what each phase did. It may also name a `director` (setup.director)
and the `invite_code` the players join with, and `see`: the commands that show each feature afterwards.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from pbem.crypto.keys import PrivateKey, write_keypair
from pbem.errors import PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.protocol.model import READY, SEALED, Status
from pbem.services import chance, pictures, report, setup, turn, whisper
from pbem.services.dow import chronicle as dow_chronicle, orders as dow_orders, press as dow_press
from pbem.services.workspace import Identity, Workspace, load_identity
from pbem.verify.history import HistoryResult, verify_history

Echo = Callable[[str], None]
ALIASES = {"dow": "dow-standard"}  # DESIGN §8: `pbem demo --game dow`
OWED = "owed"  # `roll: {for: TEXT, ref: [owed]}`: the dice the player owes now, however many


def run_demo(directory: Path | None, game: str, echo: Echo) -> int:
    """Build, play and verify the example game; return the exit code (0 when every commit verifies)."""
    source = setup.template_dir(ALIASES.get(game, game))
    script_path = source / "demo.yaml"
    if not script_path.is_file():
        raise PbemError("usage.template", f"template {game!r} has no demo.yaml")
    script = yamlsafe.load(script_path.read_bytes(), str(script_path)).data
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="pbem-demo-"))
    directory = directory.resolve()
    keys_dir = directory / "keys"
    repo_dir = directory / "game"
    keys_dir.mkdir(parents=True, exist_ok=True)
    players = {seat: _make_key(keys_dir, seat, name) for seat, name in script["seats"].items()}
    echo(f"demo: {game} in {repo_dir} (keys in {keys_dir})")
    founder = players[next(iter(script["seats"]))]
    ws = setup.init(repo_dir, str(source), script.get("id", game), founder)
    escrow = _make_key(keys_dir, "escrow", "Dice escrow") if script.get("escrow") else None
    if escrow is not None:
        _add_escrow_key(ws, founder, escrow)
    if script.get("director"):
        _set_director(ws, founder, script["director"])
    for seat, me in players.items():
        setup.join(ws, seat, me, script.get("invite_code"))
    if script.get("invite_code"):
        echo(f"  {len(players)} players joined with the invite code; "
             + (f"{script['director']} directs the game (and plays)" if script.get("director") else "no director"))
    if script["first"] == "roll":
        _start_by_roll(ws, founder, players, echo)
    else:
        _start_by_consent(ws, players, script["first"], echo)
    if "phases" in script:
        _play_phases(ws, players, script["phases"], echo)
    else:
        _play_turns(ws, players, script["turns"], escrow, echo)
    result = verify_history(ws.repo)
    if "phases" not in script:
        echo(report.log_text(result))
    findings = result.findings()
    echo(report.findings_text(findings, len(result.commits)).rstrip())
    audits = audit_results(result)
    for line in audit_text(audits):
        echo(line)
    for line in pictures.demo_pictures(result, directory):
        echo(line)
    beside = Path(sys.executable).parent / "pbem"  # the venv's pbem, also when it is not on PATH
    pbem = shutil.which("pbem") or (str(beside) if beside.exists() else "pbem")
    if script.get("see"):
        echo(f"see it yourself (cd {repo_dir}):")
        for item in script["see"]:
            echo(f"  {item['what']}: {item['command'].replace('pbem ', pbem + ' ')}")
    else:
        echo(f"see it yourself: cd {repo_dir} && {pbem} log && {pbem} verify")
    return 1 if findings or any(not ok for ok, _ in audits) else 0


def _play_turns(ws: Workspace, players: dict[str, Identity], turns: list[dict[str, Any]],
                escrow: Identity | None, echo: Echo) -> None:
    """The turns of a script in order: a player's turn (`play_turn`) or the escrow signing."""
    for number, step in enumerate(turns, 1):
        if step.get("escrow") == "sign":
            assert escrow is not None, "demo.yaml: an escrow turn needs `escrow: true`"
            done = turn.commit_escrow(ws, escrow, chance.private_key(escrow))
            echo(f"  turn {number:>2}: the escrow signs: {'; '.join(done)}")
            continue
        # a sealed step's input is committed without control (DESIGN §4.7): say so, not "yields"
        verb = "seals" if step.get("seal") and _owed_sealed_step(ws, step["player"]) else "yields"
        status = play_turn(ws, players[step["player"]], step, number)
        nxt = f"{status.control} ({status.pending[0].why})" if status.pending else "game over"
        echo(f"  turn {number:>2}: {step['player']} {verb}: {step.get('note', '')!s:<40} -> {nxt}")
        _expect(step, status, number)


def _expect(step: dict[str, Any], status: Status, number: int) -> None:
    """`expect: KIND` (or a list of kinds, one per pending break in serving order; `over` for the end): the
    course the script was written for. Dice are random, so a script must not depend on them: this says so."""
    if "expect" not in step:
        return
    want = step["expect"] if isinstance(step["expect"], list) else [step["expect"]]
    got = (["over"] if status.over else []) if want == ["over"] else [b.kind for b in status.pending][:len(want)]
    if got != want:
        pending = "; ".join(f"{b.player} {b.kind} ({b.why})" for b in status.pending) or "none, game over"
        raise PbemError("demo.script", f"demo turn {number} by {step.get('player')}: expected {want}, but the "
                        f"pending breaks are: {pending}")


def audit_results(result: HistoryResult) -> list[tuple[bool, str]]:
    """Each revealed `allocation` secret audited against the record of its turn in the final state, where the
    ruleset has an energy audit (tactical/1 `turn_record`, `audit_allocation`): (passed, text), by secret id.
    The verifier runs the same audit on every commit (rules.allocation); the demo prints it for the player."""
    last = result.last
    if last is None or last.stop is None:
        return []
    ruleset, game_setup = last.game.manifest.ruleset, last.game.manifest.setup
    audit = ruleset.audit
    if audit is None:
        return []
    state = last.stop.checkpoint.state
    out: list[tuple[bool, str]] = []
    for secret in sorted(last.game.secrets.values(), key=lambda s: s.id):
        if secret.raw.get("kind") != "allocation" or not secret.revealed or "step" not in secret.raw:
            continue
        value = secret.value()
        turn = audit.turn_of(ruleset.parse_time(secret.raw["step"]))  # the step it answers, as the verifier
        record = audit.turn_record(state, secret.owner, turn)
        reasons = audit.audit_allocation(game_setup, record, value)
        spent = "; ".join(f"{u.unit} speeds {'/'.join(map(str, u.speeds))}, fired {', '.join(u.fired) or 'nothing'}"
                          for u in record.units)
        head = f"{secret.id} of {secret.owner} for turn {turn} ({spent})"
        out.append((not reasons, f"{head}: pays for it" if not reasons else f"{head}: " + "; ".join(reasons)))
    return out


def audit_text(results: list[tuple[bool, str]]) -> list[str]:
    """The allocation audit as text lines (none when the game holds no allocation)."""
    if not results:
        return []
    return ["Energy allocations audited against the public record (docs/tactical.md, Energy allocation):"] + [
        f"  {'ok  ' if ok else 'FAIL'} {text}" for ok, text in results]


def _set_director(ws: Workspace, founder: Identity, director: str) -> None:
    """Before the seats are taken, the founder names the game director in game.yaml (setup.director)."""
    files = ws.head_files()
    text = files["game.yaml"].decode()
    text, n = re.subn(r"(?m)^setup:\n", f"setup:\n  director: {director}\n", text, count=1)
    if n != 1:
        raise PbemError("usage.template", "demo.yaml names a director, but game.yaml has no `setup:` block")
    files["game.yaml"] = text.encode()
    ws.commit(files, founder, f"setup: {director} directs the game")


def _play_phases(ws: Workspace, players: dict[str, Identity], phases: list[dict[str, Any]], echo: Echo) -> None:
    """A Diplomacy script, phase by phase: the press, then every owing power seals its orders, then each
    reveals; the last reveal resolves the phase (and any phase after it that nobody owes anything in)."""
    for number, phase in enumerate(phases, 1):
        head = ws.head()
        assert head is not None and head.status is not None
        when = head.status.firm
        if phase["phase"] != when:
            raise PbemError("demo.script", f"demo.yaml phase {number} plays {phase['phase']}, but the game is at {when}")
        echo(f"{when}")
        for item in phase.get("press", ()):
            me = players[item["by"]]
            if "whisper" in item:  # private press: {by, whisper: {to: [...], text}}
                posted = whisper.whisper(ws, me, item["whisper"]["to"], item["whisper"]["text"])
                echo(f"  whisper  {dow_press.describe_message(posted.message)}")
                for reader in (item["by"], *item["whisper"]["to"]):
                    mine = [w for w in whisper.inbox(ws, players[reader]) if w.id == posted.message["whisper"]["id"]]
                    echo(f"           {reader}'s inbox: {mine[0].text if mine else 'nothing'}")
                continue
            if "disclose" in item:  # {by, disclose: ID}
                posted = whisper.disclose(ws, me, item["disclose"])
                echo(f"  press    {dow_press.describe_message(posted.message)} (checked by all: the key opens the "
                     "box to the committed text)")
                continue
            posted = dow_press.post(ws, me, {k: v for k, v in item.items() if k != "by"})
            changes = f" -> recognised: {dow_press.changes_text(posted.changes)}" if posted.changes else ""
            echo(f"  press    {dow_press.describe_message(posted.message)}{changes}")
        unready = [b.player for b in ws.head().status.pending if b.kind == READY and b.at == when]  # type: ignore
        for power in unready:  # the press-only S1901P ends when every power says it is done
            dow_press.post(ws, players[power], {"ready": True})
        if unready:
            echo(f"  ready    {', '.join(unready)} (the press-only first half ends)")
            for done in dow_chronicle.results(ws, when):
                echo("\n".join(done.lines(press=False)[1:]))
        owing = [b.player for b in ws.head().status.pending if b.kind == SEALED and b.at == when]  # type: ignore
        given = phase.get("orders") or {}
        if sorted(owing) != sorted(given):
            raise PbemError("demo.script", f"demo.yaml {when}: {', '.join(owing) or 'nobody'} owe orders, but the "
                            f"script gives orders for {', '.join(given) or 'nobody'}")
        votes = set(phase.get("draw") or ())
        for power in owing:
            source = f"demo.yaml {when} {power}"
            content = json.dumps({"orders": given[power]}).encode()
            draw = power in votes  # a secret draw vote, sealed with the orders (`pbem orders FILE --draw`)
            try:
                dow_orders.seal_orders(ws, players[power], content, source, draw=draw)
            except PbemError as refused:  # checked before sealing: the power insists (`pbem orders --anyway`)
                echo(f"  {power}: pbem refuses to seal ({refused.finding.rule}: {refused.finding.message})")
                sealed = dow_orders.seal_orders(ws, players[power], content, source, anyway=True, draw=draw)
                for warning in sealed.warnings():
                    echo(f"  {power} seals with --anyway in spite of pbem's {warning}")
        if owing:
            echo(f"  sealed   by {', '.join(owing)}" + (f" (with a secret draw vote inside: "
                                                          f"{', '.join(sorted(votes))})" if votes else "")
                 + "; then each reveals")
        withholds = phase.get("withholds")
        resolved = _reveal_all(ws, players, [p for p in owing if p != withholds], echo)
        if withholds:
            resolved = _opened_without(ws, players, withholds, [p for p in owing if p != withholds], echo)
        for done in resolved:
            lines = done.lines(press=False)
            lines = lines[1:] if done.phase == when else lines
            if lines:
                echo("\n".join(lines))
        status = ws.head().status  # type: ignore[union-attr]
        if status is not None and not status.over:
            echo(f"  -> now at {status.firm}")


def _reveal_all(ws: Workspace, players: dict[str, Identity], powers: list[str],
                echo: Echo) -> tuple[dow_chronicle.PhaseReport, ...]:
    resolved: tuple[dow_chronicle.PhaseReport, ...] = ()
    for power in powers:
        resolved = dow_orders.reveal_orders(ws, players[power]).resolved
    return resolved


def _opened_without(ws: Workspace, players: dict[str, Identity], absent: str, others: list[str],
                    echo: Echo) -> tuple[dow_chronicle.PhaseReport, ...]:
    """`absent` saw every other power's orders and withholds his own: the others publish their shares (`pbem
    open`), sign the nmr, and its last signature opens his set (docs/dow.md "A withheld set is opened without its
    owner")."""
    from pbem.services import agreements
    from pbem.services.dow import openings as dow_openings

    echo(f"  {absent} has seen the others' orders and withholds his reveal")
    for power in others:
        dow_openings.open_share(ws, players[power], absent)
    echo(f"  open     {', '.join(others)} publish their shares of {absent}'s sealed orders (`pbem open {absent}`)")
    head = ws.head()
    assert head is not None and head.stop is not None
    start, state = head.stop.checkpoint.point, head.stop.checkpoint.state
    aid = agreements.agree(ws, players[others[0]], "nmr", player=absent).agreement
    for power in others[1:]:
        agreements.sign(ws, players[power], aid)
    echo(f"  nmr      {aid} signed by {', '.join(others)}: its last signature opens {absent}'s set with the "
         "shares, and his sealed orders stand")
    head = ws.head()
    assert head is not None
    return tuple(dow_chronicle.chronicle(head.game, start, state, head.stop.checkpoint.point if head.stop else None,
                                     head.gone_at)[0])


def _add_escrow_key(ws: Workspace, founder: Identity, escrow: Identity) -> None:
    """Before the seats are taken, the founder names the neutral dice escrow's key in game.yaml."""
    files = ws.head_files()
    text = files["game.yaml"].decode()
    line = f'dice: {{mode: commit-reveal, escrow_key: "{escrow.public.to_line()}"}}'
    text, n = re.subn(r"(?m)^dice: .*$", line, text, count=1)
    if n != 1:
        text += line + "\n"
    files["game.yaml"] = text.encode()
    ws.commit(files, founder, "setup: the dice escrow's key")


def _start_by_consent(ws: Workspace, players: dict[str, Identity], first: str, echo: Echo) -> None:
    """Every seat runs `pbem start --first FIRST` in table order: the first proposes the start agreement over
    game.yaml as it is, each other signs it, and the last run, finding every signature, starts the game."""
    for me in players.values():
        setup.begin(ws, me, first=first)
    echo(f"  every seat signed the start over game.yaml as it is: {first} starts")


def _start_by_roll(ws: Workspace, founder: Identity, players: dict[str, Identity], echo: Echo) -> None:
    """Every seat consents to decide the start by dice (`pbem start --roll`, the founder last, so he rolls),
    then every other player contributes and the roller reveals, then start."""
    for me in [*(p for p in players.values() if p is not founder), founder]:
        setup.begin(ws, me, roll=True)
    roller = turn.whoami(ws, founder)
    for seat, me in players.items():
        if seat != roller:
            turn.yield_turn(ws, me)
    turn.yield_turn(ws, founder)
    _oid, first = setup.start_roll(ws, founder)
    echo(f"  the dice decide who starts: {first}")


def _make_key(keys_dir: Path, seat: str, name: str) -> Identity:
    """A fresh key for a demo player; his commits carry his name, as a player's own git config would."""
    path = keys_dir / f"{seat}_ed25519"
    if not path.exists():
        write_keypair(path, PrivateKey.generate(f"{seat}@pbem-demo"))
    return replace(load_identity(str(path), keys_dir), author=(name, f"{seat}@pbem-demo.invalid"))


def play_turn(ws: Workspace, me: Identity, step: dict[str, Any], number: int) -> Status:
    """Apply one scripted turn to the working tree as a player would by hand, then `pbem yield`."""
    player = step["player"]
    files = ws.worktree_files()
    if step.get("pass") and ("entries" in step or "withdraw_from" in step):
        raise PbemError("demo.script", f"demo turn {number} by {player}: a pass adds no entries")
    if any(key in step for key in ("through", "breaks", "plans")):
        _edit_players_file(files, player, step)
    if "entries" in step or "withdraw_from" in step:
        _edit_entries(files, ws.game_of(files).manifest.ruleset, player, step)
    current = ws.game_of(files)
    if "roll" in step:
        roll = step["roll"]
        refs, purposes = list(roll.get("ref", [])), roll["for"]
        if refs == [OWED]:  # as many dice as the game asks of him now, one per ref, whatever came before
            refs = owed_dice(ws, player)
            purposes = [f"{purposes}, die {n}" for n in range(1, len(refs) + 1)]
        chance.announce(files, current, me, player, list(purposes), refs, roll.get("sides", 6), roll.get("mode"))
    owed = _owed_sealed_step(ws, player)
    for secret in _listed(step.get("seal")):
        value = secret["value"] if "value" in secret else {"text": secret["text"]}
        chance.seal_secret(files, current, me, player, secret.get("kind", "note"), json.dumps(value).encode(),
                           secret.get("reveal", "end"), secret.get("concerns", ""), owed)
        current = ws.game_of(files)  # the next secret gets the next id
    ws.write_files(files)
    try:
        status = turn.yield_turn(ws, me, step.get("note", ""))[1]
    except PbemError as exc:
        raise PbemError.from_finding(exc.finding.at(hint=f"demo turn {number} by {player} was judged illegal"),
                                     exc.exit_code) from None
    assert status is not None
    return status


def owed_dice(ws: Workspace, player: str) -> list[str]:
    """The refs whose dice `player` owes at HEAD and has not announced yet: those of the step replay waits at
    that the ruleset gives him to roll (e.g. internal damage, one die per point, rolled by the damaged ship's
    owner: their number is known only once the shot's own die is revealed)."""
    head = ws.head()
    if head is None or head.stop is None:
        return []
    dice = head.game.manifest.ruleset.dice
    state = head.stop.checkpoint.state
    return [ref for ref in dict.fromkeys(head.stop.dice_refs) if ref not in head.game.inputs.dice
            and dice is not None and dice.dice_roller(state, ref) == player]


def _owed_sealed_step(ws: Workspace, player: str) -> str | None:
    """The sealed simultaneous step `player` owes his input for now, if any (DESIGN §4.7): a secret he seals
    then answers it, as `pbem seal` does, and he may commit it without holding control."""
    head = ws.head()
    status = head.status if head is not None else None
    owed = [b.at for b in status.pending if b.player == player and b.kind == SEALED] if status is not None else []
    return owed[0] if owed else None


def _listed(value: Any) -> list[Any]:
    """`seal:` takes one secret or a list of them."""
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def _edit_players_file(files: dict[str, bytes], player: str, step: dict[str, Any]) -> None:
    path = f"players/{player}.yaml"
    inputs = dict(yamlsafe.load(files[path], path).data or {}) if path in files else {}
    for key in ("through", "breaks", "plans"):
        if key in step:
            inputs[key] = step[key]
    files[path] = dump_mapping({k: inputs[k] for k in ("through", "breaks", "plans") if k in inputs}).encode()


def _edit_entries(files: dict[str, bytes], ruleset: Any, player: str, step: dict[str, Any]) -> None:
    """Withdraw the player's own entries from `withdraw_from` on, add his new ones, one per line."""
    withdraw = ruleset.parse_time(step["withdraw_from"]) if "withdraw_from" in step else None
    by_file: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(p for p in files if p.startswith("report/")):
        by_file[path] = [
            e for e in (yamlsafe.load(files[path], path).data or {"entries": []})["entries"]
            if not (withdraw is not None and e["by"] == player and ruleset.parse_time(e["at"]) >= withdraw)
        ]
    for entry in step.get("entries", ()):
        item = {"at": entry["at"], "by": player, **({"unit": entry["unit"]} if "unit" in entry else {}),
                "do": entry["do"]}
        by_file.setdefault(f"report/{ruleset.period_of(ruleset.parse_time(entry['at']))}.yaml", []).append(item)
    for path, entries in by_file.items():
        entries.sort(key=lambda e: ruleset.parse_time(e["at"]))
        files[path] = dump_report(entries).encode()
