// The record of a job by name in a batch result, for the runner's tests.
#ifndef MGB_TEST_TOOLS_FIND_RECORD_H
#define MGB_TEST_TOOLS_FIND_RECORD_H

#include <catch2/catch.hpp>

#include <string>

#include "runner.h"

inline const mgb::batch::JobRecord &Find(const mgb::batch::BatchResult &r,
                                         const std::string &name) {
  for (const mgb::batch::JobRecord &rec : r.records)
    if (rec.job.name == name) return rec;
  FAIL("no record " << name);
  return r.records.front();
}

#endif  // MGB_TEST_TOOLS_FIND_RECORD_H
