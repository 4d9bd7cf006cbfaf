// The settings fcitx5-configtool shows on Tsuzuri's page. They live in the daemon's configuration file
// (~/.config/tsuzuri/config.toml, daemon/config.py): the page is read from the daemon (GetSettings) each time it
// opens, and what the user changed is written through it (SetSettings), so the file, this page and the IBus
// settings dialog always say the same.
#ifndef TSUZURI_FCITX5_SETTINGS_H
#define TSUZURI_FCITX5_SETTINGS_H

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fcitx-config/configuration.h>
#include <fcitx-config/enum.h>
#include <fcitx-config/option.h>
#include <fcitx-utils/dbus/bus.h>

namespace tsuzuri {

// daemon/composer/table.py Punctuation, in its order; the names are the values the file holds.
enum class Punctuation { ToutenKuten, CommaPeriod, CommaKuten, ToutenPeriod };
FCITX_CONFIG_ENUM_NAME(Punctuation, "、。", "，．", "，。", "、．");

// daemon/spelling.py Spelling: which auxiliary words conversions write in kana.
enum class Spelling { Ranked, Official };
FCITX_CONFIG_ENUM_NAME(Spelling, "ranked", "official");

// A binding may be a key alone (Henkan) or a chord (ctrl+space), as in the daemon's [keys].
inline const auto KEYS_ALONE_OR_CHORDS = fcitx::KeyListConstrain({fcitx::KeyConstrainFlag::AllowModifierLess});

FCITX_CONFIGURATION(SettingsPage,
    fcitx::Option<bool> live{this, "conversion.live", "ライブ変換 (show the conversion while typing)", false};
    fcitx::Option<bool> neuralModel{this, "conversion.neural_model", "ニューラル変換モデル (the neural model)", true};
    fcitx::Option<bool> learning{this, "conversion.learning", "学習 (learn from your choices)", true};
    fcitx::Option<Spelling> spelling{this, "conversion.spelling",
                                     "表記 (ranked: as ranked; official: kana where official documents use it)",
                                     Spelling::Ranked};
    fcitx::Option<Punctuation> punctuation{this, "input.punctuation", "句読点 (what , and . type)",
                                          Punctuation::ToutenKuten};
    fcitx::Option<int, fcitx::IntConstrain> pageSize{this, "candidates.page_size", "候補の数 (candidates per page)",
                                                     9, fcitx::IntConstrain(1, 9)};
    fcitx::KeyListOption toggleInput{this, "keys.toggle_input", "日本語入力オン・オフ (switch Japanese on or off)",
                                     {}, KEYS_ALONE_OR_CHORDS};
    fcitx::KeyListOption inputOn{this, "keys.input_on", "日本語入力オン (switch Japanese on)", {},
                                 KEYS_ALONE_OR_CHORDS};
    fcitx::KeyListOption inputOff{this, "keys.input_off", "日本語入力オフ (switch Japanese off)", {},
                                  KEYS_ALONE_OR_CHORDS};)

// The page as the daemon's settings (TOML literals by dotted name, GetSettings) say; false if one the page shows
// is missing or not understood, and the page then holds what could be read.
bool readSettings(const std::map<std::string, std::string> &literals, SettingsPage &page);
// TOML literals of the settings that differ between the two pages, for SetSettings.
std::map<std::string, std::string> changedSettings(const SettingsPage &before, const SettingsPage &after);

// TOML strings and arrays of them as daemon/config.py writes them, and key names from the daemon's ("ctrl+space")
// to fcitx's ("Control+space"; the daemon reads fcitx's as they are).
std::string tomlString(const std::string &text);
std::optional<std::string> parseTomlString(const std::string &literal, size_t &position);
std::optional<std::vector<std::string>> parseTomlStringArray(const std::string &literal);
std::string fcitxKeyName(const std::string &daemonKeyName);

// GetSettings and SetSettings on the daemon, waiting for the answer (the page waits for them anyway).
class DaemonSettings {
public:
    explicit DaemonSettings(fcitx::dbus::Bus &bus) : bus_(bus) {}
    std::optional<std::map<std::string, std::string>> get();
    // The daemon's problems after applying them, or why they were refused.
    std::vector<std::string> set(const std::map<std::string, std::string> &literals);

private:
    fcitx::dbus::Bus &bus_;
};

} // namespace tsuzuri

#endif
