"""The public area (issue 19): what the Secretaria publishes without login, when `public_enabled` is on."""
