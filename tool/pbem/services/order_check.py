"""`pbem orders` checks every order before sealing (docs/dow.md "Checked before they count")."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pbem.errors import ILLEGAL, PbemError
from pbem.formats import schemas, yamlsafe
from pbem.services.diplomacy import ORDERS_KIND, Verdict

def read_with_lines(content: bytes, name: str) -> tuple[dict[str, Any], Callable[[int], int]]:
    """`read_orders`, and where the i-th order stands in the file (its line, found only when asked)."""
    doc = yamlsafe.load(content, name)
    bare = isinstance(doc.data, list)
    value = {"orders": doc.data} if bare else doc.data
    if value is None:
        value = {"orders": []}
    schemas.validate(f"pbem/secret/{ORDERS_KIND}/1", value, file=name, doc=doc if value is doc.data else None)
    vote = {"draw": True} if not bare and value.get("draw") is True else {}
    return {"orders": list(value["orders"]), **vote}, lambda i: doc.line_of((i,) if bare else ("orders", i))


ORDER_RULES = {"forbidden": "orders.forbidden", "invalid": "orders.invalid"}


def check_orders(name: str, line_of: Callable[[int], int], problem: str | None,
                  verdicts: Sequence[Verdict]) -> None:
    """Refuse to seal orders that will not stand, before anything is written (seed 001 "an honest mistake" is
    best caught before it counts): the first such order named with its file and line, rule `orders.forbidden`
    (the relationship states forbid it: it would be void and an offence) or `orders.invalid` (the engine refuses
    it: void); `--anyway` seals them as written."""
    bad = [(i, v) for i, v in enumerate(verdicts) if v.verdict in ORDER_RULES]
    hint = "fix it, or seal as written with --anyway (void when the phase resolves"
    if problem:
        raise PbemError("orders.invalid", f"{name}: these orders will be void as a whole: {problem}", file=name,
                        exit_code=ILLEGAL, hint=hint + "); nothing was sealed")
    if not bad:
        return
    forbidden = [(i, v) for i, v in bad if v.verdict == "forbidden"]
    i, first = (forbidden or bad)[0]
    more = f" ({len(bad) - 1} more order{'s' * (len(bad) > 2)} will not stand either)" if len(bad) > 1 else ""
    what = ("is forbidden by the relationship states" if first.verdict == "forbidden"
            else "is not a valid order")
    why = "; a forbidden order is an offence: a warning, the second puts you into civil disorder" \
        if forbidden else ""
    raise PbemError(ORDER_RULES[first.verdict], f"{first.order!r} {what}: {first.reason}{more}", file=name,
                    line=line_of(i), exit_code=ILLEGAL,
                    hint=hint + why + "); nothing was sealed")
