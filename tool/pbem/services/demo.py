"""`pbem demo`: play a complete example game from games/<name>/demo.yaml with generated keys, through the
same services players use (init, join, start, yield), then verify it and print the log.

demo.yaml is data: the seats' names, who starts (`first: ID`, or `first: roll` to decide it by dice), whether
a dice escrow key is made (`escrow: true`), and the turns in order. Each turn names its player, his new horizon
and break conditions, the entries he adds (and from which game time he withdraws his own later entries), dice
he announces (`roll: {for: [...], sides, mode}`), a secret he seals (`seal: {kind, text, reveal, concerns}`),
and his yield note. A turn `{escrow: sign}` is the escrow signing open batches. `pbem yield` settles what a
player owes by itself. A turn that pbem judges illegal stops the demo with that finding.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from pbem.crypto.keys import PrivateKey, write_keypair
from pbem.errors import PbemError
from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping, dump_report
from pbem.protocol.model import Status
from pbem.services import chance, report, setup, turn
from pbem.services.workspace import Identity, Workspace, load_identity
from pbem.verify.history import verify_history

Echo = Callable[[str], None]


def run_demo(directory: Path | None, game: str, echo: Echo) -> int:
    """Build, play and verify the example game; return the exit code (0 when every commit verifies)."""
    source = setup.template_dir(game)
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
    for seat, me in players.items():
        setup.join(ws, seat, me)
    if script["first"] == "roll":
        _start_by_roll(ws, founder, players, echo)
    else:
        setup.start(ws, script["first"], players[script["first"]])
    for number, step in enumerate(script["turns"], 1):
        if step.get("escrow") == "sign":
            assert escrow is not None, "demo.yaml: an escrow turn needs `escrow: true`"
            done = turn.commit_escrow(ws, escrow, chance.private_key(escrow))
            echo(f"  turn {number:>2}: the escrow signs: {'; '.join(done)}")
            continue
        status = play_turn(ws, players[step["player"]], step, number)
        nxt = f"{status.control} ({status.pending[0].why})" if status.pending else "game over"
        echo(f"  turn {number:>2}: {step['player']} yields: {step.get('note', '')!s:<40} -> {nxt}")
    result = verify_history(ws.repo)
    echo(report.log_text(result))
    findings = result.findings()
    echo(report.findings_text(findings, len(result.commits)).rstrip())
    pbem = shutil.which("pbem") or "pbem"
    echo(f"see it yourself: cd {repo_dir} && {pbem} log && {pbem} verify")
    return 1 if findings else 0


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


def _start_by_roll(ws: Workspace, founder: Identity, players: dict[str, Identity], echo: Echo) -> None:
    """`pbem start --roll`, then every other player contributes and the roller reveals, then start."""
    setup.start_roll(ws, founder)
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
    if "through" in step or "breaks" in step:
        _edit_players_file(files, player, step)
    if "entries" in step or "withdraw_from" in step:
        _edit_entries(files, ws.game_of(files).manifest.ruleset, player, step)
    current = ws.game_of(files)
    if "roll" in step:
        roll = step["roll"]
        chance.announce(files, current, me, player, list(roll["for"]), list(roll.get("ref", [])),
                        roll.get("sides", 6), roll.get("mode"))
    if "seal" in step:
        secret = step["seal"]
        chance.seal_secret(files, current, me, player, secret.get("kind", "note"),
                           json.dumps({"text": secret["text"]}).encode(), secret.get("reveal", "end"),
                           secret.get("concerns", ""))
    ws.write_files(files)
    try:
        status = turn.yield_turn(ws, me, step.get("note", ""))[1]
    except PbemError as exc:
        raise PbemError.from_finding(exc.finding.at(hint=f"demo turn {number} by {player} was judged illegal"),
                                     exc.exit_code) from None
    assert status is not None
    return status


def _edit_players_file(files: dict[str, bytes], player: str, step: dict[str, Any]) -> None:
    path = f"players/{player}.yaml"
    inputs = dict(yamlsafe.load(files[path], path).data or {}) if path in files else {}
    for key in ("through", "breaks"):
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
