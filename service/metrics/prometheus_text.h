// mgbd's state in Prometheus's text exposition format (version 0.0.4): one function for both
// `mgbd --metrics` (scraped over HTTP) and `mgb status --format=prometheus` (node_exporter's
// textfile collector), so the two never name a metric differently. Names: docs/service.md.
#ifndef MGB_SERVICE_METRICS_PROMETHEUS_TEXT_H
#define MGB_SERVICE_METRICS_PROMETHEUS_TEXT_H

#include <string>

#include "mgb.pb.h"

namespace mgb::metrics {

std::string PrometheusText(const v1::StatusReply &status);

}  // namespace mgb::metrics

#endif  // MGB_SERVICE_METRICS_PROMETHEUS_TEXT_H
