"""An occurrence in words and on paper: the Termo de Comunicação and the notification (PDF), the list's map,
the Portuguese wording shared by the Termo, the e-mail and the webhook (pure)."""
