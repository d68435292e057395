"""What a push may do to each kind of ref on a self-hosted game server (DESIGN §9; docs/github.md "The hook's
policy").

The pre-receive hook judges every ref update of a push in two steps: this policy first (which kinds of ref may be
created, moved forward, moved anywhere or deleted), then the verification of the commits new to the server, for
every update the policy lets through that brings commits. The policy needs only the update and whether its old
tip is an ancestor of its new one, so it is a function of data: the hook asks git for ancestry and passes it in.

    kind            create      fast-forward   other move (force)       delete
    game branch     verified    verified       history.rewritten        history.rewritten
    other branch    verified    verified       verified                 allowed
    tag             verified    ref.tag-moved  ref.tag-moved            ref.tag-deleted
    any other ref   ref.not-allowed

The game branch holds the record of play: a turn once landed is never taken back, and the branch never goes.
Other branches are where players prepare turns and pull requests: they may be rebased and deleted freely, but
never carry a commit the verifier refuses onto the server. Tags are names players cite and clones keep (git
fetch never moves a tag it holds), so a tag, once pushed, stays where it is. Anything else (notes, `refs/pbem/`,
`refs/pull/`…) is no place a player needs, and the server's own records may live there.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from pbem.errors import Finding
from pbem import text as escape

ZERO = "0" * 40
BRANCHES = "refs/heads/"
TAGS = "refs/tags/"


class RefKind(Enum):
    """The kinds of ref the policy tells apart."""

    GAME = "game branch"
    BRANCH = "branch"
    TAG = "tag"
    OTHER = "other ref"


def ref_kind(ref: str, game: str) -> RefKind:
    """The kind of `ref` on a server whose game branch is `game` (a full ref, `refs/heads/main`)."""
    if ref == game:
        return RefKind.GAME
    if ref.startswith(BRANCHES):
        return RefKind.BRANCH
    if ref.startswith(TAGS):
        return RefKind.TAG
    return RefKind.OTHER


def policy_finding(ref: str, old: str, new: str, game: str,
                   fast_forward: Callable[[], bool]) -> Finding | None:
    """The policy's refusal of the update `old` -> `new` of `ref`, or None when the policy lets it through (to
    verification, when it brings commits). `fast_forward()` says whether `old` is an ancestor of `new`; it is
    only asked for an update of an existing ref to an existing commit."""
    kind, shown = ref_kind(ref, game), escape.terminal(ref)
    if kind is RefKind.OTHER:
        return Finding("ref.not-allowed", f"{shown} is neither a branch (refs/heads/…) nor a tag (refs/tags/…); "
                       "this server takes no other refs",
                       hint="push your turn to the game branch or to a branch of your own")
    created, deleted = old == ZERO, new == ZERO
    if kind is RefKind.GAME and deleted:
        return Finding("history.rewritten", f"{shown} holds the game and may not be deleted")
    if kind is RefKind.TAG and deleted:
        return Finding("ref.tag-deleted", f"{shown} is a tag, and tags on this server stay where they are",
                       hint="ask the host to remove it on the server if it must go")
    if created or deleted:
        return None
    if kind is RefKind.TAG:
        return Finding("ref.tag-moved", f"{shown} would move from {old[:10]} to {new[:10]}; tags on this server "
                       "stay where they are", hint="push a tag of a new name")
    if kind is RefKind.GAME and not fast_forward():
        return Finding("history.rewritten", f"{shown} would move from {old[:10]} to {new[:10]}, which does not "
                       "contain it: a force-push takes back turns that have landed",
                       hint="fetch, rebase your own commits on top (`pbem push`) and push again")
    return None
