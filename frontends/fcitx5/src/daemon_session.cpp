#include "daemon_session.h"

#include <set>

#include <fcitx-utils/dbus/matchrule.h>
#include <fcitx-utils/dbus/message.h>
#include <fcitx-utils/log.h>

namespace tsuzuri {
namespace {

// ime_protocol/dbus_names.py
const char *const BUS_NAME = "org.tsuzuri.Tsuzuri1";
const char *const ROOT_PATH = "/org/tsuzuri/Tsuzuri1";
const char *const ROOT_INTERFACE = "org.tsuzuri.Tsuzuri1";
const char *const SESSION_INTERFACE = "org.tsuzuri.Tsuzuri1.Session";
const char *const ERROR_UNKNOWN_SESSION = "org.tsuzuri.Tsuzuri1.Error.UnknownSession";

// First contact may start the daemon by D-Bus activation; it takes its bus name before loading anything.
constexpr uint64_t CONNECT_TIMEOUT_USEC = 3'000'000;
constexpr size_t MAX_REPLAYED_KEYS = 500;

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

DaemonSession::DaemonSession(fcitx::dbus::Bus &bus, std::function<void(const Output &)> onLateOutput)
    : bus_(bus), onLateOutput_(std::move(onLateOutput)),
      lateReplySlot_(bus_.addFilter([this](fcitx::dbus::Message &message) { return takeLateReply(message); })) {}

DaemonSession::~DaemonSession() {
    if (path_.empty()) return;
    auto close = bus_.createMethodCall(BUS_NAME, path_.c_str(), SESSION_INTERFACE, "Close");
    close.send();  // no need to wait: the daemon also reaps sessions whose client is gone
}

SendResult DaemonSession::send(const Request &request, uint64_t timeoutUsec, Output &output) {
    if (request.kind == RequestKind::FocusIn || request.kind == RequestKind::SurroundingText) {
        // Kept even if this call fails: a password field must stay secret in whatever session comes next.
        fieldState_[request.kind] = request;
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
    auto create = bus_.createMethodCall(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "CreateSession");
    auto reply = create.call(CONNECT_TIMEOUT_USEC);
    fcitx::dbus::ObjectPath path;
    if (reply.isError() || !(reply >> path)) {
        FCITX_WARN() << "tsuzuri: cannot create a daemon session: " << reply.errorName() << " "
                     << reply.errorMessage();
        return false;
    }
    path_ = path.path();
    outputChangedSlot_ = bus_.addMatch(fcitx::dbus::MatchRule(BUS_NAME, path_, SESSION_INTERFACE, "OutputChanged"),
                                       [this](fcitx::dbus::Message &message) {
                                           if (auto output = outputOf(message)) onLateOutput_(*output);
                                           return true;
                                       });
    std::vector<Request> replay;
    for (const auto &[kind, request] : fieldState_) replay.push_back(request);
    replay.insert(replay.end(), compositionKeys_.begin(), compositionKeys_.end());
    for (const auto &request : replay) {
        Output ignored;
        bool sessionLost = false;
        if (call(request, CONNECT_TIMEOUT_USEC, ignored, sessionLost) != SendResult::Answered && sessionLost) {
            forgetSession();
            return false;
        }
    }
    return true;
}

void DaemonSession::forgetSession() {
    path_.clear();
    outputChangedSlot_.reset();
    lateRequests_.clear();  // their answers died with the session
}

SendResult DaemonSession::call(const Request &request, uint64_t timeoutUsec, Output &output, bool &sessionLost) {
    auto message = bus_.createMethodCall(BUS_NAME, path_.c_str(), SESSION_INTERFACE, "Send");
    message << request.bytes;
    auto reply = message.call(timeoutUsec);
    if (reply.isError()) {
        auto error = reply.errorName();
        sessionLost = SESSION_LOST_ERRORS.count(error) > 0;
        if (TIMEOUT_ERRORS.count(error) > 0) {
            if (request.requestId != 0) lateRequests_.emplace(request.requestId, request);
            return SendResult::TimedOut;
        }
        FCITX_WARN() << "tsuzuri: daemon refused a message: " << error << " " << reply.errorMessage();
        return SendResult::Unavailable;
    }
    auto decoded = outputOf(reply);
    if (!decoded) {
        FCITX_WARN() << "tsuzuri: the daemon's answer is not an Output of protocol version 1";
        return SendResult::Unavailable;
    }
    output = std::move(*decoded);
    trackComposition(request, output);
    return SendResult::Answered;
}

bool DaemonSession::takeLateReply(fcitx::dbus::Message &reply) {
    if (lateRequests_.empty() || reply.type() != fcitx::dbus::MessageType::Reply || reply.signature() != "ay") {
        return false;
    }
    reply.rewind();  // other sessions' filters read the same message
    auto output = outputOf(reply);
    auto late = output ? lateRequests_.find(output->requestId) : lateRequests_.end();
    if (late == lateRequests_.end()) return false;
    trackComposition(late->second, *output);
    lateRequests_.erase(late);
    onLateOutput_(*output);
    return true;
}

void DaemonSession::trackComposition(const Request &request, const Output &output) {
    auto focus = fieldState_.find(RequestKind::FocusIn);
    // Keep no copy of what is typed into a password field.
    bool secret = focus != fieldState_.end() && focus->second.secretField;
    if ((output.preedit.segments.empty() && !output.candidates) || secret) {
        compositionKeys_.clear();
    } else if (request.kind == RequestKind::Key && output.consumed && compositionKeys_.size() < MAX_REPLAYED_KEYS) {
        compositionKeys_.push_back(request);
    }
}

} // namespace tsuzuri
