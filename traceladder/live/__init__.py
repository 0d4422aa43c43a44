"""Live traces: which are complete, judging them continuously (`watch`), scores over time (`trend`)."""
