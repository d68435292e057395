"""Every rule id pbem raises: its fault group, the DESIGN.md or seed section it enforces, and what the player
should do about it (docs/rules.md is made from this table: `python -m pbem.catalog --write`).

A rule id is `group.name`; the group (the part before the dot) is its fault group, one of GROUPS. Sections are
DESIGN.md's (`§4.8`) or a seed text's (`seed §2.A` is seed 000's, the Star Fleet Battles PBEM protocol;
`seed 001` the "Declaration of War" Diplomacy variant). tests/test_catalog.py checks that every id raised
anywhere in the package is here, that nothing here is unused, and that docs/rules.md is what this table gives.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Rule:
    """One rule id: where it is written down and what to do when a finding or refusal names it."""

    id: str
    section: str  # DESIGN.md § or seed section it enforces
    do: str  # one line for the player: what to do now

    @property
    def group(self) -> str:
        return self.id.split(".", 1)[0]


# The fault groups: what each is about.
GROUPS: dict[str, str] = {
    "agreement": "agreements: start, amend, seat, resign, nmr, forfeit, end, upgrade",
    "clock": "the gate's clock, by which absence is judged",
    "clone": "this clone of the game",
    "commit": "the commit object",
    "demo": "the demo game",
    "dice": "dice batches: commitments, contributions, reveals, results",
    "erratum": "errata: corrections of firm entries",
    "firm": "the firm marker",
    "game": "the game as a whole",
    "gate": "the pinned pbem of the gate's workflow",
    "git": "git's own state in this clone",
    "github": "GitHub, where the game is hosted there",
    "history": "the shape of history",
    "hook": "the pre-receive hook of a shared repository",
    "install": "this pbem installation",
    "key": "signing keys",
    "log": "the game log",
    "note": "the yield note",
    "orders": "Diplomacy orders, sealed and revealed",
    "ownership": "who may change which file and entry",
    "players": "the players of the game",
    "press": "press: messages between powers, relationships, whispers",
    "progress": "progress owed by a turn",
    "protected": "files frozen after the start",
    "pull": "pbem pull",
    "push": "pbem push",
    "ref": "refs a shared repository accepts",
    "render": "pictures of the board",
    "repo": "the git repository",
    "report": "the report files",
    "result": "a game's recorded result",
    "rules": "the ruleset's rules of play",
    "schema": "the schemas of the game files",
    "secret": "sealed secrets",
    "setup": "setting the game up: seats, joins, the start",
    "share": "shares of a withheld sealed set",
    "signature": "commit signatures and who may sign",
    "status": "status.yaml",
    "system": "the machine pbem runs on: its disks, folders, files and pipes",
    "text": "text shown to players",
    "time": "times written in game files",
    "tree": "the files of a commit",
    "upgrade": "upgrades of the game's pbem",
    "usage": "how a command is called",
    "watch": "pbem watch",
    "yaml": "the strict YAML reader",
}

# id | section | what to do (one rule a line; kept in order of id)
_TABLE = """
agreement.changed | §4.8 | Put the agreement file back as it was: agreements stay in the game once written; propose a new one instead.
agreement.closed | §4.8 | This agreement can no longer be signed (the game started or the agreement is settled); propose a new one if still needed.
agreement.downgrade | §4.8 | Propose an upgrade to a newer pbem only; a game never goes back to an older version.
agreement.effect | §4.8 | Sign the completing signatures of these agreements in separate commits, one agreement at a time.
agreement.foreign-signature | §4.8 | Remove the signature you wrote in another player's name; each player signs with his own key (`pbem sign ID`).
agreement.frozen | §4.8 | Leave the fields of a proposed agreement as they are; propose a new agreement for a different change.
agreement.known-hole | §4.8 | Do not sign this upgrade: it installs a pbem with a known hole; propose one to a fixed version.
agreement.malformed | §4.8 | Write the agreement as `pbem agree KIND` does (its id, kind, content and signatures as the schema says).
agreement.mixed | §4.8 | Commit the agreement alone: an agreement commit changes only agreements/ (and what the agreement it completes writes).
agreement.nmr-early | §4.8 | Wait until the absent player's item is past its deadline by the gate's clock, then propose the nmr again.
agreement.nmr-owes-nothing | §4.8 | Propose an nmr only against a player who owes something now (see `pbem status`).
agreement.not-a-signer | §4.8 | Only the players the agreement's kind names sign it; leave your signature out.
agreement.not-overdue | §4.8 | Wait until the player's item is past its deadline by the gate's clock (`pbem deadlines`), then propose it again.
agreement.seat-not-vacant | §4.8 | Take over a seat only once its player resigned or lost his key; otherwise ask him to sign a seat agreement.
agreement.second-end | §4.8 | The game is already ended by an agreement; propose nothing more to end it.
agreement.signature | §4.8 | Sign again with the key game.yaml holds for your seat (`pbem sign ID`); a signature over other content does not count.
agreement.stale | §2 Setup | game.yaml changed after this start agreement was signed: propose the start again (`pbem start --first ID` or `--roll`).
agreement.unsigned | §4.8 | Propose with `pbem agree KIND`, which signs the proposal with your key in the same commit.
clock.corrupt | §4.8, §9 | A host restores the gate's time record from a backup, or removes it and runs `pbem hook install` again.
clock.missing | §4.8, §9 | A host installs pbem's hook (`pbem hook install`) so the gate keeps its clock; until then nobody is found absent.
clock.unknown | §4.8, §9 | Push through the gate that keeps the clock, so it knows when the commit arrived; until then nobody is found absent by it.
clone.busy | §8 | Wait for the other pbem working in this clone (your `pbem watch`?) to finish, then run the command again.
commit.ident | §3 | Use an author name and email without '<', '>' or line breaks.
commit.malformed | §3 | Make commits with `pbem yield` or plain `git commit -S` (gpg.format=ssh); rewrite the commit that git or a tool mangled.
demo.script | §8 | The demo's script no longer matches the game; report it (the demo files in games/ need fixing).
dice.auction-open | §5, §4.6 | Wait until the action auction is resolved before rolling its dice.
dice.bad-batch | §5 | Keep the batch at dice/<id>.yaml with the id it names, as `pbem roll` writes it.
dice.bad-contribution | §5 | Leave your contribution's commitment as first written; a commitment cannot change.
dice.bad-count | §5 | Write the count as an integer from 0 to 2^32-1, as `pbem roll` does.
dice.bad-escrow | §5 | Write the escrow's signature as the escrow key made it (64 bytes).
dice.bad-id | §5 | Give the batch a non-empty id without NUL characters.
dice.bad-results | §5 | Let pbem write the results (`pbem yield`): they must be what the revealed secrets derive.
dice.bad-reveal | §5 | Only the batch's roller reveals it; leave the reveal to him.
dice.bad-secret | §5 | Write the dice secret as 64 lower-case hex digits, as `pbem roll` does.
dice.bad-seed | §5 | Write the batch seed as pbem derives it (32 bytes).
dice.bad-sides | §5 | Give each die a number of sides within the allowed range.
dice.bad-void | §5 | Only the batch's roller voids it; leave it to him.
dice.bad-withheld | §5 | Leave the withheld mark as the settling agreement wrote it.
dice.changed | §5 | Put the announced batch back as it was; only its roller corrects an announcement, and only before anybody contributed.
dice.no-players | §5, §2 | Seat the players before rolling for who starts.
dice.owed | §5 | Settle the dice owed first: each player named runs `pbem yield` (or `pbem roll --contribute`).
dice.rebound-ref | §5 | Roll each dice ref in one batch only; drop the ref another batch already rolls.
dice.start-mismatch | §5, seed §2.A | Start with the player the start roll chose, or roll for who starts (`pbem start --roll`).
dice.unbound-ref | §5 | Roll only for the dice refs owed now (see `pbem status`).
dice.withheld | §5, §4.8 | This part was settled as withheld by an agreement; leave it as it is.
dice.wrong-roller | §5 | Let the player the roll belongs to roll it.
erratum.malformed | §4.8 | Write the erratum as `pbem agree erratum` does (its id, entries and signatures as the schema says).
erratum.mismatch | §4.8 | Change the report by exactly the erratum's entries in the commit that applies it (`pbem sign ID` does).
erratum.new-action | §4.8 | An erratum corrects entries already written; add new actions in your turn instead.
erratum.not-firm | §4.8 | Ask the entry's owner to change it himself: it is not firm yet, so no erratum is needed.
erratum.unsigned | §4.8 | Wait for the other players' signatures: the last one applies the erratum.
firm.changed | §4.4 | Put back the entries before the firm marker; propose an erratum (`pbem agree erratum`) to correct them.
game.over | §4.8 | The game is over; nothing more can be played or proposed.
game.unknown-ruleset | §7 | Name a ruleset this pbem knows (tactical/1, dow/1), or install the pbem the game was made with.
gate.index | §9 | Give `pbem init --index-url` an index that holds this pbem and its dependencies.
gate.lock | §9 | Use an index that gives a sha256 for every file of the pinned packages.
git.in-progress | §8 | Finish or abort git's operation (the command it names), then run `pbem pull`.
github.api | §9 | Read what GitHub said; a host fixes the repository's settings or the pull request, then run the command again.
github.auto-merge-off | §9 | A host turns on auto-merge (Settings → General → Allow auto-merge).
github.config | §9 | Set `git config pbem.github OWNER/NAME` to the game's repository.
github.no-token | §9 | Set GH_TOKEN (or GITHUB_TOKEN) to a token that may open pull requests on the game's repository.
github.permission | §9 | Use a token with the permission GitHub asks for on the game's repository.
github.token | §9 | Set GH_TOKEN to a valid token.
github.unreachable | §9 | Check the network and GitHub's status, then run the command again.
history.bad-merge | §3 | Land turns with the pull-request merge button or `pbem push`; a merge may not change content or bypass history.
history.not-fast-forward | §3 | Bring the branch up to date first: fetch, then `pbem push` rebases your commits.
history.rewritten | §3, §9 | Leave the game branch's history as it is; push new commits on top.
history.root | §2 Setup | Make the first commit with `pbem init`: it only sets up game.yaml, README.md and the workflow.
hook.bad-branch | §9 | Give the game branch's short name, e.g. `--branch main`.
hook.bad-input | §9 | Run the hook only as git's pre-receive hook: git gives it `OLD NEW REF` lines.
hook.exists | §9 | Move the existing hook away (or chain it), or replace it with `pbem hook install --force`.
hook.no-repo | §9 | Make the shared repository with `git init --bare REPO.git`, then install the hook in it.
hook.not-a-commit | §9 | Push commits only to the game's refs.
install.broken | §8 | Reinstall pbem: the workflow template is missing from this installation.
install.missing-data | §8 | Reinstall pbem: its data folders are missing.
key.config-failed | §8 | Use `--key PATH` or PBEM_KEY instead of git's configuration.
key.encrypted | §3 | Load the key into ssh-agent (`ssh-add`), so pbem signs through ssh-keygen, or use a key without a passphrase.
key.exists | §8 | Choose another `--out` for the new key.
key.malformed | §3 | Use an OpenSSH Ed25519 key (`pbem keygen` or `ssh-keygen -t ed25519`).
key.missing | §8 | Run `pbem keygen`, or pass `--key PATH` (or set PBEM_KEY).
key.no-git | §8 | Install git, or use `--key PATH` / PBEM_KEY.
key.not-escrow | §5 | Use the dice escrow's key (game.yaml dice.escrow_key) for escrow commands.
key.principal | §3 | Give the seat an id of lower-case letters, digits and '-'.
key.sign-failed | §3 | Check that ssh-agent holds the key (`ssh-add -l`) and that ssh-keygen can sign with it.
key.unreadable | §8 | Check the key file's path and permissions.
key.unsupported | §3 | Make an Ed25519 key with `pbem keygen` or `ssh-keygen -t ed25519`.
log.no-game | §8 | Run the command in a game repository (`pbem init` makes one).
note.control-character | §9 | Write the yield note as plain text (newlines are fine).
orders.already-revealed | §7.2 | Nothing to do: your orders for this phase are revealed already.
orders.already-sealed | §7.2, §4.7 | Sealed orders cannot change; wait for the phase to resolve.
orders.forbidden | §7.2 | Drop the order the rules forbid (the message names it), then seal again.
orders.invalid | §7.2 | Fix the orders the message names (or seal them with `--anyway`, knowing they will be void).
orders.not-owed | §7.2 | Seal orders only for a phase in which your power owes them (see `pbem status`).
orders.not-sealed | §7.2, §4.7 | Seal your orders first (`pbem orders FILE`), then reveal them.
orders.not-yet | §7.2, §4.7 | Wait until every power has sealed for the phase, then reveal.
ownership.foreign-entry | §2, §4.1 | Put back the other player's entries; change only your own (an erratum corrects others').
ownership.foreign-file | §2, §4.1 | Change only your own players file, entries, dice and secret fields; put the other's file back.
ownership.foreign-press | §7.2 | Only seated powers post press, each in its own press file.
ownership.id-author | §2, §4.9 | Give the proposal an id that starts with your own seat and name yourself in `by` (`pbem agree` does).
players.unknown | §2 | Write entries only for players game.yaml seats.
press.bad-disclosure | §7.2, seed 001 | Disclose a whisper only with its own key, as `pbem whisper --disclose` writes it.
press.bad-time | §7.2 | Date a message with the phase open now (pbem's press commands do).
press.bad-whisper | §7.2, seed 001 | Write whispers with `pbem whisper`: sealed to each recipient and signed by you.
press.changed | §7.2 | Put the press file back: press is append-only; post a new message to correct one.
press.civil-disorder | seed 001 | A power in civil disorder posts no press; take the seat over first (a seat agreement).
press.forced-state | seed 001 | This relationship state is forced by the rules now; leave it as it is.
press.foreign | §7.2 | Post messages only in your own name, in your own press file.
press.game-over | seed 001 | The game is over; post no more press.
press.gift-not-allied | seed 001 | Gift provinces only to a power you are allied with.
press.gift-not-yours | seed 001 | Gift only provinces your power controls.
press.gunboat | seed 001 | This game is played without press (gunboat); post none.
press.in-limbo | seed 001 | While in limbo, change the relationship only as the rules allow (choose a side).
press.limbo-not-chosen | seed 001 | Choose one of the sides the limbo offers.
press.malformed | seed 001 | Write the message as the press commands do (`pbem press`, `pbem declare`, …).
press.no-change | seed 001 | Declare only a state that differs from the one in force.
press.no-lift | seed 001 | Lift only a measure that is in force.
press.no-proposal | seed 001 | Accept only a proposal that was made to your power.
press.not-a-raise | seed 001 | Propose a raise only to a better state than the one in force.
press.not-author | seed 001 | Withdraw or amend only your own messages.
press.not-director | seed 001 | Only the game's director posts this message.
press.not-in-limbo | seed 001 | Choose a side only while in limbo.
press.one-sided-raise | seed 001 | A raise needs both powers: propose it, and let the other accept.
press.refused | §7.2, seed 001 | Read the ruleset's reason in the message and post press it accepts.
press.self | seed 001 | Name another power; a power has no relationship with itself.
press.self-warn | seed 001 | Warn another power, not your own.
press.unknown-power | seed 001 | Name a power of this game.
press.unknown-province | seed 001 | Name a province of the map.
press.warn-no-offence | seed 001 | Cite an offence the game recorded (a void order of the power you warn).
press.warn-twice | seed 001 | You warned this power for this offence already.
press.whisper-recipient | seed 001 | Whisper only to powers in the game, other than your own.
press.whisper-signature | §7.2, seed 001 | Whisper with `pbem whisper`, which signs the sealed message with your key.
press.wrong-phase | seed 001 | Post this message in the phase the rules allow it in.
progress.none | §4.4, seed §4.C | Settle at least one thing you owe (an entry, a break answered, a horizon moved on) before yielding.
protected.changed | §3 Trees | Put back game.yaml, README.md and the workflow: they are frozen after the start (an amend agreement changes game.yaml).
pull.dirty | §8 | Commit or put away your edits to the files named (`git stash`), then `pbem pull`.
pull.failed | §8 | Read git's reason, fix it, then `pbem pull` again.
pull.remote-invalid | §8, §9 | The shared repository does not verify: tell the other players; do not build on it.
pull.rewritten | §3, §8 | The shared history was rewritten: tell the other players; do not build on it.
push.conflict | §4.9 | Look at their commit, redo your change on top of it (`pbem pull`), then push again.
push.dirty | §8 | Commit or put away your uncommitted edits, then `pbem push` again.
push.fetch-failed | §8 | Check the remote's address and the network, then push again.
push.merge | §8 | Rebase by hand (`git rebase`), then `pbem push`.
push.no-git | §8 | Install git.
push.no-remote | §8 | Add the shared repository (`git remote add origin URL`).
push.not-mine | §8 | Push only commits signed by your own key; ask their signer to push them.
push.rebase-illegal | §4.9 | Your commit is no longer legal after the others' commits: `pbem pull`, look at the game, and take your turn again.
push.remote-invalid | §8, §9 | The shared repository does not verify: tell the other players before building on it.
push.rewritten | §3, §8 | The shared history was rewritten: tell the other players; do not push on top of it.
push.unrelated | §8 | Push to the repository of this game; the remote holds another game.
ref.not-allowed | §9 | Push your turn to the game branch or to a branch of your own.
ref.tag-deleted | §9 | Ask the host to remove the tag on the server if it must go.
ref.tag-moved | §9 | Push a tag of a new name; tags stay where they are.
render.no-map | §8 | This ruleset has no map; read the game with `pbem log`.
render.not-started | §8 | Start the game first (`pbem start`); there is no map before the start.
render.out-missing-folder | §8 | Make the folder first (`mkdir -p FOLDER`), or write the picture into a folder that exists.
render.out-unwritable | §8 | Name a file you may write (not a folder), in a folder with room on its disk.
render.site-cannot-write | §8 | Check the folder's permissions and free space, or name another folder for `pbem site`.
render.site-no-folder | §8 | Create the folder that holds the site's folder first, or name another.
render.site-not-a-folder | §8 | Name a folder for `pbem site`, not a file.
render.site-not-empty | §8 | Name a new or empty folder, or one `pbem site` wrote before; pbem never overwrites other files.
repo.bad-revision | §8 | Name a commit, branch or tag of this repository.
repo.bare | §8 | Run the command in a clone with a working tree.
repo.detached | §8 | Check out the game branch first (`git switch main`).
repo.empty | §8 | Make the game first (`pbem init`).
repo.exists | §8 | Choose a folder that is no git repository yet.
repo.missing | §8 | cd into the game repository, or make one with `pbem init DIR`.
repo.object-missing | §3 | Fetch the full history (actions/checkout: fetch-depth: 0).
repo.shallow | §3 | Fetch the full history (`git fetch --unshallow`, or fetch-depth: 0).
repo.unreadable | §8 | Check the repository's folder and permissions; git itself must be able to read it.
repo.wrong-type | §3 | The repository is damaged: fetch a fresh clone.
report.wrong-file | §2 | Move the entry to the report file of its period (the message names it).
result.mismatch | §7.2 | Let pbem write the result (`pbem yield`): it must be what the engine computes.
rules.acceleration | §7.1, seed §1 | Change speed by at most setup.acceleration at a time, or make an emergency deceleration ({emergency: true}).
rules.allocation | §7.1 | Allocate energy the ship has, as the message says.
rules.auction | §4.6, seed §7 | Add entries during an action auction only when you are the one asked.
rules.bad-clarify | §4.5, seed §5.C | Answer the special break with one of the options it offers.
rules.battery-overcharged | §7.1, seed §2.C | Put into the batteries only what they have room for after the charge carried in; an allocation sealed so cannot pass: settle the game with the others (forfeit).
rules.battery-overdrawn | §7.1, seed §2.C | Draw from the batteries only the charge earlier turns left in them; an allocation sealed so cannot pass: settle the game with the others (forfeit).
rules.bay-destroyed | §7.1, seed §6.C | Launch from another carrier: a raid destroyed this one's bay.
rules.bay-empty | §7.1, seed §6.C | Launch only a craft that is aboard; land one first.
rules.duplicate-action | §7 | Give each unit one action per step; drop the second.
rules.fire-frequency | §7.1, seed §1 | Fire that weapon again only once its frequency (impulses since its last shot) has passed; the message says when.
rules.held-unarmed | §7.1, seed §2.C | Hold only a weapon armed over all its arming turns (arm it first); an allocation sealed so cannot pass: settle the game with the others (forfeit).
rules.illegal-action | §7 | Change the action to one the rules allow at that point (the message says why).
rules.no-energy | §7.1, seed §2.C | Leave out what the ship's power no longer pays for this turn (the message says how much is left).
rules.not-armed | §7.1, seed §1, seed §2.C | Fire that weapon only once it has armed for its turns (the message says from which turn, or, at the end of the battle, that your allocations did not arm it in every one).
rules.order-rewritten | §7.2 | Fix the order the engine refused (the message says why).
rules.out-of-action | §7.1, seed §1 | That weapon or system has no box left (damage allocation): use another, or repair it first where the game allows.
rules.pursuit | §7.1 | Move the seeking weapon towards its revealed target.
rules.sealed-speed | §7.1, §4.7 | Keep to the speed you sealed for this turn.
rules.system-range | §7.1, seed §6.C | Close to the system's range first (game.yaml gives it), or pick a nearer target.
schema.bad-condition | §4.3 | Write the break condition as the ruleset's conditions allow.
schema.bad-time | §2 | Write the game time as the ruleset spells it (e.g. 1.12.move, S1901M).
schema.battery-charge | §7.1 | Give a unit a battery_charge of at most its batteries (their capacity).
schema.broken | §8 | Reinstall pbem: its schema files are broken.
schema.damage-table | §7.1 | Give setup.damage_allocation one row per die roll 1..6, each naming hull, weapon, a weapon type or a box name of a unit (and boxes only with a table).
schema.invalid | §2 | Fix the field the message names so the file matches its schema.
schema.no-boxes | §7.1 | Give every system and weapon of the unit at least one box (boxes: {NAME: N}), or leave the system out.
schema.no-damage-row | §7.1 | Name the weapon's type (or `weapon`) and every box name in some row of setup.damage_allocation.rolls.
schema.unknown | §2 | Reinstall pbem: a schema it needs is missing.
secret.bad-key | §6 | Reveal the key the secret was sealed with (`pbem reveal ID`).
secret.bad-plaintext | §6 | Seal JSON content, as `pbem seal` does.
secret.bad-replace | §4.7 | Replace only your own sealed set for the phase, with one new seal naming the set it replaces.
secret.bad-secret | §6 | Write the secret as `pbem seal` does (an owner that is a player, its box and commitment).
secret.bad-target | §6 | Seal the target for the unit the secret concerns.
secret.bad-withheld | §6, §4.8 | Leave the secret as the settling agreement left it.
secret.changed | §6 | Put the secret back as it was; only its reveal is added, by its owner.
secret.commit-mismatch | §6 | Reveal the key of the secret you committed to; another one does not open it.
secret.duplicate-target | §6 | Seal one target per seeking weapon.
secret.early-open | §6, seed §2.C | Leave the allocation sealed until the battle ends; only its speeds are opened at the step.
secret.early-reveal | §6, seed §2.C | Reveal the whole allocation only after the battle; at the step open its speeds alone.
secret.foreign-target | §6 | Seal targets only for your own seeking weapons.
secret.late-replace | §4.7 | Nothing to do: every power has sealed, so the sets stand as sealed.
secret.late-target | §6 | Seal a seeking weapon's target in the commit that launches it.
secret.missing-target | §6 | Seal the target in the same commit as the launch (`pbem seal target FILE`).
secret.not-owner | §6 | Only the secret's owner reveals it; use his key file.
secret.part-commit | §6, seed §2.C | Seal the allocation as `pbem seal allocation` does: its speeds committed beside the box.
secret.part-mismatch | §6, seed §2.C | Open the speeds you committed to at the seal; the box must hold the same speeds.
secret.unknown-kind | §6 | Seal a kind of secret this ruleset knows (`pbem seal` lists them).
secret.unrevealed | §6 | Reveal every secret due (`pbem reveal ID` or `pbem yield`) before the game ends.
secret.withheld | §6, §4.8 | The reveal was settled as withheld by an agreement: what it hid is lost; leave it.
secret.wrong-kind | §6 | Seal the kind of secret this step takes.
secret.wrong-step | §6 | Seal the secret for the step it is due at.
setup.bad-invite-code | §2 Setup | Use the invite code from the game's description.
setup.behind | §2 Setup, §8 | Bring your clone up to date (`pbem pull`), then run `pbem start` again.
setup.invite-code | §2 Setup | Join with the code: `pbem join --as ID --code CODE`.
setup.no-consent | §2 Setup, seed §2.A | Start with the first player (or order) every seat signed; propose the start again otherwise.
setup.not-started | §8 | Make the game first (`pbem init`).
setup.seat-taken | §2 Setup | Join an open seat (`pbem status` lists them).
setup.seats-open | §2 Setup | Wait until every seat is claimed (`pbem join --as ID`), then start.
setup.started | §2 Setup | The game has started: setup commands no longer apply.
setup.unexpected-file | §2 Setup | Before the start, commit only game.yaml, README.md, the workflow, start agreements and start dice.
share.bad-opening | §4.7, §6 | Write `opened` as the key the published shares rebuild, with `withheld`.
share.early | §4.7, §6 | Publish your share only once the reveal is owed.
share.forged | §4.7, §6 | Publish only the share that was dealt to you.
share.wrong-set | §4.7, §6 | Publish your share of this set; a share opens only the set it was dealt for.
signature.hash | §3 | Sign with sha512, as `pbem` and `git commit -S` do.
signature.invalid | §3 | Do not change a commit after signing; make it again with `pbem yield` or `git commit -S`.
signature.key-type | §3 | Sign with an Ed25519 key.
signature.malformed | §3 | Sign with `pbem` or `git commit -S` (gpg.format=ssh); do not edit the signature.
signature.missing | §3 | Sign your commit: amend it with `git commit --amend -S` (gpg.format=ssh), or redo it with `pbem yield`.
signature.namespace | §3 | Sign with the `git` namespace, as `git commit -S` does.
signature.not-in-control | §3, §4.2 | Wait until you hold control (`pbem status`), or settle only what you may do out of turn.
signature.unknown-key | §3 | Sign with the key game.yaml holds for your seat.
status.mismatch | §4.2 | Run `pbem yield`: it writes the status replay computes.
system.disk-full | §8 | Free some space on that disk, then run the command again.
system.no-such-file | §8 | Create the folder first, or give a path that exists.
system.os-error | §8 | Check the file or device the message names, then run the command again.
system.permission | §8 | Check the permissions, or choose a path you may write to.
text.control-character | §9 | Write plain text, without control characters.
time.invalid | §2 | Write a real time (UTC, as the message shows).
tree.bad-mode | §3 Trees | Commit only regular files (no links, executables or submodules).
tree.case-twin | §3 Trees | Remove one of the two files whose names differ only in case.
tree.duplicate-entry | §3 Trees | The tree is damaged: make the commit again with git.
tree.malformed | §3 Trees | The tree is damaged: make the commit again with git.
tree.no-game | §2 | Run the command in a game repository (with game.yaml at its top).
tree.path | §3 Trees | Store files only at paths the game layout allows.
tree.unexpected-path | §2, §3 Trees | Remove the file: only the paths of the game layout belong in the repository.
tree.unreadable | §3 | The commit's tree cannot be read: fetch a fresh clone.
upgrade.not-ours | §4.8 | Do not sign this upgrade: its workflow is not the one that pbem version writes.
upgrade.other-version | §4.8 | Install the pbem the upgrade names (`pip install pbem==VERSION`), then sign.
usage.agree | §8 | Write each `--set` as KEY=VALUE.
usage.bad-id | §8 | Use lower-case letters, digits and '-' in the game id.
usage.bad-phase | §8 | Name a phase that has begun.
usage.bad-state | §8 | Name a relationship state the game knows.
usage.conflict | §8 | Give either `--index-url` or `--pbem-spec`, not both.
usage.cosign | §8 | Write each `--cosign` as PLAYER=FILE.
usage.dice | §8 | Give one `--ref` per `--for`.
usage.erratum | §8 | Give the reason for the correction: `--reason TEXT`.
usage.index-url | §8 | Give the http(s) URL of a simple index.
usage.invite-code | §7.2 | Give `--code` a non-empty code without control characters, to a template with an invite code.
usage.no-agreement | §8 | Name an agreement of this game (the message lists them).
usage.no-batch | §8 | Name a dice batch of your working tree.
usage.no-erratum | §8 | Name an erratum of this game (the message lists them).
usage.no-file | §8 | Give a file that exists.
usage.no-seat | §8 | Name a seat of this game (the message lists them).
usage.no-secret | §8 | Name a secret of this game (the message lists them).
usage.not-diplomacy | §8 | Use this command in a Diplomacy game only.
usage.not-empty | §8 | Choose an empty or new folder.
usage.orders | §8 | Give either FILE (to seal) or `--reveal`.
usage.reaffirm | §8 | Write each as POWER=ALLIED or POWER=HOSTILE.
usage.secret-kind | §8 | Seal a kind the game knows: `pbem seal KIND FILE` (the message lists them).
usage.signed | §8 | Nothing to do: you signed already; wait for the others named.
usage.start | §8 | Give either `--first ID` or `--roll`.
usage.template | §8 | Choose a game of games/ that has a demo.
usage.uncommitted | §8 | Discard or commit your edits to the files named, then run the command again.
usage.warn | §8 | Cite the offence: `--phase PHASE --order ORDER`.
usage.whisper | §8 | Give one or more recipients, then the text: `pbem whisper POWER… TEXT`.
watch.config | §8 | Fix the SMTP setting the message names.
yaml.alias | §2 | Write the value out; anchors and aliases are not allowed.
yaml.bad-key | §2 | Use plain strings as mapping keys.
yaml.duplicate-key | §2 | Remove the second occurrence of the key.
yaml.encoding | §2 | Save the file as UTF-8 without the character named.
yaml.syntax | §2 | Fix the YAML at the line named.
yaml.tag | §2 | Remove the tag; quote the value if it is a string.
yaml.too-deep | §2 | Nest less deeply.
yaml.too-large | §2 | Keep the file under 1 MiB.
yaml.too-many-nodes | §2 | Write fewer values in one file.
"""


def _rules(table: str) -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for line in table.strip().splitlines():
        rule_id, section, do = (part.strip() for part in line.split(" | "))
        out[rule_id] = Rule(rule_id, section, do)
    return out


RULES: dict[str, Rule] = _rules(_TABLE)


def markdown() -> str:
    """docs/rules.md: every rule id, by fault group."""
    lines = ["# Rule ids", "",
             "Every finding and every refusal pbem prints names a rule id, `group.name`. This page lists them all "
             "by fault group, each with the section of DESIGN.md (or of a seed text) it enforces and what to do "
             "about it. `seed §N` is the Star Fleet Battles PBEM protocol, `seed 001` the \"Declaration of War\" "
             "Diplomacy variant.", "",
             "This file is generated from `tool/pbem/catalog.py`: `python -m pbem.catalog --write`.", ""]
    for group, about in GROUPS.items():
        rules = [r for r in RULES.values() if r.group == group]
        lines += [f"## {group}: {about}", "", "| rule | section | what to do |", "|---|---|---|"]
        lines += [f"| `{r.id}` | {r.section} | {r.do.replace('|', chr(92) + '|')} |" for r in rules]
        lines.append("")
    return "\n".join(lines)


DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(markdown(), encoding="utf-8")
    else:
        sys.stdout.write(markdown())
