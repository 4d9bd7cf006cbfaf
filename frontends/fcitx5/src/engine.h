// Tsuzuri's fcitx5 input method engine: forwards input to tsuzuri-daemon and draws what it answers.
// It holds no input-method logic: every key goes to the input context's daemon session in a
// synchronous call, and the daemon's Output decides whether the key is taken and what the preedit,
// candidate window, auxiliary text and commit are. Without a daemon, keys reach the application.
#ifndef TSUZURI_FCITX5_ENGINE_H
#define TSUZURI_FCITX5_ENGINE_H

#include <memory>
#include <vector>

#include <fcitx-utils/dbus/bus.h>
#include <fcitx/addonfactory.h>
#include <fcitx/addonmanager.h>
#include <fcitx/inputcontextproperty.h>
#include <fcitx/inputmethodengine.h>
#include <fcitx/instance.h>

#include "daemon_session.h"

namespace tsuzuri {

// Request ids, unique across input contexts: a late answer on the shared bus finds its session by them.
class RequestIds {
public:
    uint64_t next();

private:
    uint64_t last_ = 0;
};

// One input context's daemon session and what was last drawn for it.
class InputContextState : public fcitx::InputContextProperty {
public:
    InputContextState(fcitx::dbus::Bus &bus, RequestIds &requestIds, fcitx::InputContext *inputContext);

    void keyEvent(fcitx::KeyEvent &event);
    // Sends a key the candidate window's page buttons stand for.
    void sendKey(fcitx::KeySym key);
    void selectCandidate(uint32_t index);
    void focusIn();
    void sendSurroundingText();
    void send(const Request &request);
    // The field lost focus (`focusOut`) or this input method: the daemon ends the composition.
    void endComposition(bool focusOut);

private:
    bool sendKeyRequest(const fcitx::Key &key);
    uint64_t nextRequestId();  // also remembered as the last one, whose answer is drawn when it comes late
    void lateOutput(const Output &output);
    void render(const Output &output);
    void renderNothing();
    void renderPreedit(const Preedit &preedit);
    void renderCandidates(const std::optional<CandidateWindow> &window);

    fcitx::InputContext *inputContext_;
    RequestIds &requestIds_;
    DaemonSession session_;
    uint64_t lastRequestId_ = 0;
    bool preeditShown_ = false;
    bool clientPreeditShown_ = false;  // drawn in the application, which fcitx commits on focus out
};

class TsuzuriEngine final : public fcitx::InputMethodEngineV2 {
public:
    explicit TsuzuriEngine(fcitx::Instance *instance);

    void keyEvent(const fcitx::InputMethodEntry &entry, fcitx::KeyEvent &event) override;
    void activate(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;
    void deactivate(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;
    void reset(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;

private:
    InputContextState *stateOf(fcitx::InputContext *inputContext);
    bool isCurrentEngine(fcitx::InputContext *inputContext);

    fcitx::Instance *instance_;
    // A connection of its own: fcitx's dbus addon depends on the keyboard addon and is not always loaded.
    fcitx::dbus::Bus bus_;
    RequestIds requestIds_;
    fcitx::FactoryFor<InputContextState> stateFactory_;
    std::vector<std::unique_ptr<fcitx::HandlerTableEntry<fcitx::EventHandler>>> eventWatchers_;
};

class TsuzuriEngineFactory : public fcitx::AddonFactory {
    fcitx::AddonInstance *create(fcitx::AddonManager *manager) override;
};

} // namespace tsuzuri

#endif
