"""The administrative process (Lei 3.588/2023 Art. 32-42, Lei 14.133/2021 by Art. 41): its state machine,
terms in business days, legal basis, fines in UPFM, frozen evidence, and its SQL and store."""
