"""Diplomacy (`dow/1`) from a power's side: now the package services/dow/ (seat, press, chronicle, relations,
openings, orders); the names other code imports from here are re-exported until the lead sweeps."""

from pbem.rulesets.dow.press import describe_message  # moved: re-exported until the lead sweeps
from pbem.services.dow.chronicle import (  # moved: re-exported until the lead sweeps
    PhaseReport, PressLine, chronicle, results)
from pbem.services.dow.orders import (  # moved: re-exported until the lead sweeps
    ORDERS_KIND, RevealedOrders, SealedOrders, Verdict, judge_orders, read_orders, reveal_orders, seal_orders)
from pbem.services.dow.press import Posted, changes_text, post  # moved: re-exported until the lead sweeps
from pbem.services.dow.relations import (  # moved: re-exported until the lead sweeps
    LEGEND, SYMBOL, relations, relations_text)
from pbem.services.dow.seat import (  # moved: re-exported until the lead sweeps
    Seat, commit_seated as _commit, current_state, press_file, seat_of as _seat)

__all__ = ["LEGEND", "ORDERS_KIND", "PhaseReport", "Posted", "PressLine", "RevealedOrders", "SealedOrders", "SYMBOL",
           "Seat", "Verdict", "_commit", "_seat", "changes_text", "chronicle", "current_state", "describe_message",
           "judge_orders", "post", "press_file", "read_orders", "relations", "relations_text", "results",
           "reveal_orders", "seal_orders"]
