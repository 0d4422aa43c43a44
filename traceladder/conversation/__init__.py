"""Conversations: several turns (traces) of one dialogue, grouped, attributed and judged as a whole.

`verdict` holds the pure fold of a conversation's verdict from its turns' verdicts and its own
(conversation-scope) findings; it has no I/O and is shared by the live store and multi-turn cases.
"""
