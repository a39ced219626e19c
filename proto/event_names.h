// One name per scheduling event kind, as `mgb watch` prints it and `mgbd --verbose 1` logs it:
// the proto's enum name without its prefix, in lower case with dashes ("KIND_TASK_PLACED" ->
// "task-placed").
#ifndef MGB_PROTO_EVENT_NAMES_H
#define MGB_PROTO_EVENT_NAMES_H

#include <string>

#include "mgb.pb.h"

namespace mgb {

std::string EventKindName(v1::Event::Kind kind);

}  // namespace mgb

#endif  // MGB_PROTO_EVENT_NAMES_H
