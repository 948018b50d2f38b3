"""Traccar gateway: positions forwarded by a Traccar server (forward.type=json or url) into the one ingest path."""
