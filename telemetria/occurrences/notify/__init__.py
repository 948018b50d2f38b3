"""New occurrences announced by e-mail and by a signed webhook, through an outbox in the database."""
