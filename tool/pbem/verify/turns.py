"""The judge's old home: what it held now lives in verify.commit (the judge), verify.change, verify.rules (one
module per DESIGN step), protocol.control, protocol.ways_out, protocol.verified and protocol.model."""

from __future__ import annotations

from pbem.protocol.control import back_to, clarifies, expected_after, expected_start, full_status, new_conditions, only_out_of_turn, start_batch, start_choice, takes_turn, who  # moved: re-exported until the lead sweeps  # noqa: E501
from pbem.protocol.model import OWED  # moved: re-exported until the lead sweeps
from pbem.protocol.verified import Verified  # moved: re-exported until the lead sweeps
from pbem.protocol.ways_out import FOREVER, agreement_effect, consent_table, covered_by_nmr, effects_of, ended, errata_agreed, excused_by_nmr, gone_now, nmr_served, resignations_applied, reveals_owed, secrets_owed, settled_now, settlement_parts, without_orders  # moved: re-exported until the lead sweeps  # noqa: E501
from pbem.verify.commit import judge  # moved: re-exported until the lead sweeps
from pbem.verify.rules.agreements import SETTLES  # moved: re-exported until the lead sweeps
from pbem.verify.rules.progress import clarified as _clarified  # moved: re-exported until the lead sweeps
from pbem.verify.rules.protected import PROTECTED  # moved: re-exported until the lead sweeps
from pbem.verify.rules.setup import SETUP_FILES  # moved: re-exported until the lead sweeps
from pbem.verify.rules.status import status_findings as _status_findings  # moved: re-exported until the lead sweeps

__all__ = ["FOREVER", "OWED", "PROTECTED", "SETTLES", "SETUP_FILES", "Verified", "_clarified", "_status_findings",
           "agreement_effect", "back_to", "clarifies", "consent_table", "covered_by_nmr", "effects_of", "ended",
           "errata_agreed", "excused_by_nmr", "expected_after", "expected_start", "full_status", "gone_now", "judge",
           "new_conditions", "nmr_served", "only_out_of_turn", "resignations_applied", "reveals_owed",
           "secrets_owed", "settled_now", "settlement_parts", "start_batch", "start_choice", "takes_turn", "who",
           "without_orders"]
