// systemd's side of mgbd, without libsystemd: a listening socket handed over by socket activation
// (mgbd.socket; LISTEN_PID/LISTEN_FDS, the first fd is 3) and the readiness notice of a
// Type=notify service (NOTIFY_SOCKET). Both do nothing outside systemd. packaging/systemd/ has
// the units.
#ifndef MGB_SERVICE_SERVER_SYSTEMD_H
#define MGB_SERVICE_SERVER_SYSTEMD_H

#include <optional>
#include <string>

namespace mgb::server {

// The socket systemd passed to this process, if it passed exactly one listening Unix socket;
// nullopt (and *error set) when it passed something else, nullopt alone when it passed nothing.
std::optional<int> InheritedListenSocket(std::string *error);

// Tells systemd the service is ready (READY=1), when it asked to be told.
void NotifyReady();

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_SYSTEMD_H
