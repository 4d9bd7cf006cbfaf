#include "engine.h"

#include <algorithm>

#include <fcitx-utils/capabilityflags.h>
#include <fcitx-utils/log.h>
#include <fcitx-utils/utf8.h>
#include <fcitx/candidatelist.h>
#include <fcitx/event.h>
#include <fcitx/inputcontext.h>
#include <fcitx/inputcontextmanager.h>
#include <fcitx/inputpanel.h>
#include <fcitx/statusarea.h>
#include <fcitx/userinterfacemanager.h>
#include <fcitx/text.h>

namespace tsuzuri {
namespace {

// How long the application waits for a key's answer before the engine decides without it.
constexpr uint64_t KEY_TIMEOUT_USEC = 300'000;
constexpr uint64_t MESSAGE_TIMEOUT_USEC = 300'000;
constexpr const char *UNREACHABLE_NOTICE =
    "Tsuzuri: 変換サーバー (tsuzuri-daemon) に接続できません — 入力はそのまま送られます";

// The daemon's input modes (Output.mode, SetInputMode): the symbol the panel shows, the menu label.
struct ModeName {
    const char *mode, *symbol, *label;
};
constexpr ModeName MODES[] = {{"hiragana", "あ", "ひらがな"},
                              {"katakana", "ア", "全角カタカナ"},
                              {"halfwidth_katakana", "_ｱ", "半角カタカナ"},
                              {"fullwidth_ascii", "Ａ", "全角英数"},
                              {"direct", "A", "直接入力"}};

const ModeName &modeName(const std::string &mode) {
    for (const auto &name : MODES) {
        if (mode == name.mode) return name;
    }
    return MODES[0];
}

// fcitx's modifier bits, in the protocol's IBus/X11 layout: the low five agree; Super and Hyper
// are X11 Mod4 and Mod3 in fcitx, and virtual bits 26 and 27 in IBus.
uint32_t protocolModifiers(fcitx::KeyStates states) {
    constexpr uint32_t SHARED_BITS = SHIFT_MASK | LOCK_MASK | CONTROL_MASK | ALT_MASK | NUM_LOCK_MASK;
    uint32_t modifiers = static_cast<uint32_t>(states) & SHARED_BITS;
    if (states.testAny(fcitx::KeyStates{fcitx::KeyState::Super, fcitx::KeyState::Super2})) modifiers |= SUPER_MASK;
    if (states.testAny(fcitx::KeyStates{fcitx::KeyState::Hyper, fcitx::KeyState::Hyper2})) modifiers |= HYPER_MASK;
    if (states.test(fcitx::KeyState::Meta)) modifiers |= META_MASK;
    return modifiers;
}

InputPurpose purposeOf(fcitx::CapabilityFlags flags) {
    using fcitx::CapabilityFlag;
    if (flags.testAny(CapabilityFlag::PasswordOrSensitive)) return InputPurpose::Password;
    if (flags.test(CapabilityFlag::Digit)) return InputPurpose::Digits;
    if (flags.test(CapabilityFlag::Number)) return InputPurpose::Number;
    if (flags.test(CapabilityFlag::Dialable)) return InputPurpose::Phone;
    if (flags.test(CapabilityFlag::Url)) return InputPurpose::Url;
    if (flags.test(CapabilityFlag::Email)) return InputPurpose::Email;
    if (flags.test(CapabilityFlag::Name)) return InputPurpose::Name;
    if (flags.test(CapabilityFlag::Alpha)) return InputPurpose::Alpha;
    if (flags.test(CapabilityFlag::Terminal)) return InputPurpose::Terminal;
    return InputPurpose::FreeForm;
}

fcitx::TextFormatFlags formatOf(SegmentStyle style) {
    switch (style) {
    case SegmentStyle::None: return fcitx::TextFormatFlag::NoFlag;
    case SegmentStyle::Underline: return fcitx::TextFormatFlag::Underline;
    case SegmentStyle::Highlight: return {fcitx::TextFormatFlag::Underline, fcitx::TextFormatFlag::HighLight};
    }
    return fcitx::TextFormatFlag::NoFlag;
}

// fcitx's candidate window has no annotation column: the annotation follows the candidate.
fcitx::Text candidateText(const CandidateItem &item) {
    fcitx::Text text(item.text);
    if (!item.annotation.empty()) text.append("  " + item.annotation);
    return text;
}

class DaemonCandidateWord : public fcitx::CandidateWord {
public:
    DaemonCandidateWord(InputContextState &state, uint32_t index, fcitx::Text text)
        : fcitx::CandidateWord(std::move(text)), state_(state), index_(index) {}
    // A click: the daemon decides what choosing the candidate means.
    void select(fcitx::InputContext *) const override { state_.selectCandidate(index_); }

private:
    InputContextState &state_;
    uint32_t index_;  // into CandidateWindow.items
};

// Paging is the daemon's too: the window's page buttons send the keys that page, and the daemon's
// answer replaces this list (so nothing may touch `this` after the key is sent).
class DaemonCandidateList : public fcitx::CommonCandidateList {
public:
    DaemonCandidateList(InputContextState &state, const CandidateWindow &window) : state_(state) {
        std::vector<std::string> labels;
        for (const auto &label : window.labels) labels.push_back(label + ". ");
        setLabels(labels);
        setPageSize(window.pageSize);
        for (uint32_t index = 0; index < window.items.size(); ++index) {
            append<DaemonCandidateWord>(state, index, candidateText(window.items[index]));
        }
        setPage(window.cursor / window.pageSize);
        setGlobalCursorIndex(window.cursor);
    }
    void prev() override { state_.sendKey(FcitxKey_Page_Up); }
    void next() override { state_.sendKey(FcitxKey_Page_Down); }

private:
    InputContextState &state_;
};

} // namespace

uint64_t RequestIds::next() {
    last_ = last_ == REQUEST_ID_MAX ? 1 : last_ + 1;
    return last_;
}

InputContextState::InputContextState(DaemonChannel &channel, RequestIds &requestIds, fcitx::InputContext *inputContext,
                                     std::function<void(fcitx::InputContext *)> onModeChanged)
    : inputContext_(inputContext), requestIds_(requestIds),
      session_(channel, [this](const Output &output) { lateOutput(output); }), onModeChanged_(std::move(onModeChanged)) {}

bool ModeAction::isChecked(fcitx::InputContext *inputContext) const { return stateOf_(inputContext)->mode() == mode_; }

void ModeAction::activate(fcitx::InputContext *inputContext) { stateOf_(inputContext)->send(setInputMode(mode_)); }

std::string ModeMenuAction::shortText(fcitx::InputContext *inputContext) const {
    return std::string("入力モード (") + modeName(stateOf_(inputContext)->mode()).label + ")";
}

void InputContextState::keyEvent(fcitx::KeyEvent &event) {
    // A password field is direct input (fcitx 5.0 keeps input methods out of them itself; a user may let them
    // in): what is typed there never leaves fcitx.
    if (inputContext_->capabilityFlags().testAny(fcitx::CapabilityFlag::PasswordOrSensitive)) return;
    if (sendKeyRequest(event.rawKey(), true)) event.filterAndAccept();
}

void InputContextState::sendKey(fcitx::KeySym key) { sendKeyRequest(fcitx::Key(key), false); }

bool InputContextState::sendKeyRequest(const fcitx::Key &key, bool typed) {
    Output output;
    auto requestId = nextRequestId();
    auto request = tsuzuri::keyEvent(key.sym(), key.code(), protocolModifiers(key.states()), requestId);
    auto result = session_.send(request, KEY_TIMEOUT_USEC, output);
    switch (result) {
    case SendResult::Answered:
        settleHeldKeys(false);
        render(output);
        if (!typed || heldKeys_.empty()) return output.consumed;
        // An earlier key's answer is still to come (the daemon answers in order, so it is on its way): this key
        // follows it to the application, if it goes there at all.
        heldKeys_.push_back({requestId, key, !output.consumed});
        return true;
    case SendResult::TimedOut:
        FCITX_WARN() << "tsuzuri: the daemon did not answer a key in time";
        settleHeldKeys(false);
        // Kept from the application until its answer, drawn when it comes, says whether the daemon took it: the
        // application never gets a key that the daemon's composition also shows (lateOutput).
        if (typed) heldKeys_.push_back({requestId, key, std::nullopt});
        return true;
    case SendResult::Unavailable:
        // The keys now reach the application as typed: the composition shown goes into the field first, where it
        // was typed, and a daemon that comes back does not get it replayed.
        if (!preeditShown_.empty()) {
            inputContext_->commitString(preeditShown_);
            session_.abandonComposition();
        }
        settleHeldKeys(true);
        renderNothing();
        // Said where the user looks: the keys now reach the application as they are.
        inputContext_->inputPanel().setAuxUp(fcitx::Text(UNREACHABLE_NOTICE));
        inputContext_->updateUserInterface(fcitx::UserInterfaceComponent::InputPanel);
        return false;
    }
    return false;
}

void InputContextState::settleHeldKeys(bool toApplication) {
    for (auto &held : heldKeys_) {
        if (!held.toApplication && !session_.awaitsAnswer(held.requestId)) held.toApplication = toApplication;
    }
    releaseHeldKeys();
}

void InputContextState::releaseHeldKeys() {
    while (!heldKeys_.empty() && heldKeys_.front().toApplication) {
        if (*heldKeys_.front().toApplication) inputContext_->forwardKey(heldKeys_.front().key);
        heldKeys_.pop_front();
    }
}

void InputContextState::selectCandidate(uint32_t index) { send(tsuzuri::selectCandidate(index, nextRequestId())); }

void InputContextState::focusIn() {
    Output ignored;
    session_.send(tsuzuri::focusIn(purposeOf(inputContext_->capabilityFlags())), MESSAGE_TIMEOUT_USEC, ignored);
    sendSurroundingText();
}

void InputContextState::sendSurroundingText() {
    const auto &surrounding = inputContext_->surroundingText();
    if (!inputContext_->capabilityFlags().test(fcitx::CapabilityFlag::SurroundingText) || !surrounding.isValid()) {
        return;
    }
    Output ignored;
    session_.send(surroundingText(surrounding.text(), surrounding.cursor(), surrounding.anchor()),
                  MESSAGE_TIMEOUT_USEC, ignored);
}

bool InputContextState::clientCommitsItsPreedit() const {
    return clientPreeditShown_ && inputContext_->capabilityFlags().test(fcitx::CapabilityFlag::ClientUnfocusCommit);
}

void InputContextState::endComposition(bool focusOut) {
    // On focus out fcitx (for a client without ClientUnfocusCommit) or the client has committed the client preedit
    // into the field, or will: committing the daemon's answer too would type it twice. Otherwise (a switch to
    // another input method, or a preedit only the panel showed) the daemon's answer is the only commit.
    bool committedElsewhere = focusOut && clientPreeditShown_;
    bool clientCommitsLater = focusOut && clientCommitsItsPreedit();
    Output output;
    if (session_.send(tsuzuri::focusOut(), MESSAGE_TIMEOUT_USEC, output) != SendResult::Answered) return;
    if (committedElsewhere) output.commit.clear();
    if (clientCommitsLater) {
        // fcitx may hear of another field's focus before this client's focus out (another application took it):
        // an empty preedit sent now would reach the client first and leave it nothing to commit.
        preeditShown_.clear();
        clientPreeditShown_ = false;
        inputContext_->inputPanel().reset();
        return;
    }
    render(output);
}

void InputContextState::reset() {
    bool clientCommitted = clientCommitsItsPreedit();
    Output output;
    if (session_.send(tsuzuri::reset(), MESSAGE_TIMEOUT_USEC, output) != SendResult::Answered) return;
    if (clientCommitted) output.commit.clear();
    render(output);
}

void InputContextState::send(const Request &request) {
    Output output;
    if (session_.send(request, MESSAGE_TIMEOUT_USEC, output) == SendResult::Answered) render(output);
}

uint64_t InputContextState::nextRequestId() {
    lastRequestId_ = requestIds_.next();
    return lastRequestId_;
}

void InputContextState::lateOutput(const Output &output) {
    if (output.requestId == lastRequestId_) {
        render(output);
    } else {  // outdated by a newer key's answer, but the field's text must change as it said
        editText(output);
    }
    for (auto &held : heldKeys_) {
        if (held.requestId == output.requestId && !held.toApplication) held.toApplication = !output.consumed;
    }
    releaseHeldKeys();  // after the answer's commit, as the daemon ordered them
}

void InputContextState::editText(const Output &output) {
    // What it deletes (a reconversion's text) goes first, then its commit.
    if (const auto &deletion = output.deleteSurrounding) {
        inputContext_->deleteSurroundingText(-static_cast<int>(deletion->before), deletion->before + deletion->after);
    }
    if (!output.commit.empty()) inputContext_->commitString(output.commit);
}

void InputContextState::render(const Output &output) {
    editText(output);
    if (!output.mode.empty() && output.mode != mode_) {
        mode_ = output.mode;
        onModeChanged_(inputContext_);
    }
    auto &panel = inputContext_->inputPanel();
    panel.reset();
    renderPreedit(output.preedit);
    if (!output.aux.empty()) panel.setAuxUp(fcitx::Text(output.aux));
    renderCandidates(output.candidates);
    inputContext_->updatePreedit();
    inputContext_->updateUserInterface(fcitx::UserInterfaceComponent::InputPanel);
}

void InputContextState::renderNothing() {
    bool wasShown = !preeditShown_.empty();
    preeditShown_.clear();
    clientPreeditShown_ = false;
    if (!wasShown && inputContext_->inputPanel().empty()) return;
    inputContext_->inputPanel().reset();
    inputContext_->updatePreedit();
    inputContext_->updateUserInterface(fcitx::UserInterfaceComponent::InputPanel);
}

void InputContextState::renderPreedit(const Preedit &preedit) {
    fcitx::Text text;
    for (const auto &segment : preedit.segments) text.append(segment.text, formatOf(segment.style));
    const auto whole = text.toString();
    preeditShown_ = whole;
    clientPreeditShown_ = !whole.empty() && inputContext_->capabilityFlags().test(fcitx::CapabilityFlag::Preedit);
    if (whole.empty()) return;
    text.setCursor(fcitx::utf8::ncharByteLength(whole.begin(), std::min<size_t>(preedit.cursor, fcitx::utf8::length(whole))));
    auto &panel = inputContext_->inputPanel();
    if (clientPreeditShown_) {
        panel.setClientPreedit(text);
    } else {
        panel.setPreedit(text);
    }
}

void InputContextState::renderCandidates(const std::optional<CandidateWindow> &window) {
    if (window) inputContext_->inputPanel().setCandidateList(std::make_unique<DaemonCandidateList>(*this, *window));
}

TsuzuriEngine::TsuzuriEngine(fcitx::Instance *instance)
    : instance_(instance), bus_(fcitx::dbus::BusType::Session), channel_(bus_, instance_->eventLoop()),
      stateFactory_([this](fcitx::InputContext &inputContext) {
          return new InputContextState(channel_, requestIds_, &inputContext, [this](fcitx::InputContext *changed) {
              modeMenuAction_.update(changed);
              for (auto &action : modeActions_) action->update(changed);
              changed->updateUserInterface(fcitx::UserInterfaceComponent::StatusArea);
          });
      }),
      modeMenuAction_([this](fcitx::InputContext *inputContext) { return stateOf(inputContext); }),
      daemonSettings_(bus_) {
    bus_.attachEventLoop(&instance_->eventLoop());
    auto &ui = instance_->userInterfaceManager();
    for (const auto &name : MODES) {
        modeActions_.push_back(std::make_unique<ModeAction>(
            name.mode, name.label, [this](fcitx::InputContext *inputContext) { return stateOf(inputContext); }));
        ui.registerAction(std::string("tsuzuri-mode-") + name.mode, modeActions_.back().get());
        modeMenu_.addAction(modeActions_.back().get());
    }
    modeMenuAction_.setMenu(&modeMenu_);
    ui.registerAction("tsuzuri-input-mode", &modeMenuAction_);
    instance_->inputContextManager().registerProperty("tsuzuriState", &stateFactory_);
    eventWatchers_.push_back(instance_->watchEvent(
        fcitx::EventType::InputContextSurroundingTextUpdated, fcitx::EventWatcherPhase::PostInputMethod,
        [this](fcitx::Event &event) {
            auto *inputContext = static_cast<fcitx::InputContextEvent &>(event).inputContext();
            if (isCurrentEngine(inputContext)) stateOf(inputContext)->sendSurroundingText();
        }));
    // A focused field's purpose can change too (a password field is still secret).
    eventWatchers_.push_back(instance_->watchEvent(
        fcitx::EventType::InputContextCapabilityChanged, fcitx::EventWatcherPhase::PostInputMethod,
        [this](fcitx::Event &event) {
            auto *inputContext = static_cast<fcitx::InputContextEvent &>(event).inputContext();
            if (isCurrentEngine(inputContext)) stateOf(inputContext)->focusIn();
        }));
}

void TsuzuriEngine::keyEvent(const fcitx::InputMethodEntry &, fcitx::KeyEvent &event) {
    if (event.isRelease()) return;  // the daemon never takes a release (daemon/keys.py): spare the round trip
    stateOf(event.inputContext())->keyEvent(event);
}

void TsuzuriEngine::activate(const fcitx::InputMethodEntry &, fcitx::InputContextEvent &event) {
    event.inputContext()->statusArea().addAction(fcitx::StatusGroup::InputMethod, &modeMenuAction_);
    stateOf(event.inputContext())->focusIn();
}

std::string TsuzuriEngine::subMode(const fcitx::InputMethodEntry &, fcitx::InputContext &inputContext) {
    return modeName(stateOf(&inputContext)->mode()).label;
}

std::string TsuzuriEngine::subModeLabelImpl(const fcitx::InputMethodEntry &, fcitx::InputContext &inputContext) {
    return modeName(stateOf(&inputContext)->mode()).symbol;
}

const fcitx::Configuration *TsuzuriEngine::getConfig() const {
    auto literals = daemonSettings_.get();
    if (!literals) {
        FCITX_WARN() << "tsuzuri: the daemon did not say its settings; the page shows the last ones read";
    } else if (!readSettings(*literals, settingsShown_)) {
        FCITX_WARN() << "tsuzuri: some of the daemon's settings were not understood";
    }
    return &settingsShown_;
}

void TsuzuriEngine::setConfig(const fcitx::RawConfig &config) {
    SettingsPage changed = settingsShown_;
    changed.load(config, true);
    auto literals = changedSettings(settingsShown_, changed);
    if (literals.empty()) return;
    for (const auto &problem : daemonSettings_.set(literals)) FCITX_WARN() << "tsuzuri: settings: " << problem;
    settingsShown_ = changed;
}

std::string TsuzuriEngine::subModeIconImpl(const fcitx::InputMethodEntry &, fcitx::InputContext &inputContext) {
    return std::string("fcitx-tsuzuri-") + modeName(stateOf(&inputContext)->mode()).mode;
}

void TsuzuriEngine::deactivate(const fcitx::InputMethodEntry &, fcitx::InputContextEvent &event) {
    stateOf(event.inputContext())->endComposition(event.type() == fcitx::EventType::InputContextFocusOut);
}

void TsuzuriEngine::reset(const fcitx::InputMethodEntry &, fcitx::InputContextEvent &event) {
    stateOf(event.inputContext())->reset();
}

InputContextState *TsuzuriEngine::stateOf(fcitx::InputContext *inputContext) {
    return inputContext->propertyFor(&stateFactory_);
}

bool TsuzuriEngine::isCurrentEngine(fcitx::InputContext *inputContext) {
    return instance_->inputMethodEngine(inputContext) == this;
}

fcitx::AddonInstance *TsuzuriEngineFactory::create(fcitx::AddonManager *manager) {
    return new TsuzuriEngine(manager->instance());
}

} // namespace tsuzuri

FCITX_ADDON_FACTORY(tsuzuri::TsuzuriEngineFactory);
