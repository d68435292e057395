"""`pbem demo`: play a complete example game from games/<name>/demo.yaml with generated keys, through the
same services players use (init, join, start, yield), then verify it and print the log.

demo.yaml is data: the seats' names, who starts, and the turns in order. Each turn names its player, his new
horizon and break conditions, the entries he adds (and from which game time he withdraws his own later
entries), and his yield note. A turn that pbem judges illegal stops the demo with that finding.
"""

from __future__ import annotations

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
from pbem.services import report, setup, turn
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
    for seat, me in players.items():
        setup.join(ws, seat, me)
    setup.start(ws, script["first"], players[script["first"]])
    for number, step in enumerate(script["turns"], 1):
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


def _make_key(keys_dir: Path, seat: str, name: str) -> Identity:
    """A fresh key for a demo player; his commits carry his name, as a player's own git config would."""
    path = keys_dir / f"{seat}_ed25519"
    if not path.exists():
        write_keypair(path, PrivateKey.generate(f"{seat}@pbem-demo"))
    return replace(load_identity(str(path), keys_dir), author=(name, f"{seat}@pbem-demo.invalid"))


def play_turn(ws: Workspace, me: Identity, step: dict[str, Any], number: int) -> Status:
    """Apply one scripted turn to the working tree as a player would by hand, then `pbem yield`."""
    player = step["player"]
    root = ws.root
    players_file = root / "players" / f"{player}.yaml"
    inputs = yamlsafe.load(players_file.read_bytes(), str(players_file)).data if players_file.exists() else {}
    inputs = dict(inputs or {})
    if "through" in step:
        inputs["through"] = step["through"]
    if "breaks" in step:
        inputs["breaks"] = step["breaks"]
    players_file.parent.mkdir(exist_ok=True)
    players_file.write_text(dump_mapping({k: inputs[k] for k in ("through", "breaks", "plans") if k in inputs}))
    game = ws.game_of(ws.worktree_files())
    ruleset = game.manifest.ruleset
    withdraw = ruleset.parse_time(step["withdraw_from"]) if "withdraw_from" in step else None
    by_file: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((root / "report").glob("*.yaml")) if (root / "report").is_dir() else []:
        data = yamlsafe.load(path.read_bytes(), str(path)).data or {"entries": []}
        by_file[f"report/{path.name}"] = [
            e for e in data["entries"]
            if not (withdraw is not None and e["by"] == player and ruleset.parse_time(e["at"]) >= withdraw)
        ]
    for entry in step.get("entries", ()):
        item = {"at": entry["at"], "by": player, **({"unit": entry["unit"]} if "unit" in entry else {}),
                "do": entry["do"]}
        name = f"report/{ruleset.period_of(ruleset.parse_time(entry['at']))}.yaml"
        by_file.setdefault(name, []).append(item)
    for name, entries in by_file.items():
        entries.sort(key=lambda e: ruleset.parse_time(e["at"]))
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(dump_report(entries))
    try:
        return turn.yield_turn(ws, me, step.get("note", ""))[1]
    except PbemError as exc:
        raise PbemError.from_finding(exc.finding.at(hint=f"demo turn {number} by {player} was judged illegal"),
                                     exc.exit_code) from None
