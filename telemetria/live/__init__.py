"""The live fleet: each visible vehicle's newest position, its driver and how fresh it is."""
