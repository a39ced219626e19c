#include <catch2/catch.hpp>

#include "job_list.h"
#include "temp_dir.h"

using mgb::batch::JobListToJson;
using mgb::batch::LoadJobList;
using mgb::batch::ParseJobList;

TEST_CASE("a valid job list parses every field", "[batch][job_list]") {
  auto r = ParseJobList(R"({"jobs": [
      {"name": "a", "argv": ["/bin/true", "x"], "memory_bytes": 1073741824, "arrival_s": 1.5},
      {"name": "b", "argv": ["prog"], "workload": "heat2d", "gb": 12.5}]})",
                        "list.json");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].name == "a");
  CHECK((*r)[0].argv == std::vector<std::string>{"/bin/true", "x"});
  CHECK((*r)[0].memory_bytes == 1073741824u);
  CHECK((*r)[0].arrival_s == 1.5);
  CHECK((*r)[1].memory_bytes == 0);
  CHECK((*r)[1].workload == "heat2d");
  CHECK((*r)[1].gb == 12.5);
}

TEST_CASE("bad job lists are rejected with the field named", "[batch][job_list]") {
  struct Case {
    const char *text;
    const char *expected;
  };
  const Case cases[] = {
      {"{not json", "list.json: not valid JSON"},
      {R"({"jobs": [{"name": "a", "argv": ["p"], "arrival_s": 1e400}]})",
       "list.json: not valid JSON"},
      {R"({"job": []})", "list.json: jobs: must be an array"},
      {R"({"jobs": []})", "list.json: jobs: the list is empty"},
      {R"({"jobs": [{"name": "a", "argv": ["p"]}, {"name": "b"}]})",
       "list.json: jobs[1].argv: must be a non-empty array"},
      {R"({"jobs": [{"name": "a", "argv": []}]})", "jobs[0].argv: must be a non-empty array"},
      {R"({"jobs": [{"name": "a", "argv": ["p", 3]}]})", "jobs[0].argv[1]: must be a string"},
      {R"({"jobs": [{"name": "", "argv": ["p"]}]})", "jobs[0].name: must be a non-empty string"},
      {R"({"jobs": [{"argv": ["p"]}]})", "jobs[0].name: must be a non-empty string"},
      {R"({"jobs": [{"name": "a", "argv": ["p"], "memory_bytes": -5}]})",
       "jobs[0].memory_bytes: must be a non-negative integer"},
      {R"({"jobs": [{"name": "a", "argv": ["p"], "memory_bytes": "10G"}]})",
       "jobs[0].memory_bytes"},
      {R"({"jobs": [{"name": "a", "argv": ["p"], "arrival_s": -1}]})",
       "jobs[0].arrival_s: must be a number >= 0"},
      {R"({"jobs": [{"name": "a", "argv": ["p"], "color": "red"}]})",
       "jobs[0].color: unknown field"},
      {R"({"jobs": [{"name": "a", "argv": ["p"]}, {"name": "a", "argv": ["q"]}]})",
       "jobs[1].name: duplicate name 'a'"},
      {R"({"jobs": [7]})", "jobs[0]: must be an object"},
  };
  for (const Case &c : cases) {
    INFO(c.text);
    auto r = ParseJobList(c.text, "list.json");
    CHECK_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(r.status().message()), Catch::Contains(c.expected));
  }
}

TEST_CASE("a missing job list file is named in the error", "[batch][job_list]") {
  auto r = LoadJobList("/nonexistent/jobs.json");
  CHECK(r.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("/nonexistent/jobs.json: cannot open"));
}

TEST_CASE("a written job list reads back the same", "[batch][job_list]") {
  TempDir dir;
  mgb::batch::Job job;
  job.name = "S0-heat2d";
  job.argv = {"bin/heat2d", "--gb", "10.0"};
  job.memory_bytes = 10737418240ull;
  job.arrival_s = 2;
  job.workload = "heat2d";
  job.gb = 10;
  std::string path = dir.Write("jobs.json", JobListToJson({job}));
  auto r = LoadJobList(path);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].argv == job.argv);
  CHECK((*r)[0].memory_bytes == job.memory_bytes);
  CHECK((*r)[0].arrival_s == 2);
  CHECK((*r)[0].gb == 10);
}
