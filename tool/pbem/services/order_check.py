"""`pbem orders` checks every order before sealing: now services/dow/orders.py."""

from pbem.services.dow.orders import ORDER_RULES, check_orders, read_with_lines  # moved: re-exported until the lead sweeps

__all__ = ["ORDER_RULES", "check_orders", "read_with_lines"]
