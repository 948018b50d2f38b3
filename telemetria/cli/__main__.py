"""`python -m telemetria.cli`, as the `telemetria` script."""

from telemetria.cli import main

main()
