-- People (CONTRACT.md §6): `person delete` removes a person's tokens with the rest of their rows,
-- and deleting the only person who held tokens must not open the receiver to anyone (a receiver
-- with no token ever minted takes every batch as `default`). This table remembers, once any
-- token was deleted with its person, that tokens are required; health_store.tokens_required()
-- (repeatable/64_people.sql) reads it beside health_store.tokens.
CREATE TABLE health_store.receiver_flags (
  flag    text PRIMARY KEY CHECK (flag IN ('tokens_minted')),
  set_at  timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE health_store.receiver_flags IS
  'Receiver-wide facts no person''s rows carry: tokens_minted once a deleted person took the last tokens with them (every request still needs a live token).';
