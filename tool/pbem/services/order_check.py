"""`pbem orders` checks every order before sealing: now services/dow/orders.py."""

from pbem.services.dow.orders import (  # moved: re-exported until the lead sweeps
    ORDER_RULES, check_orders, read_with_lines)

__all__ = ["ORDER_RULES", "check_orders", "read_with_lines"]
