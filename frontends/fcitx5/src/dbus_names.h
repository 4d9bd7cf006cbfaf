// The daemon's names on the bus: ime_protocol/dbus_names.py.
#ifndef TSUZURI_FCITX5_DBUS_NAMES_H
#define TSUZURI_FCITX5_DBUS_NAMES_H

namespace tsuzuri {

inline constexpr const char *BUS_DAEMON = "org.freedesktop.DBus";  // the bus itself, whom no client can pose as
inline constexpr const char *BUS_NAME = "org.tsuzuri.Tsuzuri1";
inline constexpr const char *ROOT_PATH = "/org/tsuzuri/Tsuzuri1";
inline constexpr const char *ROOT_INTERFACE = "org.tsuzuri.Tsuzuri1";
inline constexpr const char *SESSION_INTERFACE = "org.tsuzuri.Tsuzuri1.Session";
inline constexpr const char *ERROR_UNKNOWN_SESSION = "org.tsuzuri.Tsuzuri1.Error.UnknownSession";

} // namespace tsuzuri

#endif
