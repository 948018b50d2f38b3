"""The monthly per-km measurement (boletim de medição): runs due, runs as GPS shows them, what is paid (issue 17)."""
