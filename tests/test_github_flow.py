"""The one GitHub flow (docs/github.md): `main` protected, the gate run from the default branch posting
`pbem/verify` on each pull request's head, and pbem doing the chores. `pbem push` and `pbem watch` find that
`main` refuses direct pushes (GitHub's GH006), push the player's commits to his own branch `pbem/<seat>`, open
the pull request and have GitHub merge it once the check passed: nobody opens or merges anything by hand.

GitHub is tests/fakegithub.py: its API on 127.0.0.1, over the race's bare repository (tests/test_push.py: after
fed's turn the escrow owes its signature of fed-0001 and kli his contribution to fed-0002).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import PBEM, Table
from fakegithub import FakeGitHub
from pbem.services import turn
from pbem.services.workspace import Workspace
from test_push import Race, base_race, identity, race, server_main, signer_of  # noqa: F401 (fixtures)

TOKENS = {"t-fed": "alice", "t-kli": "bob", "t-escrow": "escrow-bot", "t-carol": "carol"}
TOKEN_OF = {"fed": "t-fed", "kli": "t-kli", "escrow": "t-escrow"}


@pytest.fixture
def hub(race: Race, tmp_path: Path) -> Iterator[FakeGitHub]:
    """The race's server as GitHub's copy (main protected), every clone pointed at it (`pbem.github`)."""
    fed, kli, escrow, server = race
    home = tmp_path / "github-home"
    home.mkdir()
    with FakeGitHub(server, "alice", "race-1", home, TOKENS) as fake:
        for table in (fed, kli, escrow):
            table.git("config", "pbem.github", "alice/race-1")
        yield fake


def env(table: Table, who: str, hub: FakeGitHub, token: str | None = None) -> dict[str, str]:
    return table.env(who, hub.env(token or TOKEN_OF[who]))


def push(table: Table, who: str, hub: FakeGitHub, *args: str) -> subprocess.CompletedProcess[str]:
    return table.pbem("push", *args, env=env(table, who, hub))


def transparent(server: Path, merge: str) -> bool:
    tree = subprocess.run(["git", "rev-parse", f"{merge}^{{tree}}", f"{merge}^2^{{tree}}"], cwd=server,
                          capture_output=True, text=True).stdout.split()
    return len(tree) == 2 and tree[0] == tree[1]


def contribute(table: Table, who: str) -> str:
    turn.yield_turn(Workspace.open(table.repo_dir), identity(table, who))
    return table.head()


# --- a contribution, by `pbem push` --------------------------------------------------------------------------------

def test_a_contribution_lands_through_a_pull_request_nobody_opens_or_merges(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, server = race
    mine = contribute(kli, "kli")
    done = push(kli, "kli", hub)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pull request #1" in done.stdout and "merged" in done.stdout
    assert hub.pulls[1].head == "pbem/kli" and hub.pulls[1].user == "bob" and hub.pulls[1].merged
    main = server_main(server)
    assert subprocess.run(["git", "rev-parse", f"{main}^2"], cwd=server, capture_output=True,
                          text=True).stdout.strip() == mine
    assert transparent(server, main)
    assert kli.head() == main  # the clone follows the merge: nothing to pull by hand
    assert kli.git("config", "pbem.flow").stdout.decode().strip() == "pull-request"  # remembered from GH006
    assert kli.pbem("verify", who="kli").returncode == 0
    status = kli.pbem("status", who="kli")  # HEAD is GitHub's merge commit: no turn, and no signature of a seat
    assert status.returncode == 0 and "control: escrow" in status.stdout, status.stdout + status.stderr
    again = push(kli, "kli", hub)
    assert again.returncode == 0 and "nothing to push" in again.stdout


def test_two_players_at_once_both_land(race: Race, hub: FakeGitHub) -> None:
    """kli's contribution and the escrow's signature on the same state, pushed at the same moment: GitHub
    merges one; the other pull request is then behind `main` (branches must be up to date), and its `pbem push`
    replays it onto the new `main`, re-signed, and GitHub merges that too."""
    _fed, kli, escrow, server = race
    contribute(kli, "kli")
    me = identity(escrow, "escrow")
    from pbem.services import chance

    turn.commit_escrow(Workspace.open(escrow.repo_dir), me, chance.private_key(me))
    both = [subprocess.Popen([str(PBEM), "push"], cwd=t.repo_dir, env=env(t, who, hub), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for t, who in ((kli, "kli"),
                                                                                            (escrow, "escrow"))]
    said = [p.communicate(timeout=300) for p in both]
    assert [p.returncode for p in both] == [0, 0], said
    assert len(hub.merges) == 2 and all(transparent(server, m) for m in hub.merges)
    assert "rebased" in " ".join(out for out, _err in said) or len(hub.pulls) == 2
    fresh = kli.pbem("pull", who="kli")
    assert fresh.returncode == 0, fresh.stderr
    assert "kli" in kli.data("dice/fed-0002.yaml")["contributions"] and kli.data("dice/fed-0001.yaml")["results"]
    assert kli.head() == server_main(server) and kli.pbem("verify", who="kli").returncode == 0


# --- the watches: contribution, signature and reveal --------------------------------------------------------------

def test_the_watches_land_the_whole_shot_through_pull_requests(race: Race, hub: FakeGitHub) -> None:
    """After fed's turn, the watches alone: kli's contribution, the escrow's signature, then fed's reveal, each
    through a pull request of its own that GitHub merged; the watch never waits for GitHub, its next round
    pulls the merge."""
    fed, kli, escrow, server = race
    turned = server_main(server)
    for _round in range(6):
        for table, who in ((kli, "kli"), (escrow, "escrow"), (fed, "fed")):
            done = table.pbem("watch", "--once", env=env(table, who, hub))
            assert "Traceback" not in done.stderr and "not pushed" not in done.stdout, done.stdout + done.stderr
        hub.settled()
        revealed = fed.pbem("pull", env=env(fed, "fed", hub))
        # both batches settled: the escrow's signature (fed-0001) may land after fed's reveal (fed-0002)
        if fed.data("dice/fed-0002.yaml").get("results") and fed.data("dice/fed-0001.yaml").get("results") \
                and fed.head() == server_main(server):
            break
    assert revealed.returncode == 0
    assert fed.data("dice/fed-0002.yaml").get("results"), "the reveal did not land"
    assert {p.head for p in hub.pulls.values()} == {"pbem/kli", "pbem/escrow", "pbem/fed"}
    assert all(p.merged for p in hub.pulls.values() if p.state == "closed")
    signers = {signer_of(fed, c) for c in fed.git("rev-list", "--no-merges", f"{turned}..HEAD").stdout.decode().split()}
    assert signers == {"kli", "escrow", "fed"}
    assert fed.pbem("verify", who="fed").returncode == 0


# --- review, and the advice when a remote refuses ----------------------------------------------------------------

def test_review_opens_the_pull_request_without_merging_it(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, server = race
    landed = server_main(server)
    contribute(kli, "kli")
    done = push(kli, "kli", hub, "--review")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "open for review" in done.stdout and "#1" in done.stdout
    hub.settled()
    assert not hub.pulls[1].auto_merge and hub.pulls[1].state == "open" and server_main(server) == landed
    assert hub.passed(kli.head())  # the check ran on the head: a player merges once he has read it


def test_without_a_token_one_line_says_what_to_set(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, server = race
    landed = server_main(server)
    contribute(kli, "kli")
    before = kli.head()
    extra = {"PBEM_GITHUB_API": hub.url, "GH_TOKEN": "", "GITHUB_TOKEN": "", "PATH": "/usr/bin:/bin"}
    done = kli.pbem("push", env=kli.env("kli", extra))
    assert done.returncode == 2
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "[github.no-token]" in lines[0] and "GH_TOKEN" in lines[0], lines
    assert "run `pbem push` again" not in lines[0]
    assert kli.head() == before and server_main(server) == landed


def test_a_bad_token_is_one_line(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, _server = race
    contribute(kli, "kli")
    done = kli.pbem("push", env=env(kli, "kli", hub, token="t-forged"))
    assert done.returncode == 2 and "[github.token]" in done.stderr and "Traceback" not in done.stderr


def test_no_write_access_is_said_as_such(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, server = race
    hub.read_only("t-kli")
    kli.git("config", "--unset", "pbem.github")
    mine = contribute(kli, "kli")
    done = push(kli, "kli", hub)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no write access" in done.stderr and "Collaborators" in done.stderr
    assert "run `pbem push` again" not in done.stderr
    assert kli.head() == mine  # kept, unpublished: nothing about the commit was judged


def test_watch_says_not_pushed_once(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, _server = race
    hub.read_only("t-kli")
    done = kli.pbem("watch", "--once", env=env(kli, "kli", hub))
    assert done.returncode == 1
    assert "not pushed: not pushed" not in done.stdout and "not pushed:" in done.stdout


def test_a_plain_remote_keeps_the_direct_push(race: Race) -> None:
    """A bare repository with the pbem hook is no GitHub: `pbem push` pushes straight to main, no flow remembered."""
    _fed, kli, _escrow, server = race
    contribute(kli, "kli")
    done = kli.pbem("push", who="kli")
    assert done.returncode == 0 and f"pushed {kli.head()[:10]} to origin/main" in done.stdout
    assert server_main(server) == kli.head()
    assert kli.git("config", "pbem.flow", check=False).returncode != 0


# --- a refusal leaves no false state --------------------------------------------------------------------------------

def test_a_failed_check_puts_the_clone_back_where_the_game_is(race: Race, hub: FakeGitHub) -> None:
    """The gate refuses what the clone's own verification accepted (here a stand-in for a judgement only the gate
    can make, such as its clock): `pbem push` says the check failed, keeps the commit on `pbem-saved-<id>` and
    puts main back at the shared game's tip, so `pbem status` and `pbem pull` tell the truth."""
    _fed, kli, _escrow, server = race
    hub.verdict = "[clock.not-overdue] the gate accepted the owed item 2 days ago, 7 are needed"
    landed = server_main(server)
    mine = contribute(kli, "kli")
    done = push(kli, "kli", hub)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pbem/verify failed on pull request #1" in done.stderr and "clock.not-overdue" in done.stderr
    saved = f"pbem-saved-{mine[:10]}"
    assert f"kept on branch {saved}" in done.stderr
    assert kli.head() == landed == server_main(server)
    assert kli.git("rev-parse", saved).stdout.decode().strip() == mine
    pulled = kli.pbem("pull", env=env(kli, "kli", hub))
    assert pulled.returncode == 0 and "up to date" in pulled.stdout


# --- Diplomacy: a seal and press ---------------------------------------------------------------------------------

from test_dow_flow import Dow, base_first_half, base_second_half, second_half  # noqa: E402,F401


def test_a_seal_and_press_land_through_pull_requests(second_half: Dow, tmp_path: Path) -> None:
    """Two powers act at once on a GitHub game: england seals his orders, france says something in global press;
    each runs `pbem push`; both land, each through his own pull request, merged by GitHub."""
    from gitutil import clean_env
    from test_sync import clone

    server = tmp_path / "dow.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True)
    home = second_half.root / "home"
    for args in (["remote", "add", "origin", str(server)], ["push", "-q", "-u", "origin", "main"]):
        subprocess.run(["git", *args], cwd=second_half.repo_dir, env=clean_env(home), check=True, capture_output=True)
    github_home = tmp_path / "github-home"
    github_home.mkdir()
    with FakeGitHub(server, "alice", "dow-1", github_home, {"t-eng": "eng", "t-fra": "fra"}) as fake:
        seats = {power: clone(server, tmp_path / power, second_half.me(power)) for power in ("england", "france")}

        def pbem(power: str, *args: str) -> subprocess.Popen[str]:
            seat = seats[power]
            seat.git("config", "pbem.github", "alice/dow-1")
            extra = {"PBEM_KEY": str(seat.me.path), **fake.env(f"t-{power[:3]}")}
            return subprocess.Popen([str(PBEM), *args], cwd=seat.repo_dir, env=clean_env(seat.home, extra),
                                    text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        orders = tmp_path / "orders.yaml"
        orders.write_text("orders: []\n")
        for power, args in (("england", ("orders", str(orders))), ("france", ("say", "Peace in the west"))):
            acted = pbem(power, *args)
            out, err = acted.communicate(timeout=120)
            assert acted.returncode == 0, out + err
        pushes = [pbem(power, "push") for power in seats]
        said = [p.communicate(timeout=300) for p in pushes]
        assert [p.returncode for p in pushes] == [0, 0], said
        assert sorted(p.head for p in fake.pulls.values()) == ["pbem/england", "pbem/france"]
        assert all(transparent(server, m) for m in fake.merges) and len(fake.merges) == 2
        tree = subprocess.run(["git", "ls-tree", "-r", "--name-only", "main"], cwd=server, capture_output=True,
                              text=True).stdout.split()
        log = subprocess.run(["git", "log", "-p", "main"], cwd=server, capture_output=True, text=True).stdout
        assert "orders for S1901M sealed" in log and "Peace in the west" in log
        reader = clone(server, tmp_path / "reader", second_half.me("austria"))
        assert reader.pbem("verify").returncode == 0


# --- the API client --------------------------------------------------------------------------------------------------

from pbem.errors import PbemError  # noqa: E402
from pbem.services import github  # noqa: E402


@pytest.mark.parametrize("url, api, slug", [
    ("git@github.com:alice/duel-1.git", "", "alice/duel-1"),
    ("https://github.com/alice/duel-1", "", "alice/duel-1"),
    ("https://x-access-token@github.com/alice/duel-1.git/", "", "alice/duel-1"),
    ("ssh://git@ssh.github.com:443/alice/duel-1.git", "", "alice/duel-1"),
    ("git@ghe.example.org:club/dow-3.git", "https://ghe.example.org/api/v3", "club/dow-3"),
    ("git@gitlab.com:alice/duel-1.git", "", None),
    ("/srv/git/duel-1.git", "", None),
    ("git@ghe.example.org:club/dow-3.git", "", None),
])
def test_the_github_repository_is_read_from_the_remote_url(url: str, api: str, slug: str | None) -> None:
    found = github.repository(url, None, {"PBEM_GITHUB_API": api} if api else {})
    assert (found.slug if found else None) == slug
    if found is not None and api:
        assert found.graphql == "https://ghe.example.org/api/graphql" and found.host == "ghe.example.org"
    if found is not None and not api:
        assert found.graphql == "https://api.github.com/graphql" and found.host == "github.com"


def test_pbem_github_names_the_repository_and_a_bad_value_is_one_line() -> None:
    assert github.repository("/srv/x.git", "club/dow-3", {}).slug == "club/dow-3"  # type: ignore[union-attr]
    with pytest.raises(PbemError) as refused:
        github.repository("/srv/x.git", "just-a-name", {})
    assert refused.value.finding.rule == "github.config" and refused.value.exit_code == 2


def test_a_pull_request_that_passed_already_is_merged_at_once(race: Race, hub: FakeGitHub) -> None:
    """GitHub refuses auto-merge for a pull request that may merge now ("clean status"): pbem merges it itself."""
    _fed, kli, _escrow, server = race
    hub.paused = True
    mine = contribute(kli, "kli")
    kli.git("push", "-q", "origin", f"{mine}:refs/heads/pbem/kli", env=hub.env("t-kli"))
    hub.post_status(mine, "success", "github-actions")
    client = github.Client(github.Repository("alice", "race-1", hub.url), "t-kli")
    pull = client.create_pull("pbem/kli", "main", "kli", "")
    assert client.auto_merge(pull) is False
    assert client.merge(pull["number"], mine) is True
    assert subprocess.run(["git", "rev-parse", "main^2"], cwd=server, capture_output=True,
                          text=True).stdout.strip() == mine


def test_auto_merge_turned_off_is_one_line(race: Race, hub: FakeGitHub) -> None:
    _fed, kli, _escrow, _server = race
    hub.allow_auto_merge = False
    contribute(kli, "kli")
    done = push(kli, "kli", hub)
    assert done.returncode == 2 and "[github.auto-merge-off]" in done.stderr and "Allow auto-merge" in done.stderr
    assert "Traceback" not in done.stderr


def test_review_on_a_plain_remote_pushes_the_branch_and_says_how_it_lands(race: Race) -> None:
    _fed, kli, _escrow, server = race
    landed = server_main(server)
    mine = contribute(kli, "kli")
    done = kli.pbem("push", "--review", who="kli")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "origin/pbem/kli for review" in done.stdout and "git merge --no-ff" in done.stdout
    assert server_main(server) == landed
    assert subprocess.run(["git", "rev-parse", "pbem/kli"], cwd=server, capture_output=True,
                          text=True).stdout.strip() == mine


@pytest.mark.parametrize("merged_by_then", [True, False])
def test_a_merge_made_between_two_looks_is_told_as_the_merge(tmp_path: Path, merged_by_then: bool) -> None:
    """The pull request is looked at (open), then the shared branch is found moved. By this very merge, made in
    between: `pbem push` must say merged (and then pull), never "main moved" and, on its next try, "nothing to
    push: main is ahead of you", which left the clone behind the game it had just landed in. By another one,
    the pull request still open: that is a move, and the push replays onto it."""
    from types import SimpleNamespace

    from pbem.services import landing
    from pbem.services.gitstate import Upstream

    tip, theirs, moved_to = "a" * 40, "b" * 40, "c" * 40
    looks: list[int] = []

    class Client:
        def pull(self, number: int) -> dict[str, object]:
            looks.append(number)
            merged = merged_by_then and len(looks) > 1
            return {"merged": merged, "state": "closed" if merged else "open", "head": {"sha": tip}}

        def check(self, sha: str) -> None:
            return None

    def git(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
        assert args[0] == "ls-remote", args
        return subprocess.CompletedProcess(args, 0, f"{moved_to}\trefs/heads/main\n", "")

    ws: Any = SimpleNamespace(root=tmp_path)  # _await reads only where the clone is
    client: Any = Client()
    landed = landing._await(ws, Upstream("refs/heads/main", "origin", "main"), client, 7, tip, theirs, "pushed",
                            60.0, git, lambda seconds: None)
    assert looks == [7, 7]
    if merged_by_then:
        assert landed.merged and not landed.moved and "merged by GitHub" in landed.message, landed
    else:
        assert landed.moved and not landed.merged, landed
