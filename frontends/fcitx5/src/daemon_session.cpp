#include "daemon_session.h"

#include "dbus_names.h"

#include <algorithm>
#include <iterator>
#include <set>

#include <fcitx-utils/dbus/message.h>
#include <fcitx-utils/log.h>

namespace tsuzuri {
namespace {

// First contact may start the daemon by D-Bus activation; it takes its bus name before loading anything.
constexpr uint64_t CONNECT_TIMEOUT_USEC = 3'000'000;

// ime_protocol/recovery.py: what a new session is given, in FIELD_STATE_MESSAGES's order (the latest of each
// kind sent), then the composition's keys, which COMPOSITION_ENDING_MESSAGES drop;
// tests/integration/test_frontend_recovery.py checks that these match it and that both frontends replay the
// same messages.
constexpr RequestKind FIELD_STATE_KINDS[] = {RequestKind::FocusIn, RequestKind::SurroundingText,
                                             RequestKind::SetInputMode};
constexpr RequestKind COMPOSITION_ENDING_KINDS[] = {RequestKind::FocusOut, RequestKind::Reset, RequestKind::Discard};
constexpr size_t MAX_REPLAYED_KEYS = 500;

template <size_t N>
bool isOneOf(RequestKind kind, const RequestKind (&kinds)[N]) {
    return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds);
}

// The D-Bus errors that mean "this session no longer exists", as opposed to a bad or slow call.
const std::set<std::string> SESSION_LOST_ERRORS = {
    ERROR_UNKNOWN_SESSION, "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.NoReply"};
// What sd-bus and libdbus report when the caller's own timeout expires.
const std::set<std::string> TIMEOUT_ERRORS = {"org.freedesktop.DBus.Error.Timeout",
                                              "org.freedesktop.DBus.Error.TimedOut"};

std::optional<Output> outputOf(fcitx::dbus::Message &message) {
    std::vector<uint8_t> bytes;
    message >> bytes;
    if (!message) return std::nullopt;
    return decodeOutput(bytes);
}

} // namespace

std::shared_ptr<fcitx::dbus::Bus> DaemonChannel::connection() {
    if (connection_ && connection_->isOpen()) return connection_;
    connection_.reset();
    // Addressed to the well-known name, which D-Bus-activates the daemon if it is not running; whoever answered
    // must then own that name: any program of the user may watch the calls on the session bus and answer first.
    auto ask = bus_.createMethodCall(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "GetChannelAddress");
    auto reply = ask.call(CONNECT_TIMEOUT_USEC);
    std::string address;
    if (reply.isError() || !(reply >> address)) {
        FCITX_WARN() << "tsuzuri: cannot reach the daemon: " << reply.errorName() << " " << reply.errorMessage();
        return nullptr;
    }
    if (reply.sender() != nameOwner()) {
        FCITX_WARN() << "tsuzuri: refused a channel offered by " << reply.sender() << ", not the daemon";
        return nullptr;
    }
    try {
        connection_ = std::make_shared<fcitx::dbus::Bus>(address);
    } catch (const std::exception &error) {
        FCITX_WARN() << "tsuzuri: cannot connect to the daemon's channel: " << error.what();
        return nullptr;
    }
    connection_->attachEventLoop(&loop_);
    return connection_;
}

std::string DaemonChannel::nameOwner() {
    auto ask = bus_.createMethodCall(BUS_DAEMON, "/org/freedesktop/DBus", BUS_DAEMON, "GetNameOwner");
    ask << std::string(BUS_NAME);
    auto reply = ask.call(CONNECT_TIMEOUT_USEC);
    std::string owner;
    if (reply.isError() || reply.sender() != BUS_DAEMON || !(reply >> owner)) return {};
    return owner;
}

DaemonSession::DaemonSession(DaemonChannel &channel, std::function<void(const Output &)> onLateOutput)
    : channel_(channel), onLateOutput_(std::move(onLateOutput)) {}

DaemonSession::~DaemonSession() {
    if (path_.empty() || !connection_->isOpen()) return;
    auto close = connection_->createMethodCall(BUS_NAME, path_.c_str(), SESSION_INTERFACE, "Close");
    close.send();  // no need to wait: the daemon also reaps sessions whose client is gone
    forgetSession();
}

SendResult DaemonSession::send(const Request &request, uint64_t timeoutUsec, Output &output) {
    if (isOneOf(request.kind, FIELD_STATE_KINDS)) {
        // Kept even if this call fails: a password field must stay secret in whatever session comes next.
        fieldState_[request.kind] = request;
    }
    if (isOneOf(request.kind, COMPOSITION_ENDING_KINDS)) {
        // The composition ends here, answered or not: a restarted daemon must not bring it back elsewhere.
        compositionKeys_.clear();
    }
    if (path_.empty() && !open()) return SendResult::Unavailable;
    bool sessionLost = false;
    auto result = call(request, timeoutUsec, output, sessionLost);
    if (!sessionLost) return result;
    forgetSession();
    if (!open()) return SendResult::Unavailable;
    return call(request, timeoutUsec, output, sessionLost);
}

bool DaemonSession::open() {
    auto connection = channel_.connection();
    if (!connection) return false;
    // Nobody but the daemon is on the channel: whoever answers is it.
    auto create = connection->createMethodCall(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "CreateSession");
    auto reply = create.call(CONNECT_TIMEOUT_USEC);
    fcitx::dbus::ObjectPath path;
    if (reply.isError() || !(reply >> path)) {
        FCITX_WARN() << "tsuzuri: cannot create a daemon session: " << reply.errorName() << " "
                     << reply.errorMessage();
        return false;
    }
    path_ = path.path();
    connection_ = std::move(connection);
    lateOutputSlot_ = connection_->addFilter([this](fcitx::dbus::Message &message) { return takeLateOutput(message); });
    std::vector<Request> replay;
    for (auto kind : FIELD_STATE_KINDS) {
        auto state = fieldState_.find(kind);
        if (state != fieldState_.end()) replay.push_back(state->second);
    }
    const auto keys = std::move(compositionKeys_);
    compositionKeys_.clear();  // the replayed keys are tracked again as they are sent
    replay.insert(replay.end(), keys.begin(), keys.end());
    for (const auto &request : replay) {
        Output ignored;
        bool sessionLost = false;
        if (call(request, CONNECT_TIMEOUT_USEC, ignored, sessionLost) != SendResult::Answered && sessionLost) {
            forgetSession();
            compositionKeys_ = keys;  // for the next try
            return false;
        }
    }
    return true;
}

void DaemonSession::forgetSession() {
    path_.clear();
    lateOutputSlot_.reset();  // before the connection it is on
    connection_.reset();
    lateRequests_.clear();  // their answers died with the session
}

SendResult DaemonSession::call(const Request &request, uint64_t timeoutUsec, Output &output, bool &sessionLost) {
    auto message = connection_->createMethodCall(BUS_NAME, path_.c_str(), SESSION_INTERFACE, "Send");
    message << request.bytes;
    // A key counts as part of the composition from the moment it is sent: one whose answer does not come
    // in time is then replayed with the rest if the session turns out to be gone.
    bool tracked = request.kind == RequestKind::Key && !secretField() && compositionKeys_.size() < MAX_REPLAYED_KEYS;
    if (tracked) compositionKeys_.push_back(request);
    auto reply = message.call(timeoutUsec);
    if (reply.isError()) {
        auto error = reply.errorName();
        // The daemon said so, or its channel closed (the daemon is gone).
        sessionLost = SESSION_LOST_ERRORS.count(error) > 0 || !connection_->isOpen();
        if (TIMEOUT_ERRORS.count(error) > 0) {
            if (request.requestId != 0) lateRequests_.emplace(request.requestId, request);
            return SendResult::TimedOut;
        }
        if (tracked) forgetKey(request.requestId);  // never reached a session: the caller resends or drops it
        if (!sessionLost) {
            FCITX_WARN() << "tsuzuri: daemon refused a message: " << error << " " << reply.errorMessage();
        }
        return SendResult::Unavailable;
    }
    auto decoded = outputOf(reply);
    if (!decoded) {
        FCITX_WARN() << "tsuzuri: the daemon's answer is not an Output of protocol version 2";
        return SendResult::Unavailable;
    }
    output = std::move(*decoded);
    trackComposition(request, output);
    return SendResult::Answered;
}

bool DaemonSession::takeLateOutput(fcitx::dbus::Message &message) {
    if (message.type() == fcitx::dbus::MessageType::Signal) {
        if (message.member() != "OutputChanged" || message.path() != path_) return false;
        if (auto output = outputOf(message)) onLateOutput_(*output);
        return true;
    }
    if (lateRequests_.empty() || message.type() != fcitx::dbus::MessageType::Reply || message.signature() != "ay") {
        return false;
    }
    message.rewind();  // other sessions' filters read the same message
    auto output = outputOf(message);
    auto late = output ? lateRequests_.find(output->requestId) : lateRequests_.end();
    if (late == lateRequests_.end()) return false;
    trackComposition(late->second, *output);
    lateRequests_.erase(late);
    onLateOutput_(*output);
    return true;
}

bool DaemonSession::secretField() const {
    auto focus = fieldState_.find(RequestKind::FocusIn);
    return focus != fieldState_.end() && focus->second.secretField;
}

void DaemonSession::forgetKey(uint64_t requestId) {
    auto key = std::find_if(compositionKeys_.begin(), compositionKeys_.end(),
                            [requestId](const Request &sent) { return sent.requestId == requestId; });
    if (key != compositionKeys_.end()) compositionKeys_.erase(key);
}

void DaemonSession::trackComposition(const Request &request, const Output &output) {
    // Keep no copy of what is typed into a password field.
    if ((output.preedit.segments.empty() && !output.candidates) || secretField()) {
        compositionKeys_.clear();
    } else if (request.kind == RequestKind::Key && !output.consumed) {
        forgetKey(request.requestId);  // the application had it: not part of the composition
    }
}

} // namespace tsuzuri
