// The plain parts of mgb's Slurm support (docs/slurm.md): which job a process is in, a job's
// grant from scontrol's record, the node's configuration text, and the core's grant rule.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "job_grant.h"
#include "job_of_process.h"
#include "mgb/core/job_grants.h"
#include "slurm_config.h"

namespace mgb::test {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// A fake /proc: each process with its parent, uids, title and cgroup file.
class FakeProc {
 public:
  FakeProc() {
    char pattern[] = "/tmp/mgb-fake-proc-XXXXXX";
    root_ = mkdtemp(pattern);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  void Add(int pid, int parent, int uid, const std::string &cmdline,
           const std::string &cgroup = "0::/\n") {
    const std::string dir = root_ + "/" + std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat") << pid << " (" << cmdline.substr(0, 15) << ") S " << parent
                                 << " 1 1 0\n";
    std::ofstream(dir + "/status")
        << "Name:\tx\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid << "\n";
    std::ofstream(dir + "/cmdline") << cmdline << '\0';
    std::ofstream(dir + "/cgroup") << cgroup;
  }
  const std::string &root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace

TEST_CASE("a process's Slurm job comes from slurmd's cgroups, not a user's", "[slurm]") {
  using slurm::JobOfCgroupLine;
  CHECK(JobOfCgroupLine("4:memory:/slurm/uid_1000/job_1234/step_0/task_0") == 1234u);
  CHECK(JobOfCgroupLine("4:memory:/slurm_n1/uid_1000/job_77/step_batch") == 77u);
  CHECK(JobOfCgroupLine("0::/system.slice/slurmstepd.scope/job_99/step_0/user/task_0") == 99u);
  CHECK(JobOfCgroupLine("0::/system.slice/slurmstepd-n2.scope/job_5/step_extern") == 5u);
  // A folder named job_N in a subtree delegated to the user proves nothing.
  CHECK_FALSE(JobOfCgroupLine("0::/user.slice/user-1000.slice/user@1000.service/job_5/step_0"));
  CHECK_FALSE(JobOfCgroupLine("0::/system.slice/slurmstepd.scope/notajob_5"));
  CHECK_FALSE(JobOfCgroupLine("0::/"));
  CHECK_FALSE(JobOfCgroupLine("garbage"));
}

TEST_CASE("a process's Slurm job comes from a root-owned slurmstepd ancestor", "[slurm]") {
  CHECK(slurm::JobOfStepdTitle(std::string("slurmstepd: [1234.batch]") + '\0') == 1234u);
  CHECK(slurm::JobOfStepdTitle("slurmstepd: [8.0]") == 8u);
  CHECK_FALSE(slurm::JobOfStepdTitle("slurmstepd: [x.0]"));
  CHECK_FALSE(slurm::JobOfStepdTitle("python train.py"));

  FakeProc proc;
  proc.Add(1, 0, 0, "/sbin/init");
  proc.Add(90, 1, 0, "slurmstepd: [42.batch]");
  proc.Add(100, 90, 1000, "/bin/sh job.sh");
  proc.Add(110, 100, 1000, "mgb run -- python train.py");
  CHECK(slurm::JobOfProcess(110, proc.root()) == 42u);
  CHECK(slurm::JobOfProcess(100, proc.root()) == 42u);
  // The user's own process titled as a stepd (argv is the user's to write) is not one.
  proc.Add(200, 1, 1000, "slurmstepd: [7.0]");
  proc.Add(210, 200, 1000, "python");
  CHECK_FALSE(slurm::JobOfProcess(210, proc.root()));
  // Outside Slurm, gone, or nonsense pids: no job.
  proc.Add(300, 1, 1000, "bash");
  CHECK_FALSE(slurm::JobOfProcess(300, proc.root()));
  CHECK_FALSE(slurm::JobOfProcess(999, proc.root()));
  CHECK_FALSE(slurm::JobOfProcess(0, proc.root()));
  // cgroup first: a process slurmd's cgroup holds needs no stepd ancestor (it may have been
  // reparented to init by a double fork).
  proc.Add(400, 1, 1000, "daemonised",
           "0::/system.slice/slurmstepd.scope/job_51/step_0/user/task_0\n");
  CHECK(slurm::JobOfProcess(400, proc.root()) == 51u);
}

TEST_CASE("a job's gpumem per node is read from scontrol's one-line record", "[slurm]") {
  const std::string record =
      "JobId=12 JobName=job.sh UserId=root(0) JobState=RUNNING NumNodes=1 "
      "TRES=cpu=1,node=1,billing=1 JOB_GRES=gpumem:107374182400 Nodes=n1 CPU_IDs=0 Mem=0 GRES= "
      "TresPerNode=gres:gpumem:100G";
  CHECK(slurm::GpuMemoryPerNode(record).value() == 100 * kGiB);
  CHECK(slurm::GpuMemoryPerNode("JobId=1 TresPerNode=gres:gpu:1,gres:gpumem:512M\n").value() ==
        512 * kMiB);
  CHECK(slurm::GpuMemoryPerNode("JobId=1 TresPerNode=gres/gpumem:3").value() == 3u);
  CHECK(slurm::GpuMemoryPerNode("JobId=1 TresPerNode=gres:gpu:1").value() == 0u);  // asked none
  CHECK(slurm::GpuMemoryPerNode("JobId=1 Nodes=n1").value() == 0u);
  absl::StatusOr<uint64_t> bad = slurm::GpuMemoryPerNode("JobId=1 TresPerNode=gres:gpumem:lots");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("TresPerNode: \"gres:gpumem:lots\"") !=
        std::string::npos);
  CHECK(slurm::ParseGresCount("2T").value() == (uint64_t{2} << 40));
  CHECK_FALSE(slurm::ParseGresCount("10GB").ok());
  CHECK_FALSE(slurm::ParseGresCount("").ok());
  CHECK_FALSE(slurm::ParseGresCount("99999999999999P").ok());  // past 2^64
}

TEST_CASE("mgb slurm-conf's text: a gpumem count per node, the hooks, the per-GPU limit",
          "[slurm]") {
  const std::vector<slurm::NodeGpu> gpus = {{"NVIDIA H200", 143771 * kMiB},
                                            {"NVIDIA H200", 143771 * kMiB}};
  // Per GPU: its memory less one context reserve (528 MiB), in MiB, summed.
  CHECK(slurm::NodeGpuMemory(gpus, 528 * kMiB) == 2 * (143771 - 528) * kMiB);
  CHECK(slurm::NodeGres(gpus, 528 * kMiB) == "gpumem:286486M");
  const slurm::HookSettings hooks{"/etc/slurm/mgb", "/usr/bin/mgb", "/run/mgbd/%n's.sock",
                                  "/usr/bin/scontrol"};
  const std::string text = slurm::SlurmConfText("gpu7", gpus, 528 * kMiB, &hooks);
  CHECK(text.find("GresTypes=gpumem\n") != std::string::npos);
  CHECK(text.find("NodeName=gpu7 Gres=gpumem:286486M\n") != std::string::npos);
  CHECK(text.find("NodeName=gpu7 Name=gpumem Count=286486M\n") != std::string::npos);
  CHECK(text.find("Prolog=/etc/slurm/mgb/mgb-prolog\n") != std::string::npos);
  CHECK(text.find("Epilog=/etc/slurm/mgb/mgb-epilog\n") != std::string::npos);
  CHECK(text.find("TaskProlog=/etc/slurm/mgb/mgb-task-prolog\n") != std::string::npos);
  CHECK(text.find("more than 143243 MiB") != std::string::npos);
  CHECK(slurm::SlurmConfText("gpu7", gpus, 528 * kMiB, nullptr).find("Prolog=") ==
        std::string::npos);
  const std::vector<slurm::HookScript> scripts = slurm::HookScripts(hooks);
  REQUIRE(scripts.size() == 3);
  // The socket template's quote survives the shell.
  CHECK(scripts[0].text.find(
            "exec '/usr/bin/mgb' slurm-hook prolog --socket '/run/mgbd/%n'\\''s.sock'") !=
        std::string::npos);
  CHECK(slurm::ExpandSocketTemplate("/run/%n/mgbd-%n.sock", "n1") == "/run/n1/mgbd-n1.sock");
  CHECK(slurm::ExpandSocketTemplate("/tmp/100%%-%x", "n1") == "/tmp/100%-%x");
}

TEST_CASE("a job's tasks reserve within its grant, and the error names the job and the grant",
          "[slurm]") {
  core::JobGrants grants;
  // No grant (no Prolog ran, or no --gres=gpumem): nothing at all.
  absl::Status none = grants.Check(7, 1, "a task of 1 B");
  CHECK(none.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(none.message()).find("Slurm job 7 has no GPU memory on this node") !=
        std::string::npos);
  grants.Grant(7, 10 * kGiB);
  CHECK(grants.Check(7, 10 * kGiB, "t").ok());
  grants.Charge(7, 1, 6 * kGiB);
  CHECK(grants.Remaining(7) == 4 * kGiB);
  absl::Status past = grants.Check(7, 6 * kGiB, "a task of 6.00 GiB");
  CHECK(past.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(past.message()) ==
        "a task of 6.00 GiB would take Slurm job 7 past its GPU memory grant of 10.00 GiB "
        "(--gres=gpumem): its tasks hold 6.00 GiB");
  grants.Charge(7, 1, 3 * kGiB);  // a grow asked
  CHECK(grants.Held(7) == 9 * kGiB);
  grants.Refund(1, 3 * kGiB);  // the grow gave up
  CHECK(grants.Held(7) == 6 * kGiB);
  grants.Charge(7, 2, 4 * kGiB);
  CHECK_FALSE(grants.Check(7, 1, "t").ok());
  grants.Release(1);
  CHECK(grants.Held(7) == 4 * kGiB);
  grants.Release(1);  // twice: nothing more comes back
  CHECK(grants.Held(7) == 4 * kGiB);
  CHECK(grants.Grants() == std::vector<std::pair<core::JobId, uint64_t>>{{7, 10 * kGiB}});
  grants.End(7);
  CHECK_FALSE(grants.Limit(7));
  grants.Release(2);  // a task of an ended job ends later: harmless
  CHECK(grants.Grants().empty());
  // Overflow-safe: a huge ask against a small grant.
  grants.Grant(8, kGiB);
  CHECK_FALSE(grants.Check(8, UINT64_MAX, "t").ok());
}

}  // namespace mgb::test
