"""RowFilter: drops examples whose row fails an expression, e.g. `trip_miles > 0`."""
