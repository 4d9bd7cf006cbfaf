// The addon's daemon session (src/daemon_session.cpp) on the line protocol of tests/ibus_session_driver.py,
// the IBus shim's twin, for tests/integration/test_frontend_recovery.py: the same commands, the same answers, on
// the bus at $DBUS_SESSION_BUS_ADDRESS.
//
//   focus_in PURPOSE (free_form or password)   surrounding xTEXT CURSOR ANCHOR   mode MODE   focus_out   reset
//   discard
//   key KEYVAL REQUEST_ID TIMEOUT_MS           each answered: answered CONSUMED xPREEDIT, timeout or unavailable
//   pump MS                                    runs the event loop (late answers): answered ok
#include <unistd.h>

#include <ctime>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fcitx-utils/dbus/bus.h>
#include <fcitx-utils/event.h>

#include "lines.h"
#include "../src/daemon_session.h"

namespace {

using tsuzuri::test::hex;
using tsuzuri::test::unhex;

constexpr uint64_t MESSAGE_TIMEOUT_USEC = 300'000;

bool request(const std::string &command, std::istringstream &args, tsuzuri::Request &request, uint64_t &timeoutUsec) {
    timeoutUsec = MESSAGE_TIMEOUT_USEC;
    std::string first;
    args >> first;
    if (command == "focus_in") {
        if (first != "free_form" && first != "password") return false;
        request = tsuzuri::focusIn(first == "password" ? tsuzuri::InputPurpose::Password
                                                       : tsuzuri::InputPurpose::FreeForm);
    } else if (command == "surrounding") {
        uint32_t cursor = 0, anchor = 0;
        args >> cursor >> anchor;
        request = tsuzuri::surroundingText(unhex(first), cursor, anchor);
    } else if (command == "mode") {
        request = tsuzuri::setInputMode(first);
    } else if (command == "focus_out") {
        request = tsuzuri::focusOut();
    } else if (command == "reset") {
        request = tsuzuri::reset();
    } else if (command == "discard") {
        request = tsuzuri::discard();
    } else if (command == "key") {
        uint64_t requestId = 0, timeoutMs = 0;
        args >> requestId >> timeoutMs;
        request = tsuzuri::keyEvent(std::stoul(first), 0, 0, requestId);
        timeoutUsec = timeoutMs * 1000;
    } else {
        return false;
    }
    return true;
}

// Runs each command line as it comes; the event loop runs throughout, as fcitx's does (an sd-bus connection
// attached to a loop that exits is closed), and "pump" only holds back its answer while it runs.
class Driver {
public:
    Driver()
        : bus_(fcitx::dbus::BusType::Session), channel_(bus_, loop_), session_(channel_, [](const tsuzuri::Output &) {}),
          input_(loop_.addIOEvent(STDIN_FILENO, fcitx::IOEventFlag::In,
                                  [this](fcitx::EventSource *, int fd, fcitx::IOEventFlags) { return read(fd); })) {
        bus_.attachEventLoop(&loop_);
    }
    int exec() { return loop_.exec() ? 0 : 1; }

private:
    bool read(int fd) {
        char buffer[4096];
        auto size = ::read(fd, buffer, sizeof buffer);
        if (size <= 0) {
            loop_.exit();
            return true;
        }
        pending_.append(buffer, size);
        for (size_t end; (end = pending_.find('\n')) != std::string::npos;) {
            auto line = pending_.substr(0, end);
            pending_.erase(0, end + 1);
            run(line);
        }
        return true;
    }

    void run(const std::string &line) {
        std::istringstream args(line);
        std::string command;
        args >> command;
        if (command == "pump") {
            uint64_t milliseconds = 0;
            args >> milliseconds;
            pump_ = loop_.addTimeEvent(CLOCK_MONOTONIC, fcitx::now(CLOCK_MONOTONIC) + milliseconds * 1000, 0,
                                       [](fcitx::EventSourceTime *, uint64_t) {
                                           std::cout << "answered ok" << std::endl;
                                           return true;
                                       });
            return;
        }
        tsuzuri::Request message;
        uint64_t timeoutUsec = 0;
        if (!request(command, args, message, timeoutUsec)) {
            std::cout << "unknown command " << command << std::endl;
            return;
        }
        tsuzuri::Output output;
        switch (session_.send(message, timeoutUsec, output)) {
        case tsuzuri::SendResult::Answered: {
            std::string preedit;
            for (const auto &segment : output.preedit.segments) preedit += segment.text;
            std::cout << "answered " << output.consumed << " " << hex(preedit) << std::endl;
            break;
        }
        case tsuzuri::SendResult::TimedOut: std::cout << "timeout" << std::endl; break;
        case tsuzuri::SendResult::Unavailable: std::cout << "unavailable" << std::endl; break;
        }
    }

    fcitx::EventLoop loop_;
    fcitx::dbus::Bus bus_;
    tsuzuri::DaemonChannel channel_;
    tsuzuri::DaemonSession session_;
    std::unique_ptr<fcitx::EventSource> input_;
    std::unique_ptr<fcitx::EventSourceTime> pump_;
    std::string pending_;
};

} // namespace

int main() { return Driver().exec(); }
