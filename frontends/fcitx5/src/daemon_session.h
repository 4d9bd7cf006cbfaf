// One tsuzuri-daemon input session, reached over the session bus (frontends/ibus/daemon_session.py
// is its IBus twin). `send` waits for the daemon's answer up to a timeout, because fcitx must know
// whether a key is taken before keyEvent returns. Calls go to the unique name of the daemon process
// that holds the session. When that process is gone, the next call fails at once, creates a new
// session (which D-Bus-activates a daemon if one is installed) and replays into it what
// ime_protocol/recovery.py lists (the field's purpose, surrounding text and input mode, then every key of
// the composition in progress, answered or not), as the IBus shim does, so the user's unfinished typing survives.
//
// An answer that comes after the timeout (a first conversion that loads the dictionary) is not
// lost: the bus hands the reply its call no longer waits for to every filter, and the session whose
// key or candidate it answers (by request id, unique across sessions) takes it. Such answers and
// OutputChanged signals (live conversion) go to `onLateOutput`.
#ifndef TSUZURI_FCITX5_DAEMON_SESSION_H
#define TSUZURI_FCITX5_DAEMON_SESSION_H

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fcitx-utils/dbus/bus.h>

#include "protocol.h"

namespace tsuzuri {

enum class SendResult { Answered, TimedOut, Unavailable };

class DaemonSession {
public:
    DaemonSession(fcitx::dbus::Bus &bus, std::function<void(const Output &)> onLateOutput);
    ~DaemonSession();
    DaemonSession(const DaemonSession &) = delete;
    DaemonSession &operator=(const DaemonSession &) = delete;

    // Fills `output` when the result is Answered.
    SendResult send(const Request &request, uint64_t timeoutUsec, Output &output);
    // The composition went into the field some other way (the daemon was unreachable): none is replayed.
    void abandonComposition() { compositionKeys_.clear(); }

private:
    bool open();
    // The unique name owning the daemon's bus name, as the bus daemon says ("" if none).
    std::string nameOwner();
    // Whether a reply is the daemon's (or the bus daemon's, or a local timeout), not another program's.
    bool fromDaemon(const fcitx::dbus::Message &reply) const;
    void forgetSession();
    SendResult call(const Request &request, uint64_t timeoutUsec, Output &output, bool &sessionLost);
    void trackComposition(const Request &request, const Output &output);
    void forgetKey(uint64_t requestId);
    bool secretField() const;
    bool takeLateReply(fcitx::dbus::Message &reply);

    fcitx::dbus::Bus &bus_;
    std::function<void(const Output &)> onLateOutput_;
    std::string path_;  // empty: no session
    std::string daemon_;  // the unique bus name of the daemon process that holds the session
    std::unique_ptr<fcitx::dbus::Slot> outputChangedSlot_;
    std::map<RequestKind, Request> fieldState_;  // the latest of each FIELD_STATE_KINDS kind
    std::vector<Request> compositionKeys_;  // keys sent since the preedit was last empty, answered or not
    std::map<uint64_t, Request> lateRequests_;  // by request id: timed out, answer still to come
    std::unique_ptr<fcitx::dbus::Slot> lateReplySlot_;
};

} // namespace tsuzuri

#endif
