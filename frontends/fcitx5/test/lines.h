// The line protocol of the test programs (protocol_test.cpp, session_test.cpp): strings and bytes travel
// as "x" followed by their hex digits, so that an empty one is still a word ("x").
#ifndef TSUZURI_FCITX5_TEST_LINES_H
#define TSUZURI_FCITX5_TEST_LINES_H

#include <string>

namespace tsuzuri::test {

inline std::string hex(const std::string &bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string text = "x";
    for (unsigned char byte : bytes) {
        text += digits[byte >> 4];
        text += digits[byte & 15];
    }
    return text;
}

inline std::string unhex(const std::string &token) {
    std::string bytes;
    for (size_t i = 1; i + 1 < token.size(); i += 2) {
        bytes += static_cast<char>(std::stoi(token.substr(i, 2), nullptr, 16));
    }
    return bytes;
}

} // namespace tsuzuri::test

#endif
