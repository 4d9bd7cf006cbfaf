"""frontends/ibus/clients.py: each IBus client's kind, and who writes a composition that ends other than by a key.
The real clients' behaviour behind the table is tested in tests/integration/test_real_window.py."""

from frontends.ibus.clients import DELIVERY, ClientKind, UndeliveredCommits, client_kind


def test_client_names_as_ibus_clients_give_them():
    assert client_kind("gtk3-im:gedit") is ClientKind.GTK3
    assert client_kind("gtk-im:firefox") is ClientKind.GTK3  # GTK 2's module is GTK 3's code
    assert client_kind("gtk4-im:gnome-text-editor") is ClientKind.GTK4
    assert client_kind("QIBusInputContext") is ClientKind.QT
    for other in ("xim", "fake", "", "gtk5-im:x", "gtk4-imx"):
        assert client_kind(other) is ClientKind.OTHER


def test_every_kind_has_a_delivery_and_someone_always_writes_the_text():
    assert set(DELIVERY) == set(ClientKind)
    for kind, delivery in DELIVERY.items():
        # A focus out: COMMIT mode has the client or ibus-daemon write the preedit, or the engine keeps it.
        assert delivery.commit_mode != delivery.keep_on_focus_out, kind
    # The clients that commit their own copy on a reset: Qt always, GTK 3 on a click.
    assert [kind for kind, delivery in DELIVERY.items() if delivery.write_on_reset] == [ClientKind.GTK4]


def test_undelivered_text_is_kept_per_context_joined_and_taken_once():
    kept = UndeliveredCommits()
    kept.keep("/ic/1", "東京")
    kept.keep("/ic/2", "")
    kept.keep("/ic/1", "へ")
    assert kept.take("/ic/2") == ""
    assert kept.take("/ic/1") == "東京へ"
    assert kept.take("/ic/1") == ""


def test_the_oldest_contexts_text_goes_first_past_the_limit():
    kept = UndeliveredCommits(limit=2)
    for context in ("/ic/1", "/ic/2", "/ic/3"):
        kept.keep(context, context[-1])
    kept.keep("/ic/2", "b")  # kept again: now the newest
    kept.keep("/ic/4", "4")
    assert [kept.take(context) for context in ("/ic/1", "/ic/2", "/ic/3", "/ic/4")] == ["", "2b", "", "4"]
