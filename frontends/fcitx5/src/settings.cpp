#include "settings.h"

#include <algorithm>

#include <fcitx-config/rawconfig.h>
#include <fcitx-utils/charutils.h>
#include <fcitx-utils/dbus/message.h>
#include <fcitx-utils/key.h>

#include "dbus_names.h"

namespace tsuzuri {
namespace {

constexpr uint64_t SETTINGS_TIMEOUT_USEC = 3'000'000;  // may D-Bus-activate the daemon
// The daemon's modifier spellings (daemon/keys.py) in fcitx's.
constexpr std::pair<const char *, const char *> MODIFIERS[] = {
    {"ctrl+", "Control+"}, {"control+", "Control+"}, {"shift+", "Shift+"}, {"alt+", "Alt+"}};

std::string boolLiteral(bool value) { return value ? "true" : "false"; }

std::string keysLiteral(const fcitx::KeyList &keys) {
    std::string literal = "[";
    for (const auto &key : keys) {
        if (literal.size() > 1) literal += ", ";
        literal += tomlString(key.toString());
    }
    return literal + "]";
}

bool readKeys(const std::map<std::string, std::string> &literals, fcitx::KeyListOption &option) {
    auto found = literals.find(option.path());
    if (found == literals.end()) return false;
    auto names = parseTomlStringArray(found->second);
    if (!names) return false;
    fcitx::KeyList keys;
    for (const auto &name : *names) {
        fcitx::Key key(fcitxKeyName(name));
        if (key.isValid()) keys.push_back(key);
    }
    option.setValue(keys);
    return true;
}

// A choice (an fcitx enum option) from its TOML string; false if it is missing or not one of the choices.
template <typename Choice>
bool readChoice(const std::map<std::string, std::string> &literals, fcitx::Option<Choice> &option) {
    auto literal = literals.find(option.path());
    size_t start = 0;
    auto name = literal == literals.end() ? std::nullopt : parseTomlString(literal->second, start);
    fcitx::RawConfig raw;
    raw.setValue(name.value_or(""));
    Choice value;
    if (!name || !unmarshallOption(value, raw, false)) return false;
    option.setValue(value);
    return true;
}

} // namespace

std::string tomlString(const std::string &text) {
    std::string literal = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') literal += '\\';
        literal += c;
    }
    return literal + "\"";
}

std::optional<std::string> parseTomlString(const std::string &literal, size_t &position) {
    if (position >= literal.size() || literal[position] != '"') return std::nullopt;
    std::string text;
    for (size_t i = position + 1; i < literal.size(); ++i) {
        if (literal[i] == '"') {
            position = i + 1;
            return text;
        }
        if (literal[i] == '\\') {
            if (++i >= literal.size() || (literal[i] != '"' && literal[i] != '\\')) return std::nullopt;
        }
        text += literal[i];
    }
    return std::nullopt;
}

std::optional<std::vector<std::string>> parseTomlStringArray(const std::string &literal) {
    auto skipSpaces = [&literal](size_t &i) {
        while (i < literal.size() && literal[i] == ' ') ++i;
    };
    size_t i = 0;
    skipSpaces(i);
    if (i >= literal.size() || literal[i++] != '[') return std::nullopt;
    std::vector<std::string> items;
    for (skipSpaces(i); i < literal.size() && literal[i] != ']'; skipSpaces(i)) {
        auto item = parseTomlString(literal, i);
        if (!item) return std::nullopt;
        items.push_back(*item);
        skipSpaces(i);
        if (i < literal.size() && literal[i] == ',') ++i;
    }
    if (i >= literal.size()) return std::nullopt;
    return items;
}

std::string fcitxKeyName(const std::string &daemonKeyName) {
    std::string rest = daemonKeyName, name;
    for (bool matched = true; matched;) {
        matched = false;
        for (const auto &[daemon, fcitx] : MODIFIERS) {
            std::string prefix = rest.substr(0, std::char_traits<char>::length(daemon));
            std::transform(prefix.begin(), prefix.end(), prefix.begin(), fcitx::charutils::tolower);
            if (rest.size() > prefix.size() && prefix == daemon) {
                name += fcitx;
                rest = rest.substr(prefix.size());
                matched = true;
            }
        }
    }
    return name + rest;
}

bool readSettings(const std::map<std::string, std::string> &literals, SettingsPage &page) {
    bool complete = true;
    for (auto *option : {&page.live, &page.neuralModel, &page.learning}) {
        auto found = literals.find(option->path());
        if (found != literals.end() && (found->second == "true" || found->second == "false")) {
            option->setValue(found->second == "true");
        } else {
            complete = false;
        }
    }
    complete = readChoice(literals, page.punctuation) && complete;
    complete = readChoice(literals, page.spelling) && complete;
    auto pageSize = literals.find(page.pageSize.path());
    try {
        if (pageSize == literals.end() || !page.pageSize.setValue(std::stoi(pageSize->second))) complete = false;
    } catch (const std::logic_error &) {
        complete = false;
    }
    for (auto *option : {&page.toggleInput, &page.inputOn, &page.inputOff}) {
        complete = readKeys(literals, *option) && complete;
    }
    return complete;
}

std::map<std::string, std::string> changedSettings(const SettingsPage &before, const SettingsPage &after) {
    std::map<std::string, std::string> changed;
    for (auto option : {&SettingsPage::live, &SettingsPage::neuralModel, &SettingsPage::learning}) {
        if (*(before.*option) != *(after.*option)) changed[(after.*option).path()] = boolLiteral(*(after.*option));
    }
    if (*before.punctuation != *after.punctuation) {
        changed[after.punctuation.path()] = tomlString(PunctuationToString(*after.punctuation));
    }
    if (*before.spelling != *after.spelling) {
        changed[after.spelling.path()] = tomlString(SpellingToString(*after.spelling));
    }
    if (*before.pageSize != *after.pageSize) changed[after.pageSize.path()] = std::to_string(*after.pageSize);
    for (auto option : {&SettingsPage::toggleInput, &SettingsPage::inputOn, &SettingsPage::inputOff}) {
        if (*(before.*option) != *(after.*option)) changed[(after.*option).path()] = keysLiteral(*(after.*option));
    }
    return changed;
}

std::optional<std::map<std::string, std::string>> DaemonSettings::get() {
    auto call = bus_.createMethodCall(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "GetSettings");
    auto reply = call.call(SETTINGS_TIMEOUT_USEC);
    if (reply.type() != fcitx::dbus::MessageType::Reply) return std::nullopt;
    std::vector<fcitx::dbus::DictEntry<std::string, std::string>> entries;
    reply >> entries;
    if (!reply) return std::nullopt;
    std::map<std::string, std::string> literals;
    for (const auto &entry : entries) literals[entry.key()] = entry.value();
    return literals;
}

std::vector<std::string> DaemonSettings::set(const std::map<std::string, std::string> &literals) {
    auto call = bus_.createMethodCall(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "SetSettings");
    std::vector<fcitx::dbus::DictEntry<std::string, std::string>> entries;
    for (const auto &[key, literal] : literals) entries.emplace_back(key, literal);
    call << entries;
    auto reply = call.call(SETTINGS_TIMEOUT_USEC);
    if (reply.type() != fcitx::dbus::MessageType::Reply) {
        std::string why = reply.errorMessage();
        return {reply.errorName() + ": " + why};
    }
    std::vector<std::string> problems;
    reply >> problems;
    return problems;
}

} // namespace tsuzuri
