"""``judge assess``: people judge (or post-edit) the items of an assessment task on a local page.

The task file (JSON Lines, written by ``judge select``) names the items; `task` reads its header and
items and the lines of an assessment file (one file per assessor) into checked values, without I/O.
`files` reads and appends those files: an assessment line is appended, flushed and synced as soon
as a person judges, so a crash loses nothing already answered; a torn last line is tolerated on
read and set aside (never a complete line) on the next append. `page` renders the page (no
external requests: everything inline under a strict Content-Security-Policy with a nonce; every
text from the task shown as text, never as HTML), `server` serves it on 127.0.0.1 with a
CSRF-safe write path, `consensus` turns several assessors' labels into one exported label (the
rule is stated) and measures their agreement, and `command` is ``judge assess`` and ``judge
assess export``.
"""
