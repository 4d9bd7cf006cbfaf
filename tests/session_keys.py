"""Keys pressed into an InputSession by name, for the session tests."""

from daemon.keys import keyval_of


def press(session, *names, modifiers=0):
    """Each key in turn; the Output of the last."""
    out = None
    for name in names:
        out = session.handle_key(keyval_of(name), modifiers)
    return out


def type_text(session, text):
    return press(session, *text)
