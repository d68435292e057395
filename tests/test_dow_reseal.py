"""A power replaces his sealed orders until the phase's last power has sealed (DESIGN §4.7; docs/dow.md "Replacing
a sealed set"): the new set names the one it `replaces`, both stay on record, the phase counts the newest; after
the last seal the sets stand. Through `pbem orders` and, for what pbem refuses, by plain git.
"""

from __future__ import annotations

from pbem.formats import yamlsafe
from pbem.formats.writer import dump_mapping
from pbem.services import chance
from test_dow_flow import POWERS, Dow, base_first_half, base_second_half, second_half  # noqa: F401  (fixtures)


def hand_sealed(dow: Dow, power: str, orders: str, replaces: str | None) -> dict[str, bytes]:
    """The files with a set of `power`'s orders for S1901M sealed by hand (chance.seal_secret, as a script of his
    could), naming the set it `replaces`; nothing committed."""
    ws = dow.ws()
    files = ws.head_files()
    sid = chance.seal_secret(files, ws.game_of(files), dow.me(power), power, "orders",
                             f'{{"orders": [{orders}]}}'.encode(), "S1901M", "by hand", step="S1901M")
    path = f"secrets/{sid}.yaml"
    raw = yamlsafe.load(files[path], path).data
    files[path] = dump_mapping({**raw, **({"replaces": replaces} if replaces else {})}).encode()
    return files


def test_a_power_replaces_his_sealed_orders_and_the_phase_counts_the_new_set(second_half: Dow) -> None:
    second_half.ok("orders", second_half.orders_file(["A PAR - BUR"]), who="france")
    out = second_half.ok("orders", second_half.orders_file(["A PAR - PIC"]), who="france")
    assert "sealed france-0002" in out and "replace your orders sealed before (france-0001)" in out
    assert second_half.data("secrets/france-0002.yaml")["replaces"] == "france-0001"
    assert "france-0001" in second_half.data("secrets/france-0001.yaml")["id"]  # the first stays on record
    assert "france" not in second_half.owing()
    assert second_half.verify() == []
    for power in POWERS:
        if power != "france":
            second_half.seal(power)
    assert "revealed france-0002" in second_half.ok("orders", "--reveal", who="france")
    for power in second_half.owing("secret"):
        second_half.reveal(power)
    assert second_half.status()["firm"] != "S1901M"
    results = second_half.ok("results", "S1901M")
    assert "A PAR - PIC" in results and "A PAR - BUR" not in results
    assert second_half.verify() == []


def test_after_the_last_seal_the_sets_stand(second_half: Dow) -> None:
    for power in POWERS:
        second_half.seal(power)
    second_half.refused("orders", second_half.orders_file(["A PAR - PIC"]), who="france",
                        rule="orders.already-sealed")
    bad = second_half.sneak("france", hand_sealed(second_half, "france", '"A PAR - PIC"', "france-0001"),
                            "france: my orders again")
    assert ("secret.late-replace", bad) in second_half.verify()


def test_a_replacement_names_its_owner_s_own_set_for_the_phase(second_half: Dow) -> None:
    second_half.seal("france", ["A PAR - BUR"])
    second_half.seal("germany")
    bad = second_half.sneak("germany", hand_sealed(second_half, "germany", "", "france-0001"),
                            "germany: replaces france's set")
    found = {rule for rule, commit in second_half.verify() if commit == bad}
    assert "secret.bad-replace" in found, found


def test_a_game_whose_seals_are_final_refuses_a_replacement() -> None:
    from pbem.protocol.model import Break
    from pbem.protocol.resealing import replaceable

    class Seals:
        def __init__(self, replaceable: bool) -> None:
            self.replaceable_seals = replaceable

        @property
        def sealing(self) -> "Seals":
            return self

    pending = [Break("germany", "S1901M", "sealed", "")]
    assert replaceable(Seals(True), pending, "S1901M", "france")
    assert not replaceable(Seals(False), pending, "S1901M", "france")  # tactical allocations: sealed is final
    assert not replaceable(type("Plain", (), {"sealing": None})(), pending, "S1901M", "france")
    assert not replaceable(Seals(True), pending, "S1901M", "germany")
