// The addon inside fcitx5 itself, without a display or the fcitx5 binary: fcitx's in-process test
// frontend types "kyouhaiitenki", Space and Return into an input context while the addon talks to
// the tsuzuri-daemon on the session bus ($DBUS_SESSION_BUS_ADDRESS), and the commit must be
// 今日はいい天気; then the status area's input-mode menu switches to katakana ("ka" shows カ, the
// panel's label ア, the tray's icon fcitx-tsuzuri-katakana). Exits 0 on success; otherwise 1, with what was expected and what was seen.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fcitx-utils/event.h>
#include <fcitx-utils/eventdispatcher.h>
#include <fcitx-utils/key.h>
#include <fcitx-utils/standardpath.h>
#include <fcitx-utils/testing.h>
#include <fcitx/action.h>
#include <fcitx/addonmanager.h>
#include <fcitx/event.h>
#include <fcitx/inputcontext.h>
#include <fcitx/inputcontextmanager.h>
#include <fcitx/inputmethodengine.h>
#include <fcitx/inputmethodgroup.h>
#include <fcitx/inputmethodmanager.h>
#include <fcitx/inputpanel.h>
#include <fcitx/instance.h>
#include <fcitx/statusarea.h>
#include <fcitx/userinterfacemanager.h>

#include "testfrontend_public.h"

namespace {

constexpr uint64_t POLL_USEC = 10'000;
// A conversion can answer after the addon's key timeout; the addon then draws it when it comes.
constexpr uint64_t EXPECTATION_DEADLINE_USEC = 5'000'000;

class Scenario {
public:
    explicit Scenario(fcitx::Instance &instance) : instance_(instance) {
        // Recorded here rather than with the test frontend's pushCommitExpectation, which aborts on
        // a wrong commit and says nothing about a missing one.
        commitWatcher_ = instance_.watchEvent(
            fcitx::EventType::InputContextCommitString, fcitx::EventWatcherPhase::PreInputMethod,
            [this](fcitx::Event &event) { commits_.push_back(static_cast<fcitx::CommitStringEvent &>(event).text()); });
    }

    void start() {
        if (!instance_.addonManager().addon("tsuzuri", true)) {
            return fail("the tsuzuri addon did not load (it needs a session bus; see fcitx's log above)");
        }
        auto group = instance_.inputMethodManager().currentGroup();
        group.inputMethodList().clear();
        group.inputMethodList().push_back(fcitx::InputMethodGroupItem("keyboard-us"));
        group.inputMethodList().push_back(fcitx::InputMethodGroupItem("tsuzuri"));
        group.setDefaultInputMethod("");
        instance_.inputMethodManager().setGroup(group);

        frontend_ = instance_.addonManager().addon("testfrontend", true);
        if (!frontend_) return fail("fcitx's testfrontend addon did not load");
        inputContext_ = frontend_->call<fcitx::ITestFrontend::createInputContext>("tsuzuri-addon-test");
        press("Control+space");  // the default trigger: from keyboard-us to tsuzuri
        if (instance_.inputMethod(inputContext()) != "tsuzuri") {
            return fail("the trigger key did not switch to tsuzuri (current: " + instance_.inputMethod(inputContext()) + ")");
        }

        for (char letter : std::string("kyouhaiitenki")) press(std::string(1, letter));
        expect("preedit きょうはいいてんき", [this] { return preedit() == "きょうはいいてんき"; }, [this] {
            press("space");
            expect("preedit 今日はいい天気", [this] { return preedit() == "今日はいい天気"; }, [this] {
                press("Return");
                expect("the single commit 今日はいい天気",
                       [this] { return commits_ == std::vector<std::string>{"今日はいい天気"} && preedit().empty(); },
                       [this] { switchToKatakana(); });
            });
        });
    }

    int exitCode() const { return exitCode_; }

    void switchToKatakana() {
        if (modeLabel() != "あ") return fail("the panel label あ, not 「" + modeLabel() + "」");
        if (instance_.inputMethodIcon(inputContext()) != "fcitx-tsuzuri-hiragana") {
            return fail("the tray icon fcitx-tsuzuri-hiragana, not " + instance_.inputMethodIcon(inputContext()));
        }
        auto *menu = instance_.userInterfaceManager().lookupAction("tsuzuri-input-mode");
        auto shown = inputContext()->statusArea().allActions();
        if (!menu || std::find(shown.begin(), shown.end(), menu) == shown.end()) {
            return fail("the input-mode menu in the status area");
        }
        instance_.userInterfaceManager().lookupAction("tsuzuri-mode-katakana")->activate(inputContext());
        press("k");
        press("a");
        expect("preedit カ, the label ア and the tray icon fcitx-tsuzuri-katakana",
               [this] {
                   return preedit() == "カ" && modeLabel() == "ア" &&
                          instance_.inputMethodIcon(inputContext()) == "fcitx-tsuzuri-katakana";
               },
               [this] { finish(0); });
    }

private:
    fcitx::InputContext *inputContext() { return instance_.inputContextManager().findByUUID(inputContext_); }

    std::string modeLabel() {
        auto *inputContext = this->inputContext();
        const auto *entry = instance_.inputMethodEntry(inputContext);
        return entry ? instance_.inputMethodEngine(inputContext)->subModeLabel(*entry, *inputContext) : "";
    }

    std::string preedit() {
        auto *inputContext = this->inputContext();
        return inputContext ? inputContext->inputPanel().preedit().toString() : "";
    }

    void press(const std::string &key) {
        frontend_->call<fcitx::ITestFrontend::keyEvent>(inputContext_, fcitx::Key(key), false);
        frontend_->call<fcitx::ITestFrontend::keyEvent>(inputContext_, fcitx::Key(key), true);
    }

    // Runs `then` once `holds()` is true, letting the event loop run in between so that late
    // daemon answers are drawn; fails with `what` after the deadline.
    void expect(std::string what, std::function<bool()> holds, std::function<void()> then) {
        pending_ = Expectation{std::move(what), std::move(holds), std::move(then),
                               fcitx::now(CLOCK_MONOTONIC) + EXPECTATION_DEADLINE_USEC};
        if (poll_) return;
        poll_ = instance_.eventLoop().addTimeEvent(
            CLOCK_MONOTONIC, fcitx::now(CLOCK_MONOTONIC), POLL_USEC, [this](fcitx::EventSourceTime *source, uint64_t now) {
                source->setNextInterval(POLL_USEC);
                source->setOneShot();
                if (!pending_) return true;
                // Taken out first: `then` and `fail` may set the next expectation.
                Expectation current = std::move(*pending_);
                pending_.reset();
                if (current.holds()) {
                    current.then();
                } else if (now > current.deadline) {
                    fail("expected " + current.what);
                } else {
                    pending_ = std::move(current);
                }
                return true;
            });
    }

    void fail(const std::string &what) {
        std::cerr << "tsuzuri-addon-test: FAILED: " << what << "; preedit was 「" << preedit() << "」, commits were [";
        for (const auto &commit : commits_) std::cerr << "「" << commit << "」";
        std::cerr << "]" << std::endl;
        finish(1);
    }

    void finish(int exitCode) {
        exitCode_ = exitCode;
        instance_.exit();
    }

    fcitx::Instance &instance_;
    fcitx::AddonInstance *frontend_ = nullptr;
    fcitx::ICUUID inputContext_{};
    std::vector<std::string> commits_;
    std::unique_ptr<fcitx::HandlerTableEntry<fcitx::EventHandler>> commitWatcher_;
    struct Expectation {
        std::string what;
        std::function<bool()> holds;
        std::function<void()> then;
        uint64_t deadline;
    };
    std::optional<Expectation> pending_;
    std::unique_ptr<fcitx::EventSourceTime> poll_;
    int exitCode_ = 1;
};

} // namespace

int main() {
    // Our libtsuzuri.so and test/{addon,inputmethod}/tsuzuri.conf come from the build directory;
    // fcitx appends its own addon directory and its testing addons' data.
    fcitx::setupTestingEnvironment(TESTING_BINARY_DIR, {TESTING_BINARY_DIR},
                                   {TESTING_BINARY_DIR "/test", fcitx::StandardPath::fcitxPath("pkgdatadir")});
    char program[] = "tsuzuri-addon-test", disable[] = "--disable=all", enable[] = "--enable=testim,testfrontend,tsuzuri";
    char *argv[] = {program, disable, enable};
    fcitx::Instance instance(FCITX_ARRAY_SIZE(argv), argv);
    instance.addonManager().registerDefaultLoader(nullptr);
    Scenario scenario(instance);
    fcitx::EventDispatcher dispatcher;
    dispatcher.attach(&instance.eventLoop());
    dispatcher.schedule([&scenario] { scenario.start(); });
    instance.exec();
    if (scenario.exitCode() == 0) std::cout << "tsuzuri-addon-test: committed 今日はいい天気" << std::endl;
    return scenario.exitCode();
}
