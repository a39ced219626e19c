// `mgb batch`'s per-job GPU memory: the runner and the GPU sampler over the fake libnvidia-ml
// (test/service/fake_nvml.cpp, via MGB_NVML_LIBRARY). Shell jobs put their own pid, or a child
// shell's, into the fake's process list, so attribution runs on real process trees.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu_sampler.h"
#include "report.h"
#include "runner.h"
#include "temp_dir.h"

using namespace mgb::batch;

namespace {

struct FakeNvml {
  std::string procs;
  FakeNvml(const TempDir &dir, bool with_script) : procs(dir.Path("procs")) {
    setenv("MGB_NVML_LIBRARY", MGB_FAKE_NVML, 1);
    if (with_script) {
      setenv("MGB_FAKE_NVML_PROCS", procs.c_str(), 1);
      std::ofstream(procs) << "";
    } else {
      unsetenv("MGB_FAKE_NVML_PROCS");
    }
  }
  ~FakeNvml() {
    unsetenv("MGB_NVML_LIBRARY");
    unsetenv("MGB_FAKE_NVML_PROCS");
  }
  // A process that is no job's (this test itself) holding memory on GPU 0.
  void AddOutsider() const {
    std::ofstream(procs, std::ios::app) << "0 " << getpid() << " 1073741824\n";
  }
};

Job Shell(const std::string &name, const std::string &script) {
  Job job;
  job.name = name;
  job.argv = {"/bin/sh", "-c", script};
  return job;
}

struct Sampled {
  BatchResult result;
  SamplerRecord record;
};

Sampled RunSampled(const std::vector<Job> &jobs, const TempDir &dir) {
  std::string why_not;
  std::unique_ptr<GpuSampler> sampler = GpuSampler::Start(0.04, &why_not);
  REQUIRE(sampler != nullptr);
  RunnerOptions options;
  options.workers = static_cast<int>(jobs.size());
  options.log_dir = dir.path();
  options.watcher = sampler.get();
  Sampled s;
  s.result = RunBatch(jobs, options);
  s.record = sampler->Stop();
  return s;
}

uint64_t Peak(const std::vector<MemorySample> &series) {
  uint64_t peak = 0;
  for (const MemorySample &m : series) peak = std::max(peak, m.bytes);
  return peak;
}

}  // namespace

TEST_CASE("GPU memory is attributed to the job whose process or descendant holds it",
          "[batch][memory]") {
  TempDir dir;
  FakeNvml fake(dir, true);
  fake.AddOutsider();
  const std::string p = fake.procs;
  std::vector<Job> jobs = {
      // Its own pid: 1000 bytes, then 4000.
      Shell("direct", "echo \"0 $$ 1000\" >> " + p + "; sleep 0.5; echo \"0 $$ 4000\" >> " + p +
                          "; sleep 0.5"),
      // A wrapper: the child shell holds memory on both GPUs (3000 + 2000).
      Shell("wrapped", "/bin/sh -c 'echo \"1 $$ 3000\" >> " + p + "; echo \"0 $$ 2000\" >> " + p +
                           "; sleep 0.8'; true"),
      Shell("cpu_only", "sleep 0.6"),
  };
  Sampled s = RunSampled(jobs, dir);
  CHECK(s.record.per_process_memory.empty());
  REQUIRE(s.record.job_memory.size() == 3);
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO(jobs[i].name);
    const std::vector<MemorySample> &series = s.record.job_memory[i];
    CHECK(series.size() >= 5);
    for (const MemorySample &m : series) {
      CHECK(m.t_s >= s.result.records[i].started_s - 1e-6);
      CHECK(m.t_s <= s.result.records[i].ended_s + 1e-6);
    }
  }
  const std::vector<MemorySample> &direct = s.record.job_memory[0];
  CHECK(Peak(direct) == 4000);
  // Over time: 1000 comes before 4000, and nothing but 0, 1000 and 4000 is seen.
  auto first = [&](uint64_t bytes) {
    for (const MemorySample &m : direct)
      if (m.bytes == bytes) return m.t_s;
    return -1.0;
  };
  CHECK(first(1000) >= 0);
  CHECK(first(1000) < first(4000));
  for (const MemorySample &m : direct) CHECK((m.bytes == 0 || m.bytes == 1000 || m.bytes == 4000));
  CHECK(Peak(s.record.job_memory[1]) == 5000);  // summed over the two GPUs, the outsider left out
  CHECK(Peak(s.record.job_memory[2]) == 0);

  AttachJobMemory(s.record.job_memory, &s.result);
  RunInfo info;
  info.label = "mgb";
  auto doc = nlohmann::json::parse(BatchResultToJson(s.result, info, s.record.gpu_samples));
  CHECK_FALSE(doc.contains("per_process_memory"));
  CHECK(doc["jobs"][0]["peak_memory_bytes"] == 4000);
  CHECK(doc["jobs"][1]["peak_memory_bytes"] == 5000);
  REQUIRE(doc["jobs"][0]["memory_samples"].size() == direct.size());
  CHECK(doc["jobs"][0]["memory_samples"][0].size() == 2);
  CHECK(doc["jobs"][0]["memory_samples"].back()[1] == direct.back().bytes);
  REQUIRE_FALSE(doc["gpu_samples"].empty());
  CHECK(doc["gpu_samples"][0]["gpus"][1]["util"] == 41);
}

TEST_CASE("when NVML lists only processes outside the jobs (MPS), the JSON says so once",
          "[batch][memory]") {
  TempDir dir;
  FakeNvml fake(dir, true);
  fake.AddOutsider();  // plays the MPS server: the jobs' memory is charged to it
  Sampled s = RunSampled({Shell("a", "sleep 0.4"), Shell("b", "sleep 0.4")}, dir);
  CHECK(s.record.job_memory.empty());
  CHECK(s.record.per_process_memory.rfind("unavailable: ", 0) == 0);
  CHECK(s.record.per_process_memory.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(s.record.per_process_memory.find("MPS") != std::string::npos);

  AttachJobMemory(s.record.job_memory, &s.result);
  RunInfo info;
  info.per_process_memory = s.record.per_process_memory;
  auto doc = nlohmann::json::parse(BatchResultToJson(s.result, info, s.record.gpu_samples));
  CHECK(doc["per_process_memory"] == s.record.per_process_memory);
  CHECK_FALSE(doc["jobs"][0].contains("memory_samples"));
  CHECK_FALSE(doc["jobs"][0].contains("peak_memory_bytes"));
}

TEST_CASE("when NVML cannot list processes, the reason is NVML's error", "[batch][memory]") {
  TempDir dir;
  FakeNvml fake(dir, false);  // the fake then answers NVML_ERROR_NOT_SUPPORTED
  Sampled s = RunSampled({Shell("a", "sleep 0.3")}, dir);
  CHECK(s.record.job_memory.empty());
  CHECK(s.record.per_process_memory.find("nvmlDeviceGetComputeRunningProcesses_v3") !=
        std::string::npos);
  CHECK(s.record.per_process_memory.find("Not Supported") != std::string::npos);
  CHECK_FALSE(s.record.gpu_samples.empty());  // utilisation is still sampled
}

TEST_CASE("without NVML the sampler does not start and says why", "[batch][memory]") {
  setenv("MGB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  std::string why_not;
  CHECK(GpuSampler::Start(0.1, &why_not) == nullptr);
  unsetenv("MGB_NVML_LIBRARY");
  CHECK(why_not.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
}
