// One tsuzuri-daemon input session, reached over the daemon's private channel (frontends/ibus/daemon_session.py
// is its IBus twin). The sessions live on a peer-to-peer connection to the daemon (daemon/private_channel.py), not
// on the session bus, where any program of the user may watch every call and answer one first: what is typed
// crosses no shared wire. `DaemonChannel` keeps that connection for all of the engine's sessions; its address is
// asked of the daemon on the session bus (which D-Bus-activates a daemon if one is installed) and taken only from
// the connection that owns the daemon's name, as the bus daemon says.
//
// `send` waits for the daemon's answer up to a timeout, because fcitx must know whether a key is taken before
// keyEvent returns. When the daemon is gone, its channel closes; the next call fails at once, connects to a new
// daemon's channel, creates a new session and replays into it what ime_protocol/recovery.py lists (the field's
// purpose, surrounding text and input mode, then every key of the composition in progress, answered or not), as
// the IBus shim does, so the user's unfinished typing survives.
//
// An answer that comes after the timeout (a first conversion that loads the dictionary) is not
// lost: the connection hands the reply its call no longer waits for to every filter, and the session whose
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
#include <fcitx-utils/event.h>

#include "protocol.h"

namespace tsuzuri {

enum class SendResult { Answered, TimedOut, Unavailable };

// The connection to the daemon's private channel that the sessions share, made again once it has closed.
class DaemonChannel {
public:
    DaemonChannel(fcitx::dbus::Bus &bus, fcitx::EventLoop &loop) : bus_(bus), loop_(loop) {}
    // The open connection, connecting first if there is none; nullptr if the daemon cannot be reached.
    std::shared_ptr<fcitx::dbus::Bus> connection();

private:
    // The unique name owning the daemon's bus name, as the bus daemon says ("" if none).
    std::string nameOwner();

    fcitx::dbus::Bus &bus_;  // the session bus: only asked where the channel is
    fcitx::EventLoop &loop_;
    std::shared_ptr<fcitx::dbus::Bus> connection_;
};

class DaemonSession {
public:
    DaemonSession(DaemonChannel &channel, std::function<void(const Output &)> onLateOutput);
    ~DaemonSession();
    DaemonSession(const DaemonSession &) = delete;
    DaemonSession &operator=(const DaemonSession &) = delete;

    // Fills `output` when the result is Answered.
    SendResult send(const Request &request, uint64_t timeoutUsec, Output &output);
    // The composition went into the field some other way (the daemon was unreachable): none is replayed.
    void abandonComposition() { compositionKeys_.clear(); }
    // Whether the answer to this timed-out request may still come (none does once its session is gone).
    bool awaitsAnswer(uint64_t requestId) const { return lateRequests_.count(requestId) > 0; }

private:
    bool open();
    void forgetSession();
    SendResult call(const Request &request, uint64_t timeoutUsec, Output &output, bool &sessionLost);
    void trackComposition(const Request &request, const Output &output);
    void forgetKey(uint64_t requestId);
    bool secretField() const;
    // A late answer to one of this session's calls, or its OutputChanged signal: handed to onLateOutput.
    bool takeLateOutput(fcitx::dbus::Message &message);

    DaemonChannel &channel_;
    std::function<void(const Output &)> onLateOutput_;
    std::string path_;  // empty: no session
    std::shared_ptr<fcitx::dbus::Bus> connection_;  // the channel's connection the session lives on
    std::unique_ptr<fcitx::dbus::Slot> lateOutputSlot_;  // on connection_, destroyed before it
    std::map<RequestKind, Request> fieldState_;  // the latest of each FIELD_STATE_KINDS kind
    std::vector<Request> compositionKeys_;  // keys sent since the preedit was last empty, answered or not
    std::map<uint64_t, Request> lateRequests_;  // by request id: timed out, answer still to come
};

} // namespace tsuzuri

#endif
