// Tsuzuri's fcitx5 input method engine: forwards input to tsuzuri-daemon and draws what it answers.
// It holds no input-method logic: every key goes to the input context's daemon session in a
// synchronous call, and the daemon's Output decides whether the key is taken and what the preedit,
// candidate window, auxiliary text and commit are. Without a daemon, keys reach the application.
#ifndef TSUZURI_FCITX5_ENGINE_H
#define TSUZURI_FCITX5_ENGINE_H

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fcitx-utils/dbus/bus.h>
#include <fcitx/action.h>
#include <fcitx/addonfactory.h>
#include <fcitx/addonmanager.h>
#include <fcitx/inputcontextproperty.h>
#include <fcitx/inputmethodengine.h>
#include <fcitx/instance.h>
#include <fcitx/menu.h>

#include "daemon_session.h"
#include "settings.h"

namespace tsuzuri {

// Request ids, unique across input contexts: a late answer on the shared bus finds its session by them.
class RequestIds {
public:
    uint64_t next();

private:
    uint64_t last_ = 0;
};

class InputContextState;

// One item of the input-mode menu (a radio item: checked when it is the field's mode).
class ModeAction : public fcitx::Action {
public:
    ModeAction(std::string mode, std::string label, std::function<InputContextState *(fcitx::InputContext *)> stateOf)
        : mode_(std::move(mode)), label_(std::move(label)), stateOf_(std::move(stateOf)) {
        setCheckable(true);
    }
    std::string shortText(fcitx::InputContext *) const override { return label_; }
    std::string icon(fcitx::InputContext *) const override { return {}; }
    bool isChecked(fcitx::InputContext *inputContext) const override;
    void activate(fcitx::InputContext *inputContext) override;

private:
    std::string mode_, label_;
    std::function<InputContextState *(fcitx::InputContext *)> stateOf_;
};

// The menu's title in the status area: the field's mode.
class ModeMenuAction : public fcitx::Action {
public:
    explicit ModeMenuAction(std::function<InputContextState *(fcitx::InputContext *)> stateOf)
        : stateOf_(std::move(stateOf)) {}
    std::string shortText(fcitx::InputContext *inputContext) const override;
    std::string icon(fcitx::InputContext *) const override { return {}; }

private:
    std::function<InputContextState *(fcitx::InputContext *)> stateOf_;
};

// One input context's daemon session and what was last drawn for it.
class InputContextState : public fcitx::InputContextProperty {
public:
    InputContextState(DaemonChannel &channel, RequestIds &requestIds, fcitx::InputContext *inputContext,
                      std::function<void(fcitx::InputContext *)> onModeChanged);
    // The daemon's input mode for this field, as its last answer said (ime_protocol INPUT_MODES).
    const std::string &mode() const { return mode_; }

    void keyEvent(fcitx::KeyEvent &event);
    // Sends a key the candidate window's page buttons stand for.
    void sendKey(fcitx::KeySym key);
    void selectCandidate(uint32_t index);
    void focusIn();
    void sendSurroundingText();
    void send(const Request &request);
    // The field lost focus (`focusOut`) or this input method: the daemon ends the composition.
    void endComposition(bool focusOut);
    // The application reset the field (GTK 4 on a click in it): the daemon commits what was shown.
    void reset();

private:
    // A key kept from the application until the daemon's late answer says whether the daemon took it.
    struct HeldKey {
        uint64_t requestId;
        fcitx::Key key;
        std::optional<bool> toApplication;  // empty until its answer comes
    };

    // `typed`: a key the application sent, which may be passed back to it; not a candidate window's button.
    bool sendKeyRequest(const fcitx::Key &key, bool typed);
    // Held keys whose answers died with a lost session: replayed into the new one (`toApplication` false) or, with
    // no daemon left, the application's. Then the keys at the front whose fate is known leave, in the order typed.
    void settleHeldKeys(bool toApplication);
    void releaseHeldKeys();
    // The client commits its own copy of the client preedit when it loses focus or resets (fcitx5-qt says so with
    // ClientUnfocusCommit); fcitx5-gtk commits nothing itself.
    bool clientCommitsItsPreedit() const;
    uint64_t nextRequestId();  // also remembered as the last one, whose answer is drawn when it comes late
    void lateOutput(const Output &output);
    // The Output's changes to the field's text: a deletion around the cursor, then the commit.
    void editText(const Output &output);
    void render(const Output &output);
    void renderNothing();
    void renderPreedit(const Preedit &preedit);
    void renderCandidates(const std::optional<CandidateWindow> &window);

    fcitx::InputContext *inputContext_;
    RequestIds &requestIds_;
    DaemonSession session_;
    uint64_t lastRequestId_ = 0;
    std::function<void(fcitx::InputContext *)> onModeChanged_;
    std::string mode_ = "hiragana";
    std::string preeditShown_;  // the preedit's text as drawn, in the application or the panel
    bool clientPreeditShown_ = false;  // drawn in the application, which fcitx commits on focus out
    std::deque<HeldKey> heldKeys_;  // in the order typed
};

class TsuzuriEngine final : public fcitx::InputMethodEngineV2 {
public:
    explicit TsuzuriEngine(fcitx::Instance *instance);

    void keyEvent(const fcitx::InputMethodEntry &entry, fcitx::KeyEvent &event) override;
    void activate(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;
    void deactivate(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;
    void reset(const fcitx::InputMethodEntry &entry, fcitx::InputContextEvent &event) override;
    std::string subMode(const fcitx::InputMethodEntry &entry, fcitx::InputContext &inputContext) override;
    std::string subModeLabelImpl(const fcitx::InputMethodEntry &entry, fcitx::InputContext &inputContext) override;
    // The tray shows the mode: fcitx-tsuzuri-<mode> (frontends/fcitx5/data/icons).
    std::string subModeIconImpl(const fcitx::InputMethodEntry &entry, fcitx::InputContext &inputContext) override;
    // fcitx5-configtool's page: read from the daemon when it opens, what changed written through it.
    const fcitx::Configuration *getConfig() const override;
    void setConfig(const fcitx::RawConfig &config) override;

private:
    InputContextState *stateOf(fcitx::InputContext *inputContext);
    bool isCurrentEngine(fcitx::InputContext *inputContext);

    fcitx::Instance *instance_;
    // A connection of its own: fcitx's dbus addon depends on the keyboard addon and is not always loaded.
    fcitx::dbus::Bus bus_;
    DaemonChannel channel_;  // every input context's session on one connection to the daemon
    RequestIds requestIds_;
    fcitx::FactoryFor<InputContextState> stateFactory_;
    std::vector<std::unique_ptr<fcitx::HandlerTableEntry<fcitx::EventHandler>>> eventWatchers_;
    // The status area's input-mode menu; registered as tsuzuri-input-mode and tsuzuri-mode-<mode>.
    ModeMenuAction modeMenuAction_;
    fcitx::Menu modeMenu_;
    std::vector<std::unique_ptr<ModeAction>> modeActions_;
    mutable DaemonSettings daemonSettings_;
    mutable SettingsPage settingsShown_;  // as the daemon said when the page last opened
};

class TsuzuriEngineFactory : public fcitx::AddonFactory {
    fcitx::AddonInstance *create(fcitx::AddonManager *manager) override;
};

} // namespace tsuzuri

#endif
