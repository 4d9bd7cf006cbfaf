// The addon's wire codec (src/protocol.cpp) on a line protocol, for tests/integration/test_fcitx5_codec.py, which
// compares it with ime_protocol byte for byte. One command a line, one answer a line; strings and bytes
// are written "x" followed by their hex digits (so an empty one is "x").
//
//   key_event KEYVAL KEYCODE MODIFIERS REQUEST_ID      the encoded Request: xBYTES REQUEST_ID SECRET
//   focus_in PURPOSE_INDEX   focus_out   reset   select_candidate INDEX REQUEST_ID
//   set_input_mode xMODE     surrounding_text xTEXT CURSOR ANCHOR
//   decode xBYTES          "invalid", or the Output: output REQUEST_ID CONSUMED xCOMMIT xAUX xMODE
//                          PREEDIT_CURSOR SEGMENT_COUNT (xTEXT STYLE)... CANDIDATES DELETION, where CANDIDATES
//                          is "-" or window CURSOR PAGE_SIZE LABEL_COUNT xLABEL... ITEM_COUNT (xTEXT xANNOTATION)...
//                          and DELETION "-" or delete BEFORE AFTER
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "lines.h"
#include "../src/protocol.h"

namespace {

using tsuzuri::test::hex;
using tsuzuri::test::unhex;

const char *styleName(tsuzuri::SegmentStyle style) {
    switch (style) {
    case tsuzuri::SegmentStyle::None: return "none";
    case tsuzuri::SegmentStyle::Underline: return "underline";
    case tsuzuri::SegmentStyle::Highlight: return "highlight";
    }
    return "?";
}

std::string describe(const tsuzuri::Request &request) {
    return hex(std::string(request.bytes.begin(), request.bytes.end())) + " " +
           std::to_string(request.requestId) + " " + (request.secretField ? "1" : "0");
}

std::string describe(const tsuzuri::Output &output) {
    std::ostringstream line;
    line << "output " << output.requestId << " " << output.consumed << " " << hex(output.commit) << " "
         << hex(output.aux) << " " << hex(output.mode) << " " << output.preedit.cursor << " "
         << output.preedit.segments.size();
    for (const auto &segment : output.preedit.segments) {
        line << " " << hex(segment.text) << " " << styleName(segment.style);
    }
    if (const auto &window = output.candidates) {
        line << " window " << window->cursor << " " << window->pageSize << " " << window->labels.size();
        for (const auto &label : window->labels) line << " " << hex(label);
        line << " " << window->items.size();
        for (const auto &item : window->items) line << " " << hex(item.text) << " " << hex(item.annotation);
    } else {
        line << " -";
    }
    if (const auto &deletion = output.deleteSurrounding) {
        line << " delete " << deletion->before << " " << deletion->after;
    } else {
        line << " -";
    }
    return line.str();
}

std::string answer(const std::string &command, std::istringstream &args) {
    auto number = [&args] {
        std::string token;
        args >> token;
        return std::stoull(token);
    };
    auto text = [&args] {
        std::string token;
        args >> token;
        return unhex(token);
    };
    if (command == "key_event") {
        auto keyval = number(), keycode = number(), modifiers = number();
        return describe(tsuzuri::keyEvent(keyval, keycode, modifiers, number()));
    }
    if (command == "focus_in") return describe(tsuzuri::focusIn(static_cast<tsuzuri::InputPurpose>(number())));
    if (command == "focus_out") return describe(tsuzuri::focusOut());
    if (command == "reset") return describe(tsuzuri::reset());
    if (command == "discard") return describe(tsuzuri::discard());
    if (command == "select_candidate") {
        auto index = number();
        return describe(tsuzuri::selectCandidate(index, number()));
    }
    if (command == "set_input_mode") return describe(tsuzuri::setInputMode(text()));
    if (command == "surrounding_text") {
        auto surrounding = text();
        auto cursor = number();
        return describe(tsuzuri::surroundingText(surrounding, cursor, number()));
    }
    if (command == "decode") {
        auto bytes = text();
        auto output = tsuzuri::decodeOutput(std::vector<uint8_t>(bytes.begin(), bytes.end()));
        return output ? describe(*output) : "invalid";
    }
    return "unknown command " + command;
}

} // namespace

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream args(line);
        std::string command;
        args >> command;
        std::cout << answer(command, args) << std::endl;
    }
    return 0;
}
