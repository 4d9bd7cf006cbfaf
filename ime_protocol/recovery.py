"""What a frontend replays into a new daemon session when its session is gone (the daemon restarted).

Both frontends follow these rules: frontends/ibus/daemon_session.py uses the names below, and the fcitx5
addon's frontends/fcitx5/src/daemon_session.cpp has their twins (FIELD_STATE_KINDS,
COMPOSITION_ENDING_KINDS, MAX_REPLAYED_KEYS); tests/integration/test_frontend_recovery.py runs both against a
restarted daemon and checks that each replays exactly this list, and that the C++ names match these.

A new session gets, in this order:

1. the latest message of each FIELD_STATE_MESSAGES type sent so far (answered or not, so that a
   password field stays secret), in this table's order, each type that was ever sent;
2. the keys of the composition in progress: every KeyEvent sent since the daemon's last answer that
   showed nothing (no preedit, no candidate window), answered or not, less those answered as not
   consumed, at most MAX_REPLAYED_KEYS of them; a COMPOSITION_ENDING_MESSAGES message ends the
   composition (none is replayed after it), and no key typed into a secret field (FocusIn's purpose)
   is kept at all;
3. then the message whose call found the session gone, sent as it was.

A replayed message that the new session refuses or answers late changes nothing of the list; one whose
call finds that session gone too abandons it (the message is not delivered) and keeps the list for the
next try.
"""

from .messages import Discard, FocusIn, FocusOut, Reset, SetInputMode, SurroundingText

# Messages whose latest value describes the field rather than an edit.
FIELD_STATE_MESSAGES = (FocusIn, SurroundingText, SetInputMode)
COMPOSITION_ENDING_MESSAGES = (FocusOut, Reset, Discard)
MAX_REPLAYED_KEYS = 500
