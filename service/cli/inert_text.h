// Text that came from a client (labels, program and user names) made safe to print on an
// operator's terminal: control characters (an ESC sequence that clears the screen or retitles
// the window, a newline that forges a row) and bidirectional overrides are shown as escapes.
#ifndef MGB_SERVICE_CLI_INERT_TEXT_H
#define MGB_SERVICE_CLI_INERT_TEXT_H

#include <string>

namespace mgb::cli {

// `text` with each C0/C1 control character and DEL written as \xNN (\u20NN for a bidirectional
// override or isolate), and a backslash as \\, so that distinct texts stay distinct.
std::string InertText(const std::string &text);

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_INERT_TEXT_H
