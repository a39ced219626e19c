// What `mgb run` learns a program's peak by (service/cli/program_identity.h): the executable and
// an interpreter's script or module, found as execvp and the interpreter would find them.
#include "program_identity.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace mgb::test {

TEST_CASE("program identity: the executable on PATH, and an interpreter's script or module",
          "[cli][profile]") {
  TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir.File("bin"));
  fs::create_directories(dir.File("work"));
  for (const char *name : {"bin/python3.12", "bin/solver", "work/train.py"}) {
    std::ofstream(dir.File(name)) << "#!/bin/sh\n";
    chmod(dir.File(name).c_str(), 0755);
  }
  fs::create_symlink(dir.File("bin/python3.12"), dir.File("bin/python3"));
  const std::string path = "/nonexistent:" + dir.File("bin");
  const std::string work = dir.File("work");
  const std::string python = fs::canonical(dir.File("bin/python3.12")).string();
  const std::string script = fs::canonical(dir.File("work/train.py")).string();

  auto id = cli::IdentifyProgram({"python3", "-u", "train.py", "--out", "/r/1", "--seed", "4"},
                                 path, work);
  CHECK(id.program == python + " " + script);  // the link resolved, the script made absolute
  CHECK(id.arguments == "python3 -u train.py --out /r/1 --seed 4");
  // Other arguments: the same program.
  CHECK(cli::IdentifyProgram({"python3", "train.py", "--out", "/r/2"}, path, work).program ==
        id.program);
  CHECK(cli::IdentifyProgram({python, "-W", "ignore", "train.py"}, path, "/").program ==
        python + " train.py");  // not found from "/": kept as written
  CHECK(cli::IdentifyProgram({"python3", "-m", "torch.distributed.run", "x.py"}, path, work)
            .program == python + " -m torch.distributed.run");
  // Not an interpreter: the executable alone; a name not found stays as given.
  CHECK(cli::IdentifyProgram({"solver", "in.dat"}, path, work).program ==
        fs::canonical(dir.File("bin/solver")).string());
  CHECK(cli::IdentifyProgram({"./train.py", "a"}, path, work).program == script);
  CHECK(cli::IdentifyProgram({"no-such-tool", "a"}, path, work).program == "no-such-tool");
}

}  // namespace mgb::test
